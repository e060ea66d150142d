#include <doctest/doctest.h>

#include <string>

#include "maskgat/core/error.hpp"
#include "maskgat/io/dataset.hpp"
#include "maskgat/io/edge_features.hpp"
#include "maskgat/io/edge_list.hpp"
#include "support/paths.hpp"

using maskgat::EdgeListOptions;
using maskgat::NodeIndex;

namespace {

constexpr std::int64_t kMaxNodes = 1'000'000;

maskgat::LoadedGraph load(const std::string& content, NodeIndex nodes = NodeIndex::named(kMaxNodes),
                          EdgeListOptions options = {}) {
  const auto path = maskgat::test::write_file("edge_list", "g.txt", content);
  return maskgat::read_edge_list(path, nodes, options);
}

std::string path_of(const std::string& name) {
  return maskgat::test::scratch_dir("edge_list").string() + "/" + name;
}

NodeIndex numeric(std::int64_t count = -1) { return NodeIndex::numeric(count, kMaxNodes); }

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("edge list: names in order of first appearance - directed as written") {
    NodeIndex nodes = NodeIndex::named(kMaxNodes);
    const auto path = maskgat::test::write_file("edge_list", "g.txt", "b a\na c\n");
    const auto loaded = maskgat::read_edge_list(path, nodes, {});
    CHECK(loaded.graph.num_nodes() == 3);
    CHECK(loaded.graph.num_edges() == 2);
    CHECK(nodes.names() == std::vector<std::string>{"b", "a", "c"});
    CHECK(loaded.graph.in_degree(1) == 1);  // b -> a
    CHECK(loaded.graph.in_neighbors(1)[0] == 0);
    CHECK_FALSE(loaded.graph.has_weights());
  }

  TEST_CASE("edge list: unusual but valid input loads with the right counts") {
    // BOM, CRLF, tabs and commas mixed, comments of both kinds, blank lines, a duplicate edge,
    // a self-loop and non-ASCII names.
    const std::string content =
        "\xEF\xBB\xBF# comment\r\n"
        "% another comment\r\n"
        "\r\n"
        "Zürich\t東京\r\n"
        "東京 , Zürich\r\n"
        "Zürich,\t東京\r\n"
        "  a a\r\n";
    const auto loaded = load(content);
    CHECK(loaded.graph.num_nodes() == 3);
    CHECK(loaded.graph.num_edges() == 3);
    CHECK(loaded.graph.num_self_loops() == 1);
    CHECK(loaded.duplicates_merged == 1);
    REQUIRE(loaded.notes.size() == 1);
    CHECK(loaded.notes[0] ==
          "edge_list: " + path_of("g.txt") + ": 1 duplicate edge(s) merged, the first weight kept");
  }

  TEST_CASE("edge list: weights - first weight kept on duplicates") {
    const auto loaded = load("0 1 2.5\n0 1 9\n1 0 -1e-3\n", numeric());
    REQUIRE(loaded.graph.has_weights());
    // Destination-major: row 0 holds 1 -> 0, row 1 holds 0 -> 1.
    CHECK(loaded.graph.weights()[0] == -1e-3F);
    CHECK(loaded.graph.weights()[1] == 2.5F);
  }

  TEST_CASE("edge list: numeric ids - --num-nodes and --undirected") {
    auto loaded = load("0 3\n", numeric());
    CHECK(loaded.graph.num_nodes() == 4);
    loaded = load("0 3\n", numeric(10));
    CHECK(loaded.graph.num_nodes() == 10);
    EdgeListOptions undirected;
    undirected.undirected = true;
    loaded = load("0 1\n1 0\n1 2\n", numeric(), undirected);
    CHECK(loaded.graph.num_edges() == 4);
    CHECK(loaded.reverse_edges_added == 1);
  }

  TEST_CASE("edge list: strict turns duplicates into an error") {
    EdgeListOptions strict;
    strict.read.strict = true;
    CHECK_THROWS_WITH_AS(load("a b\na b\n", NodeIndex::named(kMaxNodes), strict),
                         ("edge_list: " + path_of("g.txt") +
                          ": 1 duplicate edge(s) merged, the first weight kept (--strict)")
                             .c_str(),
                         maskgat::ParseError);
  }

