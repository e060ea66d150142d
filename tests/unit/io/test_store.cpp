// The binary graph store: every input format round-trips through a mapped store, the synthetic
// writer's store is make_synthetic's dataset bit for bit, a store trains as its source does, and
// stores that are truncated, of another version, corrupt or inconsistent are refused by name.

#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "io/detail/store_files.hpp"
#include "maskgat/core/error.hpp"
#include "maskgat/io/linqs.hpp"
#include "maskgat/io/npz.hpp"
#include "maskgat/io/planetoid.hpp"
#include "maskgat/io/store.hpp"
#include "maskgat/io/synthetic.hpp"
#include "maskgat/train/trainer.hpp"
#include "support/paths.hpp"
#include "support/random_data.hpp"
#include "support/tiny_planetoid.hpp"
#include "support/trainer_values.hpp"

namespace fs = std::filesystem;
using maskgat::Dataset;

namespace {

template <typename T>
std::vector<T> values(std::span<const T> span) {
  return {span.begin(), span.end()};
}

// The features as a dense matrix, whatever holds them.
maskgat::DenseFeatures dense_of(const maskgat::FeatureMatrix& features) {
  const maskgat::InputRef<float> view = features.view();
  if (view.is_sparse()) return maskgat::DenseFeatures(view.sparse());
  return view.dense();
}

// Every field of `copy` is that of `data`.
void check_same(const Dataset& data, const Dataset& copy) {
  CHECK(copy.name == data.name);
  REQUIRE(copy.graph.num_nodes() == data.graph.num_nodes());
  CHECK(values(copy.graph.in_offsets()) == values(data.graph.in_offsets()));
  CHECK(values(copy.graph.in_sources()) == values(data.graph.in_sources()));
  CHECK(values(copy.graph.weights()) == values(data.graph.weights()));
  CHECK(values(copy.graph.out_offsets()) == values(data.graph.out_offsets()));
  CHECK(values(copy.graph.out_targets()) == values(data.graph.out_targets()));
  CHECK(values(copy.graph.out_edge_ids()) == values(data.graph.out_edge_ids()));
  CHECK(copy.graph.num_self_loops() == data.graph.num_self_loops());
  CHECK(copy.features.is_sparse() == data.features.is_sparse());
  CHECK(dense_of(copy.features) == dense_of(data.features));
  CHECK(copy.missing_features == data.missing_features);
  CHECK(copy.feature_names == data.feature_names);
  CHECK(copy.labels == data.labels);
  CHECK(copy.class_names == data.class_names);
  CHECK(copy.node_names == data.node_names);
  CHECK(copy.split == data.split);
  CHECK(copy.notes == data.notes);
  CHECK(copy.preparation.undirected == data.preparation.undirected);
  CHECK(copy.preparation.rows_normalized == data.preparation.rows_normalized);
  CHECK(copy.preparation.random_split == data.preparation.random_split);
  CHECK(copy.preparation.largest_component == data.preparation.largest_component);
  CHECK(copy.preparation.split_seed == data.preparation.split_seed);
  CHECK(copy.preparation.split_sizes == data.preparation.split_sizes);
}

Dataset round_trip(const Dataset& data, const std::string& tag) {
  const fs::path dir = maskgat::test::scratch_dir(tag) / "store";
  maskgat::write_store(data, dir, false);
  return maskgat::open_store(dir);
}

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

std::string error_of(const fs::path& dir, const maskgat::StoreOptions& options = {}) {
  try {
    static_cast<void>(maskgat::open_store(dir, options));
  } catch (const maskgat::Error& error) {
    return error.what();
  }
  return "no error";
}

// A copy of the store `from` in a fresh directory.
fs::path copy_store(const fs::path& from, const std::string& tag) {
  const fs::path dir = maskgat::test::scratch_dir(tag) / "store";
  fs::copy(from, dir);
  return dir;
}

// Replaces `<dir>/<name>.bin` by `bytes` and rewrites the header with the file's new checksum
// and element count, as a store consistent in its sizes and checksums but not in its indices.
void forge_array(const fs::path& dir, const std::string& name, const std::string& bytes) {
  write_bytes(dir / (name + ".bin"), bytes);
  const std::string header = read_bytes(dir / "header");
  // The header's array table lists name, element bytes, count and checksum; patch the entry.
  std::string patched = header;
  const std::size_t at = header.rfind(name);
  REQUIRE(at != std::string::npos);
  const std::uint64_t checksum = maskgat::detail::checksum_of(std::span<const unsigned char>(
      reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size()));
  std::memcpy(patched.data() + at + name.size() + 4 + 8, &checksum, sizeof(checksum));
  // The payload's FNV-1a 64, the header's last 8 bytes.
  const std::string_view payload(patched.data() + 20, patched.size() - 28);
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (const char byte : payload) {
    hash ^= static_cast<unsigned char>(byte);
    hash *= 0x100000001b3ULL;
  }
  std::memcpy(patched.data() + patched.size() - 8, &hash, sizeof(hash));
  fs::remove(dir / "header");
  write_bytes(dir / "header", patched);
}

Dataset small_synthetic() { return maskgat::test::synthetic_dataset(500, 6.0, 12, 3, 4); }

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("store: every input format round-trips through a mapped store") {
    maskgat::DatasetOptions options;
    INFO("own files: edge list, features, labels, split");
    maskgat::FileSources files;
    files.graph = maskgat::test::fixture("small/edges.txt");
    files.features = maskgat::test::fixture("small/features.csv");
    files.labels = maskgat::test::fixture("small/labels.txt");
    files.split = maskgat::test::fixture("small/split.txt");
    const Dataset own = maskgat::load_files(files, options);
    const Dataset own_copy = round_trip(own, "store_own");
    check_same(own, own_copy);
    INFO("GraphML and DOT, named nodes without features");
    for (const char* graph : {"graphml/directed_named.graphml", "dot/undirected.dot"}) {
      maskgat::FileSources only_graph;
      only_graph.graph = maskgat::test::fixture(graph);
      const Dataset data = maskgat::load_files(only_graph, options);
      check_same(data, round_trip(data, std::string("store_") + fs::path(graph).stem().string()));
    }
    INFO("Planetoid and LINQS, sparse features");
    const Dataset planetoid = maskgat::read_planetoid(
        maskgat::test::write_tiny_planetoid("store_planetoid"), "citeseer", options);
    const Dataset planetoid_copy = round_trip(planetoid, "store_planetoid_copy");
    check_same(planetoid, planetoid_copy);
    CHECK(planetoid_copy.features.is_mapped());
    const fs::path linqs = maskgat::test::write_file("store_linqs", "cora.content",
                                                     "a\t1\t0\tX\nb\t0\t1\tY\nc\t1\t1\tX\n");
    maskgat::test::write_file("store_linqs", "cora.cites", "a\tb\nb\tc\n");
    maskgat::DatasetOptions linqs_options;
    linqs_options.split_sizes = maskgat::RandomSplitSizes{1, 0, 1};
    const Dataset cora = maskgat::read_linqs(linqs.parent_path(), "cora", linqs_options);
    check_same(cora, round_trip(cora, "store_linqs_copy"));
    INFO("npz, pickled SciPy matrices; synthetic, dense features");
    const Dataset npz = maskgat::read_npz(fs::path(MASKGAT_FUZZ_CORPUS_DIR) / "npz" / "pickled.npz",
                                          "pickled", options);
    check_same(npz, round_trip(npz, "store_npz"));
    const Dataset synthetic = small_synthetic();
    const Dataset synthetic_copy = round_trip(synthetic, "store_synthetic");
    check_same(synthetic, synthetic_copy);
    CHECK(synthetic_copy.features.is_mapped());
    CHECK_FALSE(synthetic_copy.features.is_sparse());
    INFO("a weighted graph");
    Dataset weighted = synthetic;
    std::vector<float> weights(static_cast<std::size_t>(weighted.graph.num_edges()), 0.5F);
    weighted.graph = maskgat::Graph(weighted.graph.num_nodes(), values(weighted.graph.in_offsets()),
                                    values(weighted.graph.in_sources()), weights);
    check_same(weighted, round_trip(weighted, "store_weighted"));
  }

