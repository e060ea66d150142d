#pragma once
// A numpy array as the npz readers meet it, inside an `.npy` member or a pickle: its element
// type, shape and order and a view of its data, checked against each other before any element is
// read; and the conversions the readers need (integers, floats, strings).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "maskgat/export.hpp"
#include "maskgat/io/limits.hpp"

namespace maskgat::detail {

// numpy's own limit on array dimensions.
inline constexpr std::size_t kMaxNumpyDimensions = 32;

enum class NumpyKind : std::uint8_t {
  kBool,      // b1
  kSigned,    // i1, i2, i4, i8
  kUnsigned,  // u1, u2, u4, u8
  kFloat,     // f4, f8
  kUnicode,   // U<n>: n UCS-4 code points
  kBytes,     // S<n>: n bytes
  kObject,    // O: Python objects, pickled
};

struct NumpyDtype {
  NumpyKind kind = NumpyKind::kFloat;
  std::int64_t item_size = 4;  // bytes per element
  std::string code;            // as written, e.g. `<f4`, for messages
};

// The dtype of a type code and byte order: numpy's `descr` (`<f4`, `|i1`, `<U7`, `|O`) with
// `order` 0, or a pickled dtype's code (`f4`, `O8`) with its byte order (`<`, `=`, `|`). Little
// endian only (`>` is refused). nullopt when the code is none of the kinds above.
[[nodiscard]] MASKGAT_EXPORT std::optional<NumpyDtype> parse_numpy_dtype(std::string_view code,
                                                                         char order = 0);

// What `parse_numpy_dtype` accepts, for messages.
inline constexpr std::string_view kNumpyDtypes =
    "a little-endian bool, integer, float, unicode, bytes or object type such as '<f4'";

struct NumpyArray {
  NumpyDtype dtype;
  std::vector<std::int64_t> shape;
  bool fortran = false;
  std::int64_t count = 0;  // elements: the product of `shape`
  std::string_view data;   // count * item_size bytes (object arrays: the pickle)
};

// `(2, 3)`, `(5,)`, `()`.
[[nodiscard]] std::string shape_text(const std::vector<std::int64_t>& shape);

// The element count of `shape`, or an error when it passes `limits.max_array_elements` (the
// message then starts `has shape ...`). Entries must be non-negative.
struct ElementCount {
  std::int64_t count = 0;
  std::string error;  // empty when the count is within the limit
};
[[nodiscard]] ElementCount element_count(const std::vector<std::int64_t>& shape,
                                         const Limits& limits);

// Every element as an int64, in storage order, of a bool or integer array; nullopt for another
// kind or a uint64 above the int64 range.
[[nodiscard]] MASKGAT_EXPORT std::optional<std::vector<std::int64_t>> numpy_integers(
    const NumpyArray& array);
// Every element as a float, in storage order, of a float, integer or bool array (the caller checks
// the kind).
[[nodiscard]] MASKGAT_EXPORT std::vector<float> numpy_floats(const NumpyArray& array);
// Every element of a unicode or bytes array as UTF-8 text, trailing NULs removed; nullopt when a
// unicode element is not a valid code point.
[[nodiscard]] MASKGAT_EXPORT std::optional<std::vector<std::string>> numpy_strings(
    const NumpyArray& array);

}  // namespace maskgat::detail
