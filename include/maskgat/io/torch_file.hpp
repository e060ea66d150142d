#pragma once
/// @file
/// PyTorch state dicts: the reader of `torch.save` files (PyTorch's zip format, 1.6 and later),
/// returning named tensors, and the writer of files `torch.load` reads. Nothing in a file is
/// executed: its pickle is interpreted by a bounded reader that accepts only what a state dict
/// needs (docs/pytorch.md).

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "maskgat/export.hpp"
#include "maskgat/io/limits.hpp"

namespace maskgat {

/// The element type of a tensor in a `torch.save` file (its storage class).
enum class TorchDtype : std::uint8_t {
  kFloat32,   ///< torch.FloatStorage
  kFloat64,   ///< torch.DoubleStorage
  kFloat16,   ///< torch.HalfStorage
  kBFloat16,  ///< torch.BFloat16Storage
  kInt64,     ///< torch.LongStorage
  kInt32,     ///< torch.IntStorage
  kBool,      ///< torch.BoolStorage
};

/// The dtype's name as torch prints it, without its module prefix: `float32`, `float64`,
/// `float16`, `bfloat16`, `int64`, `int32`, `bool`.
/// @param dtype any dtype
/// @return a static string
[[nodiscard]] MASKGAT_EXPORT const char* torch_dtype_name(TorchDtype dtype) noexcept;

/// One tensor of a state dict.
struct NamedTensor {
  std::string name;                         ///< its key, e.g. `conv1.lin.weight`
  TorchDtype dtype = TorchDtype::kFloat32;  ///< as stored
  std::vector<std::int64_t> shape;          ///< torch's size; empty for a 0-d tensor
  /// Every element in row-major (C) order, whatever the strides it was saved with. Exact for
  /// every dtype but int64 values beyond 2^53, which round.
  std::vector<double> values;
};

/// A state dict: its tensors in the file's order.
struct StateDict {
  std::vector<NamedTensor> tensors;  ///< in the file's order, names unique

  /// The tensor named `name`.
  /// @param name a key
  /// @return the tensor, or nullptr when there is none
  [[nodiscard]] MASKGAT_EXPORT const NamedTensor* find(std::string_view name) const noexcept;
};

/// How `read_state_dict` reads a file.
struct TorchReadOptions {
  /// Empty: the file's object is the state dict. Otherwise the object is a dict (a checkpoint
  /// such as `{"epoch": 10, "model_state_dict": ...}`) and the state dict is its item `key`.
  std::string key{};
  /// Bounds: `max_file_bytes` (the file and each member), `max_array_elements` (every tensor's
  /// elements together), `max_nesting_depth` (the pickle's MARK nesting).
  Limits limits{};
};

/// Reads the state dict of a `torch.save` file: a zip whose members sit in one folder of any
/// name (`archive/`, or the stem of the file it was saved as), `data.pkl` (a pickle of an
/// OrderedDict or dict of tensors), one raw storage `data/KEY` per storage, and `byteorder`
/// (`little`; absent in files of older PyTorch, meaning little). Members may be stored or
/// deflated. Tensors saved from a GPU read the same (the location is ignored); views read
/// through their offset and strides; storages that several tensors share are read once.
/// Serial.
/// @param path    the file
/// @param options which item holds the state dict, and the limits
/// @return the tensors, in the file's order
/// @throws IoError (cannot open), ParseError (not a zip, a file from PyTorch before 1.6, a global
///         outside the allowlist, a storage member missing or of another size than its class and
///         element count need, a storage named twice with another class or size, a negative or
///         overflowing offset or stride, a view past its storage's end, a big-endian file, a
///         value that is not a tensor, a key given twice, `key` missing), LimitError (a limit
///         above).
[[nodiscard]] MASKGAT_EXPORT StateDict read_state_dict(const std::filesystem::path& path,
                                                       const TorchReadOptions& options);

/// Writes `state` as a `torch.save` file that `torch.load` reads (PyTorch 1.6 and later): an
/// OrderedDict of contiguous tensors, each in its dtype with its own storage, in a stored zip
/// whose folder is named after the file's stem (as torch.save names it) and whose storages start
/// at multiples of 64 bytes (as PyTorch aligns them). `read_state_dict` reads it back bitwise.
/// Serial.
/// @param path      the file; its directory must exist
/// @param state     unique names; each tensor's values as many as its shape's product
/// @param overwrite replace an existing file (written whole or not at all, `write_file_atomically`)
/// @throws InvalidArgument (a name given twice or empty, values that do not fill the shape, a
///         value that its dtype cannot hold), IoError as `write_file_atomically`, LimitError for
///         a file of 4 GiB or more (the zip format without its 64-bit extension).
MASKGAT_EXPORT void write_state_dict(const std::filesystem::path& path, const StateDict& state,
                                     bool overwrite);

}  // namespace maskgat
