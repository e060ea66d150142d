#include "maskgat/ops/edge_softmax.hpp"

#include "ops/detail/attention_rows.hpp"
#include "ops/detail/buffer.hpp"
#include "ops/detail/shape_checks.hpp"

namespace maskgat::ops {

template <typename T>
void edge_softmax(const Graph& mask, const RowMatrix<T>& scores, RowMatrix<T>& alpha,
                  const Schedule& schedule) {
  constexpr const char* kWhere = "ops::edge_softmax";
  detail::check_schedule(kWhere, schedule);
  detail::check_edge_matrix(kWhere, "scores", mask, scores, -1);
  alpha = scores;
  const std::int64_t heads = scores.cols();
  detail::for_each_destination_range(mask, schedule, heads, 0,
                                     [&](auto shape, const detail::RowRange& range) {
                                       detail::softmax_rows(shape, mask, range, alpha.data());
                                     });
}

template <typename T>
void edge_softmax_backward(const Graph& mask, const RowMatrix<T>& alpha,
                           const RowMatrix<T>& grad_alpha, RowMatrix<T>& grad_scores,
                           const Schedule& schedule) {
  constexpr const char* kWhere = "ops::edge_softmax_backward";
  detail::check_schedule(kWhere, schedule);
  detail::check_edge_matrix(kWhere, "alpha", mask, alpha, -1);
  const std::int64_t heads = alpha.cols();
  detail::check_edge_matrix(kWhere, "grad_alpha", mask, grad_alpha, heads);
  grad_scores = grad_alpha;
  detail::for_each_destination(
      mask, schedule, heads, 0, [&](auto shape, NodeId /*i*/, auto sources, EdgeId first) {
        detail::softmax_backward_row(shape, alpha.data() + first * heads,
                                     grad_scores.data() + first * heads,
                                     static_cast<std::int64_t>(sources.size()));
      });
}

template void edge_softmax<float>(const Graph&, const RowMatrix<float>&, RowMatrix<float>&,
                                  const Schedule&);
template void edge_softmax<double>(const Graph&, const RowMatrix<double>&, RowMatrix<double>&,
                                   const Schedule&);
template void edge_softmax_backward<float>(const Graph&, const RowMatrix<float>&,
                                           const RowMatrix<float>&, RowMatrix<float>&,
                                           const Schedule&);
template void edge_softmax_backward<double>(const Graph&, const RowMatrix<double>&,
                                            const RowMatrix<double>&, RowMatrix<double>&,
                                            const Schedule&);

}  // namespace maskgat::ops
