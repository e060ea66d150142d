#pragma once
// The graph store's files: checksums of fixed blocks, array files written in pieces and mapped
// read-only, the header record, the directory written beside its target and renamed into place,
// and the transpose built from a written destination-major CSR in passes of bounded memory.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "maskgat/core/types.hpp"
#include "maskgat/export.hpp"
#include "maskgat/io/dataset.hpp"

namespace maskgat::detail {

inline constexpr std::string_view kStoreReader = "store";
inline constexpr std::string_view kStoreHeaderFile = "header";
inline constexpr std::uint32_t kStoreVersion = 1;
inline constexpr std::uint64_t kChecksumSeed = 0x6d61736b67617400ULL;  // "maskgat"

// The checksum of a byte stream: 64-bit hashes of its fixed 1 MiB blocks, folded in order with
// the length. `update` takes the stream in pieces of any size; `checksum_of` computes the same
// value over a whole array, its blocks in parallel.
class Checksum {
 public:
  void update(const void* data, std::size_t bytes);
  [[nodiscard]] std::uint64_t value() const;

 private:
  void fold(std::uint64_t block_hash);

  std::uint64_t folded_ = kChecksumSeed;
  std::uint64_t length_ = 0;
  std::vector<unsigned char> partial_;  // the current block's bytes, short of 1 MiB
};

// Exported (this header is not installed) for the tests and fuzz targets that forge stores.
[[nodiscard]] MASKGAT_EXPORT std::uint64_t checksum_of(std::span<const unsigned char> bytes);

// One array of a store: `<name>.bin`, `count` elements of `element_bytes` each.
struct ArrayRecord {
  std::string name;
  std::uint32_t element_bytes = 0;
  std::uint64_t count = 0;
  std::uint64_t checksum = 0;
};

// Writes `<dir>/<name>.bin` in pieces, with its checksum; `finish` syncs it.
class ArrayWriter {
 public:
  ArrayWriter(const std::filesystem::path& dir, std::string name, std::uint32_t element_bytes);
  ~ArrayWriter();
  ArrayWriter(const ArrayWriter&) = delete;
  ArrayWriter& operator=(const ArrayWriter&) = delete;

  template <typename T>
  void append(std::span<const T> values) {
    static_assert(sizeof(T) == 1 || sizeof(T) == 4 || sizeof(T) == 8);
    append_bytes(values.data(), values.size_bytes(), sizeof(T));
  }
  ArrayRecord finish();

 private:
  void append_bytes(const void* data, std::size_t bytes, std::size_t element_bytes);

  std::filesystem::path path_;
  ArrayRecord record_;
  Checksum checksum_;
  int fd_ = -1;
};

// Writes a whole array at once.
template <typename T>
ArrayRecord write_array(const std::filesystem::path& dir, std::string name,
                        std::span<const T> values) {
  ArrayWriter writer(dir, std::move(name), sizeof(T));
  writer.append(values);
  return writer.finish();
}

// A read-only mapping of a whole file, which must hold exactly `bytes` bytes (checked against
// its size before mapping). Empty files are not mapped.
class MappedFile {
 public:
  MappedFile(const std::filesystem::path& path, std::uint64_t bytes);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  [[nodiscard]] std::span<const unsigned char> bytes() const noexcept {
    return {static_cast<const unsigned char*>(data_), size_};
  }
  template <typename T>
  [[nodiscard]] std::span<const T> as() const noexcept {
    return {static_cast<const T*>(data_), size_ / sizeof(T)};
  }

 private:
  void* data_ = nullptr;
  std::size_t size_ = 0;
};

// How a store holds its features.
enum class FeatureLayout : std::uint8_t { kNone, kDense, kSparse };

// Everything a store's header holds: the dataset's sizes and metadata, and its arrays.
struct StoreHeader {
  std::string name;
  std::int64_t nodes = 0;
  std::int64_t edges = 0;
  bool weighted = false;
  std::int64_t features = 0;  // F
  FeatureLayout layout = FeatureLayout::kNone;
  std::int64_t feature_entries = 0;  // stored values: N x F dense, the nonzeros sparse
  std::string missing_features;
  std::vector<std::string> feature_names;
  std::vector<std::string> class_names;
  bool numeric_node_names = false;  // node i is named "i"; no name arrays
  std::vector<std::string> notes;
  DataPreparation preparation;
  std::vector<ArrayRecord> arrays;
};

// Writes `<dir>/header`: magic, version, payload size, payload, FNV-1a 64 of the payload.
void write_store_header(const std::filesystem::path& dir, const StoreHeader& header);

// Reads and checks `<dir>/header` (at most `max_bytes` bytes): magic, version, checksum, and
// every size within range and consistent with the array table, which must list exactly the arrays
// the sizes call for. Throws IoError (no header) or ParseError naming the header.
[[nodiscard]] StoreHeader read_store_header(const std::filesystem::path& dir,
                                            std::int64_t max_bytes);

// The record of array `name` in `header` (present: `read_store_header` checked).
[[nodiscard]] const ArrayRecord& array_record(const StoreHeader& header, std::string_view name);

// A store (or a directory of stores) being written: its files go into a temporary directory
// beside `dir` (created here), which `publish` renames to `dir`, replacing an existing one only
// when `overwrite`, and never a directory that lacks `marker` (the file that identifies one: a
// store's header; `kind` names it in errors) unless it is empty. Destroyed unpublished, it
// removes the temporary directory.
class StoreDirectory {
 public:
  StoreDirectory(const std::filesystem::path& dir, bool overwrite,
                 std::string_view marker = kStoreHeaderFile,
                 std::string_view kind = "MaskGAT graph store");
  ~StoreDirectory();
  StoreDirectory(const StoreDirectory&) = delete;
  StoreDirectory& operator=(const StoreDirectory&) = delete;

  [[nodiscard]] const std::filesystem::path& path() const noexcept { return temporary_; }
  void publish();

 private:
  std::filesystem::path dir_;
  std::filesystem::path temporary_;
  bool overwrite_;
  bool published_ = false;
};

// Writes the transpose of the destination-major CSR (`in_offsets`, `in_sources`; N nodes) to
// `dir` as `out_offsets`, `out_targets` and `out_edge_ids`, in passes over ranges of sources whose
// part of the transpose fits `budget_bytes` (each pass reads every in-edge once), and appends
// their records to `records`. Exported (this header is not installed) for its tests.
MASKGAT_EXPORT void write_transpose(const std::filesystem::path& dir,
                                    std::span<const EdgeId> in_offsets,
                                    std::span<const NodeId> in_sources, std::int64_t budget_bytes,
                                    std::vector<ArrayRecord>& records);

}  // namespace maskgat::detail
