#include "plot.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string_view>

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

}  // namespace

std::filesystem::path curves_csv(const std::filesystem::path& image) {
  std::filesystem::path csv = image;
  return csv.replace_extension(".csv");
}

void check_plot_path(const std::filesystem::path& image) {
  const std::string extension = image.extension().string();
  if (extension != ".svg" && extension != ".png") {
    throw InvalidArgument("--plot: " + image.string() + " must end in .svg or .png, got '" +
                          extension + "'");
  }
}

bool plot_training_curves(const std::vector<train::EpochStats>& epochs, const std::string& title,
                          const std::filesystem::path& image, bool force) {
  const std::filesystem::path csv = curves_csv(image);
  std::ostringstream rows;
  rows << "epoch,train_loss,val_loss,train_acc,val_acc\n";
  rows.precision(9);
  for (const auto& stats : epochs) {
    rows << stats.epoch << ',' << stats.train_loss << ',' << stats.val_loss << ','
         << stats.train_accuracy << ',' << stats.val_accuracy << '\n';
  }
  write_file_atomically(csv, rows.str(), force);
  if (!on_path("gnuplot")) {
    std::cerr << "note: gnuplot is not installed, so " << image.string()
              << " was not drawn; its data is in " << csv.string()
              << " (Debian: apt-get install gnuplot-nox)\n";
    return false;
  }
  if (!force && std::filesystem::exists(image)) {
    throw IoError(image.string() + ": the file exists; pass --force to replace it");
  }
  const std::filesystem::path temporary =
      image.string() + ".tmp-" + std::to_string(static_cast<long>(::getpid()));
  const bool svg = image.extension() == ".svg";
  std::ostringstream commands;
  commands << "set terminal " << (svg ? "svg" : "pngcairo") << " size 1000,420; "
           << "set output " << quoted(temporary.string()) << "; "
           << "set datafile separator ','; set grid; set xlabel 'epoch'; "
           << "set multiplot layout 1,2 title " << quoted(title) << "; "
           << "set key top right; set ylabel 'loss'; plot " << quoted(csv.string())
           << " skip 1 using 1:2 with lines title 'train', '' skip 1 using 1:3 with lines title "
              "'validation'; "
           << "set key bottom right; set ylabel 'accuracy'; set yrange [0:1]; plot "
           << quoted(csv.string())
           << " skip 1 using 1:4 with lines title 'train', '' skip 1 using 1:5 with lines title "
              "'validation'; "
           << "unset multiplot; set output";
  std::error_code error;
  try {
    run_gnuplot(commands.str(), image);
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

}  // namespace maskgat::app
