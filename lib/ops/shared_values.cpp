#include "maskgat/ops/shared_values.hpp"

#include <string>
#include <vector>

#include "ops/detail/buffer.hpp"
#include "ops/detail/score_rows.hpp"
#include "ops/detail/shape_checks.hpp"

namespace maskgat::ops {
namespace {

// The rows a call forms and each one's place among them, where its sums are.
class FormedRows {
 public:
  FormedRows(const char* where, std::span<const std::uint8_t> rows, NodeId nodes) : formed_(rows) {
    detail::check_rows(where, rows, nodes);
    if (rows.empty()) {
      count_ = nodes;
      return;
    }
    places_.resize(rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
      places_[i] = count_;
      count_ += rows[i] != 0 ? 1 : 0;
    }
  }

  [[nodiscard]] bool operator()(NodeId i) const { return formed_(i); }
  // Row i's place among the formed rows (i formed).
  [[nodiscard]] std::int64_t place(NodeId i) const {
    return places_.empty() ? i : places_[detail::to_index(i)];
  }
  [[nodiscard]] std::int64_t count() const { return count_; }
  [[nodiscard]] const detail::SomeRows& formed() const { return formed_; }

 private:
  detail::SomeRows formed_;
  std::vector<std::int64_t> places_;
  std::int64_t count_ = 0;
};

template <typename T>
using Vector = Eigen::Array<T, Eigen::Dynamic, 1>;

// target += weight * source, `width` elements.
template <typename T>
[[gnu::always_inline]] inline void add_scaled(T weight, const T* source, T* target,
                                              std::int64_t width) {
  Eigen::Map<Vector<T>>(target, width) += weight * Eigen::Map<const Vector<T>>(source, width);
}

// The H rows of a formed row's sums (or their gradients): head h's at `first + h * stride`.
template <typename T>
auto head_rows(T* first, std::int64_t heads, std::int64_t width, std::int64_t stride) {
  using Rows = std::conditional_t<std::is_const_v<T>, const RowMatrix<std::remove_const_t<T>>,
                                  RowMatrix<std::remove_const_t<T>>>;
  return Eigen::Map<Rows, 0, Eigen::OuterStride<>>(first, heads, width,
                                                   Eigen::OuterStride<>(stride));
}

}  // namespace

template <typename T>
void attention_shared_values(const Graph& mask, const AdditiveScore<T>& score,
                             const Eigen::Ref<const RowMatrix<T>>& x, const DropoutKey& dropout,
                             RowMatrix<T>& alpha, RowMatrix<T>& sums, const Schedule& schedule,
                             std::span<const std::uint8_t> rows) {
  constexpr const char* kWhere = "ops::attention_shared_values";
  detail::check_schedule(kWhere, schedule);
  const auto scores = detail::score_rows(kWhere, mask, score);
  const std::int64_t heads = scores.heads();
  detail::check_shape(kWhere, "x", x, mask.num_nodes(), -1, "the mask's node count");
  const FormedRows formed(kWhere, rows, mask.num_nodes());
  const detail::DropoutFactor<T> factor(kWhere, dropout, heads, mask);
  const std::int64_t width = x.cols();
  const std::int64_t stride = formed.count() * width;
  detail::resize_buffer(alpha, mask.num_edges(), heads);
  detail::resize_buffer(sums, heads * formed.count(), width);
  detail::for_each_destination_range(
      mask, schedule, heads, width, [&](auto shape, const detail::RowRange& range) {
        detail::for_each_row(mask, range, [&](NodeId i, auto sources, EdgeId first) {
          if (formed(i)) scores.score_row(shape, i, sources, first, alpha.data() + first * heads);
        });
        detail::softmax_rows(shape, mask, range, alpha.data(), formed.formed());
        T* weights = detail::row_scratch<T>(detail::to_index((range.last - range.first) * heads));
        factor.fill(mask, range, weights);
        detail::for_each_row(
            mask, range, [&](NodeId i, const detail::Neighbors& sources, EdgeId first) {
              if (!formed(i)) return;
              auto target = head_rows(sums.data() + formed.place(i) * width, heads, width, stride);
              target.setZero();
              T* row_weights = weights + (first - range.first) * heads;
              const T* row_alpha = alpha.data() + first * heads;
              for (std::size_t k = 0; k < sources.size(); ++k) {
                detail::prefetch_ahead(sources, k, x.data(), width);
                const T* source = x.data() + sources[k] * width;
                for (std::int64_t h = 0; h < heads; ++h) {
                  const auto at = static_cast<std::int64_t>(k) * heads + h;
                  add_scaled(row_weights[at] * row_alpha[at], source, &target(h, 0), width);
                }
              }
            });
      });
}

template <typename T>
void attention_shared_values_backward(const Graph& mask, const AdditiveScore<T>& score,
                                      const Eigen::Ref<const RowMatrix<T>>& x,
                                      const RowMatrix<T>& alpha, const DropoutKey& dropout,
                                      std::span<const std::uint8_t> rows,
                                      const RowMatrix<T>& grad_sums,
                                      AdditiveScoreGrad<T>& grad_score, RowMatrix<T>* grad_x,
                                      RowMatrix<T>& workspace, const Schedule& schedule) {
  constexpr const char* kWhere = "ops::attention_shared_values_backward";
  detail::check_schedule(kWhere, schedule);
  const auto scores = detail::score_rows(kWhere, mask, score);
  const std::int64_t heads = scores.heads();
  const NodeId nodes = mask.num_nodes();
  detail::check_shape(kWhere, "x", x, nodes, -1, "the mask's node count");
  const FormedRows formed(kWhere, rows, nodes);
  const detail::DropoutFactor<T> factor(kWhere, dropout, heads, mask);
  detail::check_edge_matrix(kWhere, "alpha", mask, alpha, heads);
  const std::int64_t width = x.cols();
  const std::int64_t stride = formed.count() * width;
  detail::check_shape(kWhere, "grad_sums", grad_sums, heads * formed.count(), width,
                      "the heads times the formed rows");
  if (grad_x != nullptr) {
    detail::check_shape(kWhere, "grad_x", *grad_x, nodes, width, "the mask's node count");
  }
  // Rows 0..E-1 of the workspace: per edge and head, dL/dalpha, then dL/dscore; with grad_x the
  // next E rows: each coefficient times its dropout factor, which the source pass scales by. The
  // rows after them: the live rows, a byte per node.
  const std::int64_t edges = mask.num_edges();
  const std::int64_t weight_rows = grad_x != nullptr ? edges : 0;
  const auto row_bytes = heads * static_cast<std::int64_t>(sizeof(T));
  detail::resize_buffer(workspace, edges + weight_rows + (nodes + row_bytes - 1) / row_bytes,
                        heads);
  T* buffer = workspace.data();
  T* weights = buffer + edges * heads;
  auto* live_bytes =
      reinterpret_cast<std::uint8_t*>(workspace.data() + (edges + weight_rows) * heads);
  // A row is live when it is formed and a head's gradient there is not zero.
  maskgat::detail::for_each_block(
      nodes, maskgat::detail::kRowBlock, [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t i = begin; i < end; ++i) {
          bool live = false;
          if (formed(static_cast<NodeId>(i))) {
            const T* row = grad_sums.data() + formed.place(static_cast<NodeId>(i)) * width;
            for (std::int64_t h = 0; h < heads && !live; ++h) {
              live = !detail::is_zero_row(row + h * stride, width);
            }
          }
          live_bytes[i] = live ? 1 : 0;
        }
      });
  const detail::LiveRows live(live_bytes);
  scores.prepare(grad_score, nodes);
  detail::for_each_destination_range(
      mask, schedule, heads, width, [&](auto shape, const detail::RowRange& range) {
        T* factors = detail::row_scratch<T>(detail::to_index((range.last - range.first) * heads));
        factor.fill(mask, range, factors);
        detail::for_each_row(
            mask, range, [&](NodeId i, const detail::Neighbors& sources, EdgeId first) {
              T* row = buffer + first * heads;
              if (!live(i)) {
                scores.dst_row(shape, grad_score, i,
                               detail::Neighbors(mask.in_sources(), first, first), first, row);
                detail::clear_edge_grads(grad_score, first, sources.size());
                return;
              }
              const auto grad =
                  head_rows(grad_sums.data() + formed.place(i) * width, heads, width, stride);
              const T* row_factors = factors + (first - range.first) * heads;
              const T* row_alpha = alpha.data() + first * heads;
              for (std::size_t k = 0; k < sources.size(); ++k) {
                detail::prefetch_ahead(sources, k, x.data(), width);
                const auto at = static_cast<std::int64_t>(k) * heads;
                Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, 1>>(row + at, heads).noalias() =
                    grad * Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, 1>>(
                               x.data() + sources[k] * width, width);
                for (std::int64_t h = 0; h < heads; ++h) row[at + h] *= row_factors[at + h];
                if (grad_x != nullptr) {
                  for (std::int64_t h = 0; h < heads; ++h) {
                    weights[first * heads + at + h] = row_factors[at + h] * row_alpha[at + h];
                  }
                }
              }
              detail::softmax_backward_row(shape, row_alpha, row,
                                           static_cast<std::int64_t>(sources.size()));
              scores.dst_row(shape, grad_score, i, sources, first, row);
            });
      });
  detail::for_each_live_source(
      mask, schedule, heads, width, live,
      [&](auto shape, NodeId j, const detail::Neighbors& targets, const detail::EdgeIds& ids) {
        scores.src_row(shape, grad_score, j, targets, ids, buffer);
        if (grad_x == nullptr) return;
        T* target = grad_x->data() + j * width;
        for (std::size_t k = 0; k < targets.size(); ++k) {
          const T* grad = grad_sums.data() + formed.place(targets[k]) * width;
          for (std::int64_t h = 0; h < heads; ++h) {
            add_scaled(weights[ids[k] * heads + h], grad + h * stride, target, width);
          }
        }
      });
  scores.finish(grad_score);
}

#define MASKGAT_INSTANTIATE_SHARED_VALUES(T)                                                      \
  template void attention_shared_values<T>(const Graph&, const AdditiveScore<T>&,                 \
                                           const Eigen::Ref<const RowMatrix<T>>&,                 \
                                           const DropoutKey&, RowMatrix<T>&, RowMatrix<T>&,       \
                                           const Schedule&, std::span<const std::uint8_t>);       \
  template void attention_shared_values_backward<T>(                                              \
      const Graph&, const AdditiveScore<T>&, const Eigen::Ref<const RowMatrix<T>>&,               \
      const RowMatrix<T>&, const DropoutKey&, std::span<const std::uint8_t>, const RowMatrix<T>&, \
      AdditiveScoreGrad<T>&, RowMatrix<T>*, RowMatrix<T>&, const Schedule&);
MASKGAT_INSTANTIATE_SHARED_VALUES(float)
MASKGAT_INSTANTIATE_SHARED_VALUES(double)
#undef MASKGAT_INSTANTIATE_SHARED_VALUES

}  // namespace maskgat::ops
