#include "io/detail/store_files.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <system_error>

#include "core/detail/binary_record.hpp"
#include "core/detail/parallel.hpp"
#include "io/detail/input_file.hpp"
#include "io/detail/text.hpp"
#include "maskgat/core/error.hpp"
#include "maskgat/io/output_file.hpp"

namespace maskgat::detail {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kChecksumBlock = std::size_t{1} << 20;
constexpr Frame kHeaderFrame{"MGATSTOR", kStoreVersion, "graph store (the header",
                             "convert the data again"};

// SplitMix64's finaliser.
std::uint64_t mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// A 64-bit hash of one block: four independent multiply-xor lanes over its 8-byte words (so the
// multiplications overlap), the tail bytes in a last word, then the lanes and the size mixed.
std::uint64_t hash_block(const unsigned char* data, std::size_t size) {
  constexpr std::uint64_t kMultiplier = 0x9e3779b97f4a7c15ULL;
  std::uint64_t lanes[4] = {0x243f6a8885a308d3ULL, 0x13198a2e03707344ULL, 0xa4093822299f31d0ULL,
                            0x082efa98ec4e6c89ULL};
  const std::size_t words = size / 8;
  const auto take = [&](std::size_t word, std::uint64_t& lane) {
    std::uint64_t value = 0;
    std::memcpy(&value, data + 8 * word, 8);
    lane = (lane ^ value) * kMultiplier;
    lane ^= lane >> 32;
  };
  std::size_t word = 0;
  for (; word + 4 <= words; word += 4) {
    for (std::size_t lane = 0; lane < 4; ++lane) take(word + lane, lanes[lane]);
  }
  for (; word < words; ++word) take(word, lanes[word % 4]);
  std::uint64_t tail = 0;
  std::memcpy(&tail, data + 8 * words, size - 8 * words);
  std::uint64_t hash = mix(size ^ tail);
  for (const std::uint64_t lane : lanes) hash = mix(hash ^ lane);
  return hash;
}

[[noreturn]] void fail(const fs::path& path, const std::string& message) {
  throw ParseError(kStoreReader, path.string(), 0, message);
}

[[noreturn]] void fail_io(const fs::path& path, const std::string& what) {
  throw IoError(std::string(kStoreReader) + ": " + path.string() + ": " + what + ": " +
                errno_text());
}

void write_fully(int fd, const void* data, std::size_t bytes, const fs::path& path) {
  const auto* next = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t written = ::write(fd, next, bytes);
    if (written < 0) {
      if (errno == EINTR) continue;
      fail_io(path, "write failed");
    }
    next += written;
    bytes -= static_cast<std::size_t>(written);
  }
}

// The arrays a store of `header`'s sizes holds: name, element bytes and count (the node names'
// bytes are -1: any count).
struct Expected {
  std::string_view name;
  std::uint32_t element_bytes;
  std::int64_t count;
};

std::vector<Expected> expected_arrays(const StoreHeader& header) {
  const std::int64_t n = header.nodes;
  const std::int64_t e = header.edges;
  std::vector<Expected> arrays;
  const auto add = [&](std::string_view name, std::uint32_t element_bytes, std::int64_t count) {
    arrays.push_back({name, element_bytes, count});
  };
  add("in_offsets", 8, n + 1);
  add("in_sources", 4, e);
  if (header.weighted) add("weights", 4, e);
  add("out_offsets", 8, n + 1);
  add("out_targets", 4, e);
  add("out_edge_ids", 8, e);
  add("labels", 4, n);
  add("split", 1, n);
  if (header.layout == FeatureLayout::kDense) add("features", 4, header.feature_entries);
  if (header.layout == FeatureLayout::kSparse) {
    add("feature_offsets", 4, n + 1);
    add("feature_columns", 4, header.feature_entries);
    add("feature_values", 4, header.feature_entries);
  }
  if (!header.numeric_node_names) {
    add("node_name_offsets", 8, n + 1);
    add("node_name_bytes", 1, -1);
  }
  return arrays;
}

