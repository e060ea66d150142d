#pragma once
// Decoders of the values a pickle holds (`pickle.hpp`) into the arrays the readers build from:
// numpy arrays (`numpy_array.hpp`), 0-d object arrays, scipy CSR matrices, adjacency dicts, dicts
// and lists of strings. Each checks the value's structure, shapes and every index against the
// limits before it allocates, and fails with a ParseError (LimitError for limits) naming the value
// and where it was created.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "io/detail/csr_arrays.hpp"
#include "io/detail/pickle.hpp"
#include "maskgat/core/types.hpp"
#include "maskgat/export.hpp"
#include "maskgat/io/limits.hpp"

namespace maskgat::detail {

// The single element of the 0-d object array `id` (numpy's `np.array(obj)`, as an npz member
// holding a pickled object keeps it).
[[nodiscard]] MASKGAT_EXPORT PickleId decode_object_item(const Pickle& pickle, PickleId id,
                                                         const Limits& limits);

// The value `id` as a CSR matrix with integer index arrays and float32/float64 data (converted
// to float), checked by `checked_csr` (rows of unsorted indices come back sorted). Rows are
// checked against `limits.max_nodes`, columns against `limits.max_features` (LimitError).
[[nodiscard]] MASKGAT_EXPORT CsrArrays decode_csr_matrix(const Pickle& pickle, PickleId id,
                                                         const Limits& limits);
// The root of `pickle` as a CSR matrix.
[[nodiscard]] inline CsrArrays decode_csr_matrix(const Pickle& pickle, const Limits& limits) {
  return decode_csr_matrix(pickle, pickle.root(), limits);
}

// A dense row-major integer matrix.
struct IntMatrix {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::vector<std::int64_t> values;
};

// The root of `pickle` as a 2-D integer numpy array (C or Fortran order).
[[nodiscard]] MASKGAT_EXPORT IntMatrix decode_int_matrix(const Pickle& pickle,
                                                         const Limits& limits);

// The edges `key -> item` of a dict (or defaultdict) of int -> list of int, in file order.
struct AdjacencyLists {
  std::vector<NodeId> sources;
  std::vector<NodeId> targets;
};

// The root of `pickle` as an adjacency dict over `num_nodes` nodes: every key and list item must
// be an int in [0, num_nodes), no key may appear twice, and the number of entries may not exceed
// `limits.max_edges` (LimitError).
[[nodiscard]] MASKGAT_EXPORT AdjacencyLists decode_adjacency(const Pickle& pickle,
                                                             std::int64_t num_nodes,
                                                             const Limits& limits);

// The value of `key` in the dict `id` (a string key), or -1 when it has none.
[[nodiscard]] MASKGAT_EXPORT PickleId dict_item(const Pickle& pickle, PickleId id,
                                                std::string_view key);

// The strings of `id`: a list or tuple of strings, or a 1-D numpy array of unicode, bytes or
// string objects; `subject` starts its messages.
[[nodiscard]] MASKGAT_EXPORT std::vector<std::string> decode_strings(const Pickle& pickle,
                                                                     PickleId id,
                                                                     const std::string& subject,
                                                                     const Limits& limits);

}  // namespace maskgat::detail
