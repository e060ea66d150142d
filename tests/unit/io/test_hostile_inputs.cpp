// The hostile-input table of docs/hostile-inputs.md: for every reader, inputs that are empty,
// truncated, binary garbage, with oversized counts, deep nesting, wrong types, non-finite numbers,
// unknown ids, duplicates and odd encodings, and the error each gets. Every row of the table is
// one row of `kCases` below (same reader, same case name), run as its own subcase: the reader
// must throw a MaskGAT error of the given kind whose message contains the pinned text.

#include <doctest/doctest.h>

#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "fuzz/reader_inputs.hpp"
#include "io/detail/pickle_decoders.hpp"
#include "maskgat/core/error.hpp"
#include "maskgat/io/dot.hpp"
#include "maskgat/io/edge_list.hpp"
#include "maskgat/io/features.hpp"
#include "maskgat/io/graphml.hpp"
#include "maskgat/io/labels.hpp"
#include "maskgat/io/linqs.hpp"
#include "maskgat/io/splits.hpp"
#include "maskgat/train/checkpoint.hpp"
#include "support/paths.hpp"

namespace {

using namespace maskgat;

enum class Kind { kParse, kLimit, kInvalid };

struct Case {
  const char* reader;
  const char* name;
  std::string input;
  Kind kind;
  const char* message;  // a part of the error message
};

std::string repeat(const std::string& text, int count) {
  std::string out;
  for (int i = 0; i < count; ++i) out += text;
  return out;
}

// A committed fuzz seed: a real-structured pickle or checkpoint to damage.
std::string seed(const std::string& name) {
  std::ifstream in(std::filesystem::path(MASKGAT_FUZZ_CORPUS_DIR) / name, std::ios::binary);
  REQUIRE(in);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string with_byte(std::string text, std::size_t at, char value) {
  text[at] = value;
  return text;
}

const std::string kGarbage("\x00\xff\xfe\x7f\x80\x01\x02\x1b[0m\xc3\x28\x00\x00\x9f", 16);

EdgeListOptions small_limits() {
  EdgeListOptions options;
  options.read.limits.max_nodes = 1000;
  options.read.limits.max_edges = 1000;
  options.read.limits.max_features = 100;
  options.read.limits.max_nesting_depth = 64;
  return options;
}

// Reads `file` with `reader`, under small limits (so that "oversized" inputs stay small) and
// strict (so that duplicates, merged with a note by default, are errors).
void read_with(const std::string& reader, const std::filesystem::path& file) {
  EdgeListOptions options = small_limits();
  options.read.strict = true;
  Notes notes;
  if (reader == "edge list") {
    NodeIndex nodes = NodeIndex::named(options.read.limits.max_nodes);
    (void)read_edge_list(file, nodes, options);
  } else if (reader == "edge list, numeric ids") {
    NodeIndex nodes = NodeIndex::numeric(-1, options.read.limits.max_nodes);
    (void)read_edge_list(file, nodes, options);
  } else if (reader == "features") {
    NodeIndex nodes = NodeIndex::named(options.read.limits.max_nodes);
    (void)read_features(file, nodes, options.read);
  } else if (reader == "labels") {
    (void)read_labels(file, fuzz::frozen_nodes(), options.read, notes);
  } else if (reader == "split") {
    (void)read_split(file, fuzz::frozen_nodes(), options.read, notes);
  } else if (reader == "GraphML") {
    NodeIndex nodes = NodeIndex::named(options.read.limits.max_nodes);
    (void)read_graphml(file, nodes, options);
  } else if (reader == "DOT") {
    NodeIndex nodes = NodeIndex::named(options.read.limits.max_nodes);
    (void)read_dot(file, nodes, options);
  } else if (reader == "Planetoid pickle") {
    const detail::Pickle pickle = detail::read_pickle(file, "planetoid", options.read.limits);
    (void)detail::decode_csr_matrix(pickle, options.read.limits);
  } else if (reader == "LINQS") {
    // Both files in one input, as for the LINQS fuzz target.
    std::ifstream in(file, std::ios::binary);
    const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    const auto [content, cites] = fuzz::linqs_parts(text);
    const auto dir = file.parent_path() / "linqs";
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "cora.content", std::ios::binary) << content;
    std::ofstream(dir / "cora.cites", std::ios::binary) << cites;
    DatasetOptions dataset;
    dataset.read = options.read;
    dataset.split_sizes = maskgat::RandomSplitSizes{1, 1, 1};
    (void)read_linqs(dir, "cora", dataset);
  } else if (reader == "checkpoint") {
    (void)train::load_model(train::load_checkpoint(file));
  } else {
    FAIL("unknown reader " << reader);
  }
}

std::vector<Case> cases() {
  const std::string pickle = seed("pickle/tiny.x");
  const std::string model = seed("checkpoint/small_gat.bin");
  // A pickle declaring a 2^31-byte string (BINSTRING) in a 20-byte file.
  const std::string huge_string(
      "\x80\x02T\xff\xff\xff\x7f"
      "abcdefghijkl.",
      20);
  std::string many_nodes;
  for (int i = 0; i < 1100; ++i) many_nodes += "n" + std::to_string(i) + " m\n";
  const std::string linqs_row = "p1\t0\t1\tA\n";
  const std::string graphml_head =
      "<?xml version=\"1.0\"?><graphml><key id=\"w\" for=\"edge\" attr.name=\"weight\" "
      "attr.type=\"double\"/><graph edgedefault=\"directed\"><node id=\"a\"/><node id=\"b\"/>";
  return {
      // edge list
      {"edge list", "empty", "", Kind::kParse, "no edges"},
      {"edge list", "truncated line", "a b\nc", Kind::kParse, ":2: expected 2 or 3 columns"},
      {"edge list", "binary garbage", kGarbage, Kind::kParse, ":1: a zero byte at column 1"},
      {"edge list", "oversized counts (more nodes than the limit)", many_nodes, Kind::kLimit,
       "--max-nodes"},
      {"edge list", "wrong types (weight)", "a b heavy\n", Kind::kParse, "weight"},
      {"edge list", "non-finite weight", "a b nan\n", Kind::kParse, "weight"},
      {"edge list", "duplicates (strict)", "a b\nb c\na b\n", Kind::kParse, "duplicate"},
      {"edge list, numeric ids", "unknown id (negative)", "0 -4\n", Kind::kParse, "-4"},
      {"edge list, numeric ids", "oversized id", "0 99999999999\n", Kind::kLimit, "--max-nodes"},
      {"edge list", "encoding oddities (UTF-16)",
       std::string("\xff\xfe"
                   "a\0 \0b\0\n\0",
                   10),
       Kind::kParse, ":1: the file is UTF-16 little-endian text (byte-order mark FF FE)"},
      // features
      {"features", "empty", "", Kind::kParse, "header"},
      {"features", "truncated row", "node,x,y\na,1\n", Kind::kParse, "columns"},
      {"features", "binary garbage", kGarbage, Kind::kParse, "a zero byte"},
      {"features", "oversized width", "node," + repeat("f,", 150) + "g\n", Kind::kLimit,
       "--max-features"},
      {"features", "wrong types", "node,x\na,one\n", Kind::kParse, "one"},
      {"features", "non-finite numbers", "node,x,y\na,1,inf\n", Kind::kParse,
       "feature 'inf' of node 'a' (column 3) is not finite"},
      {"features", "duplicates", "node,x\na,1\na,2\n", Kind::kParse, "has a second row"},
      {"features", "encoding oddities (lone CR line ends)", "node,x\ra,1\r", Kind::kParse,
       "a carriage return at column 7 inside the line"},
      // labels
      {"labels", "truncated line", "0 ml\n1\n", Kind::kParse, ":2: expected 2 columns"},
      {"labels", "binary garbage", kGarbage, Kind::kParse, "a zero byte"},
      {"labels", "unknown ids", "zz ml\n", Kind::kParse, "node 'zz', which is not in the graph"},
      {"labels", "duplicates (conflicting)", "0 ml\n0 db\n", Kind::kParse,
       "node '0' has label 'db' here but 'ml' on line 1"},
      // split
      {"split", "truncated line", "0 train\n1\n", Kind::kParse, ":2: expected 2 columns"},
      {"split", "wrong types (part)", "0 holdout\n", Kind::kParse,
       "unknown split part 'holdout': expected train, val or test"},
      {"split", "unknown ids", "zz train\n", Kind::kParse, "node 'zz' is not in the graph"},
      {"split", "duplicates (two parts)", "0 train\n0 test\n", Kind::kParse,
       "node '0' is in 'test' here but in 'train' on line 1"},
      // GraphML
      {"GraphML", "empty", "", Kind::kParse, "no <graph> element inside <graphml>"},
      {"GraphML", "truncated",
       "<?xml version=\"1.0\"?><graphml><graph edgedefault=\"directed\"><node", Kind::kParse,
       ":1: the tag <node> is not closed by '>'"},
      {"GraphML", "binary garbage", kGarbage, Kind::kParse, ":1: a zero byte at column 1"},
      {"GraphML", "deep nesting",
       "<graphml>" + repeat("<a>", 100) + repeat("</a>", 100) + "</graphml>", Kind::kLimit,
       "--max-nesting-depth"},
      {"GraphML", "entity expansion (billion laughs)",
       "<!DOCTYPE graphml [<!ENTITY a \"aaaaaaaaaa\"><!ENTITY b \"" + repeat("&a;", 10) +
           "\"><!ENTITY c \"" + repeat("&b;", 10) + "\">]><graphml>&c;</graphml>",
       Kind::kParse,
       "the DOCTYPE declares the entity 'a': entities are neither expanded nor fetched"},
      {"GraphML", "non-finite weight",
       graphml_head +
           "<edge source=\"a\" target=\"b\"><data key=\"w\">nan</data></edge></graph></graphml>",
       Kind::kParse, "weight 'nan' is not finite"},
      {"GraphML", "unknown ids (edge to an undeclared node)",
       graphml_head +
           "<edge source=\"a\" target=\"zz\"><data key=\"w\">1</data></edge></graph></graphml>",
       Kind::kParse, "1 edge end(s) name a node no <node> element declares (2 declared)"},
      // DOT
      {"DOT", "empty", "", Kind::kParse, "no graph: expected 'graph' or 'digraph'"},
      {"DOT", "truncated", "digraph g { a -> ", Kind::kParse,
       "unexpected end of file: '{' opened at line 1 is not closed"},
      {"DOT", "binary garbage", kGarbage, Kind::kParse, ":1: a zero byte at column 1"},
      {"DOT", "deep nesting", "digraph { " + repeat("subgraph { ", 100) + repeat("} ", 100) + "}",
       Kind::kLimit, "--max-nesting-depth"},
      {"DOT", "non-finite weight", "digraph { a -> b [weight=nan] }", Kind::kParse,
       "edge 'a' -> 'b': weight 'nan' is not finite"},
      // Planetoid pickle
      {"Planetoid pickle", "empty", "", Kind::kParse,
       "empty file: expected a protocol-2 or -3 pickle"},
      {"Planetoid pickle", "truncated", pickle.substr(0, pickle.size() / 2), Kind::kParse,
       "truncated"},
      {"Planetoid pickle", "binary garbage", kGarbage, Kind::kParse,
       "not a protocol-2 or -3 pickle"},
      {"Planetoid pickle", "oversized counts", huge_string, Kind::kParse,
       "BINSTRING at byte 2 declares 2147483647 bytes, but only 13 remain"},
      {"Planetoid pickle", "deep nesting", "\x80\x02" + repeat("(", 100000) + ".", Kind::kLimit,
       "nests deeper than 64 (raise it with --max-nesting-depth)"},
      {"Planetoid pickle", "wrong types (an int, not a matrix)", std::string("\x80\x02K\x05.", 5),
       Kind::kParse, "expected a scipy.sparse.csr.csr_matrix, got an int"},
      // LINQS
      {"LINQS", "empty", "", Kind::kParse, "no papers: the file is empty"},
      {"LINQS", "truncated row", "p1\t0\t1\tA\np2\t0\n", Kind::kParse,
       "cora.content:2: expected 4 fields (paper id, 2 features, label), got 2"},
      {"LINQS", "non-finite numbers", "p1\t0\tnan\tA\n", Kind::kParse,
       "feature column 1 is 'nan', expected a finite number"},
      {"LINQS", "duplicates", linqs_row + linqs_row, Kind::kParse,
       "paper 'p1' is listed twice (first on line 1)"},
      {"LINQS", "wrong field count in the citations", linqs_row + std::string(1, '\0') + "p1\n",
       Kind::kParse, "cora.cites:1: expected 2 fields (cited paper, citing paper), got 1"},
      {"LINQS", "unknown ids (a citation of a paper not in the content file)",
       linqs_row + std::string(1, '\0') + "p1\tghost\n", Kind::kParse, "ghost"},
      // checkpoint
      {"checkpoint", "empty", "", Kind::kParse, "not a MaskGAT checkpoint"},
      {"checkpoint", "truncated", model.substr(0, model.size() - 9), Kind::kParse, "truncated"},
      {"checkpoint", "binary garbage", kGarbage, Kind::kParse, "not a MaskGAT checkpoint"},
      {"checkpoint", "another format version", with_byte(model, 8, 12), Kind::kParse,
       "format version 12"},
      {"checkpoint", "oversized counts (payload size)", with_byte(model, 19, '\x7f'), Kind::kParse,
       "truncated: the header announces"},
      {"checkpoint", "corrupt payload", with_byte(model, 40, static_cast<char>(model[40] ^ 1)),
       Kind::kParse, "checksum mismatch"},
  };
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("hostile inputs: every reader answers each with its pinned error") {
    for (const Case& c : cases()) {
      SUBCASE((std::string(c.reader) + ": " + c.name).c_str()) {
        const auto file = maskgat::test::write_file("hostile", "input", c.input);
        std::string message = "(no error)";
        bool right_kind = false;
        try {
          read_with(c.reader, file);
        } catch (const LimitError& error) {
          message = error.what();
          right_kind = c.kind == Kind::kLimit;
        } catch (const ParseError& error) {
          message = error.what();
          right_kind = c.kind == Kind::kParse;
        } catch (const InvalidArgument& error) {
          message = error.what();
          right_kind = c.kind == Kind::kInvalid;
        }
        INFO(c.reader << ": " << c.name << ": " << message);
        CHECK(right_kind);
        CHECK(message.find(c.message) != std::string::npos);
        MESSAGE("ROW|" << std::string(c.reader) << "|" << std::string(c.name) << "|" << message);
      }
    }
  }
}
