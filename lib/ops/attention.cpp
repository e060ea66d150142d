#include "maskgat/ops/attention.hpp"

#include <string>

#include "ops/detail/buffer.hpp"
#include "ops/detail/score_rows.hpp"
#include "ops/detail/shape_checks.hpp"

namespace maskgat::ops {
namespace {

// A score's row kernels with its head count H and the channels per head of `values`.
template <typename Rows>
struct CheckedRows {
  Rows rows;
  std::int64_t heads;
  std::int64_t channels;
};

// The checks that both passes make first: the schedule, the score's matrices and `values`
// (N x (H * C)).
template <typename Score>
auto checked_rows(const char* where, const Graph& mask, const Score& score,
                  const RowMatrix<typename Score::Scalar>& values, const Schedule& schedule) {
  detail::check_schedule(where, schedule);
  auto rows = detail::score_rows(where, mask, score);
  const std::int64_t heads = rows.heads();
  detail::check_shape(where, "values", values, mask.num_nodes(), -1, "the mask's node count");
  const std::int64_t channels = detail::channels_per_head(where, "values", values.cols(), heads);
  return CheckedRows<decltype(rows)>{std::move(rows), heads, channels};
}

}  // namespace

template <typename Score>
void attention(const Graph& mask, const Score& score,
               const RowMatrix<typename Score::Scalar>& values, const DropoutKey& dropout,
               RowMatrix<typename Score::Scalar>& alpha, RowMatrix<typename Score::Scalar>& out,
               const Schedule& schedule, std::span<const std::uint8_t> rows) {
  using T = typename Score::Scalar;
  constexpr const char* kWhere = "ops::attention";
  const auto checked = checked_rows(kWhere, mask, score, values, schedule);
  detail::check_rows(kWhere, rows, mask.num_nodes());
  const detail::SomeRows formed(rows);
  const std::int64_t heads = checked.heads;
  const detail::DropoutFactor<T> factor(kWhere, dropout, heads, mask);
  detail::resize_buffer(alpha, mask.num_edges(), heads);
  detail::resize_buffer(out, mask.num_nodes(), values.cols());
  detail::for_each_destination_range(
      mask, schedule, heads, checked.channels, [&](auto shape, const detail::RowRange& range) {
        detail::for_each_row(mask, range, [&](NodeId i, auto sources, EdgeId first) {
          if (formed(i)) {
            checked.rows.score_row(shape, i, sources, first, alpha.data() + first * heads);
          }
        });
        detail::softmax_rows(shape, mask, range, alpha.data(), formed);
        detail::aggregate_rows(shape, mask, range, alpha.data(), values.data(), factor, out.data(),
                               formed);
      });
}

template <typename Score, typename Grad>
void attention_backward(const Graph& mask, const Score& score,
                        const RowMatrix<typename Score::Scalar>& values,
                        const RowMatrix<typename Score::Scalar>& alpha, const DropoutKey& dropout,
                        const RowMatrix<typename Score::Scalar>& grad_out, Grad& grad_score,
                        RowMatrix<typename Score::Scalar>& grad_values,
                        RowMatrix<typename Score::Scalar>& workspace, const Schedule& schedule) {
  using T = typename Score::Scalar;
  constexpr const char* kWhere = "ops::attention_backward";
  const auto checked = checked_rows(kWhere, mask, score, values, schedule);
  const auto& rows = checked.rows;
  const std::int64_t heads = checked.heads;
  detail::check_edge_matrix(kWhere, "alpha", mask, alpha, heads);
  detail::check_shape(kWhere, "grad_out", grad_out, mask.num_nodes(), values.cols(),
                      "the mask's node count");
  detail::check_distinct(kWhere, "grad_values", grad_values, "values", values);
  detail::check_distinct(kWhere, "grad_values", grad_values, "grad_out", grad_out);
  const detail::DropoutFactor<T> factor(kWhere, dropout, heads, mask);
  // Rows 0..E-1 of the workspace: per edge and head, dL/dalpha, then dL/dscore, then what the
  // source pass needs. The rows after them: the attention-dropout mask, a byte per coefficient,
  // then the live rows of grad_out, a byte per node.
  const std::int64_t edges = mask.num_edges();
  const std::int64_t nodes = mask.num_nodes();
  const auto row_bytes = heads * static_cast<std::int64_t>(sizeof(T));
  const auto rows_for = [&](std::int64_t bytes) { return (bytes + row_bytes - 1) / row_bytes; };
  const std::int64_t kept_rows = rows_for(edges * heads);
  detail::resize_buffer(workspace, edges + kept_rows + rows_for(nodes), heads);
  T* buffer = workspace.data();
  auto* kept = reinterpret_cast<std::uint8_t*>(workspace.data() + edges * heads);
  const detail::LiveRows live(
      grad_out, reinterpret_cast<std::uint8_t*>(workspace.data() + (edges + kept_rows) * heads));
  // The destination pass reads the values channel-major from grad_values, which the source pass
  // then overwrites with the value gradients.
  detail::resize_buffer(grad_values, nodes, values.cols());
  const detail::ChannelMajor<T> by_channel(values, heads, grad_values.data());
  rows.prepare(grad_score, mask.num_nodes());
  detail::for_each_destination_range(
      mask, schedule, heads, checked.channels, [&](auto shape, const detail::RowRange& range) {
        detail::grad_alpha_rows(shape, mask, range, grad_out.data(), live, by_channel, factor,
                                buffer, kept, false);
        detail::for_each_row(mask, range, [&](NodeId i, auto sources, EdgeId first) {
          T* row = buffer + first * heads;
          if (!live(i)) {
            // A zero row of grad_out: its buffer is left unwritten (the source pass walks no edge
            // into it), and its destination-side gradients are those of a row with no edges.
            rows.dst_row(shape, grad_score, i, detail::Neighbors(mask.in_sources(), first, first),
                         first, row);
            detail::clear_edge_grads(grad_score, first, sources.size());
            return;
          }
          detail::softmax_backward_row(shape, alpha.data() + first * heads, row,
                                       static_cast<std::int64_t>(sources.size()));
          rows.dst_row(shape, grad_score, i, sources, first, row);
        });
      });
  detail::for_each_live_source(
      mask, schedule, heads, checked.channels, live,
      [&](auto shape, NodeId j, auto targets, auto edge_ids) {
        detail::grad_values_row(shape, targets, edge_ids, alpha.data(), kept, factor.scale(),
                                detail::elements(grad_out), grad_values.data() + j * values.cols());
        rows.src_row(shape, grad_score, j, targets, edge_ids, buffer);
      });
  rows.finish(grad_score);
}

#define MASKGAT_INSTANTIATE_ATTENTION(Score, Grad)                                                \
  template void attention<Score>(const Graph&, const Score&, const RowMatrix<Score::Scalar>&,     \
                                 const DropoutKey&, RowMatrix<Score::Scalar>&,                    \
                                 RowMatrix<Score::Scalar>&, const Schedule&,                      \
                                 std::span<const std::uint8_t>);                                  \
  template void attention_backward<Score, Grad>(                                                  \
      const Graph&, const Score&, const RowMatrix<Score::Scalar>&,                                \
      const RowMatrix<Score::Scalar>&, const DropoutKey&, const RowMatrix<Score::Scalar>&, Grad&, \
      RowMatrix<Score::Scalar>&, RowMatrix<Score::Scalar>&, const Schedule&);
MASKGAT_FOR_EACH_SCORE(MASKGAT_INSTANTIATE_ATTENTION)
#undef MASKGAT_INSTANTIATE_ATTENTION

}  // namespace maskgat::ops
