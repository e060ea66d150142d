#pragma once
/// @file
/// Positional and structural encodings: feature blocks that tell attention where a node stands,
/// to concatenate with its own features (attention alone treats every position alike).

#include <cstdint>

#include "maskgat/core/tensor.hpp"
#include "maskgat/export.hpp"
#include "maskgat/graph/graph.hpp"

namespace maskgat::transforms {

/// Sinusoidal encodings of sequence positions (Vaswani et al. 2017):
///
///     PE(p, 2k)     = sin(p / base^(2k / d))
///     PE(p, 2k + 1) = cos(p / base^(2k / d))
///
/// for positions p = 0 .. N-1 and d = `dims` columns (an odd d ends with a sine). Computed in
/// double and rounded once to float. Cost O(N d), parallel over fixed row blocks.
/// @param positions N (>= 0)
/// @param dims      d, the width of the encoding (> 0)
/// @param base      the wavelength scale (> 1; 10000 in the paper)
/// @return N x d, row p encoding position p
/// @throws InvalidArgument if `positions` is negative, `dims` is not positive or `base` is not
///         greater than 1.
[[nodiscard]] MASKGAT_EXPORT RowMatrix<float> sinusoidal_encoding(std::int64_t positions,
                                                                  std::int64_t dims,
                                                                  double base = 10000.0);

/// Random-walk structural encodings (Dwivedi et al. 2022): row i holds, for t = 1 .. k, the
/// probability that a random walk that starts at node i is back at i after t steps,
///
///     RW(i, t - 1) = [(D^-1 A)^t]_ii
///
/// where the walk moves from a node along one of its out-edges chosen uniformly (weights are
/// ignored; a self-loop is a step that stays). A walk at a node without
/// out-edges stops, so it is back at its start at no later step. On an undirected graph
/// (every edge stored both ways) this is the usual symmetric random walk.
///
/// Computed exactly, in double, by propagating the walks of 64 start nodes at a time as dense
/// N x 64 distributions through the mask's in-edges: O(k E) per block of 64, parallel over the
/// blocks, each entry summed in a fixed order, so the result is the same on any thread count.
/// Memory: two N x 64 doubles per thread.
/// @param graph any graph; its out-edges are the walk's steps
/// @param steps k (> 0)
/// @return N x k, column t - 1 holding the return probabilities after t steps
/// @throws InvalidArgument if `steps` is not positive.
[[nodiscard]] MASKGAT_EXPORT RowMatrix<float> random_walk_encoding(const Graph& graph,
                                                                   std::int64_t steps);

}  // namespace maskgat::transforms
