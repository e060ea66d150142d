#include "maskgat/ops/sddmm.hpp"

#include "ops/detail/buffer.hpp"
#include "ops/detail/score_rows.hpp"
#include "ops/detail/shape_checks.hpp"

namespace maskgat::ops {

template <typename Score>
void sddmm(const Graph& mask, const Score& score, RowMatrix<typename Score::Scalar>& scores,
           const Schedule& schedule) {
  constexpr const char* kWhere = "ops::sddmm";
  detail::check_schedule(kWhere, schedule);
  const auto rows = detail::score_rows(kWhere, mask, score);
  const std::int64_t heads = rows.heads();
  detail::resize_buffer(scores, mask.num_edges(), heads);
  detail::for_each_destination(
      mask, schedule, heads, 0, [&](auto shape, NodeId i, auto sources, EdgeId first) {
        rows.score_row(shape, i, sources, first, scores.data() + first * heads);
      });
}

template <typename Score, typename Grad>
void sddmm_backward(const Graph& mask, const Score& score,
                    const RowMatrix<typename Score::Scalar>& grad_scores, Grad& grad,
                    const Schedule& schedule) {
  constexpr const char* kWhere = "ops::sddmm_backward";
  detail::check_schedule(kWhere, schedule);
  const auto rows = detail::score_rows(kWhere, mask, score);
  const std::int64_t heads = rows.heads();
  detail::check_edge_matrix(kWhere, "grad_scores", mask, grad_scores, heads);
  RowMatrix<typename Score::Scalar> buffer = grad_scores;
  rows.prepare(grad, mask.num_nodes());
  detail::for_each_destination(
      mask, schedule, heads, 0, [&](auto shape, NodeId i, auto sources, EdgeId first) {
        rows.dst_row(shape, grad, i, sources, first, buffer.data() + first * heads);
      });
  detail::for_each_source(mask, schedule, heads, 0,
                          [&](auto shape, NodeId j, auto targets, auto edges) {
                            rows.src_row(shape, grad, j, targets, edges, buffer.data());
                          });
  rows.finish(grad);
}

#define MASKGAT_INSTANTIATE_SDDMM(Score, Grad)                                      \
  template void sddmm<Score>(const Graph&, const Score&, RowMatrix<Score::Scalar>&, \
                             const Schedule&);                                      \
  template void sddmm_backward<Score, Grad>(                                        \
      const Graph&, const Score&, const RowMatrix<Score::Scalar>&, Grad&, const Schedule&);
MASKGAT_FOR_EACH_SCORE(MASKGAT_INSTANTIATE_SDDMM)
#undef MASKGAT_INSTANTIATE_SDDMM

}  // namespace maskgat::ops
