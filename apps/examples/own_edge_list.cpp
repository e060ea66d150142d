// Trains the GAT paper's model on your own graph through the C++ API and saves it.
// Usage: own_edge_list EDGES FEATURES LABELS SPLIT CHECKPOINT
//   EDGES: "source target" lines (read as undirected); FEATURES: CSV with a header, node first;
//   LABELS and SPLIT: "node value" lines (split values train, val, test).
#include <exception>
#include <iostream>

#include "maskgat/maskgat.hpp"

int main(int argc, char** argv) {
  if (argc != 6) {
    std::cerr << "usage: own_edge_list EDGES FEATURES LABELS SPLIT CHECKPOINT\n";
    return 2;
  }
  try {
    maskgat::FileSources files;
    files.graph = argv[1];
    files.features = argv[2];
    files.labels = argv[3];
    files.split = argv[4];
    files.undirected = true;
    maskgat::DatasetOptions options;
    const maskgat::Dataset data = maskgat::load_files(files, options);
    std::cout << "loaded " << data.graph.num_nodes() << " nodes, " << data.graph.num_edges()
              << " edges, " << data.num_classes() << " classes\n";

    maskgat::train::TrainOptions recipe = maskgat::train::paper_recipe("own");
    recipe.epochs = 300;
    maskgat::train::Trainer trainer(data, recipe);
    const maskgat::train::FitResult result = trainer.fit();
    std::cout << "best epoch " << result.best_epoch << ": validation accuracy "
              << result.val_accuracy << ", test accuracy " << result.test_accuracy << '\n';
    maskgat::train::save_checkpoint(argv[5], trainer.checkpoint(), /*overwrite=*/true);
    std::cout << "saved " << argv[5] << '\n';
  } catch (const std::exception& error) {
    std::cerr << "error: " << error.what() << '\n';
    return 1;
  }
}
