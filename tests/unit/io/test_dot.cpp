#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "maskgat/core/error.hpp"
#include "maskgat/io/dot.hpp"
#include "support/graph_checks.hpp"
#include "support/paths.hpp"

namespace {

using maskgat::EdgeListOptions;
using maskgat::LimitError;
using maskgat::NodeIndex;
using maskgat::ParseError;
using maskgat::test::fixture;
using maskgat::test::id_of;
using maskgat::test::in_names;
using maskgat::test::kMaxNodes;
using maskgat::test::Loaded;
using maskgat::test::weight;
using maskgat::test::write_file;

Loaded load(const std::filesystem::path& path, const EdgeListOptions& options = {}) {
  return maskgat::test::load_named(maskgat::read_dot, path, options);
}

// Reads into a fresh index, for the error cases.
void read(const std::filesystem::path& path, const EdgeListOptions& options = {}) {
  static_cast<void>(load(path, options));
}

using Names = std::vector<std::string>;

// A digraph whose `depth` - 1 nested subgraphs hold one edge, one brace per line when
// `separator` is a line end.
std::string nested_dot(int depth, const std::string& separator) {
  std::string text = "digraph {" + separator;
  for (int level = 1; level < depth; ++level) text += "subgraph {" + separator;
  text += "a -> b" + separator;
  for (int level = 1; level < depth; ++level) text += "}" + separator;
  return text + "}\n";
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("DOT reader: digraph with comments - quoting - HTML - a subgraph and weights") {
    const Loaded loaded = load(fixture("dot/directed.dot"));
    const auto& graph = loaded.result.graph;
    CHECK(graph.num_nodes() == 6);
    CHECK(graph.num_edges() == 4);
    // Nodes are numbered in order of first appearance.
    CHECK(loaded.nodes.names() ==
          Names{"alice", "bob", "carol", "dave", "eve \"the\" second", "frank"});
    CHECK(in_names(loaded, "bob") == Names{"alice", "carol"});
    CHECK(in_names(loaded, "dave") == Names{"bob"});
    CHECK(in_names(loaded, "eve \"the\" second") == Names{"dave"});
    CHECK(graph.in_degree(id_of(loaded, "frank")) == 0);
    CHECK(graph.out_degree(id_of(loaded, "frank")) == 0);
    CHECK(weight(loaded, "alice", "bob") == 0.5F);
    CHECK(weight(loaded, "carol", "bob") == 2.0F);
    CHECK(weight(loaded, "bob", "dave") == 1.25F);
    CHECK(weight(loaded, "dave", "eve \"the\" second") == 3.0F);
    CHECK(loaded.result.notes.empty());
  }

  TEST_CASE("DOT reader: an undirected graph gives both directions") {
    const Loaded loaded = load(fixture("dot/undirected.dot"));
    const auto& graph = loaded.result.graph;
    CHECK(graph.num_nodes() == 3);
    CHECK(graph.num_edges() == 5);
    CHECK(graph.num_self_loops() == 1);
    CHECK(in_names(loaded, "a") == Names{"b"});
    CHECK(in_names(loaded, "b") == Names{"a", "c"});
    CHECK(in_names(loaded, "c") == Names{"b", "c"});
    CHECK(weight(loaded, "a", "b") == 2.0F);
    CHECK(weight(loaded, "b", "a") == 2.0F);
    CHECK(weight(loaded, "c", "c") == 0.25F);
  }

  TEST_CASE("DOT reader: non-ASCII names and an unweighted graph") {
    const Loaded loaded = load(fixture("dot/unicode.dot"));
    CHECK(loaded.nodes.names() == Names{"Zürich", "東京", "R&D"});
    CHECK(in_names(loaded, "東京") == Names{"R&D", "Zürich"});
    CHECK_FALSE(loaded.result.graph.has_weights());
  }

  TEST_CASE("DOT reader: edges without a weight get Graphviz's default of 1") {
    const Loaded loaded = load(fixture("dot/duplicates.dot"));
    CHECK(weight(loaded, "b", "c") == 1.0F);
  }

  TEST_CASE("DOT reader: duplicate edges are merged and counted - or rejected when strict") {
    const auto path = fixture("dot/duplicates.dot");
    const Loaded loaded = load(path);
    CHECK(loaded.result.graph.num_nodes() == 3);
    CHECK(loaded.result.graph.num_edges() == 2);
    CHECK(loaded.result.duplicates_merged == 1);
    CHECK(weight(loaded, "a", "b") == 1.5F);
    REQUIRE(loaded.result.notes.size() == 1);
    CHECK(loaded.result.notes[0] ==
          "dot: " + path.string() + ": 1 duplicate edge(s) merged, the first weight kept");

    EdgeListOptions strict;
    strict.read.strict = true;
    const std::string message =
        "dot: " + path.string() + ": 1 duplicate edge(s) merged, the first weight kept (--strict)";
    CHECK_THROWS_WITH_AS(read(path, strict), message.c_str(), ParseError);
  }

  TEST_CASE("DOT reader: a strict graph drops repeated edges itself") {
    EdgeListOptions strict;
    strict.read.strict = true;
    const Loaded loaded = load(fixture("dot/strict.dot"), strict);
    CHECK(loaded.result.graph.num_edges() == 2);
    CHECK(loaded.result.duplicates_merged == 0);
    CHECK(weight(loaded, "a", "b") == 1.5F);
  }

  TEST_CASE("DOT reader: numeric ids") {
    const auto path = write_file("dot-numeric", "numeric.dot", "digraph { 2 -> 0; 1 -> 0; 3 }\n");
    NodeIndex nodes = NodeIndex::numeric(-1, kMaxNodes);
    const auto loaded = maskgat::read_dot(path, nodes, {});
    CHECK(nodes.size() == 4);
    const auto sources = loaded.graph.in_neighbors(0);
    CHECK(std::vector<maskgat::NodeId>(sources.begin(), sources.end()) ==
          std::vector<maskgat::NodeId>{1, 2});
  }

  TEST_CASE("DOT reader: syntax errors name their line") {
    const auto arrows = write_file("dot-syntax", "arrows.dot", "digraph {\n  a -> -> b;\n}\n");
    std::string message = "dot: " + arrows.string() +
                          ":2: expected a node or a subgraph after the edge operator, got '->'";
    CHECK_THROWS_WITH_AS(read(arrows), message.c_str(), ParseError);

    const auto kind = write_file("dot-syntax", "kind.dot", "graph {\n  a -> b;\n}\n");
    message = "dot: " + kind.string() + ":2: '->' in an undirected graph: use '--'";
    CHECK_THROWS_WITH_AS(read(kind), message.c_str(), ParseError);

    const auto two = write_file("dot-syntax", "two.dot", "digraph { a }\ndigraph { b }\n");
    message = "dot: " + two.string() +
              ":2: the keyword 'digraph' after the graph's closing '}': a file holds one graph";
    CHECK_THROWS_WITH_AS(read(two), message.c_str(), ParseError);
  }

  TEST_CASE("DOT reader: structural errors name their line") {
    const auto name = write_file("dot-scan", "name.dot", "// comment\nnetwork {\n  a -> b;\n}\n");
    std::string message = "dot: " + name.string() +
                          ":2: expected 'graph' or 'digraph' (optionally after 'strict') at the "
                          "start of the file, got 'network'";
    CHECK_THROWS_WITH_AS(read(name), message.c_str(), ParseError);

    const auto empty = write_file("dot-scan", "empty.dot", "/* nothing */\n");
    message = "dot: " + empty.string() + ": no graph: expected 'graph' or 'digraph'";
    CHECK_THROWS_WITH_AS(read(empty), message.c_str(), ParseError);

    const auto bracket =
        write_file("dot-scan", "bracket.dot", "digraph {\n  a -> b [weight=1;\n}\n");
    message = "dot: " + bracket.string() +
              ":3: expected an attribute name or ']' in the '[' opened at line 2, got '}'";
    CHECK_THROWS_WITH_AS(read(bracket), message.c_str(), ParseError);

    const auto extra = write_file("dot-scan", "extra.dot", "digraph {\n  a -> b;\n}\n}\n");
    message = "dot: " + extra.string() + ":4: '}' has no matching '{'";
    CHECK_THROWS_WITH_AS(read(extra), message.c_str(), ParseError);

    const auto string =
        write_file("dot-scan", "string.dot", "digraph {\n  a -> b [label=\"x\\\"];\n}\n");
    message =
        "dot: " + string.string() + ":2: unterminated quoted string: '\"' has no closing '\"'";
    CHECK_THROWS_WITH_AS(read(string), message.c_str(), ParseError);

    const auto comment = write_file("dot-scan", "comment.dot", "digraph {\n  /* a -> b;\n}\n");
    message = "dot: " + comment.string() + ":2: unterminated comment: '/*' has no closing '*/'";
    CHECK_THROWS_WITH_AS(read(comment), message.c_str(), ParseError);

    const auto html = write_file("dot-scan", "html.dot", "digraph {\n  a [label=<<b>];\n}\n");
    message = "dot: " + html.string() + ":2: unterminated HTML string: '<' has no matching '>'";
    CHECK_THROWS_WITH_AS(read(html), message.c_str(), ParseError);
  }

  TEST_CASE("DOT reader: a truncated file") {
    const auto path = write_file("dot-truncated", "truncated.dot",
                                 "digraph {\n  a -> b;\n  subgraph {\n  c -> d");
    const std::string message =
        "dot: " + path.string() + ":4: unexpected end of file: '{' opened at line 3 is not closed";
    CHECK_THROWS_WITH_AS(read(path), message.c_str(), ParseError);
  }

  TEST_CASE("DOT reader: nesting deeper than the limit") {
    const auto path = write_file("dot-deep", "deep.dot", nested_dot(300, "\n"));
    const std::string message = "dot: " + path.string() +
                                ":257: nesting depth 257 exceeds the limit of 256 (raise it with "
                                "--max-nesting-depth)";
    CHECK_THROWS_WITH_AS(read(path), message.c_str(), LimitError);

    // Within the limit the nesting is read.
    const Loaded nested = load(write_file("dot-deep", "nested.dot", nested_dot(200, "\n")));
    CHECK(nested.result.graph.num_edges() == 1);
    CHECK(in_names(nested, "b") == Names{"a"});

    EdgeListOptions lowered;
    lowered.read.limits.max_nesting_depth = 1;
    const auto directed = fixture("dot/directed.dot");
    const std::string shallow = "dot: " + directed.string() +
                                ":11: nesting depth 2 exceeds the limit of 1 (raise it with "
                                "--max-nesting-depth)";
    CHECK_THROWS_WITH_AS(read(directed, lowered), shallow.c_str(), LimitError);
  }

  TEST_CASE("DOT reader: 10^5 nested braces are rejected at the limit") {
    const auto path = write_file("dot-deeper", "deeper.dot", nested_dot(100'000, ""));
    const std::string message = "dot: " + path.string() +
                                ":1: nesting depth 257 exceeds the limit of 256 (raise it with "
                                "--max-nesting-depth)";
    CHECK_THROWS_WITH_AS(read(path), message.c_str(), LimitError);
  }

  TEST_CASE("DOT reader: nothing recurses - 10^5 nested subgraphs are read when the limit allows") {
    const auto path = write_file("dot-deeper", "deeper.dot", nested_dot(100'000, ""));
    EdgeListOptions raised;
    raised.read.limits.max_nesting_depth = 100'000;
    const Loaded nested = load(path, raised);
    CHECK(nested.result.graph.num_edges() == 1);
    CHECK(in_names(nested, "b") == Names{"a"});
  }

  TEST_CASE("DOT reader: the bodies of a named subgraph add up - a reference stands for them") {
    const Loaded reopened = load(write_file("dot-named", "reopened.dot",
                                            "digraph { subgraph s { a } x -> subgraph s { b } "
                                            "y -> subgraph s; z -> subgraph never }\n"));
    CHECK(in_names(reopened, "a") == Names{"x", "y"});
    CHECK(in_names(reopened, "b") == Names{"x", "y"});
    CHECK(reopened.result.graph.num_edges() == 4);
  }

  TEST_CASE("DOT reader: an empty subgraph as an edge end joins nothing") {
    const Loaded empty = load(write_file("dot-empty-subgraph", "empty.dot",
                                         "digraph { {} -> {} [weight=x]; a -> {} [weight=inf]; "
                                         "c -> {} -> d; e -> {} ; f -> g [weight=2] }\n"));
    CHECK(empty.result.graph.num_edges() == 1);
    CHECK(weight(empty, "f", "g") == 2.0F);
  }

  TEST_CASE("DOT reader: subgraphs as edge ends, edge defaults in scope, ports") {
    const auto path = write_file("dot-grammar", "grammar.dot",
                                 "digraph {\n  edge [weight=2];\n  a -> {b c} -> d;\n"
                                 "  subgraph s { edge [weight=5]; e:p1:n -> f }\n"
                                 "  { g h } -> i [weight=3];\n  j -> k;\n}\n");
    const Loaded loaded = load(path);
    CHECK(loaded.nodes.names() == Names{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k"});
    CHECK(in_names(loaded, "b") == Names{"a"});
    CHECK(in_names(loaded, "c") == Names{"a"});
    CHECK(in_names(loaded, "d") == Names{"b", "c"});
    CHECK(in_names(loaded, "i") == Names{"g", "h"});
    CHECK(weight(loaded, "a", "b") == 2.0F);
    CHECK(weight(loaded, "c", "d") == 2.0F);
    CHECK(weight(loaded, "e", "f") == 5.0F);
    CHECK(weight(loaded, "g", "i") == 3.0F);
    CHECK(weight(loaded, "j", "k") == 2.0F);  // the subgraph's default stayed inside it
  }

  TEST_CASE("DOT reader: a file over the size limit is not read") {
    const auto path = fixture("dot/directed.dot");
    EdgeListOptions options;
    options.read.limits.max_file_bytes = 64;
    const std::string message = "dot: " + path.string() + ": file is " +
                                std::to_string(std::filesystem::file_size(path)) +
                                " bytes, over the limit of 64 (raise it with --max-file-bytes)";
    CHECK_THROWS_WITH_AS(read(path, options), message.c_str(), LimitError);
  }

  TEST_CASE("DOT reader: bad weights") {
    const auto text = write_file("dot-weight", "text.dot", "digraph { a -> b [weight=heavy] }\n");
    std::string message =
        "dot: " + text.string() + ":1: edge 'a' -> 'b': weight 'heavy' is not a number";
    CHECK_THROWS_WITH_AS(read(text), message.c_str(), ParseError);

    const auto blank = write_file("dot-weight", "blank.dot", "graph { a -- b [weight=\"\"] }\n");
    message = "dot: " + blank.string() + ":1: edge 'a' -- 'b': weight '' is not a number";
    CHECK_THROWS_WITH_AS(read(blank), message.c_str(), ParseError);

    const auto huge =
        write_file("dot-weight", "huge.dot", "digraph { a -> b [weight=\"1e40\"] }\n");
    message = "dot: " + huge.string() + ":1: edge 'a' -> 'b': weight '1e40' is not finite";
    CHECK_THROWS_WITH_AS(read(huge), message.c_str(), ParseError);

    const auto nan = write_file("dot-weight", "nan.dot", "digraph { a -> b [weight=nan] }\n");
    message = "dot: " + nan.string() + ":1: edge 'a' -> 'b': weight 'nan' is not finite";
    CHECK_THROWS_WITH_AS(read(nan), message.c_str(), ParseError);
  }

  TEST_CASE("DOT reader: a missing file") {
    const auto path = maskgat::test::scratch_dir("dot-missing") / "absent.dot";
    const std::string message =
        "dot: cannot open '" + path.string() + "': No such file or directory";
    CHECK_THROWS_WITH_AS(read(path), message.c_str(), maskgat::IoError);
  }
}
