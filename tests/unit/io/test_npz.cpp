// The npz reader on small archives written here: both layouts of the field, the graph as PyG
// builds it, and hostile containers and members, each refused with the message that names them.

#include <doctest/doctest.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "io/detail/zip_archive.hpp"
#include "maskgat/core/error.hpp"
#include "maskgat/io/npz.hpp"
#include "support/npz_writer.hpp"
#include "support/paths.hpp"

namespace {

using maskgat::test::npy_bytes;
using maskgat::test::raw_bytes;
using Members = maskgat::test::Members;

// A 4-node graph as plain arrays: adjacency entries 0->1, 1->0, 1->2, 2->2, 3->0 (a duplicate
// pair and a self-loop), binary features, int8 labels and two class names.
Members plain_graph(const std::string& adj, const std::string& attr) {
  return {
      {adj + "data.npy", npy_bytes("<f4", {5}, raw_bytes<float>({1, 1, 1, 1, 1}))},
      {adj + "indices.npy", npy_bytes("<i4", {5}, raw_bytes<std::int32_t>({1, 0, 2, 2, 0}))},
      {adj + "indptr.npy", npy_bytes("<i4", {5}, raw_bytes<std::int32_t>({0, 1, 3, 4, 5}))},
      {adj + "shape.npy", npy_bytes("<i8", {2}, raw_bytes<std::int64_t>({4, 4}))},
      {attr + "data.npy", npy_bytes("<f4", {5}, raw_bytes<float>({1, 1, 1, 1, 1}))},
      {attr + "indices.npy", npy_bytes("<i4", {5}, raw_bytes<std::int32_t>({0, 2, 1, 0, 2}))},
      {attr + "indptr.npy", npy_bytes("<i4", {5}, raw_bytes<std::int32_t>({0, 2, 3, 4, 5}))},
      {attr + "shape.npy", npy_bytes("<i8", {2}, raw_bytes<std::int64_t>({4, 3}))},
      {"labels.npy", npy_bytes("|i1", {4}, raw_bytes<std::int8_t>({0, 1, 1, 0}))},
      {"class_names.npy",
       npy_bytes("<U5", {2},
                 raw_bytes<std::uint32_t>({'a', 'l', 'p', 'h', 'a', 'b', 'e', 't', 'a', 0}))},
  };
}

// A 5-node graph in the heterophily benchmark's layout: edges 0-1, 1-2, 2-3, 3-4 stored once,
// dense features, int64 labels, and two fixed splits (split 0: train 0 1, val 2, test 3 4;
// split 1: train 3 4, val 0, test 1 2; both leave no node out).
Members fixed_split_graph() {
  const auto masks = [](std::initializer_list<bool> marks) {
    return npy_bytes("|b1", {2, 5}, raw_bytes<bool>(marks));
  };
  return {
      {"node_features.npy",
       npy_bytes("<f4", {5, 2}, raw_bytes<float>({1, 0, 0, 1, 1, 1, 2, 0, 0, 3}))},
      {"node_labels.npy", npy_bytes("<i8", {5}, raw_bytes<std::int64_t>({0, 1, 1, 0, 1}))},
      {"edges.npy", npy_bytes("<i8", {4, 2}, raw_bytes<std::int64_t>({0, 1, 1, 2, 2, 3, 3, 4}))},
      {"train_masks.npy",
       masks({true, true, false, false, false, false, false, false, true, true})},
      {"val_masks.npy",
       masks({false, false, true, false, false, true, false, false, false, false})},
      {"test_masks.npy", masks({false, false, false, true, true, false, true, true, false, false})},
  };
}

std::filesystem::path write_archive(const std::string& name, const std::string& bytes) {
  return maskgat::test::write_file("npz", name, bytes);
}

maskgat::Dataset read(const std::filesystem::path& path, const maskgat::Limits& limits = {}) {
  maskgat::DatasetOptions options;
  options.read.limits = limits;
  return maskgat::read_npz(path, "t", options);
}

std::string error_of(const std::filesystem::path& path, const maskgat::Limits& limits = {}) {
  try {
    static_cast<void>(read(path, limits));
  } catch (const maskgat::Error& error) {
    return error.what();
  }
  return "no error";
}

void check_graph(const maskgat::Dataset& data) {
  CHECK(data.graph.num_nodes() == 4);
  CHECK(data.graph.num_edges() == 6);  // 0-1, 1-2, 0-3, both ways
  CHECK(data.graph.num_self_loops() == 0);
  CHECK(data.node_names == std::vector<std::string>{"0", "1", "2", "3"});
  CHECK(data.labels == std::vector<std::int32_t>{0, 1, 1, 0});
  CHECK(data.preparation.undirected);
  CHECK(data.split.size() == 4);
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("npz: plain arrays, stored or deflated, read as PyG builds the graph") {
    for (const bool deflate : {false, true}) {
      CAPTURE(deflate);
      const auto path = write_archive(
          "plain.npz", maskgat::test::zip_bytes(plain_graph("adj_", "attr_"), deflate));
      const maskgat::Dataset data = read(path);
      check_graph(data);
      CHECK(data.class_names == std::vector<std::string>{"alpha", "beta"});
      CHECK(data.features.cols() == 3);
      CHECK(data.features.sparse().coeff(0, 0) == doctest::Approx(0.5));  // rows normalised
      CHECK(data.features.sparse().coeff(0, 2) == doctest::Approx(0.5));
      REQUIRE(data.notes.size() >= 2);
      CHECK(data.notes[0] == "npz: plain.npz: 2 reverse edge(s) added");
      CHECK(data.notes[1] == "npz: plain.npz: 1 self-loop(s) removed");
    }
  }

  TEST_CASE("npz: dotted keys, dense features, int64 labels and no class names") {
    Members members = plain_graph("adj_matrix.", "attr_matrix.");
    members.resize(4);  // the adjacency only
    members.emplace_back("attr_matrix.npy",
                         npy_bytes("<f8", {4, 2}, raw_bytes<double>({1, 0, 0, 2, 3, 1, 0, 0})));
    members.emplace_back("labels.npy",
                         npy_bytes("<i8", {4}, raw_bytes<std::int64_t>({0, 1, 1, 0})));
    const auto path = write_archive("dotted.npz", maskgat::test::zip_bytes(members, true));
    const maskgat::Dataset data = read(path);
    check_graph(data);
    CHECK(data.class_names == std::vector<std::string>{"0", "1"});
    REQUIRE_FALSE(data.features.is_sparse());
    CHECK(data.features.dense()(2, 0) == doctest::Approx(0.75));
    CHECK(data.features.dense()(3, 1) == 0.0F);  // a zero row stays zero
  }

  TEST_CASE("npz: pickled scipy matrices in 0-d object arrays, under both module names") {
    // The fuzz seeds: numpy.savez of the graph above as the published Amazon files hold theirs.
    for (const char* name : {"pickled.npz", "pickled_new_scipy.npz"}) {
      CAPTURE(name);
      const maskgat::Dataset data =
          read(std::filesystem::path(MASKGAT_FUZZ_CORPUS_DIR) / "npz" / name);
      check_graph(data);
      CHECK(data.class_names == std::vector<std::string>{"alpha", "beta"});
      CHECK(data.features.sparse().coeff(1, 1) == doctest::Approx(1.0));
    }
  }

  TEST_CASE("npz: a split file names the nodes by their row") {
    const auto path =
        write_archive("split.npz", maskgat::test::zip_bytes(plain_graph("adj_", "attr_"), false));
    maskgat::Dataset data = read(path);
    CHECK(data.preparation.random_split);
    const auto split = maskgat::test::write_file("npz", "split.txt", "3 train\n0 val\n");
    maskgat::read_split_into(data, split, {});
    CHECK(data.split ==
          std::vector<maskgat::SplitPart>{maskgat::SplitPart::kVal, maskgat::SplitPart::kNone,
                                          maskgat::SplitPart::kNone, maskgat::SplitPart::kTrain});
    CHECK_FALSE(data.preparation.random_split);
    for (const std::string& note : data.notes) CHECK_FALSE(note.starts_with("random split:"));
    const auto unknown = maskgat::test::write_file("npz", "unknown.txt", "7 train\n");
    CHECK_THROWS_AS(maskgat::read_split_into(data, unknown, {}), maskgat::ParseError);
  }

  TEST_CASE("npz: the heterophily benchmark's layout, its edges both ways and its fixed splits") {
    using maskgat::SplitPart;
    const auto path =
        write_archive("fixed.npz", maskgat::test::zip_bytes(fixed_split_graph(), true));
    maskgat::Dataset data = read(path);
    CHECK(data.graph.num_nodes() == 5);
    CHECK(data.graph.num_edges() == 8);  // each stored edge read both ways
    CHECK(data.graph.num_self_loops() == 0);
    CHECK(data.preparation.undirected);
    CHECK(data.labels == std::vector<std::int32_t>{0, 1, 1, 0, 1});
    CHECK(data.class_names == std::vector<std::string>{"0", "1"});
    REQUIRE_FALSE(data.features.is_sparse());
    CHECK(data.features.dense()(4, 1) == 1.0F);  // 0, 3 normalised
    const std::vector<SplitPart> first{SplitPart::kTrain, SplitPart::kTrain, SplitPart::kVal,
                                       SplitPart::kTest, SplitPart::kTest};
    const std::vector<SplitPart> second{SplitPart::kVal, SplitPart::kTest, SplitPart::kTest,
                                        SplitPart::kTrain, SplitPart::kTrain};
    REQUIRE(data.fixed_splits.size() == 2);
    CHECK(data.fixed_splits[0] == first);
    CHECK(data.fixed_splits[1] == second);
    CHECK(data.split == first);
    CHECK(data.preparation.fixed_split == 0);
    CHECK_FALSE(data.preparation.random_split);
    maskgat::use_fixed_split(data, 1);
    CHECK(data.split == second);
    CHECK(data.preparation.fixed_split == 1);
    CHECK_THROWS_WITH_AS(maskgat::use_fixed_split(data, 2),
                         "split index 2 is out of range: t carries 2 fixed splits, 0 to 1",
                         maskgat::InvalidArgument);

    maskgat::DatasetOptions options;
    options.fixed_split = 1;
    CHECK(maskgat::read_npz(path, "t", options).split == second);
    options.split_sizes = maskgat::RandomSplitSizes{1, 1, 1};
    CHECK_THROWS_WITH_AS(static_cast<void>(maskgat::read_npz(path, "t", options)),
                         "npz: fixed.npz: split index 1 and the sizes of a random split both "
                         "given; give one of them",
                         maskgat::InvalidArgument);
    options.fixed_split.reset();
    const maskgat::Dataset random = maskgat::read_npz(path, "t", options);
    CHECK(random.preparation.random_split);
    CHECK(random.preparation.fixed_split == -1);
    CHECK(random.fixed_splits.size() == 2);

    options = {};
    options.fixed_split = 0;
    const auto plain = write_archive("plain_fixed.npz",
                                     maskgat::test::zip_bytes(plain_graph("adj_", "attr_"), false));
    CHECK_THROWS_WITH_AS(static_cast<void>(maskgat::read_npz(plain, "plain", options)),
                         "split index 0: plain carries no fixed splits", maskgat::InvalidArgument);
  }

  TEST_CASE("npz: hostile edges, masks and labels of the heterophily layout, each named") {
    const auto error = [](const std::string& name, const Members& members,
                          const maskgat::Limits& limits = {}) {
      const auto path = write_archive(name, maskgat::test::zip_bytes(members, false));
      const std::string message = error_of(path, limits);
      const std::string prefix = "npz: " + path.string() + ": ";
      REQUIRE(message.starts_with(prefix));
      return message.substr(prefix.size());
    };
    const auto with = [](std::size_t member, std::string bytes) {
      Members members = fixed_split_graph();
      members[member].second = std::move(bytes);
      return members;
    };
    CHECK(error("edge_shape.npz",
                with(2, npy_bytes("<i8", {2, 3}, raw_bytes<std::int64_t>({0, 1, 2, 3, 4, 0})))) ==
          "member 'edges.npy' has shape (2, 3), expected (E, 2): one row per edge");
    CHECK(error("edge_range.npz",
                with(2, npy_bytes("<i8", {2, 2}, raw_bytes<std::int64_t>({0, 1, 4, 5})))) ==
          "member 'edges.npy' row 1 holds node 5, outside [0, 5) of the 5 feature rows");
    CHECK(error("edge_negative.npz",
                with(2, npy_bytes("<i4", {1, 2}, raw_bytes<std::int32_t>({-1, 2})))) ==
          "member 'edges.npy' row 0 holds node -1, outside [0, 5) of the 5 feature rows");
    CHECK(error("edge_float.npz", with(2, npy_bytes("<f8", {1, 2}, raw_bytes<double>({0, 1})))) ==
          "member 'edges.npy' holds dtype '<f8', expected integers");
    maskgat::Limits limits;
    limits.max_edges = 7;
    CHECK(error("edge_limit.npz", fixed_split_graph(), limits) ==
          "member 'edges.npy' holds 4 edges, which make 8 both ways: over the edge limit of 7 "
          "(raise it with --max-edges)");
    CHECK(error("mask_dtype.npz",
                with(4, npy_bytes("<i8", {2, 5},
                                  raw_bytes<std::int64_t>({0, 0, 1, 0, 0, 1, 0, 0, 0, 0})))) ==
          "member 'val_masks.npy' holds dtype '<i8', expected bool ('|b1')");
    CHECK(error("mask_transposed.npz", with(3, npy_bytes("|b1", {5, 2}, std::string(10, '\0')))) ==
          "member 'train_masks.npy' has shape (5, 2), expected (K, 5): one row of the 5 nodes for "
          "each of K >= 1 splits");
    CHECK(error("mask_flat.npz", with(3, npy_bytes("|b1", {5}, std::string(5, '\0')))) ==
          "member 'train_masks.npy' has shape (5,), expected (K, 5): one row of the 5 nodes for "
          "each of K >= 1 splits");
    CHECK(error("mask_count.npz", with(5, npy_bytes("|b1", {3, 5}, std::string(15, '\0')))) ==
          "member 'test_masks.npy' holds 3 splits, member 'train_masks.npy' 2");
    CHECK(error("mask_twice.npz",
                with(4, npy_bytes("|b1", {2, 5},
                                  raw_bytes<bool>({true, false, true, false, false, true, false,
                                                   false, false, false})))) ==
          "member 'val_masks.npy' puts node 0 of split 0 in its val set, and it is in its train "
          "set already: expected each node in at most one set of a split");
    Members missing = fixed_split_graph();
    missing.erase(missing.begin() + 4);
    CHECK(error("mask_missing.npz", missing) == "member 'val_masks.npy' is missing");
    CHECK(error("label_negative.npz",
                with(1, npy_bytes("<i8", {5}, raw_bytes<std::int64_t>({0, 1, -1, 0, 1})))) ==
          "member 'node_labels.npy' gives node 2 label -1, outside [0, 2)");
    CHECK(error("label_count.npz",
                with(1, npy_bytes("<i8", {4}, raw_bytes<std::int64_t>({0, 1, 1, 0})))) ==
          "member 'node_labels.npy' holds 4 labels for 5 nodes");
    limits = {};
    limits.max_nodes = 4;
    const auto path =
        write_archive("node_limit.npz", maskgat::test::zip_bytes(fixed_split_graph(), false));
    CHECK(error_of(path, limits) == "npz: " + path.string() +
                                        ": the features have 5 rows, over the node limit of 4 "
                                        "(raise it with --max-nodes)");
  }

  TEST_CASE("npz: hostile containers get clear errors") {
    const std::string good = maskgat::test::zip_bytes(plain_graph("adj_", "attr_"), false);
    const auto error = [](const std::string& name, const std::string& bytes) {
      const auto path = write_archive(name, bytes);
      const std::string message = error_of(path);
      const std::string prefix = "npz: " + path.string() + ": ";
      REQUIRE(message.starts_with(prefix));
      return message.substr(prefix.size());
    };
    CHECK(error("garbage.npz", "not a zip at all, only text") ==
          "not a readable zip archive: Not a zip archive");
    CHECK(error("truncated.npz", good.substr(0, good.size() - 30))
              .starts_with("not a readable zip archive: "));

    std::string twice = good;
    maskgat::test::patch_name(twice, "adj_shape.npy", "attr_data.npy");
    CHECK(error("twice.npz", twice) ==
          "not a readable zip archive: two members have the same name");

    std::string path_like = good;
    maskgat::test::patch_name(path_like, "labels.npy", "../abc.npy");
    CHECK(error("path.npz", path_like) ==
          "member name '../abc.npy' is a path (it holds a '/' or '\\')");

    std::string control = good;
    maskgat::test::patch_name(control, "labels.npy", "lab\x01ls.npy");
    CHECK(error("control.npz", control) == "member name 'lab?ls.npy' holds a control character");

    // A changed byte in a stored member: its CRC-32 no longer matches.
    std::string corrupt = good;
    const std::size_t header = corrupt.find("'descr': '|i1'");
    REQUIRE(header != std::string::npos);
    corrupt[header + 11] = 'u';
    CHECK(error("crc.npz", corrupt) == "member 'labels.npy': CRC error");
  }

  TEST_CASE("npz: a member over the size limit, and one that inflates past its declared size") {
    const Members padded = {{"pad.npy", std::string(100'000, '\0')}};
    const std::string archive = maskgat::test::zip_bytes(padded, true);
    REQUIRE(archive.size() < 2'000);
    maskgat::Limits limits;
    limits.max_file_bytes = 10'000;
    const maskgat::detail::ZipArchive small(archive, "npz", "t.npz", limits);
    CHECK_THROWS_WITH_AS(static_cast<void>(small.read("pad.npy")),
                         "npz: t.npz: member 'pad.npy' declares 100000 bytes, over the limit of "
                         "10000 (raise it with --max-file-bytes)",
                         maskgat::LimitError);

    std::string bomb = archive;
    maskgat::test::patch_declared_size(bomb, "pad.npy", 1'000);
    const maskgat::detail::ZipArchive lying(bomb, "npz", "t.npz", {});
    CHECK_THROWS_WITH_AS(static_cast<void>(lying.read("pad.npy")),
                         "npz: t.npz: member 'pad.npy' declares 1000 bytes, its data holds more",
                         maskgat::ParseError);
  }

  TEST_CASE("npz: members whose arrays lie or do not fit") {
    const auto error = [](const std::string& name, const Members& members) {
      const auto path = write_archive(name, maskgat::test::zip_bytes(members, false));
      const std::string message = error_of(path);
      const std::string prefix = "npz: " + path.string() + ": ";
      REQUIRE(message.starts_with(prefix));
      return message.substr(prefix.size());
    };
    Members members = plain_graph("adj_", "attr_");
    members[8].second = npy_bytes("|i1", {10}, raw_bytes<std::int8_t>({0, 1, 1, 0}));
    CHECK(error("short.npz", members) ==
          "member 'labels.npy': header declares shape (10,) of '|i1' (10 bytes), the data holds 4 "
          "bytes");

    members = plain_graph("adj_", "attr_");
    members[0].second = npy_bytes(">f4", {5}, raw_bytes<float>({1, 1, 1, 1, 1}));
    CHECK(error("big_endian.npz", members) ==
          "member 'adj_data.npy': header: unsupported dtype '>f4', expected a little-endian bool, "
          "integer, float, unicode, bytes or object type such as '<f4'");

    members = plain_graph("adj_", "attr_");
    members[1].second = npy_bytes("<i4", {5}, raw_bytes<std::int32_t>({1, 0, 7, 2, 0}));
    CHECK(error("range.npz", members) ==
          "member 'adj_indices.npy': indices[2] = 7 is outside [0, 4)");

    members = plain_graph("adj_", "attr_");
    members[8].second = npy_bytes("|i1", {4}, raw_bytes<std::int8_t>({0, 1, 2, 0}));
    CHECK(error("label.npz", members) ==
          "member 'labels.npy' gives node 2 label 2, outside [0, 2)");

    members = plain_graph("adj_", "attr_");
    members[0].second = std::string("\x93NUMPY\x01\x00\xff\x00{'descr'", 18);
    CHECK(error("header.npz", members) ==
          "member 'adj_data.npy': header declares 255 bytes, but only 8 follow");

    members = plain_graph("adj_", "attr_");
    members.erase(members.begin(), members.begin() + 4);
    CHECK(error("no_adjacency.npz", members).starts_with("no adjacency matrix: expected"));
  }
}
