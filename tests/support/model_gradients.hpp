#pragma once
// The gradient check of whole models: backward against central differences of a training loss.

#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "maskgat/nn/loss.hpp"
#include "maskgat/nn/model.hpp"
#include "support/central_differences.hpp"
#include "support/dense_attention.hpp"

namespace maskgat::test {

// Central differences of the training loss (NLL at nodes 0, 2, 3, 5, 7, 8 and 11 of a mask of at
// least 12 nodes, labels i % 3; dropout
// on, with the same keys every pass) against `model.backward`, for every parameter tensor. The
// caller moves the parameters off their initial values first: zero biases would put a LeakyReLU
// exactly on its kink, where differences are meaningless.
template <typename Input>
void check_model_gradients(nn::BasicModel<double>& model, const Graph& mask, const Input& x) {
  const NodeId nodes_in_mask = mask.num_nodes();
  std::vector<std::int32_t> labels(static_cast<std::size_t>(nodes_in_mask));
  for (NodeId i = 0; i < nodes_in_mask; ++i) labels[static_cast<std::size_t>(i)] = i % 3;
  const std::vector<NodeId> nodes{0, 2, 3, 5, 7, 8, 11};
  const auto loss_and = [&](RowMatrix<double>* grad) {
    Rng rng(9);
    return nn::nll_loss(model.forward(mask, x, nn::Mode::kTrain, rng), labels, nodes, grad);
  };
  RowMatrix<double> grad;
  model.parameters().zero_grad();
  loss_and(&grad);
  model.backward(mask, x, grad);
  const std::vector<double> analytic(model.parameters().grads().begin(),
                                     model.parameters().grads().end());
  const auto loss = [&] { return loss_and(nullptr); };
  for (const auto& entry : model.parameters().entries()) {
    CAPTURE(entry.name);
    const RowMatrix<double> numeric =
        central_differences(model.parameters().values(), entry.parameter, loss);
    const RowMatrix<double> backward = Eigen::Map<const RowMatrix<double>>(
        analytic.data() + entry.parameter.offset, entry.parameter.rows, entry.parameter.cols);
    if (numeric.norm() < 1e-8) {
      CHECK(backward.norm() < 1e-10);  // e.g. a key bias, cancelled by the softmax
    } else {
      CHECK(relative_error(backward, numeric) < 1e-6);
    }
  }
}

}  // namespace maskgat::test
