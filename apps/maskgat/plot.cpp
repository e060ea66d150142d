#include "plot.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <numbers>
#include <sstream>
#include <string_view>

#include "data_options.hpp"
#include "maskgat/core/error.hpp"
#include "maskgat/io/output_file.hpp"

extern char** environ;

namespace maskgat::app {
namespace {

// Whether an executable `name` is on PATH.
bool on_path(std::string_view name) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return false;
  std::istringstream directories(path);
  std::string directory;
  while (std::getline(directories, directory, ':')) {
    const std::filesystem::path candidate = std::filesystem::path(directory) / name;
    if (::access(candidate.c_str(), X_OK) == 0) return true;
  }
  return false;
}

// `text` as a single-quoted gnuplot string (a quote inside is doubled).
std::string quoted(const std::string& text) {
  std::string out = "'";
  for (const char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

// Runs `gnuplot -e commands` without a shell; throws IoError naming `image` if it fails.
void run_gnuplot(const std::string& commands, const std::filesystem::path& image) {
  std::string program = "gnuplot";
  std::string flag = "-e";
  std::string script = commands;
  char* argv[] = {program.data(), flag.data(), script.data(), nullptr};
  pid_t pid = 0;
  if (posix_spawnp(&pid, "gnuplot", nullptr, nullptr, argv, environ) != 0) {
    throw IoError("plot: cannot start gnuplot to draw " + image.string());
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw IoError("plot: gnuplot failed to draw " + image.string());
  }
}

// Writes `csv`, then, when gnuplot is on PATH, runs `commands` (which draw from `csv`) into
// `image` through a temporary file that is renamed; without gnuplot, says so and keeps the CSV.
bool draw(const std::string& csv_text, const std::filesystem::path& csv,
          const std::string& commands, const std::filesystem::path& image, const RunOptions& run) {
  write_file_atomically(csv, csv_text, run.force);
  if (!on_path("gnuplot")) {
    say(run, "note: gnuplot is not installed, so " + image.string() +
                 " was not drawn; its data is in " + csv.string() +
                 " (Debian: apt-get install gnuplot-nox)");
    return false;
  }
  const std::filesystem::path temporary =
      image.string() + ".tmp-" + std::to_string(static_cast<long>(::getpid()));
  const std::string terminal = image.extension() == ".svg" ? "svg" : "pngcairo";
  std::error_code error;
  try {
    run_gnuplot("set terminal " + terminal + " size 1000,420; set output " +
                    quoted(temporary.string()) + "; set datafile separator ','; " + commands +
                    "; set output",
                image);
    std::filesystem::rename(temporary, image, error);
  } catch (const IoError&) {
    std::filesystem::remove(temporary, error);
    throw;
  }
  if (error) {
    std::filesystem::remove(temporary, error);
    throw IoError("plot: cannot write " + image.string() + ": " + error.message());
  }
  return true;
}

}  // namespace

std::filesystem::path plot_csv(const std::filesystem::path& image) {
  std::filesystem::path csv = image;
  return csv.replace_extension(".csv");
}

void check_plot_outputs(const char* option, const std::filesystem::path& image, bool force) {
  const std::string extension = image.extension().string();
  if (extension != ".svg" && extension != ".png") {
    throw InvalidArgument(std::string(option) + ": " + image.string() +
                          " must end in .svg or .png, got '" + extension + "'");
  }
  check_output(plot_csv(image), force);
  check_output(image, force);
}

bool plot_training_curves(const std::vector<train::EpochStats>& epochs, const std::string& title,
                          const std::filesystem::path& image, const RunOptions& run) {
  std::ostringstream rows;
  rows << "epoch,train_loss,val_loss,train_acc,val_acc\n";
  rows.precision(9);
  for (const auto& stats : epochs) {
    rows << stats.epoch << ',' << stats.train_loss << ',' << stats.val_loss << ','
         << stats.train_accuracy << ',' << stats.val_accuracy << '\n';
  }
  const std::filesystem::path csv = plot_csv(image);
  const std::string data = quoted(csv.string()) + " skip 1 using ";
  const std::string commands =
      "set grid; set xlabel 'epoch'; set multiplot layout 1,2 title " + quoted(title) +
      "; set key top right; set ylabel 'loss'; plot " + data +
      "1:2 with lines title 'train', '' skip 1 using 1:3 with lines title 'validation'" +
      "; set key bottom right; set ylabel 'accuracy'; set yrange [0:1]; plot " + data +
      "1:4 with lines title 'train', '' skip 1 using 1:5 with lines title 'validation'" +
      "; unset multiplot";
  return draw(rows.str(), csv, commands, image, run);
}

bool plot_attention(const std::string& node, const std::vector<std::string>& neighbours,
                    const std::vector<double>& alpha, const std::filesystem::path& image,
                    const RunOptions& run) {
  // The node at the centre, its neighbours (itself among them, through its self-loop) on a
  // circle; each joined to the centre by a line 0.5 + 10 alpha points wide.
  std::ostringstream rows;
  rows << "neighbour,alpha,x,y\n";
  rows.precision(6);
  std::ostringstream lines;
  const auto count = static_cast<double>(neighbours.size());
  for (std::size_t k = 0; k < neighbours.size(); ++k) {
    const double angle = 2.0 * std::numbers::pi * static_cast<double>(k) / count;
    const double x = std::cos(angle);
    const double y = std::sin(angle);
    rows << csv_field(neighbours[k]) << ',' << alpha[k] << ',' << x << ',' << y << '\n';
    lines << "set arrow from " << x << ',' << y << " to 0,0 nohead lw " << 0.5 + 10.0 * alpha[k]
          << "; ";
  }
  const std::filesystem::path csv = plot_csv(image);
  const std::string commands =
      "unset border; unset tics; unset key; set size ratio -1; set xrange [-1.6:1.6]; "
      "set yrange [-1.3:1.3]; set title " +
      quoted("attention of node " + node +
             " (layer 1, mean over heads; line width 0.5 + 10 alpha)") +
      "; set label " + quoted(node) + " at 0,0 center point pt 7 ps 2 offset 0,-1.5 front; " +
      lines.str() + "plot " + quoted(csv.string()) +
      " skip 1 using 3:4:(sprintf('%s (%.3f)', stringcolumn(1), $2)) with labels point pt 7 "
      "ps 1.5 offset 0,1";
  return draw(rows.str(), csv, commands, image, run);
}

}  // namespace maskgat::app
