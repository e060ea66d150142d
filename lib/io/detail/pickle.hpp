#pragma once
// A bounded reader for the pickles of the Planetoid datasets (Python 2, protocol 2), of the
// object arrays inside npz graphs (Python 3, protocol 3), and of the `data.pkl` of PyTorch's
// `torch.save` files (protocol 2).
//
// Nothing in a pickle is ever executed: the reader interprets a fixed set of opcodes into a
// value tree, and a GLOBAL opcode may only name one of the classes and functions its vocabulary
// allows. The data vocabulary holds what the dataset files use (numpy arrays and dtypes, scipy
// CSR matrices under both module names, defaultdict(list)); the torch vocabulary what a state
// dict uses (collections.OrderedDict, torch._utils._rebuild_tensor_v2 and _rebuild_parameter,
// the storage classes). Calling one of them through REDUCE or NEWOBJ builds a plain object
// record (class, arguments, state) instead.
//
// Accepted opcodes: PROTO (2 or 3, first), STOP, MARK, NONE, NEWTRUE, NEWFALSE, BININT, BININT1,
// BININT2, LONG1 (up to 8 bytes), BINFLOAT, SHORT_BINSTRING, BINSTRING, BINUNICODE,
// SHORT_BINBYTES, BINBYTES, EMPTY_TUPLE, TUPLE, TUPLE1, TUPLE2, TUPLE3, EMPTY_LIST, APPEND,
// APPENDS, EMPTY_DICT, SETITEM, SETITEMS, BINPUT, LONG_BINPUT, BINGET, LONG_BINGET, GLOBAL,
// REDUCE, NEWOBJ, BUILD, and in the torch vocabulary BINPERSID (a storage reference
// `('storage', class, key, location, numel)`). Text (BINUNICODE) and bytes are both strings of
// bytes here. BINFLOAT and LONG_BINGET appear in none of the dataset files but are kept because
// a pickler emits them for the same data.
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
// only so that the unit tests and fuzz targets can call them in a shared build. The values are
// turned into arrays by the decoders of `pickle_decoders.hpp`.

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
  kString,  // a Python-2 `str`, Python-3 `str` (UTF-8) or `bytes`: raw bytes
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
  kCsrMatrix,             // scipy.sparse.csr.csr_matrix or scipy.sparse._csr.csr_matrix
  kDefaultDict,           // collections.defaultdict
  kList,                  // __builtin__.list
  kCopyRegReconstructor,  // copy_reg._reconstructor
  kObject,                // __builtin__.object
  // The torch vocabulary.
  kOrderedDict,       // collections.OrderedDict (a kDict)
  kRebuildTensor,     // torch._utils._rebuild_tensor_v2; a kObject of this class is a tensor
  kRebuildParameter,  // torch._utils._rebuild_parameter
  kFloatStorage,      // torch.FloatStorage
  kDoubleStorage,     // torch.DoubleStorage
  kHalfStorage,       // torch.HalfStorage
  kBFloat16Storage,   // torch.BFloat16Storage
  kLongStorage,       // torch.LongStorage
  kIntStorage,        // torch.IntStorage
  kBoolStorage,       // torch.BoolStorage
  kStorageRef,        // a kObject made by BINPERSID; its arguments are the persistent id tuple
};

// Which globals (and opcodes) a file may use.
enum class PickleVocabulary : std::uint8_t {
  kData,   // the dataset files
  kTorch,  // a torch.save file's data.pkl
};

// One value. Which fields mean something depends on `kind`.
struct PickleValue {
  PickleKind kind = PickleKind::kNone;
  // kGlobal: the name; kObject: its class; kDict: kDefaultDict for a defaultdict(list),
  // kOrderedDict for an OrderedDict.
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
  Pickle(std::string bytes, std::string_view reader, std::string path, const Limits& limits,
         PickleVocabulary vocabulary = PickleVocabulary::kData);

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

// ` created at byte N`: where a value was made, for messages that name it.
[[nodiscard]] MASKGAT_EXPORT std::string pickle_created_at(std::int64_t offset);

// The dotted Python name of an allowlisted class, e.g. `numpy.dtype`.
[[nodiscard]] MASKGAT_EXPORT std::string_view pickle_class_name(PickleClass cls) noexcept;

// Reads and parses the pickle at `path`. Throws IoError `<reader>: cannot open '<path>': <reason>`,
// LimitError when the file is larger than `limits.max_file_bytes`, ParseError.
[[nodiscard]] MASKGAT_EXPORT Pickle read_pickle(const std::filesystem::path& path,
                                                std::string_view reader, const Limits& limits);

}  // namespace maskgat::detail
