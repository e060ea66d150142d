#include <iostream>

#include "maskgat/maskgat.hpp"  // everything public

int main() {
  maskgat::DatasetOptions options;
  options.data_dir = maskgat::resolve_data_dir(std::nullopt, "datasets");  // or $MASKGAT_DATA_DIR
  const maskgat::Dataset cora = maskgat::load_dataset("cora", options);
  const maskgat::Graph mask = maskgat::masks::from_graph(cora.graph);  // self-loops, added once

  maskgat::nn::ParameterStore<float> parameters;  // every weight in one buffer
  maskgat::Rng rng(0);
  maskgat::nn::GatConvOptions layer;  // PyG's GATConv defaults
  layer.in_features = cora.features.cols();
  layer.out_features = 8;
  layer.heads = 8;
  const maskgat::nn::GatConv conv1(parameters, "conv1", layer, rng);

  maskgat::nn::GatConv::Cache cache;  // what backward needs; owned by the caller
  maskgat::RowMatrix<float> hidden;   // 2708 x 64, from the sparse features as they are
  conv1.forward(mask, cora.features.view(), maskgat::nn::Mode::kEval, rng, cache, hidden);
  const auto attention = conv1.attention(mask, cache);  // alpha per edge and head
  std::cout << hidden.rows() << " x " << hidden.cols() << ", " << attention.alpha.rows()
            << " attention weights per head\n";
}
