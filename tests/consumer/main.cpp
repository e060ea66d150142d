// Trains a GAT through MaskGAT's C++ API on a hand-made graph: two communities of 20 nodes,
// each node linked to its 3 next neighbours in its own community, one link between the two, and
// features that hint at the community through noise; then predicts every node's class
// probabilities and reads the first layer's attention. Exits 1 unless the test accuracy is
// >= 90 %, every node's probabilities sum to one and every node's attention sums to one per head.
#include <cmath>
#include <iostream>
#include <vector>

#include "maskgat/maskgat.hpp"  // everything public

int main() {
  constexpr maskgat::NodeId kSide = 20;
  maskgat::EdgeList edges;
  for (maskgat::NodeId i = 0; i < 2 * kSide; ++i) {
    const maskgat::NodeId first = i / kSide * kSide;
    for (maskgat::NodeId step = 1; step <= 3; ++step) {
      edges.sources.push_back(i);
      edges.targets.push_back(first + (i - first + step) % kSide);
    }
  }
  edges.sources.push_back(0);
  edges.targets.push_back(kSide);

  maskgat::Dataset data;
  data.name = "two communities";
  data.graph = maskgat::symmetrize(maskgat::build_graph(2 * kSide, edges).graph).graph;
  maskgat::Rng noise(7);
  maskgat::DenseFeatures features(2 * kSide, 4);
  for (maskgat::NodeId i = 0; i < 2 * kSide; ++i) {
    const std::int32_t community = i / kSide;
    for (int c = 0; c < 4; ++c) features(i, c) = static_cast<float>(noise.uniform());
    features(i, community) += 0.5F;
    data.labels.push_back(community);
    data.split.push_back(i % kSide < 4   ? maskgat::SplitPart::kTrain
                         : i % kSide < 8 ? maskgat::SplitPart::kVal
                                         : maskgat::SplitPart::kTest);
    data.node_names.push_back("n" + std::to_string(i));
  }
  data.features = maskgat::FeatureMatrix(std::move(features));
  data.class_names = {"left", "right"};

  maskgat::train::TrainOptions options = maskgat::train::paper_recipe("two communities");
  options.epochs = 200;
  maskgat::train::Trainer trainer(data, options);
  const auto result = trainer.fit();

  const maskgat::RowMatrix<float> probabilities = trainer.predict_probabilities();
  bool sums_to_one = probabilities.rows() == 2 * kSide;
  for (std::int64_t i = 0; i < probabilities.rows(); ++i) {
    sums_to_one = sums_to_one && std::abs(probabilities.row(i).sum() - 1.0F) < 1e-5F;
  }
  const auto attention = trainer.attention();
  const auto& first = attention.front();
  std::vector<double> per_node(2 * kSide * static_cast<std::size_t>(first.alpha.cols()), 0.0);
  for (std::size_t e = 0; e < first.sources.size(); ++e) {
    for (std::int64_t h = 0; h < first.alpha.cols(); ++h) {
      per_node[static_cast<std::size_t>(first.destinations[e] * first.alpha.cols() + h)] +=
          first.alpha(static_cast<std::int64_t>(e), h);
    }
  }
  for (const double sum : per_node) sums_to_one = sums_to_one && std::abs(sum - 1.0) < 1e-5;

  std::cout << "MaskGAT " << maskgat::kVersion << ": test accuracy " << result.test_accuracy
            << " after " << result.epochs << " epochs; " << probabilities.rows()
            << " predictions and " << first.sources.size() << " attention edges, "
            << (sums_to_one ? "each summing to one" : "NOT summing to one") << '\n';
  return result.test_accuracy >= 0.9 && sums_to_one ? 0 : 1;
}
