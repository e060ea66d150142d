// Learns which nodes of your own graph should be linked and recommends neighbours for one node,
// through the C++ API: the edges split 85 / 5 / 10, a GAT encoder trained on the training edges
// against fresh random non-edges, the test edges scored, then every node's state computed on
// the whole graph and the node's best new neighbours listed.
// Usage: link_prediction EDGES FEATURES NODE [K]
//   EDGES: "source target" lines (read as undirected); FEATURES: CSV with a header, node first.
#include <algorithm>
#include <exception>
#include <iostream>
#include <string>

#include "maskgat/maskgat.hpp"

int main(int argc, char** argv) {
  if (argc != 4 && argc != 5) {
    std::cerr << "usage: link_prediction EDGES FEATURES NODE [K]\n";
    return 2;
  }
  try {
    maskgat::FileSources files;
    files.graph = argv[1];
    files.features = argv[2];
    files.undirected = true;
    const maskgat::Dataset data = maskgat::load_files(files, maskgat::DatasetOptions{});
    const std::string name = argv[3];
    const auto found = std::find(data.node_names.begin(), data.node_names.end(), name);
    if (found == data.node_names.end()) {
      std::cerr << "error: no node '" << name << "' in " << argv[1] << '\n';
      return 2;
    }
    const auto node = static_cast<maskgat::NodeId>(found - data.node_names.begin());
    const std::int64_t k = argc == 5 ? std::stoll(argv[4]) : 5;

    maskgat::EdgeSplitOptions shares;  // 5 % validation, 10 % test
    shares.undirected = true;
    maskgat::train::TrainOptions recipe = maskgat::train::link_recipe();
    recipe.epochs = 200;
    maskgat::train::LinkTrainer trainer(data, maskgat::split_edges(data.graph, shares), recipe);
    const maskgat::train::FitResult result = trainer.fit();
    const maskgat::EdgeSplit& split = trainer.split();
    const maskgat::train::LinkMetrics test = trainer.evaluate(split.test, split.test_negatives);
    std::cout << "trained on " << split.train_edges.size() << " edges, best epoch "
              << result.best_epoch << ": test ROC AUC " << test.roc_auc << " on "
              << split.test.size() << " held-out edges\n";

    // Serving: every edge known, every node's state once, then any node's best new neighbours.
    const maskgat::RowMatrix<float> states = maskgat::train::node_states(
        trainer.model(), data.graph, maskgat::train::model_input(data, trainer.options()));
    std::cout << "recommended for " << name << ':';
    for (const maskgat::train::ScoredNode& best :
         maskgat::train::recommend(trainer.model(), states, data.graph, node, k)) {
      std::cout << ' ' << data.node_names[static_cast<std::size_t>(best.node)] << " (" << best.score
                << ')';
    }
    std::cout << '\n';
  } catch (const std::exception& error) {
    std::cerr << "error: " << error.what() << '\n';
    return 1;
  }
}
