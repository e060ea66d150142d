#include "io/detail/npy.hpp"

#include <charconv>
#include <cstdint>
#include <optional>

#include "io/detail/text.hpp"
#include "maskgat/core/error.hpp"

namespace maskgat::detail {
namespace {

constexpr std::string_view kMagic = "\x93NUMPY";
// numpy writes headers of a few hundred bytes; far more is not an honest file.
constexpr std::int64_t kMaxHeaderBytes = 1 << 20;

// Reads the header dict literal; every method fails with a message naming the header offset.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& where, std::string_view reader,
               const std::string& path)
      : text_(text), where_(where), reader_(reader), path_(path) {}

  NumpyArray parse(const Limits& limits) {
    NumpyArray array;
    bool has_descr = false;
    bool has_fortran = false;
    bool has_shape = false;
    expect('{');
    while (true) {
      skip_space();
      if (peek() == '}') {
        ++pos_;
        break;
      }
      const std::string key = string_literal();
      skip_space();
      expect(':');
      skip_space();
      if (key == "descr") {
        if (has_descr) fail("'descr' appears twice");
        has_descr = true;
        if (peek() != '\'' && peek() != '"') {
          fail("'descr' is not a type code string (structured dtypes are not supported)");
        }
        const std::string code = string_literal();
        const std::optional<NumpyDtype> dtype = parse_numpy_dtype(code);
        if (!dtype) {
          fail("unsupported dtype " + quoted_printable(code) + ", expected " +
               std::string(kNumpyDtypes));
        }
        array.dtype = *dtype;
      } else if (key == "fortran_order") {
        if (has_fortran) fail("'fortran_order' appears twice");
        has_fortran = true;
        array.fortran = boolean();
      } else if (key == "shape") {
        if (has_shape) fail("'shape' appears twice");
        has_shape = true;
        array.shape = tuple();
      } else {
        fail("unknown key " + quoted_printable(key) +
             ", expected 'descr', 'fortran_order' and "
             "'shape'");
      }
      skip_space();
      if (peek() == ',') {
        ++pos_;
      } else if (peek() != '}') {
        fail("expected ',' or '}' at header byte " + std::to_string(pos_) + ", got " +
             describe_here());
      }
    }
    skip_space();
    if (pos_ != text_.size()) {
      fail(std::to_string(text_.size() - pos_) + " byte(s) after the header's dict");
    }
    if (!has_descr || !has_fortran || !has_shape) {
      fail(std::string("no '") +
           (!has_descr     ? "descr"
            : !has_fortran ? "fortran_order"
                           : "shape") +
           "' in the header");
    }
    const ElementCount count = element_count(array.shape, limits);
    if (!count.error.empty()) throw LimitError(reader_, path_, 0, where_ + count.error);
    array.count = count.count;
    return array;
  }

