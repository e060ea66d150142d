// The TU graph-classification collections (`$MASKGAT_DATA_DIR/tu`, fetched by datasets/fetch.sh):
// graphs, nodes, edges, feature and edge-feature widths and classes pinned against PyG's
// TUDataset (node attributes used) and the files.

#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include "maskgat/io/tu.hpp"
#include "support/paths.hpp"

namespace {

struct Expected {
  const char* name;
  std::int64_t graphs;
  std::int64_t nodes;
  std::int64_t edges;
  std::int64_t features;
  std::int64_t edge_features;
  std::int64_t classes;
};

}  // namespace

TEST_SUITE("integration") {
  TEST_CASE("tu: MUTAG, PROTEINS and ENZYMES read with PyG's counts") {
    for (const Expected& e : {Expected{"MUTAG", 188, 3371, 7442, 7, 4, 2},
                              Expected{"PROTEINS", 1113, 43471, 162088, 4, 0, 2},
                              Expected{"ENZYMES", 600, 19580, 74564, 21, 0, 6}}) {
      CAPTURE(e.name);
      const maskgat::GraphCollection c =
          maskgat::read_tu(maskgat::test::data_dir() / "tu" / (std::string(e.name) + ".zip"), {});
      CHECK(c.name == e.name);
      CHECK(c.num_graphs() == e.graphs);
      CHECK(c.graph.num_nodes() == e.nodes);
      CHECK(c.graph.num_edges() == e.edges);
      CHECK(c.features.rows() == e.nodes);
      CHECK(c.features.cols() == e.features);
      CHECK(c.edge_features.rows() == e.edges);
      CHECK(c.edge_features.cols() == e.edge_features);
      CHECK(static_cast<std::int64_t>(c.class_names.size()) == e.classes);
      CHECK(c.offsets.front() == 0);
      CHECK(c.offsets.back() == e.nodes);
      CHECK(c.notes.empty());
    }
  }

  TEST_CASE("tu: MUTAG's classes are its labels in numeric order, its bonds one-hot") {
    const maskgat::GraphCollection c =
        maskgat::read_tu(maskgat::test::data_dir() / "tu" / "MUTAG.zip", {});
    CHECK(c.class_names == std::vector<std::string>{"-1", "1"});
    // The files' first graph has label 1 and 17 nodes; its first node's label is 0 (C).
    CHECK(c.labels.front() == 1);
    CHECK(c.offsets[1] == 17);
    CHECK(c.features(0, 0) == 1.0F);
    CHECK(c.features.row(0).sum() == 1.0F);
    for (Eigen::Index e = 0; e < c.edge_features.rows(); ++e) {
      REQUIRE(c.edge_features.row(e).sum() == 1.0F);
    }
  }
}