void write_preparation(RecordWriter& out, const DataPreparation& preparation) {
  for (const bool flag :
       {preparation.undirected, preparation.rows_normalized, preparation.random_split,
        preparation.largest_component, preparation.split_sizes.val_per_class}) {
    out.scalar<std::uint8_t>(flag ? 1 : 0);
  }
  out.scalar(preparation.split_seed);
  out.scalar(preparation.split_sizes.train_per_class);
  out.scalar(preparation.split_sizes.val);
  out.scalar(preparation.split_sizes.test);
}

DataPreparation read_preparation(RecordReader& in) {
  DataPreparation preparation;
  for (bool* flag :
       {&preparation.undirected, &preparation.rows_normalized, &preparation.random_split,
        &preparation.largest_component, &preparation.split_sizes.val_per_class}) {
    const auto value = in.scalar<std::uint8_t>();
    if (value > 1) in.fail("preparation flag " + std::to_string(value) + ", expected 0 or 1");
    *flag = value == 1;
  }
  preparation.split_seed = in.scalar<std::uint64_t>();
  preparation.split_sizes.train_per_class = in.scalar<std::int64_t>();
  preparation.split_sizes.val = in.scalar<std::int64_t>();
  preparation.split_sizes.test = in.scalar<std::int64_t>();
  return preparation;
}

}  // namespace

void Checksum::fold(std::uint64_t block_hash) { folded_ = mix(folded_ ^ block_hash); }

void Checksum::update(const void* data, std::size_t bytes) {
  const auto* next = static_cast<const unsigned char*>(data);
  length_ += bytes;
  if (!partial_.empty()) {
    const std::size_t taken = std::min(bytes, kChecksumBlock - partial_.size());
    partial_.insert(partial_.end(), next, next + taken);
    next += taken;
    bytes -= taken;
    if (partial_.size() < kChecksumBlock) return;
    fold(hash_block(partial_.data(), partial_.size()));
    partial_.clear();
  }
  for (; bytes >= kChecksumBlock; next += kChecksumBlock, bytes -= kChecksumBlock) {
    fold(hash_block(next, kChecksumBlock));
  }
  partial_.assign(next, next + bytes);
}

std::uint64_t Checksum::value() const {
  std::uint64_t folded = folded_;
  if (!partial_.empty()) folded = mix(folded ^ hash_block(partial_.data(), partial_.size()));
  return mix(folded ^ length_);
}

std::uint64_t checksum_of(std::span<const unsigned char> bytes) {
  const std::size_t blocks = (bytes.size() + kChecksumBlock - 1) / kChecksumBlock;
  std::vector<std::uint64_t> hashes(blocks);
  run_tasks(static_cast<std::int64_t>(blocks), [&](std::int64_t k) {
    const std::size_t first = static_cast<std::size_t>(k) * kChecksumBlock;
    hashes[static_cast<std::size_t>(k)] =
        hash_block(bytes.data() + first, std::min(kChecksumBlock, bytes.size() - first));
  });
  std::uint64_t folded = kChecksumSeed;
  for (const std::uint64_t hash : hashes) folded = mix(folded ^ hash);
  return mix(folded ^ static_cast<std::uint64_t>(bytes.size()));
}

ArrayWriter::ArrayWriter(const fs::path& dir, std::string name, std::uint32_t element_bytes)
    : path_(dir / (name + ".bin")) {
  record_.name = std::move(name);
  record_.element_bytes = element_bytes;
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd_ < 0) fail_io(path_, "cannot create the file");
}

ArrayWriter::~ArrayWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void ArrayWriter::append_bytes(const void* data, std::size_t bytes, std::size_t element_bytes) {
  if (element_bytes != record_.element_bytes) {
    throw InvalidArgument("store: array " + record_.name + " holds " +
                          std::to_string(record_.element_bytes) + "-byte elements, got " +
                          std::to_string(element_bytes));
  }
  if (bytes == 0) return;
  write_fully(fd_, data, bytes, path_);
  checksum_.update(data, bytes);
  record_.count += bytes / element_bytes;
}

ArrayRecord ArrayWriter::finish() {
  if (::fsync(fd_) != 0) fail_io(path_, "write failed");
  if (::close(fd_) != 0) {
    fd_ = -1;
    fail_io(path_, "write failed");
  }
  fd_ = -1;
  record_.checksum = checksum_.value();
  return record_;
}

