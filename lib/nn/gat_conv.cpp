#include "maskgat/nn/gat_conv.hpp"

#include <string>
#include <tuple>
#include <vector>

#include "core/detail/parallel.hpp"
#include "maskgat/ops/attention.hpp"
#include "maskgat/ops/matmul.hpp"
#include "maskgat/ops/shared_values.hpp"
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

// The rows a call forms, ascending (every row when `rows` is empty), and the mask entries in them.
std::int64_t formed_rows(const Graph& mask, std::span<const std::uint8_t> rows,
                         std::vector<NodeId>& formed) {
  formed.clear();
  if (rows.empty()) return mask.num_edges();
  const auto offsets = mask.in_offsets();
  std::int64_t edges = 0;
  for (NodeId i = 0; i < mask.num_nodes(); ++i) {
    if (rows[static_cast<std::size_t>(i)] == 0) continue;
    formed.push_back(i);
    edges += offsets[static_cast<std::size_t>(i) + 1] - offsets[static_cast<std::size_t>(i)];
  }
  return edges;
}

// How many of the projection's multiply-adds one of aggregating first costs: its sums and its
// narrow score products (x (W_h a), 2 H columns, for which Eigen packs all of x) run at about half
// the rate of the projection's product (docs/optimisation-log.md, "Aggregating before projecting").
constexpr double kAggregateFirstRate = 2.0;

// Weight rows per task of the aggregate-first weight gradient: a constant, so each element's sum
// is formed by the same product on any number of threads.
constexpr std::int64_t kWeightRowBlock = 32;

// The formed rows' attention output from their per-head sums: head h of formed row r is
// sums(h * R + r, :) W_h, into `formed_heads` (R x H*C); then `out` (N x H*C) holds those rows at
// the formed ids and zero elsewhere (`formed` empty: every row, in order).
template <typename T>
void project_sums(const Eigen::Ref<const RowMatrix<T>>& weight, const RowMatrix<T>& sums,
                  std::int64_t heads, const std::vector<NodeId>& formed, NodeId nodes,
                  RowMatrix<T>& formed_heads, RowMatrix<T>& out) {
  const std::int64_t count = sums.rows() / heads;
  const std::int64_t channels = weight.cols() / heads;
  ops::detail::resize_buffer(formed_heads, count, weight.cols());
  maskgat::detail::for_each_block(
      count, maskgat::detail::kRowBlock, [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t h = 0; h < heads; ++h) {
          formed_heads.block(begin, h * channels, end - begin, channels).noalias() =
              sums.middleRows(h * count + begin, end - begin) *
              weight.middleCols(h * channels, channels);
        }
      });
  if (formed.empty()) {
    out = formed_heads;
    return;
  }
  ops::detail::resize_buffer(out, nodes, weight.cols());
  maskgat::detail::for_each_block(
      nodes, maskgat::detail::kRowBlock,
      [&](std::int64_t begin, std::int64_t end) { out.middleRows(begin, end - begin).setZero(); });
  maskgat::detail::for_each_block(
      count, maskgat::detail::kRowBlock, [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t r = begin; r < end; ++r) {
          out.row(formed[static_cast<std::size_t>(r)]) = formed_heads.row(r);
        }
      });
}

// Backward of `project_sums`: adds dL/dW and writes dL/dsums ((H * R) x F) from dL/dout, whose
// formed rows are gathered into `grad_formed` first.
template <typename T>
void project_sums_backward(const Eigen::Ref<const RowMatrix<T>>& weight, const RowMatrix<T>& sums,
                           std::int64_t heads, const std::vector<NodeId>& formed,
                           const RowMatrix<T>& grad_out, RowMatrix<T>& grad_formed,
                           Eigen::Map<RowMatrix<T>> grad_weight, RowMatrix<T>& grad_sums) {
  const std::int64_t count = sums.rows() / heads;
  const std::int64_t channels = weight.cols() / heads;
  const RowMatrix<T>* grad = &grad_out;
  if (!formed.empty()) {
    ops::detail::resize_buffer(grad_formed, count, weight.cols());
    maskgat::detail::for_each_block(
        count, maskgat::detail::kRowBlock, [&](std::int64_t begin, std::int64_t end) {
          for (std::int64_t r = begin; r < end; ++r) {
            grad_formed.row(r) = grad_out.row(formed[static_cast<std::size_t>(r)]);
          }
        });
    grad = &grad_formed;
  }
  maskgat::detail::for_each_block(
      weight.rows(), kWeightRowBlock, [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t h = 0; h < heads; ++h) {
          grad_weight.block(begin, h * channels, end - begin, channels).noalias() +=
              sums.block(h * count, begin, count, end - begin).transpose() *
              grad->middleCols(h * channels, channels);
        }
      });
  ops::detail::resize_buffer(grad_sums, sums.rows(), sums.cols());
  maskgat::detail::for_each_block(
      count, maskgat::detail::kRowBlock, [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t h = 0; h < heads; ++h) {
          grad_sums.middleRows(h * count + begin, end - begin).noalias() =
              grad->block(begin, h * channels, end - begin, channels) *
              weight.middleCols(h * channels, channels).transpose();
        }
      });
}

}  // namespace

