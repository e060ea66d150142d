#pragma once
// The block sizes of the dense product kernels that keep sums in registers, shared by the sparse
// products (`ops::matmul`) and the GAT layer's narrow score products.

#include <cstdint>

#include "maskgat/core/tensor.hpp"

namespace maskgat::ops::detail {

// Rows of a weight gradient per task: a constant, so each element's sum is formed by the same
// serial loop on any number of threads.
constexpr std::int64_t kWeightRowBlock = 32;

// Output columns formed per pass over a row's entries, so that their sums stay in registers
// instead of being stored and reloaded per entry: a whole block, or the shorter rest of a row.
constexpr std::int64_t kColumnBlock = 16;
template <typename T>
using Block = Eigen::Array<T, kColumnBlock, 1>;
template <typename T>
using Tail = Eigen::Array<T, Eigen::Dynamic, 1, 0, kColumnBlock, 1>;

}  // namespace maskgat::ops::detail
