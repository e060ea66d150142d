// A graph split into part stores: each part holds exactly its nodes (renumbered contiguously by
// part), their in-edges, features, labels and split, and its halo with the right owners; the
// statistics count what the parts hold; each node keeps the whole graph's numbers (its id, first
// attention entry and first feature entry); part files that are corrupt, misplaced or inconsistent
// are refused by name.

#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "core/detail/binary_record.hpp"
#include "maskgat/core/error.hpp"
#include "maskgat/graph/masks.hpp"
#include "maskgat/io/partition.hpp"
#include "maskgat/io/store.hpp"
#include "support/paths.hpp"
#include "support/random_data.hpp"

namespace fs = std::filesystem;
using maskgat::Dataset;
using maskgat::NodeId;

namespace {

maskgat::DenseFeatures dense_of(const maskgat::FeatureMatrix& features) {
  const maskgat::InputRef<float> view = features.view();
  if (view.is_sparse()) return maskgat::DenseFeatures(view.sparse());
  return view.dense();
}

// A dataset with weights and sparse features on a random graph of 90 nodes.
Dataset weighted_sparse_dataset() {
  const maskgat::Graph shape = maskgat::test::random_graph(90, 6, 4);
  const auto sources = shape.in_sources();
  std::vector<float> weights(sources.size());
  for (std::size_t e = 0; e < weights.size(); ++e) weights[e] = 0.5F + static_cast<float>(e);
  Dataset data;
  data.name = "weighted";
  data.graph =
      maskgat::Graph(shape.num_nodes(), {shape.in_offsets().begin(), shape.in_offsets().end()},
                     {sources.begin(), sources.end()}, weights);
  data.features = maskgat::FeatureMatrix(maskgat::test::random_sparse<float>(90, 12, 0.3, 5));
  data.class_names = {"a", "b", "c"};
  for (NodeId v = 0; v < 90; ++v) {
    data.labels.push_back(v % 4 == 3 ? -1 : v % 3);
    data.split.push_back(static_cast<maskgat::SplitPart>(v % 4));
    data.node_names.push_back("node" + std::to_string(v));
  }
  return data;
}

// Writes `data` split by `owner` and checks every part against the source, node by node.
void check_partition(const Dataset& data, const std::vector<std::int32_t>& owner,
                     std::int32_t parts, const std::string& tag) {
  const fs::path dir = maskgat::test::scratch_dir(tag) / "parts";
  const maskgat::PartitionStats stats = maskgat::write_partition(data, owner, parts, dir, false);

  // The expected numbering: by part, then by node id.
  std::vector<NodeId> order;
  for (std::int32_t q = 0; q < parts; ++q) {
    for (NodeId v = 0; v < data.graph.num_nodes(); ++v) {
      if (owner[static_cast<std::size_t>(v)] == q) order.push_back(v);
    }
  }
  const maskgat::DenseFeatures features = dense_of(data.features);
  // The whole graph's numbers of each node's first attention entry (with a self-loop added
  // where it has none) and first stored feature entry.
  const maskgat::Graph mask = maskgat::masks::from_graph(data.graph, true);
  const maskgat::InputRef<float> view = data.features.view();
  maskgat::EdgeId cut = 0;
  std::int64_t owned = 0;
  REQUIRE(stats.nodes.size() == static_cast<std::size_t>(parts));
  for (std::int32_t q = 0; q < parts; ++q) {
    const maskgat::GraphPart part = maskgat::open_part(dir / ("part-" + std::to_string(q)));
    CHECK(part.part == q);
    CHECK(part.parts == parts);
    CHECK(part.global_nodes == data.graph.num_nodes());
    CHECK(part.whole.nodes == maskgat::fingerprint(data).nodes);
    CHECK(part.whole.split == maskgat::fingerprint(data).split);
    CHECK(part.own_nodes() == stats.nodes[static_cast<std::size_t>(q)]);
    CHECK(part.offsets[static_cast<std::size_t>(q)] == owned);
    owned += part.own_nodes();
    const Dataset& local = part.data;
    const maskgat::DenseFeatures local_features = dense_of(local.features);
    std::set<NodeId> halo;
    maskgat::EdgeId in_edges = 0;
    std::int64_t halo_rows = 0;
    for (NodeId k = 0; k < local.graph.num_nodes(); ++k) {
      const NodeId v = order[static_cast<std::size_t>(part.globals[static_cast<std::size_t>(k)])];
      // The part's nodes, own and halo, in the source's order.
      if (k > 0) CHECK(part.origins[static_cast<std::size_t>(k) - 1] < v);
      CHECK(local.node_names[static_cast<std::size_t>(k)] ==
            data.node_names[static_cast<std::size_t>(v)]);
      CHECK(local_features.row(k) == features.row(v));
      CHECK(part.origins[static_cast<std::size_t>(k)] == v);
      if (view.is_sparse()) {
        CHECK(part.first_entries[static_cast<std::size_t>(k)] == view.sparse().outerIndexPtr()[v]);
      } else {
        CHECK(part.first_entries.empty());
      }
      const NodeId global = part.globals[static_cast<std::size_t>(k)];
      CHECK(part.owner_of(global) == owner[static_cast<std::size_t>(v)]);
      if (!part.is_own(k)) {
        CHECK(local.graph.in_degree(k) == 0);
        CHECK(local.labels[static_cast<std::size_t>(k)] == -1);
        CHECK(local.split[static_cast<std::size_t>(k)] == maskgat::SplitPart::kNone);
        CHECK(owner[static_cast<std::size_t>(v)] != q);
        ++halo_rows;
        continue;
      }
      CHECK(owner[static_cast<std::size_t>(v)] == q);
      CHECK(part.first_edges[static_cast<std::size_t>(global -
                                                      part.offsets[static_cast<std::size_t>(q)])] ==
            mask.in_offsets()[static_cast<std::size_t>(v)]);
      CHECK(local.labels[static_cast<std::size_t>(k)] == data.labels[static_cast<std::size_t>(v)]);
      CHECK(local.split[static_cast<std::size_t>(k)] == data.split[static_cast<std::size_t>(v)]);
      // The row's in-edges, back in the source's numbering, with their weights.
      std::vector<std::pair<NodeId, float>> got;
      const auto sources = local.graph.in_neighbors(k);
      const maskgat::EdgeId begin = local.graph.in_offsets()[static_cast<std::size_t>(k)];
      for (std::size_t e = 0; e < sources.size(); ++e) {
        const NodeId source =
            order[static_cast<std::size_t>(part.globals[static_cast<std::size_t>(sources[e])])];
        got.emplace_back(source, local.graph.has_weights()
                                     ? local.graph.weights()[static_cast<std::size_t>(begin) + e]
                                     : 0.0F);
        if (owner[static_cast<std::size_t>(source)] != q) {
          halo.insert(source);
          ++cut;
        }
      }
      std::sort(got.begin(), got.end());
      std::vector<std::pair<NodeId, float>> expected;
      const auto original = data.graph.in_neighbors(v);
      const maskgat::EdgeId first = data.graph.in_offsets()[static_cast<std::size_t>(v)];
      for (std::size_t e = 0; e < original.size(); ++e) {
        expected.emplace_back(original[e],
                              data.graph.has_weights()
                                  ? data.graph.weights()[static_cast<std::size_t>(first) + e]
                                  : 0.0F);
      }
      CHECK(got == expected);
      in_edges += static_cast<maskgat::EdgeId>(sources.size());
    }
    // The halo is exactly the remote sources the part's rows read.
    CHECK(static_cast<std::size_t>(halo_rows) == halo.size());
    CHECK(stats.halo[static_cast<std::size_t>(q)] == static_cast<std::int64_t>(halo.size()));
    CHECK(stats.in_edges[static_cast<std::size_t>(q)] == in_edges);
    std::int64_t train_nodes = 0;
    for (NodeId v = 0; v < data.graph.num_nodes(); ++v) {
      const auto node = static_cast<std::size_t>(v);
      train_nodes += owner[node] == q && data.split[node] == maskgat::SplitPart::kTrain ? 1 : 0;
    }
    CHECK(stats.train_nodes[static_cast<std::size_t>(q)] == train_nodes);
  }
  CHECK(owned == data.graph.num_nodes());
  CHECK(stats.cut_edges == cut);
}

}  // namespace