ProjectionCosts projection_costs(std::int64_t nodes, std::int64_t formed, std::int64_t edges,
                                 std::int64_t in_features, std::int64_t heads,
                                 std::int64_t channels) {
  const auto n = static_cast<double>(nodes);
  const auto r = static_cast<double>(formed);
  const auto e = static_cast<double>(edges);
  const auto f = static_cast<double>(in_features);
  const auto h = static_cast<double>(heads);
  const auto c = static_cast<double>(channels);
  return {2 * n * f * h * c + 3 * e * h * c, 4 * n * f * h + 2 * e * h * f + 3 * r * h * f * c};
}

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
  const auto weight = store_->value(lin_.weight);
  const std::int64_t edges = formed_rows(mask, rows, cache.formed);
  cache.aggregated_first = aggregates_first(
      x, halo, rows.empty() ? mask.num_nodes() : static_cast<std::int64_t>(cache.formed.size()),
      edges);
  if (cache.aggregated_first) {
    cache.rows.assign(rows.begin(), rows.end());
    // <a_src, W_h x_j> = <W_h a_src, x_j>: the scores from x and the folded vectors.
    fold_edge_attention<T>(weight, store_->value(att_src_), cache.folded_src);
    fold_edge_attention<T>(weight, store_->value(att_dst_), cache.folded_dst);
    ops::matmul<T>(x, cache.folded_src, cache.src);
    ops::matmul<T>(x, cache.folded_dst, cache.dst);
  } else {
    detail::project(*store_, lin_, x, cache.h);
    if (halo != nullptr) halo->fill(cache.h);
    ops::detail::head_scores<T>(cache.h, store_->value(att_src_), store_->value(att_dst_),
                                cache.src, cache.dst);
  }
  if (features != nullptr) {
    // <a_edge, f W_e> per head is f (W_e a_edge): a D x H matrix, then one product per edge.
    fold_edge_attention<T>(store_->value(*lin_edge_), store_->value(*att_edge_), cache.edge_att);
    ops::matmul<T>(*features, cache.edge_att, cache.edge);
  }
  cache.dropout = detail::dropout_for(mode, options_.dropout, rng, cache.dropout.numbers);
  const ops::AdditiveScore<T> score{cache.src, cache.dst, static_cast<T>(options_.negative_slope),
                                    features != nullptr ? &cache.edge : nullptr};
  if (!cache.aggregated_first) {
    detail::attend(*store_, options_, mask, score, cache.h, x, residual_, bias_, cache, out, rows);
    return;
  }
  ops::attention_shared_values<T>(mask, score, x.dense(), cache.dropout, cache.alpha, cache.sums,
                                  options_.schedule, rows);
  RowMatrix<T>& heads_out =
      detail::heads_target(options_.concat, options_.heads, out, cache.heads_out);
  project_sums<T>(weight, cache.sums, options_.heads, cache.formed, mask.num_nodes(),
                  cache.formed_heads, heads_out);
  detail::finish_output(*store_, options_.concat, options_.heads, cache.heads_out, residual_, bias_,
                        x, cache.projected, out);
}

template <typename T>
bool BasicGatConv<T>::aggregates_first(InputRef<T> x, const BasicHalo<T>* halo, std::int64_t formed,
                                       std::int64_t edges) const {
  switch (options_.order) {
    case ProjectionOrder::kProjectFirst:
      return false;
    case ProjectionOrder::kAggregateFirst:
      if (x.is_sparse() || halo != nullptr) {
        throw InvalidArgument(
            std::string("gat_conv.forward: the aggregate-first order needs a dense x and no "
                        "halo, got ") +
            (x.is_sparse() ? "a sparse x" : "a halo"));
      }
      return true;
    case ProjectionOrder::kAuto:
      break;
  }
  if (x.is_sparse() || halo != nullptr) return false;
  const ProjectionCosts costs =
      projection_costs(x.rows(), formed, edges, x.cols(), options_.heads, options_.out_features);
  return costs.aggregate_first * kAggregateFirstRate < costs.project_first;
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
  const auto weight = store_->value(lin_.weight);
  if (cache.aggregated_first) {
    project_sums_backward<T>(weight, cache.sums, options_.heads, cache.formed, grad_heads,
                             cache.grad_formed, store_->grad(lin_.weight), cache.grad_sums);
    ops::attention_shared_values_backward<T>(mask, score, x.dense(), cache.alpha, cache.dropout,
                                             cache.rows, cache.grad_sums, grad_score, grad_x,
                                             cache.workspace, options_.schedule);
    // Through the folded vectors: dL/d(W_h a) = x^T dL/dscores, then into W and a.
    for (const auto& [folded, grad, att] :
         {std::tuple(&cache.folded_src, &cache.grad_src, att_src_),
          std::tuple(&cache.folded_dst, &cache.grad_dst, att_dst_)}) {
      cache.grad_folded.setZero(folded->rows(), folded->cols());
      ops::matmul_backward_weight<T>(x, *grad, cache.grad_folded);
      fold_edge_attention_backward<T>(weight, store_->value(att), cache.grad_folded,
                                      store_->grad(lin_.weight), store_->grad(att));
      if (grad_x != nullptr) ops::matmul_backward_input<T>(*grad, *folded, *grad_x);
    }
  } else {
    ops::attention_backward(mask, score, cache.h, cache.alpha, cache.dropout, grad_heads,
                            grad_score, cache.grad_h, cache.workspace, options_.schedule);
    ops::detail::head_scores_backward<T>(cache.h, store_->value(att_src_), store_->value(att_dst_),
                                         cache.grad_src, cache.grad_dst, cache.grad_h,
                                         store_->grad(att_src_), store_->grad(att_dst_));
  }
  if (features != nullptr) {
    // dL/d(W_e a_edge) = f^T dL/dedge, then through the per-head products into W_e and a_edge.
    cache.grad_edge_att.setZero(options_.edge_features, options_.heads);
    ops::matmul_backward_weight<T>(*features, cache.grad_edge, cache.grad_edge_att);
    fold_edge_attention_backward<T>(store_->value(*lin_edge_), store_->value(*att_edge_),
                                    cache.grad_edge_att, store_->grad(*lin_edge_),
                                    store_->grad(*att_edge_));
  }
  if (cache.aggregated_first) return;
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
