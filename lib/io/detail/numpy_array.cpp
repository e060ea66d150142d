#include "io/detail/numpy_array.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cstring>
#include <limits>

#include "io/detail/text.hpp"

namespace maskgat::detail {
namespace {

template <typename T>
T load_little_endian(const char* bytes) noexcept {
  std::array<char, sizeof(T)> buffer{};
  std::memcpy(buffer.data(), bytes, sizeof(T));
  if constexpr (std::endian::native == std::endian::big) std::reverse(buffer.begin(), buffer.end());
  T value;
  std::memcpy(&value, buffer.data(), sizeof(T));
  return value;
}

// Element i of an integer or bool array, widened.
template <typename Wide>
Wide integer_at(const NumpyArray& array, std::size_t i) {
  const char* at = array.data.data() + i * static_cast<std::size_t>(array.dtype.item_size);
  const bool is_signed = array.dtype.kind == NumpyKind::kSigned;
  switch (array.dtype.item_size) {
    case 1:
      return is_signed ? static_cast<Wide>(load_little_endian<std::int8_t>(at))
                       : static_cast<Wide>(load_little_endian<std::uint8_t>(at));
    case 2:
      return is_signed ? static_cast<Wide>(load_little_endian<std::int16_t>(at))
                       : static_cast<Wide>(load_little_endian<std::uint16_t>(at));
    case 4:
      return is_signed ? static_cast<Wide>(load_little_endian<std::int32_t>(at))
                       : static_cast<Wide>(load_little_endian<std::uint32_t>(at));
    default:
      return is_signed ? static_cast<Wide>(load_little_endian<std::int64_t>(at))
                       : static_cast<Wide>(load_little_endian<std::uint64_t>(at));
  }
}

}  // namespace

std::optional<NumpyDtype> parse_numpy_dtype(std::string_view code, char order) {
  NumpyDtype dtype;
  dtype.code = std::string(code);
  std::string_view rest = code;
  if (order == 0 && !rest.empty() && (rest[0] == '<' || rest[0] == '|' || rest[0] == '=')) {
    order = rest[0];
    rest.remove_prefix(1);
  }
  if (order != 0 && order != '<' && order != '|' && order != '=') return std::nullopt;
  if (rest.empty()) return std::nullopt;
  const char kind = rest[0];
  rest.remove_prefix(1);
  std::int64_t size = 0;
  if (!rest.empty()) {
    const auto [end, error] = std::from_chars(rest.data(), rest.data() + rest.size(), size);
    if (error != std::errc() || end != rest.data() + rest.size() || size <= 0) return std::nullopt;
  }
  switch (kind) {
    case 'b':
      dtype.kind = NumpyKind::kBool;
      dtype.item_size = 1;
      return rest.empty() || size == 1 ? std::optional(dtype) : std::nullopt;
    case '?':
      dtype.kind = NumpyKind::kBool;
      dtype.item_size = 1;
      return rest.empty() ? std::optional(dtype) : std::nullopt;
    case 'i':
    case 'u':
      dtype.kind = kind == 'i' ? NumpyKind::kSigned : NumpyKind::kUnsigned;
      dtype.item_size = size;
      return size == 1 || size == 2 || size == 4 || size == 8 ? std::optional(dtype) : std::nullopt;
    case 'f':
      dtype.kind = NumpyKind::kFloat;
      dtype.item_size = size;
      return size == 4 || size == 8 ? std::optional(dtype) : std::nullopt;
    case 'U':
      dtype.kind = NumpyKind::kUnicode;
      if (size > std::numeric_limits<std::int32_t>::max() / 4) return std::nullopt;
      dtype.item_size = 4 * size;
      return size > 0 ? std::optional(dtype) : std::nullopt;
    case 'S':
      dtype.kind = NumpyKind::kBytes;
      dtype.item_size = size;
      return size > 0 ? std::optional(dtype) : std::nullopt;
    case 'O':
      dtype.kind = NumpyKind::kObject;
      dtype.item_size = 8;
      return rest.empty() || size == 8 ? std::optional(dtype) : std::nullopt;
    default:
      return std::nullopt;
  }
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string text = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) text += ", ";
    text += std::to_string(shape[i]);
  }
  if (shape.size() == 1) text += ",";
  return text + ")";
}

ElementCount element_count(const std::vector<std::int64_t>& shape, const Limits& limits) {
  ElementCount result;
  result.count = 1;
  for (const std::int64_t dim : shape) {
    if (dim == 0) return {0, {}};
  }
  for (const std::int64_t dim : shape) {
    if (result.count > limits.max_array_elements / dim) {
      result.error = "has shape " + shape_text(shape) + ", over the limit of " +
                     std::to_string(limits.max_array_elements) +
                     " elements (Limits::max_array_elements)";
      return result;
    }
    result.count *= dim;
  }
  return result;
}

std::optional<std::vector<std::int64_t>> numpy_integers(const NumpyArray& array) {
  const NumpyKind kind = array.dtype.kind;
  if (kind != NumpyKind::kBool && kind != NumpyKind::kSigned && kind != NumpyKind::kUnsigned) {
    return std::nullopt;
  }
  std::vector<std::int64_t> out(static_cast<std::size_t>(array.count));
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (array.dtype.kind == NumpyKind::kUnsigned && array.dtype.item_size == 8) {
      const auto value = integer_at<std::uint64_t>(array, i);
      if (value > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
        return std::nullopt;
      }
      out[i] = static_cast<std::int64_t>(value);
    } else {
      out[i] = integer_at<std::int64_t>(array, i);
    }
  }
  return out;
}

std::vector<float> numpy_floats(const NumpyArray& array) {
  std::vector<float> out(static_cast<std::size_t>(array.count));
  const char* bytes = array.data.data();
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (array.dtype.kind == NumpyKind::kFloat) {
      out[i] = array.dtype.item_size == 4
                   ? load_little_endian<float>(bytes + 4 * i)
                   : static_cast<float>(load_little_endian<double>(bytes + 8 * i));
    } else {
      out[i] = static_cast<float>(integer_at<std::int64_t>(array, i));
    }
  }
  return out;
}

std::optional<std::vector<std::string>> numpy_strings(const NumpyArray& array) {
  std::vector<std::string> out(static_cast<std::size_t>(array.count));
  const auto size = static_cast<std::size_t>(array.dtype.item_size);
  for (std::size_t i = 0; i < out.size(); ++i) {
    const char* at = array.data.data() + i * size;
    std::string& text = out[i];
    if (array.dtype.kind == NumpyKind::kBytes) {
      text.assign(at, size);
    } else {
      for (std::size_t k = 0; k < size; k += 4) {
        const auto code = load_little_endian<std::uint32_t>(at + k);
        if (code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return std::nullopt;
        if (code == 0) {
          text.push_back('\0');  // trimmed below; numpy pads with NULs
        } else {
          append_utf8(text, code);
        }
      }
    }
    while (!text.empty() && text.back() == '\0') text.pop_back();
  }
  return out;
}

}  // namespace maskgat::detail