  TEST_CASE("edge list: malformed input gives pinned messages") {
    const std::string where = "edge_list: " + path_of("g.txt");
    NodeIndex nodes = NodeIndex::named(kMaxNodes);
    CHECK_THROWS_WITH_AS(
        maskgat::read_edge_list(path_of("missing.txt"), nodes, {}),
        ("edge_list: cannot open '" + path_of("missing.txt") + "': No such file or directory")
            .c_str(),
        maskgat::IoError);
    CHECK_THROWS_WITH_AS(load(""),
                         (where + ": no edges: expected lines 'src dst [weight]'").c_str(),
                         maskgat::ParseError);
    CHECK_THROWS_WITH_AS(load("# only a comment\n\n"),
                         (where + ": no edges: expected lines 'src dst [weight]'").c_str(),
                         maskgat::ParseError);
    CHECK_THROWS_WITH_AS(load("a b\nc\n"),
                         (where + ":2: expected 2 or 3 columns (src dst [weight]), got 1").c_str(),
                         maskgat::ParseError);
    CHECK_THROWS_WITH_AS(load("a b 1 2\n"),
                         (where + ":1: expected 2 or 3 columns (src dst [weight]), got 4").c_str(),
                         maskgat::ParseError);
    CHECK_THROWS_WITH_AS(load("a b heavy\n"),
                         (where + ":1: weight 'heavy' is not a number").c_str(),
                         maskgat::ParseError);
    CHECK_THROWS_WITH_AS(load("a b nan\n"), (where + ":1: weight 'nan' is not finite").c_str(),
                         maskgat::ParseError);
    CHECK_THROWS_WITH_AS(load("a b -inf\n"), (where + ":1: weight '-inf' is not finite").c_str(),
                         maskgat::ParseError);
    CHECK_THROWS_WITH_AS(load("a b 1e39\n"), (where + ":1: weight '1e39' is not finite").c_str(),
                         maskgat::ParseError);
    CHECK_THROWS_WITH_AS(load("a b 1\nb c\n"),
                         (where + ":2: this line has 2 columns but line 1 has 3: either every edge "
                                  "has a weight or none")
                             .c_str(),
                         maskgat::ParseError);
    CHECK_THROWS_WITH_AS(load("0 1\n-3 1\n", numeric()),
                         (where + ":2: node id -3 is negative").c_str(), maskgat::ParseError);
    CHECK_THROWS_WITH_AS(load("0 x\n", numeric()),
                         (where + ":1: node id 'x' is not an integer (--numeric-ids)").c_str(),
                         maskgat::ParseError);
    CHECK_THROWS_WITH_AS(load("0 1\n4 5\n", numeric(5)),
                         (where + ":2: node id 5 is out of range: expected an id below 5 (the "
                                  "number of nodes)")
                             .c_str(),
                         maskgat::ParseError);
    CHECK_THROWS_WITH_AS(load("0 1000000000000000\n", numeric()),
                         (where + ":1: node id 1000000000000000 exceeds the node limit of 1000000 "
                                  "nodes (raise it with --max-nodes)")
                             .c_str(),
                         maskgat::LimitError);
    CHECK_THROWS_WITH_AS(load("a b\nb c\n", NodeIndex::named(2)),
                         (where + ":2: more than 2 nodes: over the node limit (raise it with "
                                  "--max-nodes)")
                             .c_str(),
                         maskgat::LimitError);
    EdgeListOptions few_edges;
    few_edges.read.limits.max_edges = 1;
    CHECK_THROWS_WITH_AS(load("a b\nb c\n", NodeIndex::named(kMaxNodes), few_edges),
                         (where + ":2: more than 1 edges: over the edge limit (raise it with "
                                  "--max-edges)")
                             .c_str(),
                         maskgat::LimitError);
  }

  TEST_CASE("edge list: a frozen node index rejects unknown nodes") {
    NodeIndex nodes = NodeIndex::named(kMaxNodes);
    NodeIndex::Status status{};
    REQUIRE(nodes.insert("a", status));
    REQUIRE(nodes.insert("b", status));
    nodes.freeze();
    CHECK_THROWS_WITH_AS(load("a b\nb c\n", nodes),
                         ("edge_list: " + path_of("g.txt") +
                          ":2: unknown node 'c': it has no row in the features file")
                             .c_str(),
                         maskgat::ParseError);
  }

  TEST_CASE("edge features: a row per listed edge, following merges and added reverse edges") {
    const auto edges = maskgat::test::write_file("edge_list", "e.txt", "a b\nb c\na b\n");
    const auto csv = maskgat::test::write_file("edge_list", "e.csv",
                                               "# comment\nkind,weight\n1,0.5\n2,0.25\n3,8\n");
    const auto read = maskgat::read_edge_features(csv, {});
    REQUIRE(read.rows() == 3);
    CHECK(read(2, 1) == 8.0F);
    maskgat::FileSources files;
    files.graph = edges;
    files.edge_features = csv;
    files.undirected = true;
    const maskgat::Dataset data = maskgat::load_files(files, {});
    // Nodes a, b, c; destination-major: b -> a (reverse of the first a b), a -> b, c -> b
    // (reverse of b c), b -> c. The repeated a b keeps its first row.
    REQUIRE(data.edge_features.rows() == 4);
    CHECK(data.edge_features.col(0) == Eigen::Vector4f(1, 1, 2, 2));
    // A file of another length, a ragged row and a word are named.
    files.edge_features = maskgat::test::write_file("edge_list", "short.csv", "1\n2\n");
    CHECK_THROWS_WITH(maskgat::load_files(files, {}),
                      doctest::Contains(("2 rows, but " + edges.string() + " lists 3 edges").c_str()));
    CHECK_THROWS_WITH(
        maskgat::read_edge_features(
            maskgat::test::write_file("edge_list", "ragged.csv", "1,2\n3\n"), {}),
        doctest::Contains("ragged.csv:2: expected 2 numbers as on the first row, got 1"));
    CHECK_THROWS_WITH(maskgat::read_edge_features(
                          maskgat::test::write_file("edge_list", "word.csv", "1\nx\n"), {}),
                      doctest::Contains("word.csv:2: 'x' is not a number"));
    // Beside a GraphML file they are refused.
    files.graph = maskgat::test::write_file("edge_list", "g.graphml", "<graphml/>");
    CHECK_THROWS_WITH(maskgat::load_files(files, {}),
                      doctest::Contains("are read beside an edge list only"));
  }
}
