#include "maskgat/ops/spmm.hpp"

#include <cstdint>
#include <vector>

#include "ops/detail/attention_rows.hpp"
#include "ops/detail/buffer.hpp"
#include "ops/detail/shape_checks.hpp"

namespace maskgat::ops {
namespace {

// Checks `values` (N x H*C) and returns C.
template <typename T>
std::int64_t value_channels(const char* where, const Graph& mask, const RowMatrix<T>& values,
                            std::int64_t heads) {
  detail::check_shape(where, "values", values, mask.num_nodes(), -1, "the mask's node count");
  return detail::channels_per_head(where, "values", values.cols(), heads);
}

}  // namespace

template <typename T>
void spmm(const Graph& mask, const RowMatrix<T>& alpha, const RowMatrix<T>& values,
          const DropoutKey& dropout, RowMatrix<T>& out, const Schedule& schedule) {
  constexpr const char* kWhere = "ops::spmm";
  detail::check_schedule(kWhere, schedule);
  detail::check_edge_matrix(kWhere, "alpha", mask, alpha, -1);
  const std::int64_t heads = alpha.cols();
  const std::int64_t channels = value_channels(kWhere, mask, values, heads);
  const detail::DropoutFactor<T> factor(kWhere, dropout, heads, mask);
  detail::resize_buffer(out, mask.num_nodes(), values.cols());
  detail::for_each_destination_range(
      mask, schedule, heads, channels, [&](auto shape, const detail::RowRange& range) {
        detail::aggregate_rows(shape, mask, range, alpha.data(), values.data(), factor, out.data());
      });
}

template <typename T>
void spmm_backward(const Graph& mask, const RowMatrix<T>& alpha, const RowMatrix<T>& values,
                   const DropoutKey& dropout, const RowMatrix<T>& grad_out,
                   RowMatrix<T>& grad_alpha, RowMatrix<T>& grad_values, const Schedule& schedule) {
  constexpr const char* kWhere = "ops::spmm_backward";
  detail::check_schedule(kWhere, schedule);
  detail::check_edge_matrix(kWhere, "alpha", mask, alpha, -1);
  const std::int64_t heads = alpha.cols();
  const std::int64_t channels = value_channels(kWhere, mask, values, heads);
  detail::check_shape(kWhere, "grad_out", grad_out, mask.num_nodes(), values.cols(),
                      "the mask's node count");
  detail::check_distinct(kWhere, "grad_values", grad_values, "values", values);
  detail::check_distinct(kWhere, "grad_values", grad_values, "grad_out", grad_out);
  const detail::DropoutFactor<T> factor(kWhere, dropout, heads, mask);
  detail::resize_buffer(grad_alpha, mask.num_edges(), heads);
  detail::resize_buffer(grad_values, mask.num_nodes(), values.cols());
  std::vector<std::uint8_t> kept(static_cast<std::size_t>(mask.num_edges() * heads));
  std::vector<std::uint8_t> live_bytes(static_cast<std::size_t>(mask.num_nodes()));
  const detail::LiveRows live(grad_out, live_bytes.data());
  // The destination pass reads the values channel-major from grad_values, which the source pass
  // then overwrites with the value gradients.
  const detail::ChannelMajor<T> by_channel(values, heads, grad_values.data());
  detail::for_each_destination_range(
      mask, schedule, heads, channels, [&](auto shape, const detail::RowRange& range) {
        detail::grad_alpha_rows(shape, mask, range, grad_out.data(), live, by_channel, factor,
                                grad_alpha.data(), kept.data(), true);
      });
  detail::for_each_live_source(
      mask, schedule, heads, channels, live, [&](auto shape, NodeId j, auto targets, auto edges) {
        detail::grad_values_row(shape, targets, edges, alpha.data(), kept.data(), factor.scale(),
                                detail::elements(grad_out), grad_values.data() + j * values.cols());
      });
}

#define MASKGAT_INSTANTIATE_SPMM(T)                                                                \
  template void spmm<T>(const Graph&, const RowMatrix<T>&, const RowMatrix<T>&, const DropoutKey&, \
                        RowMatrix<T>&, const Schedule&);                                           \
  template void spmm_backward<T>(const Graph&, const RowMatrix<T>&, const RowMatrix<T>&,           \
                                 const DropoutKey&, const RowMatrix<T>&, RowMatrix<T>&,            \
                                 RowMatrix<T>&, const Schedule&);
MASKGAT_INSTANTIATE_SPMM(float)
MASKGAT_INSTANTIATE_SPMM(double)
#undef MASKGAT_INSTANTIATE_SPMM

}  // namespace maskgat::ops