  TEST_CASE("store: the synthetic writer's store is make_synthetic's dataset, bitwise") {
    // 140,000 nodes: two blocks of rows and features.
    const auto options = maskgat::parse_synthetic_spec(
        "synthetic:nodes=140000,degree=3,features=4,classes=5,seed=9");
    for (const auto rule :
         {maskgat::FeatureNormalization::kAuto, maskgat::FeatureNormalization::kRows}) {
      maskgat::DatasetOptions load;
      load.normalize_features = rule;
      const fs::path dir = maskgat::test::scratch_dir("store_synthetic_writer_" +
                                                      std::to_string(static_cast<int>(rule))) /
                           "store";
      maskgat::write_synthetic_store(options, load, dir, false);
      check_same(maskgat::make_synthetic(options, load), maskgat::open_store(dir));
    }
  }

  TEST_CASE("store: the transpose written in passes is the graph's") {
    const maskgat::Graph graph = maskgat::test::random_graph(3000, 20, 5, true);
    for (const std::int64_t budget :
         {std::int64_t{1}, std::int64_t{12000}, std::int64_t{1} << 30}) {
      CAPTURE(budget);
      const fs::path dir = maskgat::test::scratch_dir("store_transpose_" + std::to_string(budget));
      std::vector<maskgat::detail::ArrayRecord> records;
      maskgat::detail::write_transpose(dir, graph.in_offsets(), graph.in_sources(), budget,
                                       records);
      REQUIRE(records.size() == 3);
      CHECK(records[1].count == static_cast<std::uint64_t>(graph.num_edges()));
      const auto as = [&](const std::string& name, auto element) {
        const std::string bytes = read_bytes(dir / (name + ".bin"));
        std::vector<decltype(element)> out(bytes.size() / sizeof(element));
        std::memcpy(out.data(), bytes.data(), bytes.size());
        return out;
      };
      CHECK(as("out_offsets", maskgat::EdgeId{}) == values(graph.out_offsets()));
      CHECK(as("out_targets", maskgat::NodeId{}) == values(graph.out_targets()));
      CHECK(as("out_edge_ids", maskgat::EdgeId{}) == values(graph.out_edge_ids()));
    }
  }

