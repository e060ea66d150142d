#include "plot.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
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

// A private directory for gnuplot's files, removed with everything in it when it goes out of
// scope. Its path is absolute, so no name in it starts with gnuplot's pipe markers `<` or `|`.
class ScratchDirectory {
 public:
  ScratchDirectory() {
    std::error_code error;
    std::filesystem::path base = std::filesystem::temp_directory_path(error);
    if (error) base = "/tmp";
    std::string pattern = std::filesystem::absolute(base, error) / "maskgat-plot-XXXXXX";
    if (error || ::mkdtemp(pattern.data()) == nullptr) {
      throw IoError("plot: cannot create a temporary directory in " + base.string());
    }
    path_ = pattern;
  }
  ScratchDirectory(const ScratchDirectory&) = delete;
  ScratchDirectory& operator=(const ScratchDirectory&) = delete;
  ~ScratchDirectory() {
    std::error_code error;
    std::filesystem::remove_all(path_, error);
  }
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

void write_scratch(const std::filesystem::path& path, const std::string& content) {
  std::ofstream file(path, std::ios::binary);
  file << content;
  if (!file.flush()) throw IoError("plot: cannot write " + path.string());
}

// Runs `gnuplot -c script arguments...` without a shell; throws IoError naming `image` if it
// fails. The script reads every user-given string as ARG1, ARG2, ...: none is ever parsed as
// gnuplot code.
void run_gnuplot(const std::filesystem::path& script, std::vector<std::string> arguments,
                 const std::filesystem::path& image) {
  std::vector<std::string> words = {"gnuplot", "-c", script.string()};
  words.insert(words.end(), arguments.begin(), arguments.end());
  std::vector<char*> argv;
  for (std::string& word : words) argv.push_back(word.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawnp(&pid, "gnuplot", nullptr, nullptr, argv.data(), environ) != 0) {
    throw IoError("plot: cannot start gnuplot to draw " + image.string());
  }
  int status = 0;
  pid_t waited = 0;
  do {
    waited = waitpid(pid, &status, 0);
  } while (waited < 0 && errno == EINTR);
  if (waited != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw IoError("plot: gnuplot failed to draw " + image.string());
  }
}

// Writes `csv`, then, when gnuplot is on PATH, runs `commands` into `image`. gnuplot reads a
// copy of the CSV and writes the picture in a scratch directory (ARG1 is the data file, ARG2 the
// picture, ARG3... are `strings`); the picture is then written to `image` as every output file
// is. Without gnuplot, says so and keeps the CSV.
bool draw(const std::string& csv_text, const std::filesystem::path& csv,
          const std::string& commands, const std::vector<std::string>& strings,
          const std::filesystem::path& image, const RunOptions& run) {
  write_file_atomically(csv, csv_text, run.force);
  if (!on_path("gnuplot")) {
    say(run, "note: gnuplot is not installed, so " + image.string() +
                 " was not drawn; its data is in " + csv.string() +
                 " (Debian: apt-get install gnuplot-nox)");
    return false;
  }
  const ScratchDirectory scratch;
  const bool svg = image.extension() == ".svg";
  const std::filesystem::path data = scratch.path() / "data.csv";
  const std::filesystem::path picture = scratch.path() / (svg ? "picture.svg" : "picture.png");
  const std::filesystem::path script = scratch.path() / "plot.gp";
  write_scratch(data, csv_text);
  write_scratch(script, std::string("set terminal ") + (svg ? "svg" : "pngcairo") +
                            " size 1000,420\nset output ARG2\nset datafile separator ','\n" +
                            commands + "\nset output\n");
  std::vector<std::string> arguments = {data.string(), picture.string()};
  arguments.insert(arguments.end(), strings.begin(), strings.end());
  run_gnuplot(script, std::move(arguments), image);
  std::ifstream drawn(picture, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(drawn)),
                          std::istreambuf_iterator<char>());
  if (!drawn.good() && !drawn.eof()) throw IoError("plot: gnuplot drew no " + image.string());
  write_file_atomically(image, bytes, run.force);
  say(run, "wrote " + image.string() + " and its data " + csv.string());
  return true;
}

}  // namespace

std::filesystem::path plot_csv(const std::filesystem::path& image) {
  std::filesystem::path csv = image;
  return csv.replace_extension(".csv");
}

void add_plot_outputs(OutputPlan& outputs, const std::string& option,
                      const std::filesystem::path& image) {
  const std::string extension = image.extension().string();
  if (extension != ".svg" && extension != ".png") {
    throw InvalidArgument(option + ": " + image.string() + " must end in .svg or .png, got '" +
                          extension + "'");
  }
  outputs.add_output(option + " (its CSV)", plot_csv(image));
  outputs.add_output(option, image);
}

bool plot_training_curves(const std::vector<train::EpochStats>& epochs, std::int64_t best_epoch,
                          const std::string& title, const std::filesystem::path& image,
                          const RunOptions& run) {
  std::ostringstream rows;
  rows << "epoch,train_loss,val_loss,train_acc,val_acc\n";
  rows.precision(9);
  for (const auto& stats : epochs) {
    rows << stats.epoch << ',' << stats.train_loss << ',' << stats.val_loss << ','
         << stats.train_accuracy << ',' << stats.val_accuracy << '\n';
  }
  // A dashed line at the epoch whose parameters the model keeps (early stopping's choice); the keys
  // sit below the plots, out of its way.
  const std::string best = std::to_string(best_epoch);
  const bool right_half = !epochs.empty() && 2 * best_epoch > epochs.back().epoch;
  const std::string side = right_half ? "right offset -0.5,0" : "left offset 0.5,0";
  const std::string commands =
      "set grid; set xlabel 'epoch'; set multiplot layout 1,2 title ARG3; set key below; "
      "set arrow from " +
      best + ", graph 0 to " + best +
      ", graph 1 nohead dashtype 2; "
      "set label 'best epoch " +
      best + "' at " + best + ", graph 0.05 " + side +
      "; "
      "set ylabel 'loss'; plot ARG1 skip 1 using 1:2 with lines title 'train', '' skip 1 using "
      "1:3 with lines title 'validation'; set ylabel 'accuracy'; "
      "set yrange [0:1]; plot ARG1 skip 1 using 1:4 with lines title 'train', '' skip 1 using "
      "1:5 with lines title 'validation'; unset multiplot";
  return draw(rows.str(), plot_csv(image), commands, {title}, image, run);
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
  const std::string commands =
      "unset border; unset tics; unset key; set size ratio -1; set xrange [-1.6:1.6]; "
      "set yrange [-1.3:1.3]; set title ARG3; set label ARG4 at 0,0 center point pt 7 ps 2 "
      "offset 0,-1.5 front; " +
      lines.str() +
      "plot ARG1 skip 1 using 3:4:(sprintf('%s (%.3f)', stringcolumn(1), $2)) with labels point "
      "pt 7 ps 1.5 offset 0,1";
  return draw(
      rows.str(), plot_csv(image), commands,
      {"attention of node " + node + " (layer 1, mean over heads; line width 0.5 + 10 alpha)",
       node},
      image, run);
}

}  // namespace maskgat::app
