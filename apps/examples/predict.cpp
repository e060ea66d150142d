// Applies a saved model (`maskgat train --save` or own_edge_list) to a built-in dataset or to own
// files, read as the model's training data was read, and writes every node's class
// probabilities as `maskgat predict --output` writes them.
// Usage: predict CHECKPOINT OUT.csv DATASET
//        predict CHECKPOINT OUT.csv EDGES FEATURES
#include <exception>
#include <iostream>
#include <optional>
#include <string>

#include "maskgat/maskgat.hpp"

int main(int argc, char** argv) {
  if (argc != 4 && argc != 5) {
    std::cerr << "usage: predict CHECKPOINT OUT.csv DATASET\n"
                 "       predict CHECKPOINT OUT.csv EDGES FEATURES\n";
    return 2;
  }
  try {
    const maskgat::train::Checkpoint checkpoint = maskgat::train::load_checkpoint(argv[1]);
    maskgat::DatasetOptions options;
    options.data_dir = maskgat::resolve_data_dir(std::nullopt, "datasets");  // or $MASKGAT_DATA_DIR
    maskgat::FileSources files;
    files.graph = argv[3];
    if (argc == 5) files.features = argv[4];
    // The model's own preparation: edges both ways if its were, its feature normalisation.
    if (checkpoint.data) {
      for (const std::string& note : maskgat::train::prepare_as_trained(
               *checkpoint.data, argc == 5 ? &files : nullptr, options)) {
        std::cerr << "note: " << note << '\n';
      }
    }
    const maskgat::Dataset data =
        argc == 5 ? maskgat::load_files(files, options) : maskgat::load_dataset(argv[3], options);

    // Self-loops and the model's positional encoding are added as in training.
    maskgat::train::Predictor predictor(checkpoint, data);
    const std::string csv = maskgat::train::predictions_csv(
        data.node_names, predictor.checkpoint().class_names, predictor.logits());
    maskgat::write_file_atomically(argv[2], csv, /*overwrite=*/true);
    std::cout << "wrote " << data.graph.num_nodes() << " predictions to " << argv[2] << '\n';
  } catch (const std::exception& error) {
    std::cerr << "error: " << error.what() << '\n';
    return 1;
  }
}
