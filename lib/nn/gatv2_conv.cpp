#include "maskgat/nn/gatv2_conv.hpp"

#include "maskgat/ops/attention.hpp"
#include "maskgat/ops/matmul.hpp"
#include "nn/detail/layer_common.hpp"

namespace maskgat::nn {

template <typename T>
BasicGatV2Conv<T>::BasicGatV2Conv(ParameterStore<T>& store, std::string_view name,
                                  const GatV2ConvOptions& options, Rng& rng)
    : store_(&store), options_(options) {
  detail::check_layer_options("gatv2_conv", options);
  const std::string prefix(name);
  src_ = detail::add_projection(store, prefix + ".lin_l", options.in_features,
                                detail::heads_width(options), options.bias, rng);
  if (!options.share_weights) {
    dst_ = detail::add_projection(store, prefix + ".lin_r", options.in_features,
                                  detail::heads_width(options), options.bias, rng);
  }
  att_ = store.add(prefix + ".att", options.heads, options.out_features);
  glorot_uniform<T>(store.value(att_), options.heads, options.out_features, rng);
  if (options.edge_features > 0) {
    lin_edge_ = detail::add_projection(store, prefix + ".lin_edge", options.edge_features,
                                       detail::heads_width(options), false, rng)
                    .weight;
  }
  detail::add_output_terms(store, prefix, options, rng, residual_, bias_);
}

template <typename T>
std::int64_t BasicGatV2Conv<T>::output_features() const noexcept {
  return detail::output_width(options_.concat, options_.heads, options_.out_features);
}

template <typename T>
void BasicGatV2Conv<T>::forward(const Graph& graph, InputRef<T> x, Mode mode, Rng& rng,
                                Cache& cache, RowMatrix<T>& out, std::span<const std::uint8_t> rows,
                                BasicHalo<T>* halo, const RowMatrix<T>* edge_features) const {
  constexpr const char* kWhere = "gatv2_conv.forward";
  detail::check_input(kWhere, graph, x, options_.in_features);
  const Graph& mask = detail::forward_mask(graph, options_.add_self_loops, cache.looped);
  const RowMatrix<T>* features = detail::mask_edge_features(
      kWhere, graph, mask, edge_features, options_.edge_features, cache.looped_edge_features);
  detail::project(*store_, src_, x, cache.src);
  if (halo != nullptr) halo->fill(cache.src);
  if (dst_) detail::project(*store_, *dst_, x, cache.dst);
  if (features != nullptr) ops::matmul<T>(*features, store_->value(*lin_edge_), cache.edge);
  cache.dropout = detail::dropout_for(mode, options_.dropout, rng, cache.dropout.numbers);
  const ops::GatV2Score<T> score{cache.src, dst_ ? cache.dst : cache.src, store_->value(att_),
                                 static_cast<T>(options_.negative_slope),
                                 features != nullptr ? &cache.edge : nullptr};
  detail::attend(*store_, options_, mask, score, cache.src, x, residual_, bias_, cache, out, rows);
}

template <typename T>
void BasicGatV2Conv<T>::backward(const Graph& graph, InputRef<T> x, Cache& cache,
                                 const RowMatrix<T>& grad_out, RowMatrix<T>* grad_x,
                                 BasicHalo<T>* halo, const RowMatrix<T>* edge_features) const {
  constexpr const char* kWhere = "gatv2_conv.backward";
  const RowMatrix<T>& grad_heads = detail::output_terms_backward(
      kWhere, *store_, options_, graph, x, residual_, bias_, grad_out, grad_x, cache);
  const Graph& mask = detail::attention_mask(graph, options_.add_self_loops, cache.looped);
  const RowMatrix<T>* features = detail::backward_edge_features(
      kWhere, graph, mask, edge_features, options_.edge_features, cache.looped_edge_features);
  const ops::GatV2Score<T> score{cache.src, dst_ ? cache.dst : cache.src, store_->value(att_),
                                 static_cast<T>(options_.negative_slope),
                                 features != nullptr ? &cache.edge : nullptr};
  ops::GatV2ScoreGrad<T> grad_score{cache.grad_src, cache.grad_dst, cache.grad_att,
                                    features != nullptr ? &cache.grad_edge : nullptr};
  ops::attention_backward(mask, score, cache.src, cache.alpha, cache.dropout, grad_heads,
                          grad_score, cache.grad_values, cache.workspace, options_.schedule);
  store_->grad(att_) += cache.grad_att;
  if (features != nullptr) {
    ops::matmul_backward_weight<T>(*features, cache.grad_edge, store_->grad(*lin_edge_));
  }
  // The source projection feeds both the values and the score's source term.
  cache.grad_src += cache.grad_values;
  if (dst_) {
    detail::project_backward(*store_, *dst_, x, cache.grad_dst, grad_x);
  } else {
    cache.grad_src += cache.grad_dst;
  }
  if (halo != nullptr) halo->reduce(cache.grad_src);
  detail::project_backward(*store_, src_, x, cache.grad_src, grad_x);
}

template <typename T>
AttentionWeights<T> BasicGatV2Conv<T>::attention(const Graph& graph, const Cache& cache) const {
  return detail::attention_of(graph, options_, cache);
}

template class BasicGatV2Conv<float>;
template class BasicGatV2Conv<double>;

}  // namespace maskgat::nn
