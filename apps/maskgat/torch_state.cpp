#include "torch_state.hpp"

#include <iostream>
#include <nlohmann/json.hpp>

#include "maskgat/core/error.hpp"
#include "maskgat/io/torch_file.hpp"
#include "maskgat/train/checkpoint.hpp"
#include "maskgat/train/torch_state.hpp"
#include "maskgat/train/trainer.hpp"
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

// Every tensor's name, dtype and shape.
nlohmann::ordered_json tensors_json(const StateDict& state) {
  nlohmann::ordered_json tensors = nlohmann::ordered_json::array();
  for (const NamedTensor& tensor : state.tensors) {
    tensors.push_back({{"name", tensor.name},
                       {"dtype", torch_dtype_name(tensor.dtype)},
                       {"shape", tensor.shape}});
  }
  return tensors;
}

void print_list(const ImportOptions& options, const StateDict& state) {
  if (options.run.json) {
    const nlohmann::ordered_json out = {
        {"command", "import"}, {"file", options.torch.string()}, {"tensors", tensors_json(state)}};
    std::cout << json_text(out, options.run) << '\n';
    return;
  }
  for (const NamedTensor& tensor : state.tensors) {
    std::cout << tensor.name << ' ' << torch_dtype_name(tensor.dtype) << ' ' << shape_text(tensor)
              << '\n';
  }
}

train::StateDictOptions parse_renames(const std::vector<std::string>& renames) {
  train::StateDictOptions options;
  for (const std::string& rename : renames) {
    const std::size_t equals = rename.find('=');
    if (equals == std::string::npos || equals == 0) {
      throw InvalidArgument("--rename: '" + rename +
                            "' is not OLD_PREFIX=NEW_PREFIX (the new prefix may be empty)");
    }
    options.renames.emplace_back(rename.substr(0, equals), rename.substr(equals + 1));
  }
  return options;
}

}  // namespace

void add_import_command(CLI::App& app, ImportOptions& options) {
  auto* command =
      app.add_subcommand("import", "Read a PyTorch state dict (torch.save) into a model file");
  command->footer(
      "Examples:\n"
      "  maskgat import --torch gat.pt --list\n"
      "  maskgat import --torch gat.pt --model docs/specs/paper.json --out gat.model\n"
      "  maskgat import --torch checkpoint.pt --key model_state_dict --rename module.= \\\n"
      "      --model spec.json --class-names spam,ham --out model.bin");
  command->add_option("--torch", options.torch, "The torch.save file (PyTorch 1.6 or later)")
      ->required();
  command->add_option("--key", options.key,
                      "The item of the file's dict that holds the state dict (e.g. "
                      "model_state_dict), when the file wraps it");
  auto* list = command->add_flag("--list", options.list,
                                 "Print every tensor's name, dtype and shape, and stop");
  auto* model = command->add_option(
      "--model", options.model,
      "Model spec (JSON) whose modules are named as the PyTorch model's attributes");
  auto* out = command->add_option("--out", options.out, "The MaskGAT model file to write");
  command->add_option("--rename", options.renames,
                      "OLD_PREFIX=NEW_PREFIX: rename keys that start with OLD_PREFIX (repeatable)");
  command
      ->add_option("--class-names", options.class_names,
                   "The classes' names in output order, comma-separated (default 0,1,...)")
      ->delimiter(',');
  command
      ->add_option("--max-file-bytes", options.max_file_bytes,
                   "Reader limit: size of the file and of each of its members")
      ->check(integer_at_least(1))
      ->capture_default_str();
  list->excludes(model)->excludes(out);
  model->needs(out);
  out->needs(model);
  command->callback([list, model] {
    if (list->count() == 0 && model->count() == 0) {
      throw CLI::RequiredError("--list, or --model with --out");
    }
  });
  add_run_options(*command, options.run, true);
}

int run_import(ImportOptions& options) {
  if (options.out) {
    OutputPlan outputs(options.run.force);
    outputs.add_output("--out", *options.out);
    outputs.add_input("--torch", options.torch);
    outputs.add_input("--model", *options.model);
    outputs.check();
  }
  const train::StateDictOptions mapping = parse_renames(options.renames);
  TorchReadOptions read;
  read.key = options.key;
  read.limits.max_file_bytes = options.max_file_bytes;
  const StateDict state = read_state_dict(options.torch, read);
  if (options.list) {
    print_list(options, state);
    return 0;
  }
  const nn::Model model =
      train::import_state_dict(train::read_model_spec(*options.model), state, mapping);
  std::vector<std::string> names = options.class_names;
  if (names.empty()) {
    for (std::int64_t k = 0; k < model.options().classes; ++k) names.push_back(std::to_string(k));
  }
  const train::Checkpoint checkpoint =
      train::checkpoint_of(model, names, options.torch.filename().string());
  train::save_checkpoint(*options.out, checkpoint, options.run.force);
  if (options.run.json) {
    const nlohmann::ordered_json out = {{"command", "import"},
                                        {"file", options.torch.string()},
                                        {"model", options.out->string()},
                                        {"in_features", model.options().in_features},
                                        {"classes", names},
                                        {"tensors", state.tensors.size()},
                                        {"parameters", model.parameters().size()}};
    std::cout << json_text(out, options.run) << '\n';
  } else if (!options.run.quiet) {
    std::cerr << "imported " << state.tensors.size() << " tensors (" << model.parameters().size()
              << " parameters, " << model.options().in_features << " features -> "
              << model.options().classes << " classes) into " << options.out->string() << '\n';
  }
  return 0;
}

void add_export_command(CLI::App& app, ExportOptions& options) {
  auto* command =
      app.add_subcommand("export", "Write a model file as a PyTorch state dict (torch.save)");
  command->footer(
      "Examples:\n"
      "  maskgat export --load cora.model --torch cora_gat.pt\n"
      "  (in Python: model.load_state_dict(torch.load('cora_gat.pt')))");
  command->add_option("--load", options.model, "Model file written by train --save or import")
      ->required();
  command->add_option("--torch", options.torch, "The torch.save file to write")->required();
  add_run_options(*command, options.run, true);
}

int run_export(ExportOptions& options) {
  OutputPlan outputs(options.run.force);
  outputs.add_output("--torch", options.torch);
  outputs.add_input("--load", options.model);
  outputs.check();
  const train::Checkpoint checkpoint = train::load_checkpoint(options.model);
  const StateDict state = train::export_state_dict(train::load_model(checkpoint));
  write_state_dict(options.torch, state, options.run.force);
  if (options.run.json) {
    const nlohmann::ordered_json out = {{"command", "export"},
                                        {"model", options.model.string()},
                                        {"file", options.torch.string()},
                                        {"tensors", tensors_json(state)}};
    std::cout << json_text(out, options.run) << '\n';
  } else if (!options.run.quiet) {
    std::cerr << "wrote " << state.tensors.size() << " tensors to " << options.torch.string()
              << '\n';
  }
  return 0;
}

}  // namespace maskgat::app