 private:
  [[noreturn]] void fail(const std::string& message) const {
    throw ParseError(reader_, path_, 0, where_ + "header: " + message);
  }
  [[nodiscard]] char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  [[nodiscard]] std::string describe_here() const {
    return pos_ < text_.size() ? quoted_printable(text_.substr(pos_, 1)) : "the end";
  }
  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n')) ++pos_;
  }
  void expect(char c) {
    if (peek() != c) {
      fail(std::string("expected '") + c + "' at header byte " + std::to_string(pos_) + ", got " +
           describe_here());
    }
    ++pos_;
  }
  // 'text' or "text", without escapes (numpy writes none in these fields).
  std::string string_literal() {
    const char quote = peek();
    if (quote != '\'' && quote != '"') {
      fail("expected a quoted key at header byte " + std::to_string(pos_) + ", got " +
           describe_here());
    }
    const std::size_t end = text_.find(quote, pos_ + 1);
    if (end == std::string_view::npos) fail("a string that is not closed");
    std::string value(text_.substr(pos_ + 1, end - pos_ - 1));
    if (value.find('\\') != std::string::npos) fail("an escaped string");
    pos_ = end + 1;
    return value;
  }
  bool boolean() {
    if (text_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (text_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    fail("'fortran_order' is not True or False");
  }
  std::vector<std::int64_t> tuple() {
    std::vector<std::int64_t> shape;
    expect('(');
    while (true) {
      skip_space();
      if (peek() == ')') {
        ++pos_;
        break;
      }
      if (shape.size() == kMaxNumpyDimensions) {
        fail("'shape' has more than " + std::to_string(kMaxNumpyDimensions) + " dimensions");
      }
      std::int64_t value = 0;
      const char* begin = text_.data() + pos_;
      const auto [end, error] = std::from_chars(begin, text_.data() + text_.size(), value);
      if (error != std::errc() || end == begin || value < 0) {
        fail("'shape' entry at header byte " + std::to_string(pos_) +
             " is not a non-negative integer");
      }
      pos_ += static_cast<std::size_t>(end - begin);
      shape.push_back(value);
      skip_space();
      if (peek() == ',') {
        ++pos_;
      } else if (peek() != ')') {
        fail("expected ',' or ')' in 'shape' at header byte " + std::to_string(pos_) + ", got " +
             describe_here());
      }
    }
    return shape;
  }

  std::string_view text_;
  std::size_t pos_ = 0;
  const std::string& where_;
  std::string_view reader_;
  const std::string& path_;
};

}  // namespace

NumpyArray parse_npy(std::string_view bytes, std::string_view member, std::string_view reader,
                     const std::string& path, const Limits& limits) {
  const std::string where = "member " + quoted_printable(member) + ": ";
  const auto fail = [&](const std::string& message) {
    throw ParseError(reader, path, 0, where + message);
  };
  if (bytes.size() < kMagic.size() + 2 || bytes.substr(0, kMagic.size()) != kMagic) {
    fail("not an .npy array (no \\x93NUMPY magic string at its start)");
  }
  const auto major = static_cast<unsigned char>(bytes[6]);
  if (major < 1 || major > 3) {
    fail("unsupported .npy version " + std::to_string(major) + "." +
         std::to_string(static_cast<unsigned char>(bytes[7])) + ", expected 1.0, 2.0 or 3.0");
  }
  const std::size_t length_bytes = major == 1 ? 2 : 4;
  const std::size_t prefix = kMagic.size() + 2 + length_bytes;
  if (bytes.size() < prefix) fail("truncated before its header length");
  std::uint64_t header_length = 0;
  for (std::size_t i = 0; i < length_bytes; ++i) {
    header_length |= static_cast<std::uint64_t>(static_cast<unsigned char>(bytes[8 + i]))
                     << (8 * i);
  }
  if (header_length > static_cast<std::uint64_t>(kMaxHeaderBytes)) {
    fail("header declares " + std::to_string(header_length) + " bytes, over the limit of " +
         std::to_string(kMaxHeaderBytes));
  }
  if (header_length > bytes.size() - prefix) {
    fail("header declares " + std::to_string(header_length) + " bytes, but only " +
         std::to_string(bytes.size() - prefix) + " follow");
  }
  NumpyArray array =
      HeaderParser(bytes.substr(prefix, header_length), where, reader, path).parse(limits);
  array.data = bytes.substr(prefix + header_length);
  if (array.dtype.kind != NumpyKind::kObject) {
    std::int64_t expected = 0;
    if (__builtin_mul_overflow(array.count, array.dtype.item_size, &expected)) {
      throw LimitError(reader, path, 0,
                       where + "header declares shape " + shape_text(array.shape) + " of '" +
                           array.dtype.code + "', more bytes than a file can hold");
    }
    if (static_cast<std::int64_t>(array.data.size()) != expected) {
      fail("header declares shape " + shape_text(array.shape) + " of '" + array.dtype.code + "' (" +
           std::to_string(expected) + " bytes), the data holds " +
           std::to_string(array.data.size()) + " bytes");
    }
  }
  return array;
}

}  // namespace maskgat::detail
