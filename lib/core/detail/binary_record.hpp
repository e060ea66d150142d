#pragma once
// Little-endian binary records: a writer that appends scalars, strings and float arrays to bytes,
// and a reader that checks every count against the bytes left before allocating anything, with
// errors located as `<reader>: <path>: at payload byte N: ...`. Checkpoints and the graph store's
// header are such records.

#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "maskgat/core/error.hpp"

namespace maskgat::detail {

static_assert(std::endian::native == std::endian::little,
              "records are written little-endian by copying bytes");

// FNV-1a 64 of `bytes`: the checksum of a record's payload.
[[nodiscard]] inline std::uint64_t fnv1a(std::string_view bytes) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (const char byte : bytes) {
    hash ^= static_cast<unsigned char>(byte);
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

class RecordWriter {
 public:
  template <typename T>
  void scalar(T value) {
    bytes_.append(reinterpret_cast<const char*>(&value), sizeof(T));
  }
  void string(const std::string& text) {
    scalar<std::uint64_t>(text.size());
    bytes_ += text;
  }
  void strings(const std::vector<std::string>& texts) {
    scalar<std::uint64_t>(texts.size());
    for (const std::string& text : texts) string(text);
  }
  void floats(const std::vector<float>& values) {
    scalar<std::uint64_t>(values.size());
    bytes_.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
  }
  [[nodiscard]] const std::string& bytes() const { return bytes_; }

 private:
  std::string bytes_;
};

class RecordReader {
 public:
  RecordReader(std::string_view bytes, std::string reader, std::string path)
      : bytes_(bytes), reader_(std::move(reader)), path_(std::move(path)) {}

  template <typename T>
  T scalar() {
    need(sizeof(T), "a value");
    T value;
    std::memcpy(&value, bytes_.data() + position_, sizeof(T));
    position_ += sizeof(T);
    return value;
  }
  std::string string() {
    const auto size = count(1, "a string");
    std::string text(bytes_.substr(position_, size));
    position_ += size;
    return text;
  }
  // A list of strings: its count is checked against the bytes left at 8 bytes (a length) each.
  std::vector<std::string> strings() {
    const auto size = count(sizeof(std::uint64_t), "a list of strings");
    std::vector<std::string> texts;
    texts.reserve(size);
    for (std::size_t k = 0; k < size; ++k) texts.push_back(string());
    return texts;
  }
  std::vector<float> floats() {
    const auto size = count(sizeof(float), "an array");
    std::vector<float> values(size);
    // An empty vector's data() may be null, which memcpy must not get even for zero bytes.
    if (size > 0) std::memcpy(values.data(), bytes_.data() + position_, size * sizeof(float));
    position_ += size * sizeof(float);
    return values;
  }
  // A count of items of `item_size` bytes that must all still be in the payload.
  std::size_t count(std::size_t item_size, const char* what) {
    const auto size = scalar<std::uint64_t>();
    if (size > (bytes_.size() - position_) / item_size) {
      fail(std::string(what) + " of " + std::to_string(size) + " items runs past the end");
    }
    return static_cast<std::size_t>(size);
  }
  [[noreturn]] void fail(const std::string& message) const {
    throw ParseError(reader_, path_, 0,
                     "at payload byte " + std::to_string(position_) + ": " + message);
  }
  void finish() const {
    if (position_ != bytes_.size()) {
      fail(std::to_string(bytes_.size() - position_) + " unexpected bytes after the last field");
    }
  }

 private:
  void need(std::size_t size, const char* what) const {
    if (bytes_.size() - position_ < size) fail(std::string(what) + " runs past the end");
  }

  std::string_view bytes_;
  std::string reader_;
  std::string path_;
  std::size_t position_ = 0;
};

}  // namespace maskgat::detail