  TEST_CASE("store: training on a store is training on its source, bit for bit") {
    const Dataset data = small_synthetic();
    const Dataset copy = round_trip(data, "store_training");
    maskgat::train::TrainOptions options;
    options.epochs = 5;
    options.patience = 0;
    for (const std::int64_t batch : {0, 32}) {
      options.batch_size = batch;
      maskgat::train::Trainer from_memory(data, options);
      maskgat::train::Trainer from_store(copy, options);
      CHECK(from_memory.fit().test_accuracy == from_store.fit().test_accuracy);
      CHECK(maskgat::test::parameter_values(from_memory) ==
            maskgat::test::parameter_values(from_store));
    }
  }

  TEST_CASE("store: an existing store is replaced only when asked, anything else never") {
    const Dataset data = small_synthetic();
    const fs::path dir = maskgat::test::scratch_dir("store_replace") / "store";
    maskgat::write_store(data, dir, false);
    CHECK_THROWS_WITH_AS(maskgat::write_store(data, dir, false),
                         (dir.string() + ": exists; pass --force to replace it").c_str(),
                         maskgat::IoError);
    maskgat::write_store(small_synthetic(), dir, true);
    CHECK(maskgat::open_store(dir).graph.num_edges() == data.graph.num_edges());
    const fs::path other = maskgat::test::write_file("store_replace", "mine/notes.txt", "keep me");
    CHECK_THROWS_WITH_AS(
        maskgat::write_store(data, other.parent_path(), true),
        (other.parent_path().string() +
         ": exists and is not a MaskGAT graph store (no header file), so it is not replaced even "
         "with --force")
            .c_str(),
        maskgat::IoError);
    CHECK(read_bytes(other) == "keep me");
    // Nothing is left beside the stores.
    std::vector<std::string> entries;
    for (const auto& entry : fs::directory_iterator(dir.parent_path())) {
      entries.push_back(entry.path().filename().string());
    }
    std::sort(entries.begin(), entries.end());
    CHECK(entries == std::vector<std::string>{"mine", "store"});
  }

