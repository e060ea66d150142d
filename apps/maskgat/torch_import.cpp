#include "torch_import.hpp"

#include <iostream>
#include <nlohmann/json.hpp>

#include "maskgat/io/torch_file.hpp"
#include "outputs.hpp"

namespace maskgat::app {
namespace {

std::string shape_text(const NamedTensor& tensor) {
  std::string text = "[";
  for (std::size_t d = 0; d < tensor.shape.size(); ++d) {
    text += (d > 0 ? ", " : "") + std::to_string(tensor.shape[d]);
  }
  return text + "]";
}

}  // namespace

void add_import_command(CLI::App& app, ImportOptions& options) {
  auto* command = app.add_subcommand("import", "Read a PyTorch state dict (a torch.save file)");
  command->footer(
      "Examples:\n"
      "  maskgat import --torch gat.pt --list\n"
      "  maskgat import --torch checkpoint.pt --key model_state_dict --list --json");
  command->add_option("--torch", options.torch, "The torch.save file (PyTorch 1.6 or later)")
      ->required();
  command->add_option("--key", options.key,
                      "The item of the file's dict that holds the state dict (e.g. "
                      "model_state_dict), when the file wraps it");
  command->add_flag("--list", options.list, "Print every tensor's name, dtype and shape")
      ->required();
  command
      ->add_option("--max-file-bytes", options.max_file_bytes,
                   "Reader limit: size of the file and of each of its members")
      ->check(integer_at_least(1))
      ->capture_default_str();
  add_run_options(*command, options.run, false);
}

int run_import(ImportOptions& options) {
  TorchReadOptions read;
  read.key = options.key;
  read.limits.max_file_bytes = options.max_file_bytes;
  const StateDict state = read_state_dict(options.torch, read);
  if (options.run.json) {
    nlohmann::ordered_json tensors = nlohmann::ordered_json::array();
    for (const NamedTensor& tensor : state.tensors) {
      tensors.push_back({{"name", tensor.name},
                         {"dtype", torch_dtype_name(tensor.dtype)},
                         {"shape", tensor.shape}});
    }
    nlohmann::ordered_json out = {
        {"command", "import"}, {"file", options.torch}, {"tensors", tensors}};
    std::cout << json_text(out, options.run) << '\n';
    return 0;
  }
  for (const NamedTensor& tensor : state.tensors) {
    std::cout << tensor.name << ' ' << torch_dtype_name(tensor.dtype) << ' ' << shape_text(tensor)
              << '\n';
  }
  return 0;
}

}  // namespace maskgat::app
