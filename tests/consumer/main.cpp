// Trains a GAT through MaskGAT's C++ API on a hand-made graph: two communities of 20 nodes,
// each node linked to its 3 next neighbours in its own community, one link between the two, and
// features that hint at the community through noise. Exits 1 unless the test accuracy is >= 90 %.
#include <iostream>

#include "maskgat/graph/build.hpp"
#include "maskgat/train/trainer.hpp"
#include "maskgat/version.hpp"

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
  std::cout << "MaskGAT " << maskgat::kVersion << ": test accuracy " << result.test_accuracy
            << " after " << result.epochs << " epochs\n";
  return result.test_accuracy >= 0.9 ? 0 : 1;
}