  TEST_CASE("store: truncated, other-version, corrupt and inconsistent stores are refused") {
    const Dataset data = small_synthetic();
    const fs::path good = maskgat::test::scratch_dir("store_hostile_good") / "store";
    maskgat::write_store(data, good, false);
    const std::string header = read_bytes(good / "header");
    CHECK(error_of(good.parent_path() / "missing") ==
          "store: " + (good.parent_path() / "missing").string() +
              ": no such store (not a directory)");

    fs::path dir = copy_store(good, "store_hostile_version");
    std::string versioned = header;
    versioned[8] = 2;
    write_bytes(dir / "header", versioned);
    CHECK(error_of(dir) == "store: " + (dir / "header").string() +
                               ": format version 2, this build reads version 1 (convert the "
                               "data again)");

    dir = copy_store(good, "store_hostile_header");
    std::string flipped = header;
    flipped[40] = static_cast<char>(flipped[40] ^ 1);
    write_bytes(dir / "header", flipped);
    CHECK(error_of(dir) ==
          "store: " + (dir / "header").string() + ": checksum mismatch: the file is corrupt");
    write_bytes(dir / "header", header.substr(0, 30));
    CHECK(error_of(dir).find("the header announces") != std::string::npos);
    write_bytes(dir / "header", "not a store at all");
    CHECK(error_of(dir).ends_with(
        "not a MaskGAT graph store (the header does not start with MGATSTOR)"));

    dir = copy_store(good, "store_hostile_truncated");
    const std::string sources = read_bytes(dir / "in_sources.bin");
    write_bytes(dir / "in_sources.bin", sources.substr(0, sources.size() - 4));
    CHECK(error_of(dir) == "store: " + (dir / "in_sources.bin").string() + ": holds " +
                               std::to_string(sources.size() - 4) +
                               " bytes, the header announces " + std::to_string(sources.size()) +
                               " (truncated, or a file of another store)");
    fs::remove(dir / "in_sources.bin");
    CHECK(error_of(dir).starts_with("store: " + (dir / "in_sources.bin").string() +
                                    ": cannot open: "));

    dir = copy_store(good, "store_hostile_corrupt");
    std::string corrupt = sources;
    corrupt[7] = static_cast<char>(corrupt[7] ^ 0x10);
    write_bytes(dir / "in_sources.bin", corrupt);
    CHECK(error_of(dir) == "store: " + (dir / "in_sources.bin").string() +
                               ": checksum mismatch: the file is corrupt or belongs to another "
                               "store");
    // Features are checked only when asked.
    dir = copy_store(good, "store_hostile_features");
    std::string features = read_bytes(dir / "features.bin");
    features[0] = static_cast<char>(features[0] ^ 1);
    write_bytes(dir / "features.bin", features);
    CHECK(error_of(dir) == "no error");
    maskgat::StoreOptions verify;
    verify.verify_features = true;
    CHECK(error_of(dir, verify)
              .ends_with("features.bin: checksum mismatch: the file is corrupt "
                         "or belongs to another store"));

    // Consistent checksums, inconsistent indices: a source out of range, a label past the classes.
    dir = copy_store(good, "store_hostile_source");
    std::string out_of_range = sources;
    const std::int32_t bad = 500;
    std::memcpy(out_of_range.data(), &bad, sizeof(bad));
    forge_array(dir, "in_sources", out_of_range);
    CHECK(error_of(dir).starts_with("store: " + dir.string() +
                                    ": graph: edge 0 has source 500, expected a node id in [0, "
                                    "500)"));
    dir = copy_store(good, "store_hostile_label");
    std::string labels = read_bytes(dir / "labels.bin");
    const std::int32_t label = 7;
    std::memcpy(labels.data() + 4 * 9, &label, sizeof(label));
    forge_array(dir, "labels", labels);
    CHECK(error_of(dir) == "store: " + (dir / "labels.bin").string() +
                               ": node 9 has label 7, expected -1 (none) or a class id in [0, 3)");
    // A name's end past the names' bytes, though the last offset is right (found by fuzzing).
    Dataset named = data;
    for (std::size_t i = 0; i < named.node_names.size(); ++i) {
      named.node_names[i] = "n" + std::to_string(i);
    }
    dir = maskgat::test::scratch_dir("store_hostile_names") / "store";
    maskgat::write_store(named, dir, false);
    std::string name_offsets = read_bytes(dir / "node_name_offsets.bin");
    const std::int64_t far = 1 << 20;
    std::memcpy(name_offsets.data() + 8, &far, sizeof(far));
    forge_array(dir, "node_name_offsets", name_offsets);
    CHECK(error_of(dir) == "store: " + (dir / "node_name_offsets.bin").string() +
                               ": runs past the names' " +
                               std::to_string(read_bytes(dir / "node_name_bytes.bin").size()) +
                               " bytes at node 0: 1048576");
    maskgat::StoreOptions small;
    small.limits.max_nodes = 100;
    CHECK(error_of(good, small) == "store: " + (good / "header").string() +
                                       ": 500 nodes: over the limit of 100 (raise it with "
                                       "--max-nodes)");
  }
}
