#include "outputs.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <iostream>
#include <numeric>
#include <optional>

#include "maskgat/core/error.hpp"
#include "maskgat/io/output_file.hpp"

namespace maskgat::app {
namespace {

namespace fs = std::filesystem;

// A file's identity, when it exists.
struct FileId {
  dev_t device;
  ino_t inode;
  bool operator==(const FileId&) const = default;
};

std::optional<FileId> file_id(const fs::path& path) {
  struct stat status {};
  if (::stat(path.c_str(), &status) != 0) return std::nullopt;
  return FileId{status.st_dev, status.st_ino};
}

// The path with symbolic links of its existing part resolved, for comparing names.
fs::path resolved(const fs::path& path) {
  std::error_code error;
  const fs::path absolute = fs::absolute(path, error).lexically_normal();
  const fs::path canonical = fs::weakly_canonical(absolute, error);
  return error ? absolute : canonical;
}

bool same_file(const fs::path& a, const fs::path& b) {
  if (resolved(a) == resolved(b)) return true;
  const auto id_a = file_id(a);
  return id_a && id_a == file_id(b);
}

std::string kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// Throws IoError unless a file can be created in `directory`: it exists, is a directory, and
// an anonymous file can be made in it (or, where the file system has none, access says so).
void check_writable_directory(const std::string& option, const fs::path& path,
                              const fs::path& directory) {
  const std::string where = option + " " + path.string() + ": ";
  struct stat status {};
  if (::stat(directory.c_str(), &status) != 0) {
    throw IoError(where + "cannot write in the directory '" + directory.string() +
                  "': " + std::strerror(errno));
  }
  if (!S_ISDIR(status.st_mode)) {
    throw IoError(where + "'" + directory.string() + "' is not a directory");
  }
  const int fd = ::open(directory.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
  if (fd >= 0) {
    ::close(fd);
    return;
  }
  const int why = errno;
  if (why != EOPNOTSUPP && why != EISDIR && why != EINVAL) {
    throw IoError(where + "cannot write in the directory '" + directory.string() +
                  "': " + std::strerror(why));
  }
  if (::access(directory.c_str(), W_OK | X_OK) != 0) {
    throw IoError(where + "cannot write in the directory '" + directory.string() +
                  "': " + std::strerror(errno));
  }
}

}  // namespace

void OutputPlan::add_output(const std::string& option, const fs::path& path) {
  outputs_.push_back({option, path});
}

void OutputPlan::add_input(const std::string& option, const fs::path& path) {
  inputs_.push_back({option, path});
}

void OutputPlan::check() const {
  for (std::size_t k = 0; k < outputs_.size(); ++k) {
    const Entry& output = outputs_[k];
    for (std::size_t other = 0; other < k; ++other) {
      if (same_file(output.path, outputs_[other].path)) {
        throw InvalidArgument(outputs_[other].option + " " + outputs_[other].path.string() +
                              " and " + output.option + " " + output.path.string() +
                              " name the same file: give each output its own");
      }
    }
    for (const Entry& input : inputs_) {
      if (same_file(output.path, input.path)) {
        throw InvalidArgument(output.option + " " + output.path.string() + " names the input " +
                              input.option + " " + input.path.string() +
                              ": an output never replaces an input");
      }
    }
  }
  for (const Entry& output : outputs_) {
    const std::string where = output.option + " " + output.path.string() + ": ";
    if (output.path.empty() || !output.path.has_filename()) {
      throw InvalidArgument(where + "expected a file name");
    }
    struct stat status {};
    if (::lstat(output.path.c_str(), &status) == 0) {
      if (!S_ISREG(status.st_mode)) {
        throw IoError(where + "the path exists and is " + kind_of(status.st_mode) +
                      "; only a regular file is ever replaced");
      }
      if (!force_)
        throw IoError(output.path.string() + ": the file exists; pass --force to replace it");
    } else if (errno != ENOENT) {
      throw IoError(where + std::strerror(errno));
    }
    check_writable_directory(output.option, output.path,
                             output.path.has_parent_path() ? output.path.parent_path() : ".");
  }
}

void add_inputs(OutputPlan& plan, const DataOptions& data) {
  const FileSources& files = data.files;
  for (const auto& [option, path] :
       {std::pair{"--graph", &files.graph}, std::pair{"--features", &files.features},
        std::pair{"--labels", &files.labels}, std::pair{"--split", &files.split},
        std::pair{"--npz", &data.npz}, std::pair{"--store", &data.store},
        std::pair{"--tu", &data.tu}}) {
    if (!path->empty()) plan.add_input(option, *path);
  }
}

std::string json_text(const nlohmann::ordered_json& value, const RunOptions& run) {
  try {
    return value.dump(2);
  } catch (const nlohmann::json::type_error&) {
    // Thrown for text that is not UTF-8 (error 316), the only way dump fails.
    say(run,
        "note: the JSON output holds text that is not valid UTF-8 (such as Latin-1 names); "
        "each invalid byte is replaced by U+FFFD");
    return value.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
  }
}

void write_metrics(const std::optional<std::filesystem::path>& path, const std::string& json,
                   const RunOptions& run) {
  if (!path) return;
  write_file_atomically(*path, json + "\n", run.force);
  say(run, "wrote the metrics to " + path->string());
}

void report_json(const nlohmann::ordered_json& value,
                 const std::optional<std::filesystem::path>& metrics_json, const RunOptions& run) {
  const std::string json = json_text(value, run);
  if (run.json) std::cout << json << '\n';
  write_metrics(metrics_json, json, run);
}

std::pair<double, double> spread(const std::vector<double>& values) {
  const auto n = static_cast<double>(values.size());
  const double mean = std::accumulate(values.begin(), values.end(), 0.0) / n;
  double variance = 0.0;
  for (const double value : values) variance += (value - mean) * (value - mean);
  return {mean, std::sqrt(variance / n)};
}

}  // namespace maskgat::app
