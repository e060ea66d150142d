#include "maskgat/nn/link_decoder.hpp"

#include <cmath>
#include <string>

#include "maskgat/core/error.hpp"

namespace maskgat::nn {
namespace {

void check_pairs(const char* where, std::int64_t nodes, std::span<const NodeId> sources,
                 std::span<const NodeId> targets) {
  if (sources.size() != targets.size()) {
    throw InvalidArgument(std::string(where) + ": " + std::to_string(sources.size()) +
                          " sources for " + std::to_string(targets.size()) +
                          " targets, expected one per target");
  }
  for (std::size_t k = 0; k < sources.size(); ++k) {
    for (const NodeId node : {sources[k], targets[k]}) {
      if (node < 0 || node >= nodes) {
        throw IndexError(std::string(where) + ": pair " + std::to_string(k) + " names node " +
                         std::to_string(node) + ", outside [0, " + std::to_string(nodes) + ")");
      }
    }
  }
}

}  // namespace

template <typename T>
std::vector<T> dot_scores(const RowMatrix<T>& z, std::span<const NodeId> sources,
                          std::span<const NodeId> targets) {
  check_pairs("dot_scores", z.rows(), sources, targets);
  std::vector<T> scores(sources.size());
  for (std::size_t k = 0; k < sources.size(); ++k) {
    scores[k] = z.row(sources[k]).dot(z.row(targets[k]));
  }
  return scores;
}

template <typename T>
void dot_scores_backward(const RowMatrix<T>& z, std::span<const NodeId> sources,
                         std::span<const NodeId> targets, std::span<const T> grad_logits,
                         RowMatrix<T>& grad_z) {
  check_pairs("dot_scores_backward", z.rows(), sources, targets);
  if (grad_logits.size() != sources.size() || grad_z.rows() != z.rows() ||
      grad_z.cols() != z.cols()) {
    throw InvalidArgument("dot_scores_backward: " + std::to_string(grad_logits.size()) +
                          " gradients for " + std::to_string(sources.size()) +
                          " pairs, or grad_z not of z's shape");
  }
  for (std::size_t k = 0; k < sources.size(); ++k) {
    grad_z.row(sources[k]) += grad_logits[k] * z.row(targets[k]);
    grad_z.row(targets[k]) += grad_logits[k] * z.row(sources[k]);
  }
}

template <typename T>
double binary_cross_entropy(std::span<const T> logits, std::span<const std::int32_t> labels,
                            std::span<T> grad) {
  if (logits.size() != labels.size() || logits.empty() ||
      (!grad.empty() && grad.size() != logits.size())) {
    throw InvalidArgument("binary_cross_entropy: " + std::to_string(logits.size()) + " logits, " +
                          std::to_string(labels.size()) + " labels and " +
                          std::to_string(grad.size()) +
                          " gradient entries, expected as many of each (and at least one)");
  }
  const auto count = static_cast<double>(logits.size());
  double sum = 0.0;
  for (std::size_t k = 0; k < logits.size(); ++k) {
    if (labels[k] != 0 && labels[k] != 1) {
      throw InvalidArgument("binary_cross_entropy: label " + std::to_string(k) + " is " +
                            std::to_string(labels[k]) + ", expected 0 or 1");
    }
    const double x = logits[k];
    const double y = labels[k];
    sum += std::max(x, 0.0) - x * y + std::log1p(std::exp(-std::abs(x)));
    if (!grad.empty()) grad[k] = static_cast<T>((1.0 / (1.0 + std::exp(-x)) - y) / count);
  }
  return sum / count;
}

template <typename T>
MlpDecoder add_mlp_decoder(ParameterStore<T>& store, std::int64_t width, std::int64_t hidden,
                           Rng& rng) {
  if (width < 1 || hidden < 1) {
    throw InvalidArgument("add_mlp_decoder: states of width " + std::to_string(width) + " and " +
                          std::to_string(hidden) + " hidden units, expected both at least 1");
  }
  MlpDecoder mlp{store.add("decoder.lin1.weight", width, hidden),
                 store.add("decoder.lin1.bias", 1, hidden),
                 store.add("decoder.lin2.weight", hidden, 1), store.add("decoder.lin2.bias", 1, 1)};
  glorot_uniform(store.value(mlp.hidden_weight), width, hidden, rng);
  glorot_uniform(store.value(mlp.out_weight), hidden, 1, rng);
  return mlp;
}

template <typename T>
std::optional<MlpDecoder> find_mlp_decoder(const ParameterStore<T>& store) {
  const auto hidden_weight = store.find("decoder.lin1.weight");
  if (!hidden_weight) return std::nullopt;
  const auto hidden_bias = store.find("decoder.lin1.bias");
  const auto out_weight = store.find("decoder.lin2.weight");
  const auto out_bias = store.find("decoder.lin2.bias");
  const std::int64_t h = hidden_weight->cols;
  if (!hidden_bias || !out_weight || !out_bias || hidden_bias->rows != 1 ||
      hidden_bias->cols != h || out_weight->rows != h || out_weight->cols != 1 ||
      out_bias->size() != 1) {
    throw InvalidArgument(
        "find_mlp_decoder: decoder.lin1.weight is " + std::to_string(hidden_weight->rows) + " x " +
        std::to_string(h) +
        "; expected decoder.lin1.bias 1 x H, decoder.lin2.weight H x 1 and decoder.lin2.bias "
        "1 x 1 beside it");
  }
  return MlpDecoder{*hidden_weight, *hidden_bias, *out_weight, *out_bias};
}

namespace {

// The MLP's input rows z[s] ⊙ z[t] and pre-activations A = input W1 + b1, P x D and P x H.
template <typename T>
struct MlpPass {
  RowMatrix<T> input;
  RowMatrix<T> pre;
};

template <typename T>
MlpPass<T> mlp_pass(const RowMatrix<T>& z, const ParameterStore<T>& store, const MlpDecoder& mlp,
                    std::span<const NodeId> sources, std::span<const NodeId> targets) {
  if (z.cols() != mlp.hidden_weight.rows) {
    throw InvalidArgument("pair_logits: states of width " + std::to_string(z.cols()) +
                          ", the MLP decoder takes " + std::to_string(mlp.hidden_weight.rows));
  }
  MlpPass<T> pass;
  pass.input.resize(static_cast<Eigen::Index>(sources.size()), z.cols());
  for (std::size_t k = 0; k < sources.size(); ++k) {
    pass.input.row(static_cast<Eigen::Index>(k)) =
        z.row(sources[k]).cwiseProduct(z.row(targets[k]));
  }
  // Owned copies: Eigen's products over maps of the store's buffers would sum in an order that
  // depends on where the buffers happen to be aligned.
  const RowMatrix<T> weight = store.value(mlp.hidden_weight);
  pass.pre = pass.input * weight;
  pass.pre.rowwise() += store.value(mlp.hidden_bias).row(0);
  return pass;
}

}  // namespace

template <typename T>
std::vector<T> pair_logits(const RowMatrix<T>& z, const ParameterStore<T>& store,
                           const MlpDecoder* mlp, std::span<const NodeId> sources,
                           std::span<const NodeId> targets) {
  if (mlp == nullptr) return dot_scores(z, sources, targets);
  check_pairs("pair_logits", z.rows(), sources, targets);
  const MlpPass<T> pass = mlp_pass(z, store, *mlp, sources, targets);
  const RowMatrix<T> out_weight = store.value(mlp->out_weight);
  const RowMatrix<T> logits =
      pass.pre.cwiseMax(T{0}) * out_weight +
      RowMatrix<T>::Constant(pass.pre.rows(), 1, store.value(mlp->out_bias)(0, 0));
  return {logits.data(), logits.data() + logits.size()};
}

template <typename T>
void pair_logits_backward(const RowMatrix<T>& z, ParameterStore<T>& store, const MlpDecoder* mlp,
                          std::span<const NodeId> sources, std::span<const NodeId> targets,
                          std::span<const T> grad_logits, RowMatrix<T>& grad_z) {
  if (mlp == nullptr) {
    dot_scores_backward(z, sources, targets, grad_logits, grad_z);
    return;
  }
  check_pairs("pair_logits_backward", z.rows(), sources, targets);
  if (grad_logits.size() != sources.size() || grad_z.rows() != z.rows() ||
      grad_z.cols() != z.cols()) {
    throw InvalidArgument("pair_logits_backward: " + std::to_string(grad_logits.size()) +
                          " gradients for " + std::to_string(sources.size()) +
                          " pairs, or grad_z not of z's shape");
  }
  const MlpPass<T> pass = mlp_pass(z, store, *mlp, sources, targets);
  const RowMatrix<T> hidden = pass.pre.cwiseMax(T{0});
  // Owned operands throughout, as in `mlp_pass`.
  const Eigen::Matrix<T, Eigen::Dynamic, 1> g =
      Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, 1>>(grad_logits.data(), pass.pre.rows());
  const Eigen::Matrix<T, Eigen::Dynamic, 1> grad_out_weight = hidden.transpose() * g;
  store.grad(mlp->out_weight).col(0) += grad_out_weight;
  store.grad(mlp->out_bias)(0, 0) += g.sum();
  // dL/dA = g w2^T where A > 0.
  const Eigen::Matrix<T, Eigen::Dynamic, 1> out_weight = store.value(mlp->out_weight).col(0);
  RowMatrix<T> grad_pre = g * out_weight.transpose();
  grad_pre = (pass.pre.array() > T{0}).select(grad_pre, T{0});
  const RowMatrix<T> grad_hidden_weight = pass.input.transpose() * grad_pre;
  store.grad(mlp->hidden_weight) += grad_hidden_weight;
  const RowMatrix<T> grad_hidden_bias = grad_pre.colwise().sum();
  store.grad(mlp->hidden_bias) += grad_hidden_bias;
  const RowMatrix<T> hidden_weight = store.value(mlp->hidden_weight);
  const RowMatrix<T> grad_input = grad_pre * hidden_weight.transpose();
  for (std::size_t k = 0; k < sources.size(); ++k) {
    const auto row = grad_input.row(static_cast<Eigen::Index>(k));
    grad_z.row(sources[k]) += row.cwiseProduct(z.row(targets[k]));
    grad_z.row(targets[k]) += row.cwiseProduct(z.row(sources[k]));
  }
}

template MlpDecoder add_mlp_decoder(ParameterStore<float>&, std::int64_t, std::int64_t, Rng&);
template MlpDecoder add_mlp_decoder(ParameterStore<double>&, std::int64_t, std::int64_t, Rng&);
template std::optional<MlpDecoder> find_mlp_decoder(const ParameterStore<float>&);
template std::optional<MlpDecoder> find_mlp_decoder(const ParameterStore<double>&);
template std::vector<float> pair_logits(const RowMatrix<float>&, const ParameterStore<float>&,
                                        const MlpDecoder*, std::span<const NodeId>,
                                        std::span<const NodeId>);
template std::vector<double> pair_logits(const RowMatrix<double>&, const ParameterStore<double>&,
                                         const MlpDecoder*, std::span<const NodeId>,
                                         std::span<const NodeId>);
template void pair_logits_backward(const RowMatrix<float>&, ParameterStore<float>&,
                                   const MlpDecoder*, std::span<const NodeId>,
                                   std::span<const NodeId>, std::span<const float>,
                                   RowMatrix<float>&);
template void pair_logits_backward(const RowMatrix<double>&, ParameterStore<double>&,
                                   const MlpDecoder*, std::span<const NodeId>,
                                   std::span<const NodeId>, std::span<const double>,
                                   RowMatrix<double>&);
template std::vector<float> dot_scores(const RowMatrix<float>&, std::span<const NodeId>,
                                       std::span<const NodeId>);
template std::vector<double> dot_scores(const RowMatrix<double>&, std::span<const NodeId>,
                                        std::span<const NodeId>);
template void dot_scores_backward(const RowMatrix<float>&, std::span<const NodeId>,
                                  std::span<const NodeId>, std::span<const float>,
                                  RowMatrix<float>&);
template void dot_scores_backward(const RowMatrix<double>&, std::span<const NodeId>,
                                  std::span<const NodeId>, std::span<const double>,
                                  RowMatrix<double>&);
template double binary_cross_entropy(std::span<const float>, std::span<const std::int32_t>,
                                     std::span<float>);
template double binary_cross_entropy(std::span<const double>, std::span<const std::int32_t>,
                                     std::span<double>);

}  // namespace maskgat::nn