MappedFile::MappedFile(const fs::path& path, std::uint64_t bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail_io(path, "cannot open");
  struct stat status {};
  if (::fstat(fd, &status) != 0 || !S_ISREG(status.st_mode)) {
    ::close(fd);
    fail(path, "not a regular file");
  }
  if (static_cast<std::uint64_t>(status.st_size) != bytes) {
    ::close(fd);
    fail(path, "holds " + std::to_string(status.st_size) + " bytes, the header announces " +
                   std::to_string(bytes) + " (truncated, or a file of another store)");
  }
  size_ = static_cast<std::size_t>(bytes);
  if (size_ > 0) {
    data_ = ::mmap(nullptr, size_, PROT_READ, MAP_SHARED, fd, 0);
    if (data_ == MAP_FAILED) {
      data_ = nullptr;
      ::close(fd);
      fail_io(path, "cannot map");
    }
  }
  ::close(fd);
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(data_, size_);
}

void write_store_header(const fs::path& dir, const StoreHeader& header) {
  RecordWriter payload;
  payload.string(header.name);
  payload.scalar(header.nodes);
  payload.scalar(header.edges);
  payload.scalar<std::uint8_t>(header.weighted ? 1 : 0);
  payload.scalar(header.features);
  payload.scalar(static_cast<std::uint8_t>(header.layout));
  payload.scalar(header.feature_entries);
  payload.string(header.missing_features);
  payload.strings(header.feature_names);
  payload.strings(header.class_names);
  payload.scalar<std::uint8_t>(header.numeric_node_names ? 1 : 0);
  payload.strings(header.notes);
  write_preparation(payload, header.preparation);
  payload.scalar<std::uint64_t>(header.arrays.size());
  for (const ArrayRecord& array : header.arrays) {
    payload.string(array.name);
    payload.scalar(array.element_bytes);
    payload.scalar(array.count);
    payload.scalar(array.checksum);
  }
  write_file_atomically(dir / kStoreHeaderFile, framed(kHeaderFrame, payload), false);
}

