#pragma once
/// @file
/// Positional and structural encodings: feature blocks that tell attention where a node stands,
/// to concatenate with its own features (attention alone treats every position alike).

#include <cstdint>
#include <string>
#include <string_view>

#include "maskgat/core/tensor.hpp"
#include "maskgat/export.hpp"
#include "maskgat/graph/graph.hpp"
#include "maskgat/io/features.hpp"

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

/// Laplacian eigenvector encodings (Dwivedi et al. 2020): row i holds node i's entries in the
/// eigenvectors of the k smallest non-trivial eigenvalues of the symmetric normalised Laplacian
///
///     L = I - D^-1/2 A D^-1/2
///
/// of the graph's undirected simple version: every edge counts in both directions, once, and
/// self-loops and weights are ignored, so directed input is symmetrised first.
///
/// Each connected component is encoded on its own. On a component of n_c nodes, L has the
/// eigenvalue 0 exactly once, with eigenvector proportional to D^1/2 1, which carries no
/// position and is left out: column j - 1 (j = 1 .. k) of the component's rows is the
/// eigenvector of its (j + 1)-th smallest eigenvalue, ascending, with unit norm over the
/// component and zero elsewhere. Columns past the component's n_c - 1 non-trivial eigenvectors
/// are zero, so a component of at most k nodes is zero-padded and an isolated node (also one
/// whose only edge is a self-loop) gets an all-zero row. The eigenvalue 0 of the whole
/// graph is repeated once per component; the encoding keeps those null vectors apart by
/// construction instead of mixing them, as a solve over the whole graph would.
///
/// An eigenvector's sign is arbitrary; each column is made positive at its first entry (lowest
/// node id) whose magnitude is within a relative 1e-6 of the column's largest, so the output is
/// reproducible. Within a repeated eigenvalue (symmetric graphs, e.g. the cycle) any rotation of
/// the eigenspace is equally valid: the basis returned is the solver's, deterministic for a given
/// graph but not canonical, and when column k cuts through such an eigenspace the kept part of
/// it is the solver's choice as well. `flip_signs` randomises the signs during training.
///
/// Computed in double and rounded once to float. Components of up to 256 nodes (or of fewer than
/// 2k + 1) are solved densely, O(n_c^3). Larger ones use restarted Lanczos (Spectra's
/// `SymEigsSolver`, relative tolerance 1e-10) on I + D^-1/2 A D^-1/2 = 2I - L, whose largest
/// eigenvalues are L's smallest, with sparse products over the component's adjacency, O(n_c +
/// E_c) each, and the null vector projected out. Single-vector Lanczos can miss a copy of a
/// repeated eigenvalue, so it is rerun from new start vectors with everything found so far
/// projected out, until a run finds no eigenvalue above the k-th found (usually one extra run).
/// Parallel over components, each solved serially by a computation that does not depend on
/// scheduling, so the result is the same on any thread count. Memory: the undirected adjacency
/// (O(N + E)) plus, per component being solved, n_c x n_c doubles (dense) or a few n_c x
/// max(2k + 1, 40) doubles (Lanczos).
/// @param graph any graph
/// @param k     the number of eigenvectors per node (> 0)
/// @return N x k, column j - 1 holding the eigenvector of each component's (j + 1)-th smallest
///         eigenvalue, or zeros where the component has fewer than j + 1 nodes
/// @throws InvalidArgument if `k` is not positive; Error if Lanczos does not converge on a
///         component (the message names the component, numbered as by `weak_components`, its
///         size and k).
[[nodiscard]] MASKGAT_EXPORT RowMatrix<float> laplacian_encoding(const Graph& graph,
                                                                 std::int64_t k);

/// Random sign flips of eigenvector encodings (Dwivedi et al. 2020). An eigenvector's sign is
/// arbitrary, so a model must not learn to rely on it: training calls this at every step to
/// multiply each column of a copy of the encoding by +1 or -1, and inference uses the stored
/// signs unchanged. Column c is negated when the top bit of `counter_hash(s, 0, c)` is set,
/// where s = `counter_hash(seed, T, step)` for a fixed tag T (so no other use of the seed draws
/// the same numbers): the flips depend only on (`seed`, `step`, c), not on the encoding's values
/// or the thread count. O(N k), parallel over fixed row blocks.
/// @param encoding N x k, flipped in place
/// @param seed     the run's seed
/// @param step     the training step; each step draws new signs
MASKGAT_EXPORT void flip_signs(RowMatrix<float>& encoding, std::uint64_t seed, std::uint64_t step);

/// Which positional encoding a model's input carries: none, Laplacian eigenvectors
/// (`laplacian_encoding`) or random-walk return probabilities (`random_walk_encoding`).
enum class EncodingKind { kNone, kLaplacian, kRandomWalk };

/// A positional encoding of a graph's nodes, as `maskgat train --pe` names it: `none`,
/// `lap:K` or `rw:K`.
struct PositionalEncoding {
  EncodingKind kind = EncodingKind::kNone;  ///< which encoding
  std::int64_t dims = 0;                    ///< its width K (0 for `kNone`)
};

/// The widest encoding MaskGAT accepts, from the command line, the API or a checkpoint: far beyond
/// any useful width, and small enough that a typo such as `lap:80000` (or a damaged file) fails
/// at once instead of allocating N x 80000 floats.
inline constexpr std::int64_t kMaxEncodingDims = 1024;

/// Checks that `encoding` is `kNone` with width 0, or another kind with a width from 1 to
/// `kMaxEncodingDims`.
/// @param encoding e.g. `TrainOptions::positional`
/// @throws InvalidArgument naming the kind, the width and what was expected.
MASKGAT_EXPORT void check_positional_encoding(const PositionalEncoding& encoding);

/// Reads `none`, `lap:K` or `rw:K` (K a positive count of at most `kMaxEncodingDims`).
/// @param spec the text, e.g. `lap:8`
/// @return the encoding it names
/// @throws InvalidArgument naming the text and the expected forms.
[[nodiscard]] MASKGAT_EXPORT PositionalEncoding parse_positional_encoding(std::string_view spec);

/// The text `parse_positional_encoding` reads back.
/// @param encoding any encoding
/// @return e.g. `lap:8`, or `none`
[[nodiscard]] MASKGAT_EXPORT std::string positional_encoding_name(
    const PositionalEncoding& encoding);

/// The N x K encoding `encoding` names, of `graph`'s nodes.
/// @param graph    the graph to encode (the data's own graph, without the mask's self-loops)
/// @param encoding not `kNone`
/// @return `laplacian_encoding(graph, K)` or `random_walk_encoding(graph, K)`
/// @throws InvalidArgument for `kNone` or a width that is not positive.
[[nodiscard]] MASKGAT_EXPORT RowMatrix<float> positional_encoding(
    const Graph& graph, const PositionalEncoding& encoding);

/// `features` with the columns of `block` appended: N x (F + K), sparse if `features` is. Sparse
/// features store all K appended entries of every row, zeros included, so every row ends with
/// the same K slots (which training's sign flips rewrite in place).
/// @param features N x F
/// @param block    N x K, e.g. a positional encoding
/// @return the concatenation [features, block]
/// @throws InvalidArgument when the row counts differ.
[[nodiscard]] MASKGAT_EXPORT FeatureMatrix append_columns(const FeatureMatrix& features,
                                                          const RowMatrix<float>& block);

}  // namespace maskgat::transforms
