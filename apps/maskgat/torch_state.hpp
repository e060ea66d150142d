#pragma once
// `maskgat import` and `maskgat export`: PyTorch state dicts (torch.save files) in and out.

#include <CLI/CLI.hpp>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "data_options.hpp"

namespace maskgat::app {

struct ImportOptions {
  std::filesystem::path torch;  // the torch.save file
  std::string key;              // the item of a wrapping dict that holds the state dict
  bool list = false;            // print every tensor's name, dtype and shape
  std::optional<std::filesystem::path> model;  // --model: the spec the tensors fill
  std::optional<std::filesystem::path> out;    // --out: the MaskGAT model file written
  std::vector<std::string> renames;            // --rename OLD=NEW
  std::vector<std::string> class_names;        // --class-names: default 0 .. K-1
  std::int64_t max_file_bytes = Limits{}.max_file_bytes;
  RunOptions run;
};

struct ExportOptions {
  std::filesystem::path model;  // --load
  std::filesystem::path torch;  // --torch: the torch.save file written
  RunOptions run;
};

// Registers the `import` and `export` subcommands on `app`.
void add_import_command(CLI::App& app, ImportOptions& options);
void add_export_command(CLI::App& app, ExportOptions& options);

// Run them; return the exit code.
int run_import(ImportOptions& options);
int run_export(ExportOptions& options);

}  // namespace maskgat::app