StoreHeader read_store_header(const fs::path& dir, std::int64_t max_bytes) {
  const fs::path path = dir / kStoreHeaderFile;
  InputFile file(path, kStoreReader);
  const std::string content = read_bounded_file(file, max_bytes, Content::kBinary);
  const std::string_view payload =
      framed_payload(content, kHeaderFrame, std::string(kStoreReader), path.string());
  RecordReader in(payload, std::string(kStoreReader), path.string());
  StoreHeader header;
  header.name = in.string();
  header.nodes = in.scalar<std::int64_t>();
  header.edges = in.scalar<std::int64_t>();
  const auto weighted = in.scalar<std::uint8_t>();
  header.features = in.scalar<std::int64_t>();
  const auto layout = in.scalar<std::uint8_t>();
  header.feature_entries = in.scalar<std::int64_t>();
  if (header.nodes < 0 || header.nodes > kMaxNodeCount) {
    in.fail(std::to_string(header.nodes) + " nodes, expected 0 to " +
            std::to_string(kMaxNodeCount));
  }
  constexpr std::int64_t kMaxEdges = std::int64_t{1} << 56;
  if (header.edges < 0 || header.edges > kMaxEdges) {
    in.fail(std::to_string(header.edges) + " edges, expected 0 to 2^56");
  }
  if (weighted > 1) in.fail("weighted flag " + std::to_string(weighted) + ", expected 0 or 1");
  header.weighted = weighted == 1;
  if (layout > static_cast<std::uint8_t>(FeatureLayout::kSparse)) {
    in.fail("feature layout " + std::to_string(layout) +
            ", expected 0 (none), 1 (dense) or 2 "
            "(sparse)");
  }
  header.layout = static_cast<FeatureLayout>(layout);
  constexpr std::int64_t kMaxIndex = std::numeric_limits<std::int32_t>::max();
  const bool none = header.layout == FeatureLayout::kNone;
  if (header.features < 0 || header.features > kMaxIndex || (none && header.features != 0)) {
    in.fail(std::to_string(header.features) +
            " feature columns, expected 0 to 2^31 - 1 (0 "
            "without features)");
  }
  const std::int64_t entries = header.feature_entries;
  const bool dense_ok = header.layout == FeatureLayout::kDense &&
                        (header.features == 0 || header.nodes <= kMaxEdges / header.features) &&
                        entries == header.nodes * header.features;
  const bool sparse_ok =
      header.layout == FeatureLayout::kSparse && entries >= 0 && entries <= kMaxIndex;
  if (!(none ? entries == 0 : dense_ok || sparse_ok)) {
    in.fail(std::to_string(entries) + " stored feature values for " + std::to_string(header.nodes) +
            " nodes x " + std::to_string(header.features) + " columns, expected " +
            (header.layout == FeatureLayout::kDense ? "their product"
                                                    : "at most 2^31 - 1 (or 0 without features)"));
  }
  header.missing_features = in.string();
  header.feature_names = in.strings();
  header.class_names = in.strings();
  const auto numeric = in.scalar<std::uint8_t>();
  if (numeric > 1) in.fail("node name flag " + std::to_string(numeric) + ", expected 0 or 1");
  header.numeric_node_names = numeric == 1;
  header.notes = in.strings();
  header.preparation = read_preparation(in);
  const auto arrays = in.count(1 + 8 + 4 + 8 + 8, "the array table");
  for (std::size_t k = 0; k < arrays; ++k) {
    ArrayRecord array;
    array.name = in.string();
    array.element_bytes = in.scalar<std::uint32_t>();
    array.count = in.scalar<std::uint64_t>();
    array.checksum = in.scalar<std::uint64_t>();
    header.arrays.push_back(std::move(array));
  }
  in.finish();
  if (!header.feature_names.empty() &&
      static_cast<std::int64_t>(header.feature_names.size()) != header.features) {
    in.fail(std::to_string(header.feature_names.size()) + " feature names for " +
            std::to_string(header.features) + " columns");
  }
  const std::vector<Expected> expected = expected_arrays(header);
  if (header.arrays.size() != expected.size()) {
    in.fail("the array table lists " + std::to_string(header.arrays.size()) +
            " arrays, a store of these sizes has " + std::to_string(expected.size()));
  }
  for (std::size_t k = 0; k < expected.size(); ++k) {
    const ArrayRecord& array = header.arrays[k];
    const Expected& want = expected[k];
    if (array.name != want.name || array.element_bytes != want.element_bytes ||
        (want.count >= 0 && array.count != static_cast<std::uint64_t>(want.count)) ||
        array.count > static_cast<std::uint64_t>(kMaxEdges)) {
      in.fail("array " + std::to_string(k + 1) + " is '" + array.name + "' of " +
              std::to_string(array.count) + " elements of " + std::to_string(array.element_bytes) +
              " bytes, expected '" + std::string(want.name) + "'" +
              (want.count >= 0 ? " of " + std::to_string(want.count) + " elements" : "") + " of " +
              std::to_string(want.element_bytes) + " bytes");
    }
  }
  return header;
}

const ArrayRecord& array_record(const StoreHeader& header, std::string_view name) {
  return *std::find_if(header.arrays.begin(), header.arrays.end(),
                       [&](const ArrayRecord& array) { return array.name == name; });
}

StoreDirectory::StoreDirectory(const fs::path& dir, bool overwrite, std::string_view marker,
                               std::string_view kind)
    : dir_(dir), overwrite_(overwrite) {
  std::error_code error;
  const fs::file_status status = fs::symlink_status(dir_, error);
  if (fs::exists(status)) {
    if (!overwrite_) {
      throw IoError(dir_.string() + ": exists; pass --force to replace it");
    }
    const bool is_kind = fs::is_directory(status) && fs::exists(dir_ / marker, error);
    if (!is_kind && !(fs::is_directory(status) && fs::is_empty(dir_, error))) {
      throw IoError(dir_.string() + ": exists and is not a " + std::string(kind) + " (no " +
                    std::string(marker) + " file), so it is not replaced even with --force");
    }
  }
  const fs::path parent = dir_.has_parent_path() ? dir_.parent_path() : fs::path(".");
  if (!fs::is_directory(parent, error)) {
    throw IoError(dir_.string() + ": its parent directory " + parent.string() + " does not exist");
  }
  const std::string base = dir_.filename().string();
  temporary_ = parent / ("." + base + ".maskgat-tmp-" + std::to_string(::getpid()));
  fs::remove_all(temporary_, error);  // left by a killed writer of the same process id
  if (!fs::create_directory(temporary_, error)) {
    throw IoError(temporary_.string() + ": cannot create the directory: " + error.message());
  }
}

