// Serves a model trained in PyTorch Geometric: reads its state dict (a torch.save file), loads it
// into the model of a spec whose modules are named as the PyG model's attributes, and predicts
// on a built-in dataset, printing the test accuracy and the first nodes' classes.
// Usage: serve_pytorch STATE_DICT.pt SPEC.json DATASET
#include <exception>
#include <iomanip>
#include <iostream>
#include <optional>
#include <string>

#include "maskgat/maskgat.hpp"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: serve_pytorch STATE_DICT.pt SPEC.json DATASET\n";
    return 2;
  }
  try {
    // 1. The tensors, by name: nothing in the file is executed.
    const maskgat::StateDict state = maskgat::read_state_dict(argv[1], {});
    // 2. The model: the spec's modules filled with them, every name and shape checked; the
    //    input width and class count come from the tensors.
    const maskgat::nn::Model model =
        maskgat::train::import_state_dict(maskgat::train::read_model_spec(argv[2]), state);

    maskgat::DatasetOptions options;
    options.data_dir = maskgat::resolve_data_dir(std::nullopt, "datasets");  // or $MASKGAT_DATA_DIR
    const maskgat::Dataset data = maskgat::load_dataset(argv[3], options);
    // 3. Prediction as for a model trained here (self-loops added as the layers ask).
    maskgat::train::Predictor predictor(
        maskgat::train::checkpoint_of(model, data.class_names, argv[1]), data);
    const std::vector<std::int32_t> predicted = maskgat::train::predict_classes(predictor.logits());
    const std::vector<maskgat::NodeId> test = data.nodes_in(maskgat::SplitPart::kTest);
    std::int64_t right = 0;
    for (const maskgat::NodeId node : test) {
      const auto i = static_cast<std::size_t>(node);
      right += predicted[i] == data.labels[i] ? 1 : 0;
    }
    std::cout << "imported " << state.tensors.size() << " tensors: " << model.options().in_features
              << " features -> " << model.options().classes << " classes\n"
              << "test accuracy " << std::fixed << std::setprecision(4)
              << static_cast<double>(right) / static_cast<double>(test.size())
              << " (" << right << " of " << test.size() << " nodes)\n";
    for (std::size_t i = 0; i < 3; ++i) {
      std::cout << data.node_names[i] << ": class "
                << data.class_names[static_cast<std::size_t>(predicted[i])] << '\n';
    }
  } catch (const std::exception& error) {
    std::cerr << "error: " << error.what() << '\n';
    return 1;
  }
}