TEST_SUITE("partition") {
  TEST_CASE("partition: every part holds its nodes, their in-edges and its halo") {
    const Dataset data = maskgat::test::synthetic_dataset(400, 6.0, 5, 3, 7);
    for (const std::int32_t parts : {1, 2, 3}) {
      std::vector<std::int32_t> owner;
      for (NodeId v = 0; v < data.graph.num_nodes(); ++v) {
        owner.push_back(static_cast<std::int32_t>((v * 7 + v / 50) % parts));
      }
      check_partition(data, owner, parts, "partition_synthetic_" + std::to_string(parts));
    }
    check_partition(weighted_sparse_dataset(), std::vector<std::int32_t>(90, 0), 1,
                    "partition_weighted_one");
    std::vector<std::int32_t> owner;
    for (NodeId v = 0; v < 90; ++v) owner.push_back(v < 30 ? 2 : (v % 2));
    check_partition(weighted_sparse_dataset(), owner, 3, "partition_weighted");
  }

  TEST_CASE("partition: balance is the largest part over the mean") {
    maskgat::PartitionStats stats;
    stats.nodes = {30, 10};
    stats.in_edges = {50, 50};
    stats.train_nodes = {1, 2, 9};
    CHECK(stats.node_balance() == doctest::Approx(1.5));
    CHECK(stats.edge_balance() == doctest::Approx(1.0));
    CHECK(stats.train_balance() == doctest::Approx(2.25));
    CHECK(maskgat::PartitionStats{}.node_balance() == 0.0);
    CHECK(maskgat::PartitionStats{}.train_balance() == 0.0);
  }

  TEST_CASE("partition: owners out of range and empty parts are refused") {
    const Dataset data = maskgat::test::synthetic_dataset(50, 3.0, 2, 2, 1);
    const fs::path dir = maskgat::test::scratch_dir("partition_refused") / "parts";
    std::vector<std::int32_t> owner(50, 0);
    owner[7] = 2;
    CHECK_THROWS_WITH_AS(maskgat::write_partition(data, owner, 2, dir, false),
                         "write_partition: node 7 is given part 2, expected a part in [0, 2)",
                         maskgat::InvalidArgument);
    owner[7] = 0;
    CHECK_THROWS_WITH_AS(maskgat::write_partition(data, owner, 2, dir, false),
                         "write_partition: part 1 has no nodes; every part must own one",
                         maskgat::InvalidArgument);
    CHECK_THROWS_AS(maskgat::write_partition(data, std::vector<std::int32_t>(49, 0), 1, dir, false),
                    maskgat::InvalidArgument);
    CHECK_FALSE(fs::exists(dir));
  }

  TEST_CASE("partition: a partition is replaced only when asked, other directories never") {
    const Dataset data = maskgat::test::synthetic_dataset(50, 3.0, 2, 2, 1);
    const fs::path root = maskgat::test::scratch_dir("partition_replace");
    const fs::path dir = root / "parts";
    const std::vector<std::int32_t> owner(50, 0);
    maskgat::write_partition(data, owner, 1, dir, false);
    CHECK_THROWS_AS(maskgat::write_partition(data, owner, 1, dir, false), maskgat::IoError);
    maskgat::write_partition(data, owner, 1, dir, true);
    CHECK(maskgat::open_part(dir / "part-0").own_nodes() == 50);
    const fs::path other = root / "other";
    fs::create_directories(other);
    std::ofstream(other / "keep.txt") << "mine\n";
    CHECK_THROWS_WITH_AS(
        maskgat::write_partition(data, owner, 1, other, true),
        (other.string() + ": exists and is not a MaskGAT partition (no part-0/part file), so it "
                          "is not replaced even with --force")
            .c_str(),
        maskgat::IoError);
    CHECK(fs::exists(other / "keep.txt"));
  }

  TEST_CASE("partition: corrupt, misplaced and inconsistent part files are refused by name") {
    const Dataset data = maskgat::test::synthetic_dataset(120, 4.0, 3, 2, 2);
    std::vector<std::int32_t> owner;
    for (NodeId v = 0; v < 120; ++v) owner.push_back(v % 2);
    const fs::path dir = maskgat::test::scratch_dir("partition_hostile") / "parts";
    maskgat::write_partition(data, owner, 2, dir, false);
    const fs::path part0 = dir / "part-0";
    const fs::path file = part0 / "part";
    std::string original;
    {
      std::ifstream in(file, std::ios::binary);
      original.assign(std::istreambuf_iterator<char>(in), {});
    }
    const auto write = [&](const std::string& bytes) {
      std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes;
    };
    const auto error_of = [&]() -> std::string {
      try {
        (void)maskgat::open_part(part0);
      } catch (const maskgat::Error& error) {
        return error.what();
      }
      return "opened";
    };
    // A payload edited and sealed again, as a forger (or a bug) would.
    const auto sealed = [&](const std::function<void(std::string&)>& edit) {
      std::string bytes = original;
      std::string payload = bytes.substr(20, bytes.size() - 28);
      edit(payload);
      const std::uint64_t checksum = maskgat::detail::fnv1a(payload);
      bytes = bytes.substr(0, 20) + payload;
      bytes.append(reinterpret_cast<const char*>(&checksum), sizeof(checksum));
      return bytes;
    };

    std::string flipped = original;
    flipped[30] = static_cast<char>(flipped[30] ^ 0x10);
    write(flipped);
    CHECK(error_of() == "partition: " + file.string() + ": checksum mismatch: the file is corrupt");
    write(original.substr(0, 10));
    CHECK(error_of() == "partition: " + file.string() + ": truncated inside the header");
    write("not a part file at all");
    CHECK(error_of() == "partition: " + file.string() +
                            ": not a MaskGAT part file (it does not start with MGATPART)");
    // Part 1's record beside part 0's store.
    fs::copy_file(dir / "part-1" / "part", file, fs::copy_options::overwrite_existing);
    CHECK(error_of() == "partition: " + file.string() +
                            ": belongs to another store: the checksum of " +
                            (part0 / "header").string() + " does not match");
    // The arrays after the offsets, each a count and its values: global ids and origins (a
    // NodeId per node), first edges (own, 8 bytes each), first entries (none: the features are
    // dense); then the whole dataset's two fingerprints (16 bytes).
    write(original);
    const maskgat::GraphPart valid = maskgat::open_part(part0);
    REQUIRE(valid.first_entries.empty());
    const std::size_t first_edges_at =
        original.size() - 28 - 16 - 8 - 8 * valid.first_edges.size() - 8;
    const std::size_t origins_at = first_edges_at - sizeof(NodeId) * valid.origins.size() - 8;
    const std::size_t globals_at = origins_at - sizeof(NodeId) * valid.globals.size() - 8;
    // The last halo node given the id of the part's first own node.
    NodeId last_halo = 0;
    NodeId own_before = 0;
    for (NodeId k = 0; k < static_cast<NodeId>(valid.globals.size()); ++k) {
      if (!valid.is_own(k)) last_halo = k;
    }
    for (NodeId k = 0; k < last_halo; ++k) own_before += valid.is_own(k) ? 1 : 0;
    REQUIRE(own_before > 0);
    write(sealed([&](std::string& payload) {
      std::memset(payload.data() + globals_at + 8 + sizeof(NodeId) * last_halo, 0, sizeof(NodeId));
    }));
    CHECK(error_of() == "partition: " + file.string() + ": own node " + std::to_string(last_halo) +
                            " has global id 0, expected " + std::to_string(own_before) +
                            " (the own nodes hold the part's ids in order)");
    // Two nodes of one origin.
    write(sealed([&](std::string& payload) {
      payload.replace(origins_at + 8 + sizeof(NodeId), sizeof(NodeId),
                      payload.substr(origins_at + 8, sizeof(NodeId)));
    }));
    CHECK(error_of() == "partition: " + file.string() + ": node 1 has origin " +
                            std::to_string(valid.origins[0]) +
                            ", expected ids in [0, 120) ascending");
    // A negative first edge.
    write(sealed(
        [&](std::string& payload) { payload[first_edges_at + 8 + 7] = static_cast<char>(0x80); }));
    CHECK(error_of() ==
          "partition: " + file.string() + ": a first edge or first entry number is negative");
    // The last first edge moved into the first entries.
    write(sealed([&](std::string& payload) {
      payload[first_edges_at] = static_cast<char>(valid.first_edges.size() - 1);
      payload[payload.size() - 16 - 16] = 1;
      std::memset(payload.data() + payload.size() - 16 - 15, 0, 7);
    }));
    CHECK(error_of() == "partition: " + file.string() +
                            ": holds 109 global ids, 109 origins, 59 first edges and 1 first "
                            "entries, expected 109, 109, 60 and 0");
    // The part index changed to one past the count.
    write(sealed([](std::string& payload) { payload[0] = 2; }));
    CHECK(error_of() == "partition: " + file.string() +
                            ": part 2 of 2, expected a part in [0, parts) and parts >= 1");
    write(original);
    CHECK(maskgat::open_part(part0).own_nodes() == 60);
    fs::remove(file);
    CHECK_THROWS_AS((void)maskgat::open_part(part0), maskgat::IoError);
  }
}
