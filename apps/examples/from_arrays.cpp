// Builds a dataset from arrays in memory (no files), trains the GAT paper's model on it, and reads
// back the predicted classes and the attention one node pays to its neighbours.
// Usage: from_arrays
#include <cstdint>
#include <exception>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "maskgat/maskgat.hpp"

int main() {
  try {
    // 60 nodes in 3 classes (node i is in class i % 3). Each node is linked both ways to the next
    // two nodes of its class, and cites the next node (of another class) one way.
    constexpr std::int64_t kNodes = 60;
    constexpr std::int32_t kClasses = 3;
    maskgat::EdgeList edges;
    const auto link = [&edges](std::int64_t from, std::int64_t to) {
      edges.sources.push_back(static_cast<maskgat::NodeId>(from));
      edges.targets.push_back(static_cast<maskgat::NodeId>(to));
    };
    for (std::int64_t i = 0; i < kNodes; ++i) {
      for (const std::int64_t step : {3, 6}) {
        link(i, (i + step) % kNodes);
        link((i + step) % kNodes, i);
      }
      link(i, (i + 1) % kNodes);
    }

    maskgat::Dataset data;
    data.name = "in-memory";
    data.graph = maskgat::build_graph(kNodes, edges).graph;  // an edge j -> i lets i attend to j
    // Features: a weak hint of the class (0.3 in its column) on top of a shared background.
    maskgat::DenseFeatures features = maskgat::DenseFeatures::Constant(kNodes, kClasses + 1, 0.1F);
    for (std::int64_t i = 0; i < kNodes; ++i) {
      features(i, i % kClasses) += 0.3F;
      features(i, kClasses) += static_cast<float>(i % 5) / 10.0F;
      data.labels.push_back(static_cast<std::int32_t>(i % kClasses));
      data.node_names.push_back("n" + std::to_string(i));
    }
    data.features = maskgat::FeatureMatrix(std::move(features));
    data.class_names = {"red", "green", "blue"};
    maskgat::normalize_features(data, maskgat::FeatureNormalization::kAuto);  // as the loaders
    maskgat::draw_split(data, std::nullopt, /*seed=*/0);  // sizes scaled to a small graph
    for (const std::string& note : data.notes) std::cout << note << '\n';

    maskgat::train::TrainOptions recipe = maskgat::train::paper_recipe(data.name);
    recipe.epochs = 200;
    maskgat::train::Trainer trainer(data, recipe);
    const maskgat::train::FitResult result = trainer.fit();
    const std::vector<std::int32_t> predicted = trainer.predicted_classes();
    std::int64_t correct = 0;
    const std::vector<maskgat::NodeId> test = data.nodes_in(maskgat::SplitPart::kTest);
    for (const maskgat::NodeId node : test) {
      correct +=
          predicted[static_cast<std::size_t>(node)] == data.labels[static_cast<std::size_t>(node)];
    }
    std::cout << "best epoch " << result.best_epoch << ": " << correct << " of " << test.size()
              << " test nodes right\n";

    // The first layer's attention into node 0: its row of the mask (its in-edges, self-loop
    // included), found by binary search rather than by scanning every edge.
    const maskgat::nn::AttentionWeights<float> first = trainer.attention().front();
    const auto [begin, end] = first.in_edges(0);
    std::cout << "n0 is predicted " << data.class_names[static_cast<std::size_t>(predicted[0])]
              << "; it attends to (mean over heads, layer 1):\n";
    for (std::size_t e = begin; e < end; ++e) {
      std::cout << "  " << data.node_names[static_cast<std::size_t>(first.sources[e])] << ' '
                << first.alpha.row(static_cast<std::int64_t>(e)).mean() << '\n';
    }
  } catch (const std::exception& error) {
    std::cerr << "error: " << error.what() << '\n';
    return 1;
  }
}
