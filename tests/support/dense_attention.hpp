#pragma once
// The naive dense reference for masked attention: scores for every pair, -infinity outside the
// mask, a dense softmax per row, a dense product with the values. Written from the formulas, it
// shares no code with the sparse kernels and reads the layers' parameters by name only.

#include <functional>
#include <string>

#include "maskgat/core/tensor.hpp"
#include "maskgat/graph/graph.hpp"
#include "maskgat/nn/dot_attention_conv.hpp"
#include "maskgat/nn/gat_conv.hpp"
#include "maskgat/nn/gatv2_conv.hpp"
#include "maskgat/nn/parameters.hpp"

namespace maskgat::test {

using DenseMask = Eigen::Matrix<bool, Eigen::Dynamic, Eigen::Dynamic>;

// allowed(i, j) is true when i attends to j: j -> i is an edge, or i == j and `self_loops`.
DenseMask dense_mask(const Graph& graph, bool self_loops);

// out(i, head h) = sum_j softmax_j(score(i, j, h) or -inf outside the mask) * values(j, head h);
// a row with no allowed entry is zero.
template <typename T>
RowMatrix<T> dense_attention(
    const DenseMask& allowed,
    const std::function<T(std::int64_t, std::int64_t, std::int64_t)>& score,
    const RowMatrix<T>& values, std::int64_t heads);

// The three layers, from their formulas and their parameters in `store` under `name`; GAT and
// GATv2 with `edge_features` (a row per edge of `graph`) when their options ask for them.
template <typename T>
RowMatrix<T> reference_gat(const Graph& graph, const RowMatrix<T>& x,
                           const nn::ParameterStore<T>& store, const std::string& name,
                           const nn::GatConvOptions& options,
                           const RowMatrix<T>* edge_features = nullptr);
template <typename T>
RowMatrix<T> reference_gatv2(const Graph& graph, const RowMatrix<T>& x,
                             const nn::ParameterStore<T>& store, const std::string& name,
                             const nn::GatV2ConvOptions& options,
                             const RowMatrix<T>* edge_features = nullptr);
template <typename T>
RowMatrix<T> reference_dot(const Graph& graph, const RowMatrix<T>& x,
                           const nn::ParameterStore<T>& store, const std::string& name,
                           const nn::DotAttentionConvOptions& options);

// Norm-wise relative error ||a - b|| / ||b|| (0 when both are zero; throws on a shape mismatch).
template <typename T>
double relative_error(const RowMatrix<T>& a, const RowMatrix<T>& b);

}  // namespace maskgat::test
