#include "maskgat/nn/layer.hpp"

namespace maskgat::nn {

template <typename T>
AttentionWeights<T> attention_weights(const Graph& mask, const RowMatrix<T>& alpha) {
  const auto sources = mask.in_sources();
  return {std::vector<NodeId>(sources.begin(), sources.end()), mask.edge_destinations(), alpha};
}

template AttentionWeights<float> attention_weights<float>(const Graph&, const RowMatrix<float>&);
template AttentionWeights<double> attention_weights<double>(const Graph&, const RowMatrix<double>&);

}  // namespace maskgat::nn
