#pragma once
// A bounded reader for the Python-2, protocol-2 pickles of the Planetoid datasets.
//
// Nothing in a pickle is ever executed: the reader interprets a fixed set of opcodes into a
// value tree, and a GLOBAL opcode may only name one of the classes and functions the Planetoid
// files use (numpy arrays and dtypes, scipy CSR matrices, defaultdict(list)); calling one of them
// through REDUCE or NEWOBJ builds a plain object record (class, arguments, state) instead.
//
// Accepted opcodes: PROTO (2 only, first), STOP, MARK, NONE, NEWTRUE, NEWFALSE, BININT, BININT1,
// BININT2, BINFLOAT, SHORT_BINSTRING, BINSTRING, EMPTY_TUPLE, TUPLE, TUPLE1, TUPLE2, TUPLE3,
// EMPTY_LIST, APPEND, APPENDS, EMPTY_DICT, SETITEM, SETITEMS, BINPUT, LONG_BINPUT, BINGET,
// LONG_BINGET, GLOBAL, REDUCE, NEWOBJ, BUILD. The files use all of them except BINFLOAT, SETITEM
// and LONG_BINGET, which are kept because a pickler emits them for the same data.
//
// Bounds: the whole file is held in memory (at most `Limits::max_file_bytes`); strings are views
// into it, so a declared length is only ever checked against the bytes that remain; MARK nesting
// is bounded by `Limits::max_nesting_depth`, the stack by a fixed size; no function recurses.
// Array element counts are checked against `Limits::max_array_elements` before anything of that
// size is allocated.
//
// Every error is a ParseError (LimitError for limits) `<reader>: <path>: <message>` naming the
// opcode or value and its byte offset, and what was expected against what was found.

// The reader is internal (this header is not installed); its entry points carry MASKGAT_EXPORT
// only so that the unit tests and fuzz targets can call them in a shared build.

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "maskgat/core/types.hpp"
#include "maskgat/export.hpp"
#include "maskgat/io/limits.hpp"

namespace maskgat::detail {

// Index of a value in a `Pickle`.
using PickleId = std::int32_t;

enum class PickleKind : std::uint8_t {
  kNone,
  kBool,
  kInt,
  kFloat,
  kString,  // a Python-2 `str`: raw bytes
  kList,
  kTuple,
  kDict,
  kGlobal,  // a class or function named by GLOBAL
  kObject,  // an instance built by REDUCE or NEWOBJ: class, arguments, state
};

// The allowlist: the only names GLOBAL accepts.
enum class PickleClass : std::uint8_t {
  kNone,                  // not a class (plain values)
  kReconstruct,           // numpy.core.multiarray._reconstruct
  kNdarray,               // numpy.ndarray
  kDtype,                 // numpy.dtype
  kCsrMatrix,             // scipy.sparse.csr.csr_matrix
  kDefaultDict,           // collections.defaultdict
  kList,                  // __builtin__.list
  kCopyRegReconstructor,  // copy_reg._reconstructor
  kObject,                // __builtin__.object
};

// One value. Which fields mean something depends on `kind`.
struct PickleValue {
  PickleKind kind = PickleKind::kNone;
  // kGlobal: the name; kObject: its class; kDict: kDefaultDict for a defaultdict(list).
  PickleClass cls = PickleClass::kNone;
  // Byte offset of the opcode that created the value, for messages.
  std::int64_t offset = 0;
  // kBool, kInt: the value; kString: offset of its first byte in the file; kList, kTuple, kDict:
  // index of its items; kObject: index of its arguments and state.
  std::int64_t integer = 0;
  // kString: length in bytes.
  std::int64_t length = 0;
  // kFloat: the value.
  double real = 0.0;
};

// A parsed pickle: the file's bytes and every value it created, flat (no value owns another, so
// cycles through the memo are harmless and destruction never recurses).
class MASKGAT_EXPORT Pickle {
 public:
  // Parses the complete pickle `bytes`; `reader` and `path` are only used in messages.
  // Throws ParseError / LimitError.
  Pickle(std::string bytes, std::string_view reader, std::string path, const Limits& limits);

  [[nodiscard]] PickleId root() const noexcept { return root_; }
  [[nodiscard]] const PickleValue& value(PickleId id) const {
    return values_[static_cast<std::size_t>(id)];
  }
  [[nodiscard]] std::size_t size() const noexcept { return values_.size(); }
  // Items of a list or tuple; a dict's keys and values alternate, in insertion order.
  [[nodiscard]] std::span<const PickleId> items(PickleId id) const;
  // Bytes of a string.
  [[nodiscard]] std::string_view bytes(PickleId id) const;
  // Arguments (a tuple) and state (-1 when no BUILD set one) of an object.
  [[nodiscard]] PickleId object_args(PickleId id) const;
  [[nodiscard]] PickleId object_state(PickleId id) const;

  // `a list`, `an int`, `a numpy.ndarray`, `the global numpy.dtype`, ... for messages.
  [[nodiscard]] std::string describe(PickleId id) const;
  // `a list (created at byte 56)`.
  [[nodiscard]] std::string describe_at(PickleId id) const;

  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  [[nodiscard]] std::string_view reader() const noexcept { return reader_; }
  [[noreturn]] void fail(std::string_view message) const;
  [[noreturn]] void fail_limit(std::string_view message) const;

 private:
  friend class PickleParser;
  struct ObjectRecord {
    PickleId args = -1;
    PickleId state = -1;
  };

  std::string bytes_;
  std::string reader_;
  std::string path_;
  std::vector<PickleValue> values_;
  std::vector<std::vector<PickleId>> containers_;
  std::vector<ObjectRecord> objects_;
  PickleId root_ = -1;
};

// The dotted Python name of an allowlisted class, e.g. `numpy.dtype`.
[[nodiscard]] MASKGAT_EXPORT std::string_view pickle_class_name(PickleClass cls) noexcept;

// Reads and parses the pickle at `path`. Throws IoError `<reader>: cannot open '<path>': <reason>`,
// LimitError when the file is larger than `limits.max_file_bytes`, ParseError.
[[nodiscard]] MASKGAT_EXPORT Pickle read_pickle(const std::filesystem::path& path,
                                                std::string_view reader, const Limits& limits);

// A scipy.sparse.csr_matrix: `indptr` (rows + 1, starting at 0, non-decreasing), `indices`
// (column of every entry, in [0, cols), strictly increasing within a row) and finite `values`.
struct CsrArrays {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::vector<std::int64_t> indptr;
  std::vector<std::int32_t> indices;
  std::vector<float> values;
};

// The root of `pickle` as a CSR matrix with int32/int64 index arrays and float32/float64 data
// (converted to float). Rows of unsorted indices are sorted; a column repeated within a row, an
// inconsistent indptr, an index out of range or a non-finite value is a ParseError. Rows are
// checked against `limits.max_nodes`, columns against `limits.max_features` (LimitError).
[[nodiscard]] MASKGAT_EXPORT CsrArrays decode_csr_matrix(const Pickle& pickle,
                                                         const Limits& limits);

// A dense row-major integer matrix.
struct IntMatrix {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::vector<std::int64_t> values;
};

// The root of `pickle` as a 2-D int32/int64 numpy array (C or Fortran order).
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

}  // namespace maskgat::detail
