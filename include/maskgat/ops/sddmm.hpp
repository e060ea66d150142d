#pragma once
/// @file
/// Attention scores under a mask (the SDDMM shape: a dense product sampled at the mask's
/// entries), forward and backward, for the three score functions.
///
/// For every mask entry e = (j -> i) and head h, `scores(e, h) = score(i, j, h)`; pairs outside the
/// mask are never computed. `scores` is E x H in the mask's destination-major edge order.
///
/// Parallelism: forward and the destination-side gradients run over destination rows, the
/// source-side gradients over the mask's transpose (source rows, reading per-edge values through
/// `Graph::out_edge_ids`); each output row is written by one task in a fixed order, so results are
/// bitwise the same for every thread count and grain.

#include <cstdint>

#include "maskgat/core/schedule.hpp"
#include "maskgat/core/tensor.hpp"
#include "maskgat/export.hpp"
#include "maskgat/graph/graph.hpp"

namespace maskgat::ops {

/// Additive attention (GAT, Veličković et al. 2018):
/// `score(i, j, h) = LeakyReLU(src(j, h) + dst(i, h) [+ edge(e, h)])`, where `src = <h_j, a_src>`
/// and `dst = <h_i, a_dst>` per head are computed by the layer: two numbers per node and head, so
/// no per-edge feature vector is ever formed. With edge features (PyG's `edge_dim`) the layer also
/// gives one number per mask entry e = (j -> i) and head, `edge = <W_e f_ij, a_edge>`.
template <typename T>
struct MASKGAT_EXPORT AdditiveScore {
  using Scalar = T;                    ///< the element type, `float` or `double`
  const RowMatrix<T>& src;             ///< N x H, the source term of every node and head
  const RowMatrix<T>& dst;             ///< N x H, the destination term
  T negative_slope = T(0.2);           ///< LeakyReLU slope for negative sums
  const RowMatrix<T>* edge = nullptr;  ///< null, or E x H: the term of every mask entry and head
};

/// Gradients of an `AdditiveScore`'s inputs; each matrix is resized to N x H (`edge` to E x H)
/// and overwritten.
template <typename T>
struct MASKGAT_EXPORT AdditiveScoreGrad {
  RowMatrix<T>& src;             ///< dL/dsrc, N x H
  RowMatrix<T>& dst;             ///< dL/ddst, N x H
  RowMatrix<T>* edge = nullptr;  ///< dL/dedge, E x H; required when the score has an edge term
};

/// Scaled dot-product attention (Vaswani et al. 2017; PyG's TransformerConv):
/// `score(i, j, h) = scale * <query(i, h), key(j, h)>`, usually `scale = 1 / sqrt(C)`.
template <typename T>
struct MASKGAT_EXPORT DotScore {
  using Scalar = T;           ///< the element type, `float` or `double`
  const RowMatrix<T>& query;  ///< N x (H * C)
  const RowMatrix<T>& key;    ///< N x (H * C)
  std::int64_t heads = 1;     ///< H, dividing the column count
  T scale = T(1);             ///< factor of every dot product
};

/// Gradients of a `DotScore`'s inputs; each matrix is resized to N x (H * C) and overwritten.
template <typename T>
struct MASKGAT_EXPORT DotScoreGrad {
  RowMatrix<T>& query;  ///< dL/dquery, N x (H * C)
  RowMatrix<T>& key;    ///< dL/dkey, N x (H * C)
};

/// GATv2 attention (Brody et al. 2022):
/// `score(i, j, h) = sum_c att(h, c) * LeakyReLU(src(j, h, c) + dst(i, h, c) [+ edge(e, h, c)])`
/// with `src = x W_s`, `dst = x W_d` and, with edge features (PyG's `edge_dim`), `edge = f W_e`
/// per mask entry e = (j -> i). The sum is formed channel by channel inside the kernel, never
/// stored per edge.
template <typename T>
struct MASKGAT_EXPORT GatV2Score {
  using Scalar = T;         ///< the element type, `float` or `double`
  const RowMatrix<T>& src;  ///< N x (H * C)
  const RowMatrix<T>& dst;  ///< N x (H * C)
  /// H x C, row-major without padding; a parameter's view (`ParameterStore::value`) binds
  /// without a copy.
  Eigen::Ref<const RowMatrix<T>> att;
  T negative_slope = T(0.2);           ///< LeakyReLU slope, applied per channel
  const RowMatrix<T>* edge = nullptr;  ///< null, or E x (H * C): the term of every mask entry
};

/// Gradients of a `GatV2Score`'s inputs; resized (N x (H * C), N x (H * C), H x C, E x (H * C))
/// and overwritten. `att`'s gradient sums per-node partials over fixed node blocks.
template <typename T>
struct MASKGAT_EXPORT GatV2ScoreGrad {
  RowMatrix<T>& src;             ///< dL/dsrc, N x (H * C)
  RowMatrix<T>& dst;             ///< dL/ddst, N x (H * C)
  RowMatrix<T>& att;             ///< dL/datt, H x C
  RowMatrix<T>* edge = nullptr;  ///< dL/dedge, E x (H * C); required when the score has one
};

/// Computes `scores` (resized to E x H) for every entry of `mask`. Parallel over destination
/// rows (bitwise deterministic).
/// @param mask     N nodes, E edges; row i is node i's in-edges
/// @param score    an `AdditiveScore`, `DotScore` or `GatV2Score` whose matrices have N rows
/// @param scores   resized to E x H, destination-major
/// @param schedule task sizes; they change speed only, never the result
/// @throws InvalidArgument when the score's matrices do not have `mask.num_nodes()` rows, their
///         widths disagree, the head count is not positive or does not divide them, or
///         `schedule.grain` is not positive.
template <typename Score>
MASKGAT_EXPORT void sddmm(const Graph& mask, const Score& score,
                          RowMatrix<typename Score::Scalar>& scores, const Schedule& schedule = {});

/// Backward of `sddmm`: from `grad_scores` (E x H) writes the gradients of the score's inputs.
/// `Grad` is the score's gradient type (`AdditiveScoreGrad` for `AdditiveScore`, ...).
/// Destination-side gradients over destination rows, source-side ones over the transpose, no
/// atomics (bitwise deterministic).
/// @param mask        the forward's mask (N nodes, E edges)
/// @param score       the forward's score
/// @param grad_scores E x H, destination-major
/// @param grad        the score inputs' gradients, resized and overwritten
/// @param schedule    task sizes; they change speed only, never the result
/// @throws InvalidArgument on the errors of `sddmm` or when `grad_scores` is not E x H.
template <typename Score, typename Grad>
MASKGAT_EXPORT void sddmm_backward(const Graph& mask, const Score& score,
                                   const RowMatrix<typename Score::Scalar>& grad_scores, Grad& grad,
                                   const Schedule& schedule = {});

}  // namespace maskgat::ops
