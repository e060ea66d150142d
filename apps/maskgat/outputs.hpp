#pragma once
// The files a command writes, checked together before any work starts, and its JSON text.

#include <filesystem>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "data_options.hpp"

namespace maskgat::app {

// The outputs of one command and the inputs they must not name. `check` runs before anything is
// loaded or computed, so a run never ends by losing its result to a path it cannot write.
class OutputPlan {
 public:
  explicit OutputPlan(bool force) : force_(force) {}

  // `path` will be written by `option` (e.g. `--save`).
  void add_output(const std::string& option, const std::filesystem::path& path);
  // `path` is read by `option` (e.g. `--features`); no output may name it.
  void add_input(const std::string& option, const std::filesystem::path& path);

  // Throws InvalidArgument (usage) when two outputs, or an output and an input, name one file
  // (by path or, for existing files, by device and inode), and IoError when an output's
  // directory does not exist or cannot be written, when an output exists and is not a regular
  // file (a device, FIFO, directory or symbolic link is never replaced, not even with
  // --force), or when it exists and --force was not given.
  void check() const;

 private:
  struct Entry {
    std::string option;
    std::filesystem::path path;
  };
  bool force_;
  std::vector<Entry> outputs_;
  std::vector<Entry> inputs_;
};

// Registers the files `data` names (graph, features, labels, split) as inputs of `plan`.
void add_inputs(OutputPlan& plan, const DataOptions& data);

// `value` as indented JSON. Text that is not valid UTF-8 (Latin-1 names, say) is replaced by
// U+FFFD, with a note on stderr (unless --quiet) that says so.
std::string json_text(const nlohmann::ordered_json& value, const RunOptions& run);

// Writes `json` (`json_text`'s) to `path` when it is given (--metrics-json), and says so.
void write_metrics(const std::optional<std::filesystem::path>& path, const std::string& json,
                   const RunOptions& run);

// The mean and population standard deviation (ddof 0) of `values` (not empty): how results over
// runs or folds are summarised.
std::pair<double, double> spread(const std::vector<double>& values);

// A command's JSON object: on stdout with --json, and in --metrics-json's file when given.
void report_json(const nlohmann::ordered_json& value,
                 const std::optional<std::filesystem::path>& metrics_json, const RunOptions& run);

}  // namespace maskgat::app
