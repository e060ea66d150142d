// Attention beyond graphs, with the same kernel and other masks: a sequence whose positions
// attend within a window (truncated self-attention), and an image whose pixels, each a 3-vector
// of RGB values, attend to their 3 x 3 neighbourhood.
#include <iostream>

#include "maskgat/maskgat.hpp"

int main() {
  namespace nn = maskgat::nn;
  maskgat::Rng rng(0);
  nn::ParameterStore<float> parameters;

  // 12 tokens of 4 features; each attends to the 2 before and the 2 after it.
  const maskgat::Graph window = maskgat::masks::window(12, 2);
  const maskgat::RowMatrix<float> tokens = maskgat::RowMatrix<float>::Random(12, 4);
  nn::DotAttentionConvOptions dot;
  dot.in_features = 4;
  dot.out_features = 8;
  dot.heads = 2;
  const nn::DotAttentionConv self_attention(parameters, "sequence", dot, rng);
  nn::DotAttentionConv::Cache sequence_cache;
  maskgat::RowMatrix<float> encoded;
  self_attention.forward(window, tokens, nn::Mode::kEval, rng, sequence_cache, encoded);
  const auto weights = self_attention.attention(window, sequence_cache);
  std::cout << "sequence: " << encoded.rows() << " x " << encoded.cols() << "; token 5 attends to";
  for (std::size_t e = 0; e < weights.destinations.size(); ++e) {
    if (weights.destinations[e] == 5) std::cout << ' ' << weights.sources[e];
  }
  std::cout << '\n';

  // A 6 x 6 RGB image, pixel (r, c) = node r * 6 + c, attending within Chebyshev distance 1.
  const maskgat::Graph grid = maskgat::masks::grid(6, 6, 1);
  const maskgat::RowMatrix<float> pixels = maskgat::RowMatrix<float>::Random(36, 3);
  nn::GatConvOptions gat;
  gat.in_features = 3;
  gat.out_features = 4;
  gat.heads = 2;
  const nn::GatConv image_attention(parameters, "image", gat, rng);
  nn::GatConv::Cache image_cache;
  maskgat::RowMatrix<float> features;
  image_attention.forward(grid, pixels, nn::Mode::kEval, rng, image_cache, features);
  std::cout << "image: " << features.rows() << " x " << features.cols() << "; pixel (0, 0) sees "
            << grid.in_degree(0) << " pixels, pixel (3, 3) sees " << grid.in_degree(3 * 6 + 3)
            << '\n';
}
