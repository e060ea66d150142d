// What the graph readers hold in memory per byte of input, at the peak of a read: the bounds the
// README states (Reliability), for the input shapes that cost each reader the most. A reader's
// memory grows with what it keeps (nodes, edges, and for GraphML and DOT the file), never with
// what an input merely claims or repeats; the limits bound nodes, edges and bytes, so they bound
// memory. The costliest inputs are the shortest declarations of nodes (about 160 bytes each:
// the name index and the graph's offsets), of edges (about 70 bytes each at the peak of
// building the graph's two CSR orders) and, in pickles, of values (about 48 bytes each).

#include <doctest/doctest.h>

#include <cstddef>
#include <functional>
#include <string>

#include "io/detail/pickle.hpp"
#include "maskgat/io/dot.hpp"
#include "maskgat/io/edge_list.hpp"
#include "maskgat/io/features.hpp"
#include "maskgat/io/graphml.hpp"
#include "maskgat/io/labels.hpp"
#include "memory/allocation_counter.hpp"
#include "support/paths.hpp"

namespace {

// Any input of a text or graph reader: the bound the README states.
constexpr double kAnyInput = 32.0;
// Any pickle: each opcode of one or two bytes may create a value (40 bytes) and an item.
constexpr double kPickle = 64.0;
// Input a reader skips (comments, elements it does not read) costs the file itself at most.
constexpr double kSkipped = 1.5;

using maskgat::EdgeListOptions;
using maskgat::LoadedGraph;
using maskgat::NodeIndex;

using Reader =
    std::function<LoadedGraph(const std::filesystem::path&, NodeIndex&, const EdgeListOptions&)>;

// The peak heap bytes of `read(path)` for a file `name` holding `text`, per byte of `text`.
double peak_per_byte(const std::string& name, const std::string& text,
                     const std::function<void(const std::filesystem::path&)>& read) {
  const auto path = maskgat::test::write_file("reader-memory", name, text);
  const std::size_t before = maskgat::test::allocated_bytes();
  maskgat::test::reset_peak();
  read(path);
  const double peak = static_cast<double>(maskgat::test::peak_bytes() - before);
  MESSAGE(name << ": " << text.size() << " bytes, peak " << peak << " bytes, "
               << peak / static_cast<double>(text.size()) << " per input byte");
  return peak / static_cast<double>(text.size());
}

// The same for a graph reader.
double peak_per_byte(const Reader& read, const std::string& name, const std::string& text) {
  return peak_per_byte(name, text, [&](const std::filesystem::path& path) {
    NodeIndex nodes = NodeIndex::named(100'000'000);
    const LoadedGraph loaded = read(path, nodes, {});
    CHECK(loaded.graph.num_nodes() > 0);
  });
}

// `count` copies of `make(i)`.
std::string repeated(int count, const std::function<std::string(int)>& make) {
  std::string text;
  for (int i = 0; i < count; ++i) text += make(i);
  return text;
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("GraphML: memory per input byte stays within the stated bounds") {
    const std::string head = "<graphml><graph edgedefault=\"directed\"><node id=\"a\"/>";
    const std::string tail = "</graph></graphml>\n";
    // Elements the reader does not read cost nothing beyond the file itself.
    CHECK(peak_per_byte(maskgat::read_graphml, "empty.graphml",
                        head + repeated(1'000'000, [](int) { return "<a/>"; }) + tail) < kSkipped);
    CHECK(peak_per_byte(
              maskgat::read_graphml, "nodes.graphml",
              "<graphml><graph edgedefault=\"directed\">" +
                  repeated(250'000,
                           [](int i) { return "<node id=\"" + std::to_string(i) + "\"/>"; }) +
                  "<edge source=\"0\" target=\"1\"/>" + tail) < kAnyInput);
    CHECK(peak_per_byte(maskgat::read_graphml, "edges.graphml",
                        head + "<node id=\"b\"/>" + repeated(200'000, [](int) {
                          return "<edge source=\"a\" target=\"b\"/>";
                        }) + tail) < kAnyInput);
  }

  TEST_CASE("DOT: memory per input byte stays within the stated bounds") {
    CHECK(peak_per_byte(maskgat::read_dot, "comments.dot",
                        "digraph { a -> b\n" + repeated(200'000, [](int) {
                          return "// comment\n";
                        }) + "}\n") < kSkipped);
    CHECK(peak_per_byte(maskgat::read_dot, "nodes.dot", "digraph {" + repeated(300'000, [](int i) {
                                                          return std::to_string(i) + ";";
                                                        }) + "}\n") < kAnyInput);
    CHECK(peak_per_byte(maskgat::read_dot, "edges.dot", "digraph {" + repeated(500'000, [](int) {
                                                          return "a->b;";
                                                        }) + "}\n") < kAnyInput);
  }

  TEST_CASE("edge lists: memory per input byte stays within the stated bounds") {
    CHECK(peak_per_byte(maskgat::read_edge_list, "comments.txt",
                        "a b\n" + repeated(200'000, [](int) { return "# comment\n"; })) < kSkipped);
    CHECK(peak_per_byte(maskgat::read_edge_list, "nodes.txt", repeated(250'000, [](int i) {
                          return std::to_string(i) + " " + std::to_string(i + 1) + "\n";
                        })) < kAnyInput);
    CHECK(peak_per_byte(maskgat::read_edge_list, "edges.txt",
                        repeated(500'000, [](int) { return "a b\n"; })) < kAnyInput);
  }

  TEST_CASE("features, labels, pickles: memory per input byte stays within the stated bounds") {
    // One node per row: the shortest rows make the node index the costliest part.
    CHECK(peak_per_byte(
              "features.csv",
              "node,x\n" + repeated(250'000, [](int i) { return std::to_string(i) + ",1\n"; }),
              [](const std::filesystem::path& path) {
                NodeIndex nodes = NodeIndex::named(100'000'000);
                CHECK(maskgat::read_features(path, nodes, {}).matrix.rows() == 250'000);
              }) < kAnyInput);
    CHECK(peak_per_byte(
              "labels.txt",
              repeated(
                  250'000,
                  [](int i) { return std::to_string(i) + " c" + std::to_string(i % 100) + "\n"; }),
              [](const std::filesystem::path& path) {
                NodeIndex nodes = NodeIndex::named(100'000'000);
                maskgat::NodeIndex::Status status{};
                for (int i = 0; i < 250'000; ++i) (void)nodes.insert(std::to_string(i), status);
                nodes.freeze();
                maskgat::Notes notes;
                CHECK(maskgat::read_labels(path, nodes, {}, notes).class_names.size() == 100);
              }) < kAnyInput);
    // A list of empty lists: two one-byte opcodes per value (EMPTY_LIST, APPEND).
    CHECK(peak_per_byte("lists.pkl",
                        "\x80\x02]" + repeated(500'000, [](int) { return "]a"; }) + ".",
                        [](const std::filesystem::path& path) {
                          (void)maskgat::detail::read_pickle(path, "planetoid", {});
                        }) < kPickle);
  }
}
