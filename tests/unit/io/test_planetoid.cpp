// The Planetoid loader on the 8-node fixture of support/tiny_planetoid (written opcode by opcode
// with the structure of the published files):
//   allx rows 0..3 (classes 0 2 1 2), x / y = rows 0..1, test.index "7 4 6" with ty classes
//   1 0 2 and node 5 missing from the test range 4..7 (as CiteSeer's gaps),
//   graph {0: [1, 2, 1], 1: [0], 2: [0, 2], 3: [4], 4: [7], 5: [6], 6: [5], 7: [4]}.

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "maskgat/core/error.hpp"
#include "maskgat/io/planetoid.hpp"
#include "support/paths.hpp"
#include "support/tiny_planetoid.hpp"

namespace {

using maskgat::DatasetOptions;
using maskgat::read_planetoid;
using maskgat::SplitPart;

using maskgat::test::tiny_planetoid_part;

// A copy of the fixture in `<scratch>/planetoid/`, with `replaced` parts swapped for other
// content and `dropped` parts left out; returns the planetoid directory.
std::filesystem::path make_copy(const std::string& tag,
                                const std::vector<std::pair<std::string, std::string>>& replaced,
                                const std::vector<std::string>& dropped = {}) {
  for (const auto& part : maskgat::test::planetoid_parts()) {
    if (std::find(dropped.begin(), dropped.end(), part) != dropped.end()) continue;
    std::string content = tiny_planetoid_part(part);
    for (const auto& [name, replacement] : replaced) {
      if (name == part) content = replacement;
    }
    maskgat::test::write_file(tag, "planetoid/ind.citeseer." + part, content);
  }
  return maskgat::test::scratch_dir(tag) / "planetoid";
}

std::vector<maskgat::NodeId> in_neighbors(const maskgat::Graph& graph, maskgat::NodeId node) {
  const auto span = graph.in_neighbors(node);
  return {span.begin(), span.end()};
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("planetoid: the tiny fixture loads as PyG would") {
    DatasetOptions as_stored;
    as_stored.normalize_features = maskgat::FeatureNormalization::kNone;
    const auto dataset = read_planetoid(maskgat::test::write_tiny_planetoid("planetoid-tiny"),
                                        "citeseer", as_stored);
    CHECK(dataset.name == "citeseer");
    REQUIRE(dataset.graph.num_nodes() == 8);
    CHECK(dataset.node_names == std::vector<std::string>{"0", "1", "2", "3", "4", "5", "6", "7"});
    CHECK(dataset.class_names == std::vector<std::string>{"0", "1", "2"});
    CHECK(dataset.labels == std::vector<std::int32_t>{0, 2, 1, 2, 0, -1, 2, 1});
    CHECK(dataset.missing_features.empty());
    CHECK(dataset.preparation.undirected);  // symmetrised, as PyG
    CHECK_FALSE(dataset.preparation.random_split);

    using enum SplitPart;
    CHECK(dataset.split ==
          std::vector<SplitPart>{kTrain, kTrain, kVal, kVal, kTest, kNone, kTest, kTest});

    REQUIRE(dataset.features.is_sparse());
    const auto& x = dataset.features.sparse();
    CHECK(x.rows() == 8);
    CHECK(x.cols() == 5);
    CHECK(x.nonZeros() == 9);
    CHECK(x.coeff(0, 0) == 1.0F);
    CHECK(x.coeff(0, 3) == 1.0F);
    CHECK(x.coeff(2, 4) == 0.25F);
    // tx row k is node test.index[k]: rows 1, 2, 0 of tx are nodes 4, 6, 7.
    CHECK(x.coeff(4, 0) == 1.0F);
    CHECK(x.coeff(4, 1) == 1.0F);
    CHECK(x.row(5).nonZeros() == 0);
    CHECK(x.coeff(6, 3) == 1.0F);
    CHECK(x.coeff(7, 4) == 2.0F);
    CHECK(x.row(3).nonZeros() == 0);

    const auto& graph = dataset.graph;
    CHECK(graph.num_edges() == 10);
    CHECK(graph.num_self_loops() == 0);
    CHECK(in_neighbors(graph, 0) == std::vector<maskgat::NodeId>{1, 2});
    CHECK(in_neighbors(graph, 2) == std::vector<maskgat::NodeId>{0});
    CHECK(in_neighbors(graph, 3) == std::vector<maskgat::NodeId>{4});
    CHECK(in_neighbors(graph, 4) == std::vector<maskgat::NodeId>{3, 7});
    CHECK(in_neighbors(graph, 5) == std::vector<maskgat::NodeId>{6});

    CHECK(dataset.notes ==
          std::vector<std::string>{"planetoid: ind.citeseer.graph: 1 duplicate edge(s) merged",
                                   "planetoid: ind.citeseer.graph: 1 reverse edge(s) added",
                                   "planetoid: ind.citeseer.graph: 1 self-loop(s) removed",
                                   "planetoid: ind.citeseer.ally: only 2 validation node(s) after "
                                   "the 2 training rows, expected 500"});
  }

  TEST_CASE("planetoid: notes stay notes under strict and features can be normalised") {
    DatasetOptions options;
    options.read.strict = true;
    options.normalize_features = maskgat::FeatureNormalization::kRows;
    const auto dataset =
        read_planetoid(maskgat::test::write_tiny_planetoid("planetoid-tiny"), "citeseer", options);
    CHECK(dataset.notes.size() == 4);
    const auto& x = dataset.features.sparse();
    CHECK(x.coeff(0, 0) == 0.5F);
    CHECK(x.coeff(2, 2) == doctest::Approx(2.0 / 3.0));
    CHECK(x.coeff(7, 4) == 1.0F);
    CHECK(x.row(5).nonZeros() == 0);
  }

  TEST_CASE("planetoid: unknown dataset names and missing files") {
    CHECK_THROWS_WITH_AS(read_planetoid("nowhere", "reddit", DatasetOptions{}),
                         "planetoid: unknown dataset 'reddit': expected cora, citeseer or pubmed",
                         maskgat::InvalidArgument);

    const auto dir = make_copy("planetoid-missing", {}, {"graph"});
    const auto root = dir.parent_path();
    CHECK_THROWS_WITH_AS(read_planetoid(dir, "citeseer", DatasetOptions{}),
                         ("planetoid: cannot open '" + (dir / "ind.citeseer.graph").string() +
                          "': No such file or directory (fetch it with: datasets/fetch.sh --dest " +
                          root.string() + " citeseer (installed: maskgat-fetch))")
                             .c_str(),
                         maskgat::IoError);
  }

  TEST_CASE("planetoid: a missing allx leaves features unavailable unless they are required") {
    const auto dir = make_copy("planetoid-no-allx", {}, {"allx"});
    const std::string allx = (dir / "ind.citeseer.allx").string();
    const std::string fetch = "datasets/fetch.sh --dest " + dir.parent_path().string() +
                              " citeseer (installed: maskgat-fetch)";

    CHECK_THROWS_WITH_AS(read_planetoid(dir, "citeseer", DatasetOptions{}),
                         ("planetoid: cannot open '" + allx +
                          "': No such file or directory (fetch it with: " + fetch + ")")
                             .c_str(),
                         maskgat::IoError);

    DatasetOptions options;
    options.require_features = false;
    const auto dataset = read_planetoid(dir, "citeseer", options);
    CHECK(dataset.missing_features == "'" + allx + "' is missing (fetch it with: " + fetch +
                                          " where the internet is reachable)");
    CHECK(dataset.features.rows() == 8);
    CHECK(dataset.features.cols() == 0);
    CHECK(dataset.labels == std::vector<std::int32_t>{0, 2, 1, 2, 0, -1, 2, 1});
    CHECK(dataset.split[4] == SplitPart::kTest);
    CHECK(dataset.graph.num_edges() == 10);
    CHECK_THROWS_AS(dataset.require_features(), maskgat::Error);
  }

  TEST_CASE("planetoid: test.index lines are checked with their line number") {
    const auto not_integer = make_copy("planetoid-index-text", {{"test.index", "7\n4\nabc\n"}});
    CHECK_THROWS_WITH_AS(read_planetoid(not_integer, "citeseer", DatasetOptions{}),
                         ("planetoid: " + (not_integer / "ind.citeseer.test.index").string() +
                          ":3: test index 'abc' is not an integer")
                             .c_str(),
                         maskgat::ParseError);

    // 2 lies before the test range: with min 2 the nodes would be 4 + (7 - 2 + 1) = 10.
    const auto low = make_copy("planetoid-index-low", {{"test.index", "7\n2\n6\n"}});
    CHECK_THROWS_WITH_AS(read_planetoid(low, "citeseer", DatasetOptions{}),
                         ("planetoid: " + (low / "ind.citeseer.test.index").string() +
                          ":2: test index 2 is outside [4, 10)")
                             .c_str(),
                         maskgat::ParseError);

    const auto twice = make_copy("planetoid-index-twice", {{"test.index", "7\n4\n7\n"}});
    CHECK_THROWS_WITH_AS(read_planetoid(twice, "citeseer", DatasetOptions{}),
                         ("planetoid: " + (twice / "ind.citeseer.test.index").string() +
                          ":3: test index 7 is listed twice (first on line 1)")
                             .c_str(),
                         maskgat::ParseError);

    const auto short_index = make_copy("planetoid-index-short", {{"test.index", "7\n4\n"}});
    CHECK_THROWS_WITH_AS(read_planetoid(short_index, "citeseer", DatasetOptions{}),
                         ("planetoid: " + (short_index / "ind.citeseer.ty").string() +
                          ": the matrix has 3 rows, expected 2 (one per line of "
                          "ind.citeseer.test.index)")
                             .c_str(),
                         maskgat::ParseError);
  }

  TEST_CASE("planetoid: pickles of the wrong type or with bad content") {
    // A list (2 EMPTY_LIST, 3 BINPUT 1, 5 STOP) where the csr_matrix x is expected.
    const auto list_x = make_copy("planetoid-list-x", {{"x", std::string("\x80\x02]q\x01.", 6)}});
    CHECK_THROWS_WITH_AS(read_planetoid(list_x, "citeseer", DatasetOptions{}),
                         ("planetoid: " + (list_x / "ind.citeseer.x").string() +
                          ": expected a scipy.sparse.csr.csr_matrix, got a list (created at byte "
                          "2)")
                             .c_str(),
                         maskgat::ParseError);

    // The graph pickle calls os.system: refused at the GLOBAL, nothing runs.
    const auto hostile =
        make_copy("planetoid-hostile", {{"graph", std::string("\x80\x02"
                                                              "cos\nsystem\nU\x05touch\x85R.",
                                                              23)}});
    CHECK_THROWS_AS(read_planetoid(hostile, "citeseer", DatasetOptions{}), maskgat::ParseError);

    // An adjacency key past the 8 nodes: 4 BININT1 8.
    const auto far = make_copy("planetoid-far-key", {{"graph", std::string("\x80\x02}(K\x08]K\x00"
                                                                           "au.",
                                                                           12)}});
    CHECK_THROWS_WITH_AS(read_planetoid(far, "citeseer", DatasetOptions{}),
                         ("planetoid: " + (far / "ind.citeseer.graph").string() +
                          ": dict key 8 created at byte 4 is outside [0, 8)")
                             .c_str(),
                         maskgat::ParseError);

    // tx narrower than allx: x has 5 columns, ty used as tx is not even a CSR matrix.
    const auto swapped = make_copy("planetoid-swapped", {{"tx", tiny_planetoid_part("ty")}});
    CHECK_THROWS_WITH_AS(read_planetoid(swapped, "citeseer", DatasetOptions{}),
                         ("planetoid: " + (swapped / "ind.citeseer.tx").string() +
                          ": expected a scipy.sparse.csr.csr_matrix, got a numpy.ndarray "
                          "(created at byte 64)")
                             .c_str(),
                         maskgat::ParseError);

    // x (2 rows) in place of allx (4 rows).
    const auto short_allx = make_copy("planetoid-short-allx", {{"allx", tiny_planetoid_part("x")}});
    CHECK_THROWS_WITH_AS(read_planetoid(short_allx, "citeseer", DatasetOptions{}),
                         ("planetoid: " + (short_allx / "ind.citeseer.allx").string() +
                          ": the matrix has 2 rows, expected 4 (one per row of ind.citeseer.ally)")
                             .c_str(),
                         maskgat::ParseError);
  }

  TEST_CASE("planetoid: a non-finite feature is rejected by the pickle reader") {
    std::string allx = tiny_planetoid_part("allx");
    const std::string one("\x00\x00\x80\x3f", 4);  // 1.0F, little-endian
    const std::string nan("\x00\x00\xc0\x7f", 4);
    const auto at = allx.find(one);
    REQUIRE(at != std::string::npos);
    allx.replace(at, 4, nan);
    const auto dir = make_copy("planetoid-nan", {{"allx", allx}});
    CHECK_THROWS_WITH_AS(read_planetoid(dir, "citeseer", DatasetOptions{}),
                         ("planetoid: " + (dir / "ind.citeseer.allx").string() +
                          ": 'data' of the scipy.sparse.csr.csr_matrix created at byte 34: "
                          "data[0] is not a finite float")
                             .c_str(),
                         maskgat::ParseError);
  }
}
