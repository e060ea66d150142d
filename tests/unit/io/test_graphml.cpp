#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "maskgat/core/error.hpp"
#include "maskgat/io/graphml.hpp"
#include "support/graph_checks.hpp"
#include "support/paths.hpp"

namespace {

using maskgat::EdgeListOptions;
using maskgat::LimitError;
using maskgat::NodeIndex;
using maskgat::ParseError;
using maskgat::test::fixture;
using maskgat::test::in_names;
using maskgat::test::kMaxNodes;
using maskgat::test::Loaded;
using maskgat::test::weight;
using maskgat::test::write_file;

Loaded load(const std::filesystem::path& path, const EdgeListOptions& options = {}) {
  return maskgat::test::load_named(maskgat::read_graphml, path, options);
}

// Reads into a fresh index, for the error cases.
void read(const std::filesystem::path& path, const EdgeListOptions& options = {}) {
  static_cast<void>(load(path, options));
}

using Names = std::vector<std::string>;

// Reading `content`, written as `name` in the scratch folder `dir`, throws the ParseError
// `graphml: <its path>:<where_what>` (the line, then the message).
void check_refused(const std::string& dir, const std::string& name, const std::string& content,
                   const std::string& where_what) {
  const auto path = write_file(dir, name, content);
  const std::string message = "graphml: " + path.string() + ":" + where_what;
  CHECK_THROWS_WITH_AS(read(path), message.c_str(), ParseError);
}

// `depth` nested elements, one per line when `separator` is a line end.
std::string nested_graphml(int depth, const std::string& separator) {
  std::string text = "<graphml>" + separator;
  for (int level = 1; level < depth; ++level) text += "<g>" + separator;
  for (int level = 1; level < depth; ++level) text += "</g>" + separator;
  return text + "</graphml>\n";
}

constexpr const char* kHeader =
    "<graphml>\n"
    "  <key id=\"d0\" for=\"node\" attr.name=\"name\" attr.type=\"string\"/>\n"
    "  <key id=\"d1\" for=\"edge\" attr.name=\"weight\" attr.type=\"string\"/>\n"
    "  <graph edgedefault=\"directed\">\n"
    "    <node id=\"a\"><data key=\"d0\">a</data></node>\n"
    "    <node id=\"b\"><data key=\"d0\">b</data></node>\n";

std::string with_edge(const std::string& weight) {
  return std::string(kHeader) + "    <edge source=\"a\" target=\"b\"><data key=\"d1\">" + weight +
         "</data></edge>\n  </graph>\n</graphml>\n";
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("GraphML reader: directed graph with names and weights") {
    const Loaded loaded = load(fixture("graphml/directed_named.graphml"));
    const auto& graph = loaded.result.graph;
    CHECK(graph.num_nodes() == 4);
    CHECK(graph.num_edges() == 3);
    CHECK(loaded.nodes.names() == Names{"alice", "bob", "carol", "dave"});
    CHECK(in_names(loaded, "bob") == Names{"alice", "carol"});
    CHECK(in_names(loaded, "dave") == Names{"bob"});
    CHECK(in_names(loaded, "alice").empty());
    CHECK(weight(loaded, "alice", "bob") == 0.5F);
    CHECK(weight(loaded, "carol", "bob") == 2.0F);
    CHECK(weight(loaded, "bob", "dave") == 1.25F);
    CHECK(loaded.result.duplicates_merged == 0);
    CHECK(loaded.result.notes.empty());
  }

  TEST_CASE("GraphML reader: without a name key - tokens are the node ids") {
    const Loaded loaded = load(fixture("graphml/node_ids.graphml"));
    const auto& graph = loaded.result.graph;
    CHECK(graph.num_nodes() == 4);
    CHECK(graph.num_edges() == 3);
    CHECK_FALSE(graph.has_weights());
    CHECK(loaded.nodes.names() == Names{"n0", "n1", "n2", "n3"});
    CHECK(in_names(loaded, "n1") == Names{"n0", "n2"});
    CHECK(in_names(loaded, "n2") == Names{"n0"});
    CHECK(graph.in_degree(3) == 0);
    CHECK(graph.out_degree(3) == 0);

    const auto numbered_file =
        write_file("graphml-numeric", "numeric.graphml",
                   "<graphml><graph edgedefault=\"directed\"><node id=\"2\"/><node id=\"0\"/>"
                   "<edge source=\"2\" target=\"0\"/></graph></graphml>\n");
    NodeIndex numeric = NodeIndex::numeric(-1, kMaxNodes);
    const auto numbered = maskgat::read_graphml(numbered_file, numeric, {});
    CHECK(numeric.size() == 3);
    const auto sources = numbered.graph.in_neighbors(0);
    CHECK(std::vector<maskgat::NodeId>(sources.begin(), sources.end()) ==
          std::vector<maskgat::NodeId>{2});
  }

  TEST_CASE("GraphML reader: an undirected graph gives both directions") {
    const Loaded loaded = load(fixture("graphml/undirected.graphml"));
    const auto& graph = loaded.result.graph;
    CHECK(graph.num_nodes() == 3);
    CHECK(graph.num_edges() == 4);
    CHECK(loaded.result.reverse_edges_added == 2);
    CHECK(in_names(loaded, "a") == Names{"b"});
    CHECK(in_names(loaded, "b") == Names{"a", "c"});
    CHECK(in_names(loaded, "c") == Names{"b"});
    CHECK(weight(loaded, "a", "b") == 3.0F);
    CHECK(weight(loaded, "b", "a") == 3.0F);
    CHECK(weight(loaded, "b", "c") == 4.0F);
  }

  TEST_CASE("GraphML reader: non-ASCII names and entities") {
    const Loaded loaded = load(fixture("graphml/unicode.graphml"));
    CHECK(loaded.nodes.names() == Names{"Zürich", "東京", "R&D"});
    CHECK(in_names(loaded, "東京") == Names{"R&D", "Zürich"});
  }

  TEST_CASE("GraphML reader: duplicate edges are merged and counted - or rejected when strict") {
    const auto path = fixture("graphml/duplicates.graphml");
    const Loaded loaded = load(path);
    CHECK(loaded.result.graph.num_edges() == 2);
    CHECK(loaded.result.duplicates_merged == 1);
    CHECK(weight(loaded, "a", "b") == 1.5F);
    CHECK(weight(loaded, "b", "c") == 1.0F);  // the key's default
    REQUIRE(loaded.result.notes.size() == 1);
    CHECK(loaded.result.notes[0] ==
          "graphml: " + path.string() + ": 1 duplicate edge(s) merged, the first weight kept");

    EdgeListOptions strict;
    strict.read.strict = true;
    const std::string message = "graphml: " + path.string() +
                                ": 1 duplicate edge(s) merged, the first weight kept (--strict)";
    CHECK_THROWS_WITH_AS(read(path, strict), message.c_str(), ParseError);
  }

  TEST_CASE("GraphML reader: a frozen index rejects unknown names") {
    NodeIndex nodes = NodeIndex::named(kMaxNodes);
    maskgat::NodeIndex::Status status{};
    static_cast<void>(nodes.insert("alice", status));
    static_cast<void>(nodes.insert("bob", status));
    nodes.freeze();
    const auto path = fixture("graphml/directed_named.graphml");
    const std::string message = "graphml: " + path.string() +
                                ":10: unknown node 'carol': it has no row in the features file";
    CHECK_THROWS_WITH_AS(static_cast<void>(maskgat::read_graphml(path, nodes, {})), message.c_str(),
                         ParseError);
  }

  TEST_CASE("GraphML reader: malformed XML is located by its line") {
    const auto mismatched = write_file("graphml-bad", "mismatched.graphml",
                                       "<graphml>\n  <graph edgedefault=\"directed\">\n"
                                       "    <node id=\"a\">\n  </graph>\n</graphml>\n");
    std::string message = "graphml: " + mismatched.string() +
                          ":4: closing tag </graph> does not match <node> opened at line 3";
    CHECK_THROWS_WITH_AS(read(mismatched), message.c_str(), ParseError);

    const auto stray = write_file("graphml-bad", "stray.graphml", "<graphml>\n</graph>\n");
    message = "graphml: " + stray.string() + ":2: closing tag </graph> does not match <graphml> " +
              "opened at line 1";
    CHECK_THROWS_WITH_AS(read(stray), message.c_str(), ParseError);

    const auto comment =
        write_file("graphml-bad", "comment.graphml", "<graphml>\n<!-- never closed\n</graphml>\n");
    message =
        "graphml: " + comment.string() + ":2: unterminated comment: '<!--' has no closing '-->'";
    CHECK_THROWS_WITH_AS(read(comment), message.c_str(), ParseError);

    const auto quote =
        write_file("graphml-bad", "quote.graphml",
                   "<graphml>\n<graph edgedefault=\"directed>\n</graph></graphml>\n");
    message = "graphml: " + quote.string() + ":2: unterminated attribute value in the tag <graph>";
    CHECK_THROWS_WITH_AS(read(quote), message.c_str(), ParseError);

    const auto bare = write_file("graphml-bad", "bare.graphml", "<graphml>\n a < b\n</graphml>\n");
    message = "graphml: " + bare.string() + ":2: '<' is not followed by an element name";
    CHECK_THROWS_WITH_AS(read(bare), message.c_str(), ParseError);
  }

  TEST_CASE("GraphML reader: what expat refuses is named and located") {
    const std::string dir = "graphml-expat";
    check_refused(dir, "second.graphml", "<graphml>\n</graphml>\n<graphml/>\n",
                  "3: a second root element <graphml>: a document has one root element");
    check_refused(dir, "text.graphml", "abc\n<graphml/>\n",
                  "1: text outside the root element: 'abc'");
    check_refused(dir, "ampersand.graphml", "<graphml>\nR & D</graphml>\n",
                  "2: '&' does not start an entity or character reference: write '&amp;' for '&'");
    check_refused(dir, "reference.graphml", "<graphml>\n&#0;</graphml>\n",
                  "2: invalid character reference '&#0;'");
    check_refused(dir, "value.graphml", "<graphml\n a/>\n",
                  "2: the attribute 'a' in the tag <graphml> has no value: expected ='...' or "
                  "=\"...\"");
    // What expat names by itself: its own words, the column and what follows.
    check_refused(dir, "declaration.graphml", "<graphml>\n<?xml version=\"1.0\"?></graphml>\n",
                  "2: malformed XML: XML or text declaration not at start of entity at column 1, "
                  "before '<?xml version=\"1.0\"?></graphml>'");
  }

  TEST_CASE("GraphML reader: no entity is declared, expanded or fetched") {
    // A billion laughs: refused at its first declaration, before anything is expanded.
    std::string laughs = "<?xml version=\"1.0\"?>\n<!DOCTYPE graphml [\n<!ENTITY a \"aaaaaaaa\">\n";
    for (char entity = 'b'; entity <= 'j'; ++entity) {
      std::string references;
      for (int i = 0; i < 10; ++i)
        references += "&" + std::string(1, static_cast<char>(entity - 1)) + ";";
      laughs += "<!ENTITY " + std::string(1, entity) + " \"" + references + "\">\n";
    }
    laughs += "]>\n<graphml><graph edgedefault=\"directed\"><node id=\"&j;\"/></graph></graphml>\n";
    const std::string dir = "graphml-entities";
    const std::string refused =
        ": entities are neither expanded nor fetched, so none may be declared";
    check_refused(dir, "laughs.graphml", laughs,
                  "3: the DOCTYPE declares the entity 'a'" + refused);
    check_refused(
        dir, "external.graphml",
        "<!DOCTYPE graphml [<!ENTITY e SYSTEM \"/etc/passwd\">]>\n<graphml>&e;</graphml>\n",
        "1: the DOCTYPE declares the entity 'e'" + refused);
    check_refused(dir, "parameter.graphml", "<!DOCTYPE graphml [<!ENTITY % p \"x\">]><graphml/>\n",
                  "1: the DOCTYPE declares the entity '%p'" + refused);

    // An external DTD (GraphML 1.0 files name one) is not read, and the file is.
    const std::string dtd = "<!DOCTYPE graphml SYSTEM \"graphml.dtd\">\n";
    const std::string graph = "<graph edgedefault=\"directed\"><node id=\"a\"/></graph>";
    const auto named = write_file(dir, "dtd.graphml", dtd + "<graphml>" + graph + "</graphml>\n");
    CHECK(load(named).nodes.names() == Names{"a"});

    // Expat skips the entities such a DTD could declare; the reader refuses them, in text and
    // in attribute values alike.
    const std::string undeclared =
        "2: the entity '&x;' is not declared: expected &lt; &gt; &amp; &quot; &apos; or a "
        "character reference (no DTD is read)";
    check_refused(dir, "text.graphml", dtd + "<graphml>" + graph + "&x;</graphml>\n", undeclared);
    check_refused(dir, "value.graphml",
                  dtd +
                      "<graphml><graph edgedefault=\"directed\"><node id=\"a&x;\"/>"
                      "</graph></graphml>\n",
                  undeclared + " in the tag <node>");

    // Defaults of an <!ATTLIST> are not read either.
    check_refused(dir, "defaults.graphml",
                  "<!DOCTYPE graphml [<!ATTLIST graph edgedefault CDATA \"directed\">]>\n"
                  "<graphml><graph/></graphml>\n",
                  "2: the <graph> element has edgedefault=(none): expected 'directed' or "
                  "'undirected'");
  }

  TEST_CASE("GraphML reader: text is UTF-8 unless the XML declaration names its encoding") {
    const std::string graph =
        "<graphml><graph edgedefault=\"directed\"><node id=\"caf\xE9\"/>"
        "</graph></graphml>\n";
    const auto latin1 = write_file("graphml-encoding", "latin1.graphml", graph);
    const std::string message =
        "graphml: " + latin1.string() +
        ":1: the byte 0xE9 is not UTF-8: convert the file to UTF-8, or name "
        "its encoding in an XML declaration such as <?xml version=\"1.0\" "
        "encoding=\"ISO-8859-1\"?>";
    CHECK_THROWS_WITH_AS(read(latin1), message.c_str(), ParseError);

    const auto declared = write_file("graphml-encoding", "declared.graphml",
                                     "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n" + graph);
    CHECK(load(declared).nodes.names() == Names{"caf\xC3\xA9"});
  }

  TEST_CASE("GraphML reader: white space in values as in each run of text") {
    const auto path = write_file(
        "graphml-text", "text.graphml",
        "<graphml><key id=\"k\" for=\"node\" attr.name=\"name\" attr.type=\"string\"/>"
        "<graph edgedefault=\"directed\"><node id=\"a\"><data key=\"k\">\n  x \r\n\t y&#32;"
        "<!-- c --> z <![CDATA[ q ]]> w&#10;</data></node></graph></graphml>\n");
    // Runs end at markup (a comment, a CDATA section); references are kept as they are.
    CHECK(load(path).nodes.names() == Names{"x y z q w\n"});
  }

  TEST_CASE("GraphML reader: what GraphML does not allow names its line") {
    const auto unquoted =
        write_file("graphml-boost", "unquoted.graphml",
                   "<graphml>\n<graph edgedefault=directed>\n</graph>\n</graphml>\n");
    std::string message = "graphml: " + unquoted.string() +
                          ":2: the value of the attribute 'edgedefault' in the tag <graph> is not "
                          "quoted";
    CHECK_THROWS_WITH_AS(read(unquoted), message.c_str(), ParseError);

    const auto root = write_file("graphml-boost", "root.graphml", "<gml><graph/></gml>\n");
    message = "graphml: " + root.string() + ":1: the root element is <gml>, expected <graphml>";
    CHECK_THROWS_WITH_AS(read(root), message.c_str(), ParseError);

    const auto mixed =
        write_file("graphml-boost", "mixed.graphml",
                   "<graphml><graph edgedefault=\"directed\"><node id=\"a\"/><node id=\"b\"/>"
                   "<edge source=\"a\" target=\"b\" directed=\"false\"/></graph></graphml>\n");
    message = "graphml: " + mixed.string() +
              ":1: edge 'a' -- 'b' is undirected in a graph whose edges are directed (the first "
              "<graph>'s edgedefault): mixed graphs are not supported";
    CHECK_THROWS_WITH_AS(read(mixed), message.c_str(), ParseError);

    const auto empty = write_file("graphml-boost", "empty.graphml", "<graphml></graphml>\n");
    message = "graphml: " + empty.string() + ": no <graph> element inside <graphml>";
    CHECK_THROWS_WITH_AS(read(empty), message.c_str(), ParseError);
  }

  TEST_CASE("GraphML reader: a truncated file") {
    const auto path = write_file("graphml-truncated", "truncated.graphml",
                                 "<graphml>\n  <graph edgedefault=\"directed\">\n"
                                 "    <node id=\"a\"/>\n    <node id=\"b\"/>\n    <edge source=");
    const std::string message =
        "graphml: " + path.string() + ":5: the tag <edge> is not closed by '>'";
    CHECK_THROWS_WITH_AS(read(path), message.c_str(), ParseError);

    const auto cut = write_file("graphml-truncated", "cut.graphml",
                                "<graphml>\n  <graph edgedefault=\"directed\">\n"
                                "    <node id=\"a\"/>\n    <node id=\"b\"/>\n");
    const std::string unclosed = "graphml: " + cut.string() +
                                 ":4: unexpected end of file: element <graph> opened at line 2 is "
                                 "not closed";
    CHECK_THROWS_WITH_AS(read(cut), unclosed.c_str(), ParseError);
  }

  TEST_CASE("GraphML reader: nesting deeper than the limit") {
    const auto path = write_file("graphml-deep", "deep.graphml", nested_graphml(300, "\n"));
    const std::string message = "graphml: " + path.string() +
                                ":257: nesting depth 257 exceeds the limit of 256 (raise it with "
                                "--max-nesting-depth)";
    CHECK_THROWS_WITH_AS(read(path), message.c_str(), LimitError);

    // Raised, the file is read (it has no graph).
    EdgeListOptions raised;
    raised.read.limits.max_nesting_depth = 300;
    const std::string no_graph =
        "graphml: " + path.string() + ": no <graph> element inside <graphml>";
    CHECK_THROWS_WITH_AS(read(path, raised), no_graph.c_str(), ParseError);

    // Lowered, an ordinary file is too deep: graphml > graph > node > data.
    EdgeListOptions lowered;
    lowered.read.limits.max_nesting_depth = 3;
    const auto named = fixture("graphml/directed_named.graphml");
    const std::string shallow = "graphml: " + named.string() +
                                ":8: nesting depth 4 exceeds the limit of 3 (raise it with "
                                "--max-nesting-depth)";
    CHECK_THROWS_WITH_AS(read(named, lowered), shallow.c_str(), LimitError);
  }

  TEST_CASE(
      "GraphML reader: nothing recurses - 10^5 nested graphs are read when the limit allows") {
    std::string text = "<graphml>";
    for (int level = 0; level < 100'000; ++level) text += "<graph edgedefault=\"directed\">";
    text += "<node id=\"a\"/><node id=\"b\"/><edge source=\"a\" target=\"b\"/>";
    for (int level = 0; level < 100'000; ++level) text += "</graph>";
    const auto path = write_file("graphml-deepest", "deepest.graphml", text + "</graphml>\n");
    EdgeListOptions raised;
    raised.read.limits.max_nesting_depth = 100'002;
    const Loaded loaded = load(path, raised);
    CHECK(loaded.result.graph.num_edges() == 1);
    CHECK(in_names(loaded, "b") == Names{"a"});
  }

  TEST_CASE("GraphML reader: 10^5 nested elements are rejected at the limit") {
    const auto path = write_file("graphml-deeper", "deeper.graphml", nested_graphml(100'000, ""));
    const std::string message = "graphml: " + path.string() +
                                ":1: nesting depth 257 exceeds the limit of 256 (raise it with "
                                "--max-nesting-depth)";
    CHECK_THROWS_WITH_AS(read(path), message.c_str(), LimitError);
  }

  TEST_CASE("GraphML reader: a file over the size limit is not read") {
    const auto path = fixture("graphml/directed_named.graphml");
    EdgeListOptions options;
    options.read.limits.max_file_bytes = 100;
    const std::string message = "graphml: " + path.string() + ": file is " +
                                std::to_string(std::filesystem::file_size(path)) +
                                " bytes, over the limit of 100 (raise it with --max-file-bytes)";
    CHECK_THROWS_WITH_AS(read(path, options), message.c_str(), LimitError);
  }

  TEST_CASE("GraphML reader: bad weights") {
    const auto text = write_file("graphml-weight", "text.graphml", with_edge("heavy"));
    std::string message =
        "graphml: " + text.string() + ":7: edge 'a' -> 'b': weight 'heavy' is not a number";
    CHECK_THROWS_WITH_AS(read(text), message.c_str(), ParseError);

    const auto infinite = write_file("graphml-weight", "inf.graphml", with_edge("inf"));
    message = "graphml: " + infinite.string() + ":7: edge 'a' -> 'b': weight 'inf' is not finite";
    CHECK_THROWS_WITH_AS(read(infinite), message.c_str(), ParseError);

    const auto huge = write_file("graphml-weight", "huge.graphml", with_edge("1e300"));
    message = "graphml: " + huge.string() + ":7: edge 'a' -> 'b': weight '1e300' is not finite";
    CHECK_THROWS_WITH_AS(read(huge), message.c_str(), ParseError);

    std::string typed = with_edge("abc");
    typed.replace(typed.find("attr.type=\"string\"/>\n  <graph"), 18, "attr.type=\"double\"");
    const auto typed_file = write_file("graphml-weight", "double.graphml", typed);
    message =
        "graphml: " + typed_file.string() + ":7: edge 'a' -> 'b': weight 'abc' is not a number";
    CHECK_THROWS_WITH_AS(read(typed_file), message.c_str(), ParseError);

    std::string integral = with_edge("1.5");
    integral.replace(integral.find("attr.type=\"string\"/>\n  <graph"), 18, "attr.type=\"int\"");
    const auto int_file = write_file("graphml-weight", "int.graphml", integral);
    message = "graphml: " + int_file.string() +
              ":7: edge 'a' -> 'b': weight '1.5' is not an integer (key 'd1' has attr.type 'int')";
    CHECK_THROWS_WITH_AS(read(int_file), message.c_str(), ParseError);

    const auto missing = write_file(
        "graphml-weight", "missing.graphml",
        std::string(kHeader) + "    <edge source=\"b\" target=\"a\"/>\n  </graph>\n</graphml>\n");
    message = "graphml: " + missing.string() +
              ":7: edge 'b' -> 'a': no 'weight' value, and key 'd1' has no default";
    CHECK_THROWS_WITH_AS(read(missing), message.c_str(), ParseError);
  }

  TEST_CASE("GraphML reader: names must be present and distinct") {
    const std::string keys =
        "<graphml>\n<key id=\"k\" for=\"node\" attr.name=\"name\" attr.type=\"string\"/>\n"
        "<graph edgedefault=\"directed\">\n";
    const auto unnamed = write_file(
        "graphml-names", "unnamed.graphml",
        keys +
            "<node id=\"a\"><data key=\"k\">a</data></node><node id=\"b\"/>\n</graph></graphml>\n");
    std::string message =
        "graphml: " + unnamed.string() + ":4: node 'b' has no 'name' value (key 'k')";
    CHECK_THROWS_WITH_AS(read(unnamed), message.c_str(), ParseError);

    const auto twice = write_file("graphml-names", "twice.graphml",
                                  keys +
                                      "<node id=\"a\"><data key=\"k\">x</data></node>\n"
                                      "<node id=\"b\"><data key=\"k\">x</data></node>\n"
                                      "</graph></graphml>\n");
    message =
        "graphml: " + twice.string() + ":5: nodes 'a' (line 4) and 'b' have the same name 'x'";
    CHECK_THROWS_WITH_AS(read(twice), message.c_str(), ParseError);
  }

  TEST_CASE("GraphML reader: a missing file") {
    const auto path = maskgat::test::scratch_dir("graphml-missing") / "absent.graphml";
    const std::string message =
        "graphml: cannot open '" + path.string() + "': No such file or directory";
    CHECK_THROWS_WITH_AS(read(path), message.c_str(), maskgat::IoError);
  }
}
