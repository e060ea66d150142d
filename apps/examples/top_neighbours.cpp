// Loads a model saved by own_edge_list (or `maskgat train --save`) and prints one node's
// neighbours ranked by the first layer's attention, averaged over its heads.
// Usage: top_neighbours CHECKPOINT EDGES FEATURES LABELS SPLIT NODE
#include <algorithm>
#include <exception>
#include <iostream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "maskgat/maskgat.hpp"

int main(int argc, char** argv) {
  if (argc != 7) {
    std::cerr << "usage: top_neighbours CHECKPOINT EDGES FEATURES LABELS SPLIT NODE\n";
    return 2;
  }
  try {
    const maskgat::train::Checkpoint checkpoint = maskgat::train::load_checkpoint(argv[1]);
    maskgat::FileSources files{argv[2], "auto", argv[3], argv[4], argv[5]};
    maskgat::DatasetOptions options;
    // Read as the model's training data was: edges both ways if its were, its normalisation.
    if (checkpoint.data) maskgat::train::prepare_as_trained(*checkpoint.data, &files, options);
    const maskgat::Dataset data = maskgat::load_files(files, options);
    const auto named = std::find(data.node_names.begin(), data.node_names.end(), argv[6]);
    if (named == data.node_names.end()) throw std::runtime_error(std::string("no node ") + argv[6]);
    const auto node = static_cast<maskgat::NodeId>(named - data.node_names.begin());

    // The model on this data, its input built as in training (self-loops, positional encoding).
    maskgat::train::Predictor predictor(checkpoint, data);
    const maskgat::nn::AttentionWeights<float> first = predictor.attention().front();
    std::vector<std::pair<float, maskgat::NodeId>> ranked;
    const auto [begin, end] = first.in_edges(node);  // the node's row of the mask
    for (std::size_t e = begin; e < end; ++e) {
      ranked.emplace_back(first.alpha.row(static_cast<std::int64_t>(e)).mean(), first.sources[e]);
    }
    std::sort(ranked.rbegin(), ranked.rend());
    std::cout << "node " << argv[6] << " attends to (mean over heads, layer 1):\n";
    for (const auto& [alpha, source] : ranked) {
      std::cout << "  " << data.node_names[static_cast<std::size_t>(source)] << ' ' << alpha
                << '\n';
    }
  } catch (const std::exception& error) {
    std::cerr << "error: " << error.what() << '\n';
    return 1;
  }
}
