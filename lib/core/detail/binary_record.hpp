#pragma once
// Little-endian binary records: a writer that appends scalars, strings and arrays to bytes,
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
  template <typename T>
  void array(const std::vector<T>& values) {
    scalar<std::uint64_t>(values.size());
    bytes_.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
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
  template <typename T>
  std::vector<T> array() {
    const auto size = count(sizeof(T), "an array");
    std::vector<T> values(size);
    // An empty vector's data() may be null, which memcpy must not get even for zero bytes.
    if (size > 0) std::memcpy(values.data(), bytes_.data() + position_, size * sizeof(T));
    position_ += size * sizeof(T);
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

// A framed record: an 8-byte magic, the format version (uint32), the payload's size (uint64),
// the payload, and its FNV-1a 64. The graph store's header and a partition's part files are
// framed so.
struct Frame {
  std::string_view magic;     // 8 bytes
  std::uint32_t version = 0;  // the only version read
  std::string_view what;      // names the file in errors: "graph store (the header"
  std::string_view remedy;    // for another version: "convert the data again"
};

[[nodiscard]] inline std::string framed(const Frame& frame, const RecordWriter& payload) {
  RecordWriter prefix;
  prefix.scalar(frame.version);
  prefix.scalar<std::uint64_t>(payload.bytes().size());
  RecordWriter checksum;
  checksum.scalar(fnv1a(payload.bytes()));
  return std::string(frame.magic) + prefix.bytes() + payload.bytes() + checksum.bytes();
}

// The payload of `content` framed by `frame`, checked: magic, version, size and checksum.
// Throws ParseError(reader, path) naming what is wrong.
[[nodiscard]] inline std::string_view framed_payload(std::string_view content, const Frame& frame,
                                                     const std::string& reader,
                                                     const std::string& path) {
  const auto fail = [&](const std::string& message) { throw ParseError(reader, path, 0, message); };
  constexpr std::size_t kPrefix = 8 + sizeof(std::uint32_t) + sizeof(std::uint64_t);
  if (content.compare(0, frame.magic.size(), frame.magic) != 0) {
    fail("not a MaskGAT " + std::string(frame.what) + " does not start with " +
         std::string(frame.magic) + ")");
  }
  if (content.size() < kPrefix + 8) fail("truncated inside the header");
  std::uint32_t version = 0;
  std::memcpy(&version, content.data() + 8, sizeof(version));
  if (version != frame.version) {
    fail("format version " + std::to_string(version) + ", this build reads version " +
         std::to_string(frame.version) + " (" + std::string(frame.remedy) + ")");
  }
  std::uint64_t size = 0;
  std::memcpy(&size, content.data() + 12, sizeof(size));
  if (size != content.size() - kPrefix - 8) {
    fail("the header announces " + std::to_string(size) + " payload bytes, it holds " +
         std::to_string(content.size() - kPrefix - 8));
  }
  const std::string_view payload = content.substr(kPrefix, size);
  std::uint64_t checksum = 0;
  std::memcpy(&checksum, content.data() + kPrefix + size, sizeof(checksum));
  if (checksum != fnv1a(payload)) fail("checksum mismatch: the file is corrupt");
  return payload;
}

}  // namespace maskgat::detail
