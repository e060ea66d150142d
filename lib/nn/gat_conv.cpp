#include "maskgat/nn/gat_conv.hpp"

#include "maskgat/ops/attention.hpp"
#include "maskgat/ops/matmul.hpp"
#include "nn/detail/layer_common.hpp"
#include "ops/detail/head_scores.hpp"

namespace maskgat::nn {
namespace {

// W_e a_edge, the edge features' weights folded with the edge attention vector:
// folded(d, h) = <head h of row d of W_e, a_edge_h> (D x H), so the edge term is f_ij folded.
template <typename T>
void fold_edge_attention(const Eigen::Ref<const RowMatrix<T>>& weight,
                         const Eigen::Ref<const RowMatrix<T>>& att, RowMatrix<T>& folded) {
  const std::int64_t channels = att.cols();
  folded.resize(weight.rows(), att.rows());
  for (std::int64_t d = 0; d < weight.rows(); ++d) {
    for (std::int64_t h = 0; h < att.rows(); ++h) {
      folded(d, h) = weight.row(d).segment(h * channels, channels).dot(att.row(h));
    }
  }
}

// Backward of `fold_edge_attention`: adds dL/dW_e and dL/da_edge from dL/dfolded.
template <typename T>
void fold_edge_attention_backward(const Eigen::Ref<const RowMatrix<T>>& weight,
                                  const Eigen::Ref<const RowMatrix<T>>& att,
                                  const RowMatrix<T>& grad_folded,
                                  Eigen::Ref<RowMatrix<T>> grad_weight,
                                  Eigen::Ref<RowMatrix<T>> grad_att) {
  const std::int64_t channels = att.cols();
  for (std::int64_t d = 0; d < weight.rows(); ++d) {
    for (std::int64_t h = 0; h < att.rows(); ++h) {
      const T g = grad_folded(d, h);
      grad_weight.row(d).segment(h * channels, channels) += g * att.row(h);
      grad_att.row(h) += g * weight.row(d).segment(h * channels, channels);
    }
  }
}

}  // namespace

template <typename T>
BasicGatConv<T>::BasicGatConv(ParameterStore<T>& store, std::string_view name,
                              const GatConvOptions& options, Rng& rng)
    : store_(&store), options_(options) {
  detail::check_layer_options("gat_conv", options);
  const std::string prefix(name);
  lin_ = detail::add_projection(store, prefix, options.in_features, detail::heads_width(options),
                                false, rng);
  att_src_ = store.add(prefix + ".att_src", options.heads, options.out_features);
  glorot_uniform<T>(store.value(att_src_), options.heads, options.out_features, rng);
  att_dst_ = store.add(prefix + ".att_dst", options.heads, options.out_features);
  glorot_uniform<T>(store.value(att_dst_), options.heads, options.out_features, rng);
  if (options.edge_features > 0) {
    lin_edge_ = detail::add_projection(store, prefix + ".lin_edge", options.edge_features,
                                       detail::heads_width(options), false, rng)
                    .weight;
    att_edge_ = store.add(prefix + ".att_edge", options.heads, options.out_features);
    glorot_uniform<T>(store.value(*att_edge_), options.heads, options.out_features, rng);
  }
  detail::add_output_terms(store, prefix, options, rng, residual_, bias_);
}

template <typename T>
std::int64_t BasicGatConv<T>::output_features() const noexcept {
  return detail::output_width(options_.concat, options_.heads, options_.out_features);
}

template <typename T>
void BasicGatConv<T>::forward(const Graph& graph, InputRef<T> x, Mode mode, Rng& rng, Cache& cache,
                              RowMatrix<T>& out, std::span<const std::uint8_t> rows,
                              BasicHalo<T>* halo, const RowMatrix<T>* edge_features) const {
  constexpr const char* kWhere = "gat_conv.forward";
  detail::check_input(kWhere, graph, x, options_.in_features);
  const Graph& mask = detail::forward_mask(graph, options_.add_self_loops, cache.looped);
  const RowMatrix<T>* features = detail::mask_edge_features(
      kWhere, graph, mask, edge_features, options_.edge_features, cache.looped_edge_features);
  detail::project(*store_, lin_, x, cache.h);
  if (halo != nullptr) halo->fill(cache.h);
  ops::detail::head_scores<T>(cache.h, store_->value(att_src_), store_->value(att_dst_), cache.src,
                              cache.dst);
  if (features != nullptr) {
    // <a_edge, f W_e> per head is f (W_e a_edge): a D x H matrix, then one product per edge.
    fold_edge_attention<T>(store_->value(*lin_edge_), store_->value(*att_edge_), cache.edge_att);
    ops::matmul<T>(*features, cache.edge_att, cache.edge);
  }
  cache.dropout = detail::dropout_for(mode, options_.dropout, rng, cache.dropout.numbers);
  const ops::AdditiveScore<T> score{cache.src, cache.dst, static_cast<T>(options_.negative_slope),
                                    features != nullptr ? &cache.edge : nullptr};
  detail::attend(*store_, options_, mask, score, cache.h, x, residual_, bias_, cache, out, rows);
}

template <typename T>
void BasicGatConv<T>::backward(const Graph& graph, InputRef<T> x, Cache& cache,
                               const RowMatrix<T>& grad_out, RowMatrix<T>* grad_x,
                               BasicHalo<T>* halo, const RowMatrix<T>* edge_features) const {
  constexpr const char* kWhere = "gat_conv.backward";
  const RowMatrix<T>& grad_heads = detail::output_terms_backward(
      kWhere, *store_, options_, graph, x, residual_, bias_, grad_out, grad_x, cache);
  const Graph& mask = detail::attention_mask(graph, options_.add_self_loops, cache.looped);
  const RowMatrix<T>* features = detail::backward_edge_features(
      kWhere, graph, mask, edge_features, options_.edge_features, cache.looped_edge_features);
  const ops::AdditiveScore<T> score{cache.src, cache.dst, static_cast<T>(options_.negative_slope),
                                    features != nullptr ? &cache.edge : nullptr};
  ops::AdditiveScoreGrad<T> grad_score{cache.grad_src, cache.grad_dst,
                                       features != nullptr ? &cache.grad_edge : nullptr};
  ops::attention_backward(mask, score, cache.h, cache.alpha, cache.dropout, grad_heads, grad_score,
                          cache.grad_h, cache.workspace, options_.schedule);
  ops::detail::head_scores_backward<T>(cache.h, store_->value(att_src_), store_->value(att_dst_),
                                       cache.grad_src, cache.grad_dst, cache.grad_h,
                                       store_->grad(att_src_), store_->grad(att_dst_));
  if (features != nullptr) {
    // dL/d(W_e a_edge) = f^T dL/dedge, then through the per-head products into W_e and a_edge.
    cache.grad_edge_att.setZero(options_.edge_features, options_.heads);
    ops::matmul_backward_weight<T>(*features, cache.grad_edge, cache.grad_edge_att);
    fold_edge_attention_backward<T>(store_->value(*lin_edge_), store_->value(*att_edge_),
                                    cache.grad_edge_att, store_->grad(*lin_edge_),
                                    store_->grad(*att_edge_));
  }
  if (halo != nullptr) halo->reduce(cache.grad_h);
  detail::project_backward(*store_, lin_, x, cache.grad_h, grad_x);
}

template <typename T>
AttentionWeights<T> BasicGatConv<T>::attention(const Graph& graph, const Cache& cache) const {
  return detail::attention_of(graph, options_, cache);
}

template class BasicGatConv<float>;
template class BasicGatConv<double>;

}  // namespace maskgat::nn
