// Mini-batch training written out with the sampler, without the trainer: each step samples the
// in-neighbourhoods of a batch of training nodes (`NeighborSampler`), runs the GAT paper's model
// on the batch's masks and its rows of the features, and takes an Adam step; the trained model
// is then evaluated layer by layer (`train::layerwise_logits`), with full neighbourhoods, as
// graphs too large for a whole-graph pass are.
// Usage: sampled_training [NODES]   (a synthetic graph, default 20000 nodes)
#include <algorithm>
#include <cstdint>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "maskgat/maskgat.hpp"

int main(int argc, char** argv) {
  try {
    maskgat::SyntheticOptions graph;
    graph.nodes = argc > 1 ? std::stoll(argv[1]) : 20000;
    graph.features = 32;
    graph.classes = 4;
    const maskgat::Dataset data = maskgat::make_synthetic(graph, {});
    const std::vector<maskgat::NodeId> train = data.nodes_in(maskgat::SplitPart::kTrain);

    maskgat::nn::ModelOptions shape;  // the GAT paper's: 2 layers, 8 heads x 8, dropout 0.6
    shape.in_features = data.features.cols();
    shape.classes = data.num_classes();
    maskgat::Rng rng(0);
    maskgat::nn::Model model(shape, rng);
    maskgat::optim::Adam adam(model.parameters().size(), {});
    // Up to 10 in-neighbours per node in each layer, the input layer's first.
    maskgat::NeighborSampler sampler(data.graph, {10, 10}, /*seed=*/0);

    constexpr std::size_t kBatch = 32;
    maskgat::RowMatrix<float> grad_logits;
    std::vector<std::int32_t> labels;
    for (std::uint64_t epoch = 0; epoch < 30; ++epoch) {
      double loss = 0.0;
      for (std::size_t first = 0; first < train.size(); first += kBatch) {
        const std::span<const maskgat::NodeId> outputs =
            std::span(train).subspan(first, std::min(kBatch, train.size() - first));
        const maskgat::MiniBatch batch = sampler.sample(outputs, epoch);
        // The batch's rows of the features and labels, in the batch's numbering.
        const maskgat::FeatureMatrix x = data.features.select_rows(batch.nodes);
        labels.clear();
        for (const maskgat::NodeId node : batch.nodes) {
          labels.push_back(data.labels[static_cast<std::size_t>(node)]);
        }
        model.parameters().zero_grad();
        const maskgat::RowMatrix<float>& logits =
            model.forward(batch.masks, x.view(), maskgat::nn::Mode::kTrain, rng);
        loss += maskgat::nn::nll_loss(logits, labels, batch.outputs, &grad_logits) *
                static_cast<double>(outputs.size());
        model.backward(batch.masks, x.view(), grad_logits);
        adam.step(model.parameters().values(), model.parameters().grads());
      }
      if (epoch % 10 == 9) {
        std::cout << "epoch " << epoch + 1 << ": loss " << loss / static_cast<double>(train.size())
                  << '\n';
      }
    }

    const std::vector<maskgat::NodeId> test = data.nodes_in(maskgat::SplitPart::kTest);
    const maskgat::RowMatrix<float> logits =
        maskgat::train::layerwise_logits(model, data.graph, data.features, test);
    const std::vector<std::int32_t> predicted = maskgat::train::predict_classes(logits);
    std::int64_t correct = 0;
    for (std::size_t r = 0; r < test.size(); ++r) {
      correct += predicted[r] == data.labels[static_cast<std::size_t>(test[r])] ? 1 : 0;
    }
    std::cout << "test accuracy " << static_cast<double>(correct) / static_cast<double>(test.size())
              << " (" << test.size() << " nodes, layer by layer)\n";
    return 0;
  } catch (const std::exception& error) {
    std::cerr << "error: " << error.what() << '\n';
    return 1;
  }
}
