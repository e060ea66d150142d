// Fuzz target: opening a graph store, or a part of a partition. An input is a whole store,
// packed as files one after another: a byte naming the file (an index into kFiles, the header
// first), its length (32 bits, little-endian) and its bytes; tests/fuzz/pack_store.py packs a
// store's directory so. When the input's last byte is odd, the store is sealed before it is
// opened: every array's checksum in the header's table and the header's own checksum are
// recomputed (and a part file's record of the header and its own checksum), so that the input
// reaches the checks of sizes and indices behind them. With a part file the store is opened by
// open_part, else by open_store; either must accept it or refuse it with a MaskGAT error, and
// what it accepts must run: its statistics, every row of its features, a one-layer model over its
// graph, and a part's global id of every node.

#include <array>
#include <cstring>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>

#include "core/detail/binary_record.hpp"
#include "fuzz/fuzz_input.hpp"
#include "io/detail/store_files.hpp"
#include "maskgat/graph/masks.hpp"
#include "maskgat/io/partition.hpp"
#include "maskgat/io/store.hpp"
#include "maskgat/nn/model.hpp"

namespace {

namespace fs = std::filesystem;

constexpr std::array<std::string_view, 16> kFiles{"header",
                                                  "in_offsets.bin",
                                                  "in_sources.bin",
                                                  "weights.bin",
                                                  "out_offsets.bin",
                                                  "out_targets.bin",
                                                  "out_edge_ids.bin",
                                                  "labels.bin",
                                                  "split.bin",
                                                  "features.bin",
                                                  "feature_offsets.bin",
                                                  "feature_columns.bin",
                                                  "feature_values.bin",
                                                  "node_name_offsets.bin",
                                                  "node_name_bytes.bin",
                                                  "part"};
constexpr std::size_t kPart = 15;

// Writes the packed files of `input` into the store's directory (`<work_dir>/store`); returns
// whether a header was among them.
bool unpack(std::string_view input) {
  bool header = false;
  while (input.size() >= 5) {
    const auto file = static_cast<unsigned char>(input[0]) % kFiles.size();
    std::uint32_t length = 0;
    std::memcpy(&length, input.data() + 1, sizeof(length));
    input.remove_prefix(5);
    const std::string_view bytes = input.substr(0, std::min<std::size_t>(length, input.size()));
    input.remove_prefix(bytes.size());
    maskgat::fuzz::write_input(bytes, (fs::path("store") / kFiles[file]).string());
    header = header || file == 0;
  }
  return header;
}

// Recomputes the checksum of every array the header lists (found by its name in the header's
// bytes) and the header's own.
void seal(const fs::path& dir) {
  std::string header = maskgat::fuzz::read_file(dir / "header");
  constexpr std::size_t kPrefix = 8 + 4 + 8;
  if (header.size() < kPrefix + 8) return;
  for (std::size_t k = 1; k < kPart; ++k) {
    const std::string_view name = kFiles[k].substr(0, kFiles[k].size() - 4);
    const std::size_t at = header.rfind(name);
    if (at == std::string::npos || !fs::exists(dir / kFiles[k])) continue;
    // The name's entry: the name, its element size (4 bytes) and count (8), then the checksum.
    const std::size_t field = at + name.size() + 4 + 8;
    if (field + 8 > header.size() - 8) continue;
    const std::string bytes = maskgat::fuzz::read_file(dir / kFiles[k]);
    const std::uint64_t checksum = maskgat::detail::checksum_of(std::span<const unsigned char>(
        reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size()));
    std::memcpy(header.data() + field, &checksum, sizeof(checksum));
  }
  const std::uint64_t hash =
      maskgat::detail::fnv1a(std::string_view(header).substr(kPrefix, header.size() - kPrefix - 8));
  std::memcpy(header.data() + header.size() - 8, &hash, sizeof(hash));
  maskgat::fuzz::write_input(header, "store/header");
  // A part file: the header's checksum at payload byte 16 (after the part, the part count and
  // the global node count), then its own.
  std::string part = fs::exists(dir / kFiles[kPart]) ? maskgat::fuzz::read_file(dir / kFiles[kPart])
                                                     : std::string();
  if (part.size() < kPrefix + 24 + 8) return;
  const std::uint64_t header_hash = maskgat::detail::fnv1a(header);
  std::memcpy(part.data() + kPrefix + 16, &header_hash, sizeof(header_hash));
  const std::uint64_t part_hash =
      maskgat::detail::fnv1a(std::string_view(part).substr(kPrefix, part.size() - kPrefix - 8));
  std::memcpy(part.data() + part.size() - 8, &part_hash, sizeof(part_hash));
  maskgat::fuzz::write_input(part, "store/part");
}

void run(const maskgat::Dataset& data) {
  (void)maskgat::compute_statistics(data);
  std::vector<maskgat::NodeId> all(static_cast<std::size_t>(data.graph.num_nodes()));
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<maskgat::NodeId>(i);
  const maskgat::FeatureMatrix rows = data.features.select_rows(all);
  if (data.features.cols() == 0 || data.num_classes() == 0) return;
  maskgat::nn::ModelOptions options;
  options.in_features = data.features.cols();
  options.classes = data.num_classes();
  options.layers = 1;
  options.heads = 2;
  maskgat::Rng rng(0);
  maskgat::nn::Model model(options, rng);
  (void)model.forward(maskgat::masks::from_graph(data.graph), data.features.view(),
                      maskgat::nn::Mode::kEval, rng);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const fs::path dir = maskgat::fuzz::work_dir() / "store";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string_view input = maskgat::fuzz::as_text(data, size);
  if (!unpack(input)) return 0;
  if (size > 0 && (data[size - 1] & 1) != 0) seal(dir);
  maskgat::StoreOptions options;
  options.verify_features = true;
  options.limits.max_nodes = 1 << 14;
  options.limits.max_edges = 1 << 17;
  options.limits.max_features = 1 << 10;
  if (fs::exists(dir / kFiles[kPart])) {
    return maskgat::fuzz::accept_errors([&] {
      const maskgat::GraphPart part = maskgat::open_part(dir, options);
      for (maskgat::NodeId k = 0; k < part.data.graph.num_nodes(); ++k) {
        if (!part.is_own(k)) (void)part.owner_of(part.globals[static_cast<std::size_t>(k)]);
      }
      run(part.data);
    });
  }
  return maskgat::fuzz::accept_errors([&] { run(maskgat::open_store(dir, options)); });
}
