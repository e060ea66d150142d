// The TU collection reader on hand-made collections, zipped (with the doubled slashes of the
// published copies) or in a folder: ids, offsets, classes, one-hot features, edge features,
// merged and dropped edges, and the exact message for each hostile file.

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "maskgat/core/error.hpp"
#include "maskgat/graph/masks.hpp"
#include "maskgat/io/tu.hpp"
#include "maskgat/nn/gat_conv.hpp"
#include "support/npz_writer.hpp"
#include "support/paths.hpp"

namespace {

using maskgat::GraphCollection;
using maskgat::test::Members;

// Three graphs: {1, 2, 3} a path 1-2-3, {4, 5} one edge, {6} alone; labels 2, -1, 2.
Members collection() {
  return {{"T//T_A.txt", "1, 2\n2, 1\n2, 3\n3, 2\n4, 5\n5, 4\n"},
          {"T//T_graph_indicator.txt", "1\n1\n1\n2\n2\n3\n"},
          {"T//T_graph_labels.txt", "2\n-1\n2\n"},
          {"T//T_node_labels.txt", "1\n3\n1\n2\n2\n1\n"},
          {"T//T_node_attributes.txt", "0.5, 1\n1.5, 2\n2.5, 3\n3.5, 4\n4.5, 5\n5.5, 6\n"},
          {"T//T_edge_labels.txt", "0\n0\n1\n1\n0\n0\n"}};
}

Members with(Members members, const std::string& name, const std::string& content) {
  for (auto& [member, text] : members) {
    if (member == name) {
      text = content;
      return members;
    }
  }
  members.emplace_back(name, content);
  return members;
}

Members without(Members members, const std::string& name) {
  std::erase_if(members, [&](const auto& m) { return m.first == name; });
  return members;
}

GraphCollection read(const Members& members, const maskgat::ReadOptions& options = {}) {
  return maskgat::read_tu(
      maskgat::test::write_file("tu", "T.zip", maskgat::test::zip_bytes(members, true)), options);
}

std::string error_of(const Members& members) {
  const std::string path =
      maskgat::test::write_file("tu", "T.zip", maskgat::test::zip_bytes(members, false)).string();
  try {
    static_cast<void>(maskgat::read_tu(path, {}));
  } catch (const maskgat::Error& error) {
    std::string text = error.what();
    for (std::size_t at; (at = text.find(path)) != std::string::npos;) {
      text.replace(at, path.size(), "F");
    }
    return text;
  }
  return "no error";
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("tu: a collection reads with its offsets, classes, features and edge features") {
    const GraphCollection c = read(collection());
    CHECK(c.name == "T");
    CHECK(c.num_graphs() == 3);
    CHECK(c.offsets == std::vector<std::int64_t>{0, 3, 5, 6});
    CHECK(c.class_names == std::vector<std::string>{"-1", "2"});
    CHECK(c.labels == std::vector<std::int32_t>{1, 0, 1});
    CHECK(c.graph.num_nodes() == 6);
    CHECK(c.graph.num_edges() == 6);
    // Node labels 1..3 one-hot (3 columns), then the two attributes.
    REQUIRE(c.features.cols() == 5);
    CHECK(c.features.row(1) == (maskgat::RowMatrix<float>(1, 5) << 0, 0, 1, 1.5F, 2).finished());
    // Edge labels 0..1 one-hot, on the graph's edges: 2 -> 3 has label 1.
    REQUIRE(c.edge_features.cols() == 2);
    const auto sources = c.graph.in_sources();
    const auto targets = c.graph.edge_destinations();
    for (std::size_t e = 0; e < sources.size(); ++e) {
      const bool path_end =
          (sources[e] == 1 && targets[e] == 2) || (sources[e] == 2 && targets[e] == 1);
      CHECK(c.edge_features(static_cast<Eigen::Index>(e), path_end ? 1 : 0) == 1.0F);
    }
    CHECK(c.notes.empty());
  }

  TEST_CASE("tu: a folder reads as the zip; loops dropped and duplicates merged with notes") {
    const auto dir = maskgat::test::scratch_dir("tu_folder");
    for (const auto& [name, text] :
         with(collection(), "T//T_A.txt", "1, 2\n2, 1\n1, 2\n2, 3\n3, 2\n4, 5\n5, 4\n6, 6\n")) {
      maskgat::test::write_file("tu_folder", name.substr(3), text);
    }
    maskgat::test::write_file("tu_folder", "T_edge_labels.txt", "0\n0\n0\n1\n1\n0\n0\n1\n");
    const GraphCollection c = maskgat::read_tu(dir, {});
    CHECK(c.graph.num_edges() == 6);
    CHECK(c.notes ==
          maskgat::Notes{
              "T_A.txt: 1 self-loop(s) dropped, as PyG does (attention layers add their own)",
              "T_A.txt: 1 duplicate edge(s) merged, the first kept"});
  }

  TEST_CASE("tu: without node labels or attributes the features are the one-hot in-degree") {
    const GraphCollection c =
        read(without(without(collection(), "T//T_node_labels.txt"), "T//T_node_attributes.txt"));
    // In-degrees 1, 2, 1, 1, 1, 0: columns 0..2.
    REQUIRE(c.features.cols() == 3);
    CHECK(c.features(1, 2) == 1.0F);
    CHECK(c.features(5, 0) == 1.0F);
    CHECK(
        c.notes ==
        maskgat::Notes{
            "T: no node labels or attributes: the features are the one-hot in-degree (3 columns)"});
  }

  TEST_CASE("tu: hostile collections are refused with the file and line") {
    CHECK(error_of(with(collection(), "T//T_A.txt", "1, 2\n2, 7\n")) ==
          "tu: F: member 'T/T_A.txt':2: node 7 is outside the 6 nodes of the graph indicator (ids "
          "1 to 6)");
    CHECK(error_of(with(collection(), "T//T_A.txt", "1, 2\n3, 4\n")) ==
          "tu: F: member 'T/T_A.txt':2: the edge 3 -> 4 joins graph 1 to graph 2");
    CHECK(error_of(with(collection(), "T//T_graph_indicator.txt", "1\n1\n2\n1\n2\n3\n")) ==
          "tu: F: member 'T/T_graph_indicator.txt':4: graph id 1 after 2: the ids must not "
          "decrease (a graph's nodes are contiguous)");
    CHECK(error_of(with(collection(), "T//T_graph_indicator.txt", "1\n1\n1\n3\n3\n4\n")) ==
          "tu: F: member 'T/T_graph_indicator.txt':4: graph id 3 after 1: graph 2 has no nodes");
    CHECK(error_of(with(collection(), "T//T_graph_indicator.txt", "2\n2\n2\n3\n3\n4\n")) ==
          "tu: F: member 'T/T_graph_indicator.txt':1: the first graph id is 2, expected 1");
    CHECK(error_of(with(collection(), "T//T_graph_labels.txt", "2\n-1\n")) ==
          "tu: F: member 'T/T_graph_labels.txt': 2 rows, expected one for each of the 3 graphs");
    CHECK(error_of(with(collection(), "T//T_graph_labels.txt", "2\n-1\n1\n1\n")) ==
          "tu: F: member 'T/T_graph_labels.txt':4: more rows than the 3 graphs");
    CHECK(error_of(with(collection(), "T//T_node_labels.txt", "1\n2\n")) ==
          "tu: F: member 'T/T_node_labels.txt': 2 rows, expected one for each of the 6 nodes");
    CHECK(error_of(with(collection(), "T//T_edge_labels.txt", "0\n")) ==
          "tu: F: member 'T/T_edge_labels.txt': 1 rows, expected one for each of the 6 edges of "
          "_A.txt");
    CHECK(error_of(with(collection(), "T//T_node_attributes.txt", "1\n1\n1\n1\n1\nx\n")) ==
          "tu: F: member 'T/T_node_attributes.txt':6: attribute 'x' is not a finite number");
    CHECK(error_of(with(collection(), "T//T_A.txt", "1 2 3\n")) ==
          "tu: F: member 'T/T_A.txt':1: expected 2 fields (row, col), got 3");
    CHECK(error_of(without(collection(), "T//T_graph_labels.txt")) ==
          "tu: F: no T/T_graph_labels.txt: a TU collection needs it");
    CHECK(error_of(without(collection(), "T//T_A.txt")) ==
          "tu: F: no <NAME>_A.txt: not a TU collection");
    CHECK(error_of(with(collection(), "U/U_A.txt", "1, 1\n")) ==
          "tu: F: two collections: 'T/T_A.txt' and 'U/U_A.txt'");
    CHECK(error_of(with(collection(), "../T_x.txt", "1\n")) ==
          "tu: F: member name '../T_x.txt' is not a relative path of named folders (it holds a '.' "
          "or '..' part)");
    CHECK(error_of(with(collection(), "/etc/T_x.txt", "1\n")) ==
          "tu: F: member name '/etc/T_x.txt' is an absolute path");
  }

  TEST_CASE("tu: a batch of graphs is their block-diagonal graph, with their rows only") {
    const GraphCollection c = read(collection());
    const std::vector<std::int64_t> ids{2, 0};
    const maskgat::GraphBatch batch = maskgat::make_batch(c, ids);
    CHECK(batch.offsets == std::vector<std::int64_t>{0, 1, 4});
    CHECK(batch.labels == std::vector<std::int32_t>{1, 1});
    CHECK(batch.graphs == ids);
    CHECK(batch.graph.num_nodes() == 4);
    CHECK(batch.graph.num_edges() == 4);  // graph 2 has no edge, graph 0 four
    CHECK(batch.features.row(0) == c.features.row(5));
    CHECK(batch.features.row(3) == c.features.row(2));
    CHECK(batch.edge_features.rows() == 4);
    const std::vector<std::int64_t> outside{3};
    CHECK_THROWS_WITH_AS(static_cast<void>(maskgat::make_batch(c, outside)),
                         "make_batch: graph 3 is outside [0, 3)", maskgat::IndexError);
  }

  TEST_CASE("tu: an attention layer gives each graph of a batch what it gives the graph alone") {
    const GraphCollection c = read(collection());
    maskgat::nn::ParameterStore<float> store;
    maskgat::Rng rng(5);
    maskgat::nn::GatConvOptions options;
    options.in_features = c.features.cols();
    options.out_features = 3;
    options.heads = 2;
    const maskgat::nn::GatConv conv(store, "conv", options, rng);
    const auto run = [&](const std::vector<std::int64_t>& ids) {
      const maskgat::GraphBatch batch = maskgat::make_batch(c, ids);
      maskgat::nn::GatConv::Cache cache;
      maskgat::RowMatrix<float> out;
      conv.forward(maskgat::masks::from_graph(batch.graph), batch.features,
                   maskgat::nn::Mode::kEval, rng, cache, out);
      return out;
    };
    const maskgat::RowMatrix<float> all = run({0, 1, 2});
    const maskgat::RowMatrix<float> permuted = run({2, 0, 1});
    for (std::int64_t g = 0; g < 3; ++g) {
      const maskgat::RowMatrix<float> alone = run({g});
      const auto rows = static_cast<Eigen::Index>(c.offsets[g + 1] - c.offsets[g]);
      CHECK((all.middleRows(c.offsets[g], rows) - alone).cwiseAbs().maxCoeff() <= 1e-6F);
    }
    // The permutation {2, 0, 1} moves graph 2's row first and the others after it, unchanged.
    CHECK((permuted.topRows(1) - all.bottomRows(1)).cwiseAbs().maxCoeff() <= 1e-6F);
    CHECK((permuted.bottomRows(5) - all.topRows(5)).cwiseAbs().maxCoeff() <= 1e-6F);
  }
}
