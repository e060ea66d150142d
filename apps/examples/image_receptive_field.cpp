// Attention over an image: each pixel of an 8 x 8 RGB image is a 3-vector, and stacked GAT layers
// with a grid mask of radius 1 spread information one pixel further per layer. For one output
// pixel and 1, 2 and 3 layers this prints how many input pixels influence it: from the mask
// (masks::receptive_field), by perturbing each input pixel and seeing whether the output pixel
// changes, and by the formula (2 L r + 1)^2 clipped at the border.
#include <algorithm>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "maskgat/maskgat.hpp"

int main() {
  namespace nn = maskgat::nn;
  constexpr std::int64_t kSide = 8;
  constexpr std::int64_t kRadius = 1;
  const maskgat::Graph grid = maskgat::masks::grid(kSide, kSide, kRadius);
  maskgat::Rng rng(0);
  nn::ParameterStore<float> parameters;
  std::vector<nn::GatConv> layers;
  for (int l = 0; l < 3; ++l) {
    nn::GatConvOptions options;
    options.in_features = l == 0 ? 3 : 8;
    options.out_features = 4;
    options.heads = 2;
    layers.emplace_back(parameters, "layer" + std::to_string(l), options, rng);
  }
  const auto run = [&](const maskgat::RowMatrix<float>& pixels, int depth) {
    maskgat::RowMatrix<float> x = pixels;
    maskgat::RowMatrix<float> y;
    nn::GatConv::Cache cache;
    for (int l = 0; l < depth; ++l) {
      layers[static_cast<std::size_t>(l)].forward(grid, x, nn::Mode::kEval, rng, cache, y);
      x = y.array().tanh();
    }
    return x;
  };

  const maskgat::RowMatrix<float> image = maskgat::RowMatrix<float>::Random(kSide * kSide, 3);
  for (const auto& [row, col] : {std::pair<std::int64_t, std::int64_t>{3, 3}, {0, 0}}) {
    const auto pixel = static_cast<maskgat::NodeId>(row * kSide + col);
    for (int depth = 1; depth <= 3; ++depth) {
      const maskgat::RowMatrix<float> reference = run(image, depth);
      int influencing = 0;
      for (std::int64_t p = 0; p < kSide * kSide; ++p) {
        maskgat::RowMatrix<float> changed = image;
        changed.row(p).array() += 1.0F;
        if (run(changed, depth).row(pixel) != reference.row(pixel)) ++influencing;
      }
      const auto span = [&](std::int64_t at) {
        return std::min(kSide - 1, at + depth * kRadius) -
               std::max<std::int64_t>(0, at - depth * kRadius) + 1;
      };
      std::cout << "pixel (" << row << ", " << col << "), " << depth << " layer(s): mask "
                << maskgat::masks::receptive_field(grid, pixel, depth).size() << ", perturbation "
                << influencing << ", formula " << span(row) * span(col) << '\n';
    }
  }
}