StoreDirectory::~StoreDirectory() {
  if (!published_) {
    std::error_code error;
    fs::remove_all(temporary_, error);
  }
}

void StoreDirectory::publish() {
  const fs::path parent = temporary_.parent_path();
  const int dir_fd = ::open(temporary_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    ::fsync(dir_fd);
    ::close(dir_fd);
  }
  std::error_code error;
  fs::path old;
  if (fs::exists(fs::symlink_status(dir_, error))) {
    old = parent / ("." + dir_.filename().string() + ".maskgat-old-" + std::to_string(::getpid()));
    fs::remove_all(old, error);
    if (::rename(dir_.c_str(), old.c_str()) != 0) fail_io(dir_, "cannot replace the store");
  }
  if (::rename(temporary_.c_str(), dir_.c_str()) != 0) fail_io(dir_, "cannot create the store");
  published_ = true;
  if (!old.empty()) fs::remove_all(old, error);
  const int parent_fd = ::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (parent_fd >= 0) {
    ::fsync(parent_fd);
    ::close(parent_fd);
  }
}

void write_transpose(const fs::path& dir, std::span<const EdgeId> in_offsets,
                     std::span<const NodeId> in_sources, std::int64_t budget_bytes,
                     std::vector<ArrayRecord>& records) {
  const auto n = static_cast<std::int64_t>(in_offsets.size()) - 1;
  std::vector<EdgeId> out_offsets(static_cast<std::size_t>(n) + 1, 0);
  for (const NodeId source : in_sources) ++out_offsets[static_cast<std::size_t>(source) + 1];
  for (std::int64_t j = 0; j < n; ++j) {
    out_offsets[static_cast<std::size_t>(j) + 1] += out_offsets[static_cast<std::size_t>(j)];
  }
  records.push_back(write_array<EdgeId>(dir, "out_offsets", out_offsets));
  ArrayWriter targets(dir, "out_targets", sizeof(NodeId));
  ArrayWriter edge_ids(dir, "out_edge_ids", sizeof(EdgeId));
  constexpr std::int64_t kSlotBytes = sizeof(NodeId) + sizeof(EdgeId);
  const std::int64_t budget_slots = std::max<std::int64_t>(budget_bytes / kSlotBytes, 1);
  std::vector<NodeId> pass_targets;
  std::vector<EdgeId> pass_edges;
  std::vector<EdgeId> cursor;
  for (std::int64_t first = 0; first < n;) {
    // The sources of this pass: as many as fit the budget, at least one.
    std::int64_t last = first + 1;
    while (last < n && out_offsets[static_cast<std::size_t>(last) + 1] -
                               out_offsets[static_cast<std::size_t>(first)] <=
                           budget_slots) {
      ++last;
    }
    const EdgeId base = out_offsets[static_cast<std::size_t>(first)];
    const auto slots = static_cast<std::size_t>(out_offsets[static_cast<std::size_t>(last)] - base);
    pass_targets.resize(slots);
    pass_edges.resize(slots);
    cursor.assign(out_offsets.begin() + first, out_offsets.begin() + last);
    for (std::int64_t dst = 0; dst < n; ++dst) {
      for (EdgeId e = in_offsets[static_cast<std::size_t>(dst)];
           e < in_offsets[static_cast<std::size_t>(dst) + 1]; ++e) {
        const NodeId source = in_sources[static_cast<std::size_t>(e)];
        if (source < first || source >= last) continue;
        const auto slot =
            static_cast<std::size_t>(cursor[static_cast<std::size_t>(source - first)]++ - base);
        pass_targets[slot] = static_cast<NodeId>(dst);
        pass_edges[slot] = e;
      }
    }
    targets.append<NodeId>(pass_targets);
    edge_ids.append<EdgeId>(pass_edges);
    first = last;
  }
  records.push_back(targets.finish());
  records.push_back(edge_ids.finish());
}

}  // namespace maskgat::detail
