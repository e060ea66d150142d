#include "maskgat/nn/gat_conv.hpp"

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "core/detail/parallel.hpp"
#include "maskgat/ops/attention.hpp"
#include "maskgat/ops/matmul.hpp"
#include "maskgat/ops/shared_values.hpp"
#include "nn/detail/layer_common.hpp"
#include "ops/detail/head_layout.hpp"
#include "ops/detail/head_scores.hpp"
#include "ops/detail/register_blocks.hpp"

namespace maskgat::nn {
namespace {

// A projection folded with an attention vector: folded(d, h) = <head h of row d of W, a_h>
// (D x H, `folded` sized by the caller), so <a_h, head h of f W> is <f, folded(:, h)>. For the edge
// features' W_e and a_edge, the edge term is f_ij folded; for W and a_src or a_dst, the scores.
template <typename T>
void fold_edge_attention(const Eigen::Ref<const RowMatrix<T>>& weight,
                         const Eigen::Ref<const RowMatrix<T>>& att,
                         Eigen::Ref<RowMatrix<T>> folded) {
  const std::int64_t channels = att.cols();
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
                                  const Eigen::Ref<const RowMatrix<T>>& grad_folded,
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

using ops::detail::kWeightRowBlock;

// Calls fn(sums, first) for each block of columns [first, first + sums.size()) of a row of 2 H
// score columns, their sums in registers: a whole register block (the 8 heads' two scores), or a
// shorter one.
template <typename T, typename Fn>
void for_each_score_block(std::int64_t width, Fn&& fn) {
  using ops::detail::kColumnBlock;
  std::int64_t first = 0;
  for (; first + kColumnBlock <= width; first += kColumnBlock) {
    fn(ops::detail::Block<T>::Zero().eval(), first);
  }
  if (first < width) fn(ops::detail::Tail<T>::Zero(width - first).eval(), first);
}

// Rows of x whose score sums `score_products` forms at once, and columns of x whose gradient sums
// `score_products_backward` forms at once: independent multiply-add chains, enough to hide their
// latency (one chain per row ran at a quarter of the rate).
constexpr std::int64_t kScoreRows = 8;

// src(i, h) = <x_i, folded(:, h)> and dst(i, h) = <x_i, folded(:, H + h)>, each a sum over x's
// columns in order, in fixed blocks of rows. Each row of x is read once with its 2 H sums in
// registers, kScoreRows rows at a time: for so few columns Eigen's product packs all of x first,
// as much traffic as the product itself.
template <typename T>
void score_products(const Eigen::Ref<const RowMatrix<T>>& x, const RowMatrix<T>& folded,
                    RowMatrix<T>& src, RowMatrix<T>& dst) {
  const std::int64_t heads = folded.cols() / 2;
  const std::int64_t features = x.cols();
  ops::detail::resize_buffer(src, x.rows(), heads);
  ops::detail::resize_buffer(dst, x.rows(), heads);
  maskgat::detail::for_each_block(
      x.rows(), maskgat::detail::kRowBlock, [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t first_row = begin; first_row < end; first_row += kScoreRows) {
          // A group past the block's end repeats its last row, whose sums are not stored.
          std::array<const T*, kScoreRows> rows{};
          for (std::int64_t k = 0; k < kScoreRows; ++k) {
            rows[k] = x.row(std::min(first_row + k, end - 1)).data();
          }
          for_each_score_block<T>(folded.cols(), [&](auto zero, std::int64_t first) {
            using Sums = decltype(zero);
            std::array<Sums, kScoreRows> sums;
            sums.fill(zero);
            for (std::int64_t f = 0; f < features; ++f) {
              const Eigen::Map<const Sums> column(folded.row(f).data() + first, zero.size());
              for (std::int64_t k = 0; k < kScoreRows; ++k) sums[k] += rows[k][f] * column;
            }
            for (std::int64_t k = 0; k < std::min(kScoreRows, end - first_row); ++k) {
              for (std::int64_t c = 0; c < zero.size(); ++c) {
                const std::int64_t at = first + c;
                (at < heads ? src(first_row + k, at) : dst(first_row + k, at - heads)) = sums[k][c];
              }
            }
          });
        }
      });
}

// Backward of `score_products`: grad_folded (F x 2 H, overwritten) = x^T [grad_src grad_dst].
// Each fixed block of rows sums its rows in order into its own partial (`partials`, resized),
// kScoreRows columns of x at a time, then every element adds the blocks' partials in block order:
// the same sums on any number of threads.
template <typename T>
void score_products_backward(const Eigen::Ref<const RowMatrix<T>>& x, const RowMatrix<T>& grad_src,
                             const RowMatrix<T>& grad_dst, RowMatrix<T>& partials,
                             RowMatrix<T>& grad_folded) {
  const std::int64_t heads = grad_src.cols();
  const std::int64_t width = 2 * heads;
  const std::int64_t features = x.cols();
  const std::int64_t block = maskgat::detail::kRowBlock;
  const std::int64_t blocks = (x.rows() + block - 1) / block;
  ops::detail::resize_buffer(partials, blocks * features, width);
  maskgat::detail::run_tasks(blocks, [&](std::int64_t b) {
    const std::int64_t begin = b * block;
    const std::int64_t count = std::min(block, x.rows() - begin);
    // The block's gradient rows side by side, [grad_src grad_dst].
    T* grad = ops::detail::row_scratch<T>(static_cast<std::size_t>(count * width));
    for (std::int64_t r = 0; r < count; ++r) {
      std::copy_n(grad_src.row(begin + r).data(), heads, grad + r * width);
      std::copy_n(grad_dst.row(begin + r).data(), heads, grad + r * width + heads);
    }
    for (std::int64_t first_feature = 0; first_feature < features; first_feature += kScoreRows) {
      // A group past the last column repeats it; those sums are not stored.
      std::array<std::int64_t, kScoreRows> columns{};
      for (std::int64_t k = 0; k < kScoreRows; ++k) {
        columns[k] = std::min(first_feature + k, features - 1);
      }
      for_each_score_block<T>(width, [&](auto zero, std::int64_t first) {
        using Sums = decltype(zero);
        std::array<Sums, kScoreRows> sums;
        sums.fill(zero);
        for (std::int64_t r = 0; r < count; ++r) {
          const T* row = x.row(begin + r).data();
          const Eigen::Map<const Sums> gradient(grad + r * width + first, zero.size());
          for (std::int64_t k = 0; k < kScoreRows; ++k) sums[k] += row[columns[k]] * gradient;
        }
        for (std::int64_t k = 0; k < std::min(kScoreRows, features - first_feature); ++k) {
          Eigen::Map<Sums>(partials.row(b * features + first_feature + k).data() + first,
                           zero.size()) = sums[k];
        }
      });
    }
  });
  ops::detail::resize_buffer(grad_folded, features, width);
  maskgat::detail::for_each_block(features, kWeightRowBlock,
                                  [&](std::int64_t begin, std::int64_t end) {
                                    for (std::int64_t f = begin; f < end; ++f) {
                                      grad_folded.row(f).setZero();
                                      for (std::int64_t b = 0; b < blocks; ++b) {
                                        grad_folded.row(f) += partials.row(b * features + f);
                                      }
                                    }
                                  });
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

// The formed rows' attention output from their per-head sums: head h of formed row r is
// sums(h * R + r, :) W_h, formed in `formed_heads` (R x H*C); then `out` (N x H*C) holds those rows
// at the formed ids and zero elsewhere (`formed` empty: every row, formed in `out` itself).
template <typename T>
void project_sums(const Eigen::Ref<const RowMatrix<T>>& weight, const RowMatrix<T>& sums,
                  std::int64_t heads, const std::vector<NodeId>& formed, NodeId nodes,
                  RowMatrix<T>& formed_heads, RowMatrix<T>& out) {
  const std::int64_t count = sums.rows() / heads;
  const std::int64_t channels = weight.cols() / heads;
  RowMatrix<T>& target = formed.empty() ? out : formed_heads;
  ops::detail::resize_buffer(target, count, weight.cols());
  maskgat::detail::for_each_block(
      count, maskgat::detail::kRowBlock, [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t h = 0; h < heads; ++h) {
          target.block(begin, h * channels, end - begin, channels).noalias() =
              sums.middleRows(h * count + begin, end - begin) *
              weight.middleCols(h * channels, channels);
        }
      });
  if (formed.empty()) return;
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
  cache.aggregated_first = aggregates_first(mask, x, rows, halo, cache.formed);
  if (cache.aggregated_first) {
    cache.rows.assign(rows.begin(), rows.end());
    // <a_src, W_h x_j> = <W_h a_src, x_j>: the scores from x and the folded vectors.
    const std::int64_t heads = options_.heads;
    cache.folded.resize(options_.in_features, 2 * heads);
    fold_edge_attention<T>(weight, store_->value(att_src_), cache.folded.leftCols(heads));
    fold_edge_attention<T>(weight, store_->value(att_dst_), cache.folded.rightCols(heads));
    score_products<T>(x.dense(), cache.folded, cache.src, cache.dst);
  } else {
    detail::project(*store_, lin_, x, cache.h);
    if (halo != nullptr) halo->fill(cache.h);
    ops::detail::head_scores<T>(cache.h, store_->value(att_src_), store_->value(att_dst_),
                                cache.src, cache.dst);
  }
  if (features != nullptr) {
    // <a_edge, f W_e> per head is f (W_e a_edge): a D x H matrix, then one product per edge.
    cache.edge_att.resize(options_.edge_features, options_.heads);
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
bool BasicGatConv<T>::aggregates_first(const Graph& mask, InputRef<T> x,
                                       std::span<const std::uint8_t> rows, const BasicHalo<T>* halo,
                                       std::vector<NodeId>& formed) const {
  const bool possible = !x.is_sparse() && halo == nullptr;
  if (options_.order == ProjectionOrder::kProjectFirst ||
      (!possible && options_.order == ProjectionOrder::kAuto)) {
    return false;
  }
  if (!possible) {
    throw InvalidArgument(
        std::string("gat_conv.forward: the aggregate-first order needs a dense x and no halo, "
                    "got ") +
        (x.is_sparse() ? "a sparse x" : "a halo"));
  }
  const std::int64_t edges = formed_rows(mask, rows, formed);
  if (options_.order == ProjectionOrder::kAggregateFirst) return true;
  const std::int64_t count =
      rows.empty() ? mask.num_nodes() : static_cast<std::int64_t>(formed.size());
  const ProjectionCosts costs =
      projection_costs(x.rows(), count, edges, x.cols(), options_.heads, options_.out_features);
  return costs.aggregate_first < costs.project_first;
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
    const std::int64_t heads = options_.heads;
    score_products_backward<T>(x.dense(), cache.grad_src, cache.grad_dst, cache.grad_partials,
                               cache.grad_folded);
    fold_edge_attention_backward<T>(weight, store_->value(att_src_),
                                    cache.grad_folded.leftCols(heads), store_->grad(lin_.weight),
                                    store_->grad(att_src_));
    fold_edge_attention_backward<T>(weight, store_->value(att_dst_),
                                    cache.grad_folded.rightCols(heads), store_->grad(lin_.weight),
                                    store_->grad(att_dst_));
    if (grad_x != nullptr) {
      ops::matmul_backward_input<T>(cache.grad_src, cache.folded.leftCols(heads), *grad_x);
      ops::matmul_backward_input<T>(cache.grad_dst, cache.folded.rightCols(heads), *grad_x);
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
