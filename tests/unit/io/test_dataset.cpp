#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "maskgat/core/error.hpp"
#include "maskgat/graph/build.hpp"
#include "maskgat/io/dataset.hpp"
#include "support/paths.hpp"

using maskgat::test::fixture;

namespace {

maskgat::FileSources small_files() {
  maskgat::FileSources files;
  files.graph = fixture("small/edges.txt");
  files.features = fixture("small/features.csv");
  files.labels = fixture("small/labels.txt");
  files.split = fixture("small/split.txt");
  return files;
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("load_files: features define nodes - labels and split attach to them") {
    const auto dataset = maskgat::load_files(small_files(), {});
    CHECK(dataset.graph.num_nodes() == 6);
    CHECK(dataset.graph.num_edges() == 5);
    CHECK(dataset.node_names.front() == "paper_a");
    CHECK(dataset.features.cols() == 4);
    CHECK(dataset.missing_features.empty());
    CHECK(dataset.class_names == std::vector<std::string>{"db", "ir", "ml"});
    CHECK(dataset.labels == std::vector<std::int32_t>{2, 2, 0, 0, 1, -1});
    CHECK(dataset.nodes_in(maskgat::SplitPart::kTrain) == std::vector<maskgat::NodeId>{0, 2, 4});
    REQUIRE(dataset.notes.size() == 2);
    CHECK(dataset.notes[0] == "edge_list: " + fixture("small/edges.txt").string() +
                                  ": 1 duplicate edge(s) merged, the first weight kept");
    // paper_d cites paper_a and is cited by none: read as given, it attends only to itself.
    CHECK(
        dataset.notes[1].starts_with("1 of 6 nodes have out-edges but no in-edge other than "
                                     "their self-loop"));
    CHECK(dataset.preparation.rows_normalized);
    CHECK(dataset.preparation.random_split == false);
  }

  TEST_CASE("direction_notes: nodes without in-edges, and edge lists (nearly) symmetric") {
    const auto graph = [](std::vector<maskgat::NodeId> sources,
                          std::vector<maskgat::NodeId> targets, std::int64_t nodes) {
      return maskgat::build_graph(nodes, {std::move(sources), std::move(targets), {}}).graph;
    };
    // A star pointing out of node 0: 4 of 5 nodes have in-edges, node 0 has none.
    const auto star = maskgat::direction_notes(graph({0, 0, 0, 0}, {1, 2, 3, 4}, 5));
    REQUIRE(star.size() == 1);
    CHECK(
        star[0].starts_with("1 of 5 nodes have out-edges but no in-edge other than their "
                            "self-loop"));
    // A cycle reaches every node.
    CHECK(maskgat::direction_notes(graph({0, 1, 2}, {1, 2, 0}, 3)).empty());
    const auto both = maskgat::direction_notes(graph({0, 1, 1, 2, 0, 2}, {1, 0, 2, 1, 2, 0}, 3));
    REQUIRE(both.size() == 1);
    CHECK(both[0] == "every edge has its reverse: the edge list is undirected as given");
    // 10 of 11 edges reciprocated (a cycle both ways, and 0 -> 2); a self-loop is no edge here.
    const auto nearly = maskgat::direction_notes(
        graph({0, 1, 1, 2, 2, 3, 3, 4, 4, 0, 0, 0}, {1, 0, 2, 1, 3, 2, 4, 3, 0, 4, 2, 0}, 5));
    REQUIRE(nearly.size() == 1);
    CHECK(nearly[0] ==
          "90.9 % of the edges have their reverse: the edge list looks undirected "
          "with 1 reverse edge(s) missing; --undirected adds them");
  }

  TEST_CASE("load_files: a graph read both ways is recorded so, and gets no direction notes") {
    maskgat::FileSources files;
    files.graph = fixture("graphml/undirected.graphml");
    const auto declared = maskgat::load_files(files, {});
    CHECK(declared.preparation.undirected);
    files = small_files();
    files.undirected = true;
    const auto reversed = maskgat::load_files(files, {});
    CHECK(reversed.preparation.undirected);
    CHECK(reversed.notes.size() == 1);  // the merged duplicate only
  }

  TEST_CASE("normalize_features: rows by default when none is negative, else as stored") {
    maskgat::Dataset data;
    maskgat::DenseFeatures x(2, 2);
    x << 1.0F, 3.0F, 2.0F, 2.0F;
    data.features = maskgat::FeatureMatrix(x);
    maskgat::normalize_features(data, maskgat::FeatureNormalization::kAuto);
    CHECK(data.features.dense()(0, 1) == 0.75F);
    CHECK(data.preparation.rows_normalized);
    CHECK(data.notes.empty());
    x(1, 0) = -2.0F;
    data.features = maskgat::FeatureMatrix(x);
    maskgat::normalize_features(data, maskgat::FeatureNormalization::kAuto);
    CHECK(data.features.dense()(0, 1) == 3.0F);
    CHECK_FALSE(data.preparation.rows_normalized);
    REQUIRE(data.notes.size() == 1);
    CHECK(data.notes[0] == "features have negative entries, so rows are not normalised");
    maskgat::normalize_features(data, maskgat::FeatureNormalization::kNone);
    CHECK(data.features.dense()(0, 1) == 3.0F);
    maskgat::normalize_features(data, maskgat::FeatureNormalization::kRows);
    CHECK(data.features.dense()(0, 1) == 0.75F);
    CHECK(data.preparation.rows_normalized);
  }

  TEST_CASE("normalize_features option: a bool still sets it, true as kRows, false as kNone") {
    // Row 0 of the small fixture's features is 1,0,0,1.
    const auto first_row_sum = [](const maskgat::Dataset& dataset) {
      const maskgat::InputRef<float> values = dataset.features.view();
      return values.is_sparse() ? values.sparse().row(0).sum() : values.dense().row(0).sum();
    };
    maskgat::DatasetOptions options;
    CHECK(options.normalize_features == maskgat::FeatureNormalization::kAuto);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    options.normalize_features = true;  // as programs written when the option was a bool
    CHECK(options.normalize_features == maskgat::FeatureNormalization::kRows);
    const maskgat::Dataset rows = maskgat::load_files(small_files(), options);
    options.normalize_features = false;
    CHECK(options.normalize_features == maskgat::FeatureNormalization::kNone);
    const maskgat::Dataset stored = maskgat::load_files(small_files(), options);
#pragma GCC diagnostic pop
    CHECK(rows.preparation.rows_normalized);
    CHECK(first_row_sum(rows) == 1.0F);
    CHECK_FALSE(stored.preparation.rows_normalized);
    CHECK(first_row_sum(stored) == 2.0F);

    // The enum's spelling, unchanged: assigned, compared, read back.
    maskgat::DatasetOptions other;
    other.normalize_features = maskgat::FeatureNormalization::kNone;
    CHECK(other.normalize_features == options.normalize_features);
    const maskgat::FeatureNormalization rule = other.normalize_features;
    CHECK(rule == maskgat::FeatureNormalization::kNone);
  }

  TEST_CASE("keep_largest_component keeps one component's nodes, rows, names and split") {
    // Components {0, 1, 2} and {3, 4}: the first is kept.
    maskgat::EdgeList edges;
    edges.sources = {0, 1, 1, 2, 3, 4};
    edges.targets = {1, 0, 2, 1, 4, 3};
    maskgat::Dataset data;
    data.graph = maskgat::build_graph(5, edges).graph;
    maskgat::DenseFeatures x(5, 2);
    x << 0, 1, 2, 3, 4, 5, 6, 7, 8, 9;
    data.features = maskgat::FeatureMatrix(x);
    data.labels = {0, 1, 0, 1, -1};
    data.class_names = {"a", "b"};
    data.node_names = {"n0", "n1", "n2", "n3", "n4"};
    using maskgat::SplitPart;
    data.split = {SplitPart::kTrain, SplitPart::kVal, SplitPart::kTest, SplitPart::kTrain,
                  SplitPart::kNone};
    maskgat::Dataset fixed = data;
    maskgat::keep_largest_component(fixed);
    CHECK(fixed.graph.num_nodes() == 3);
    CHECK(fixed.graph.num_edges() == 4);
    CHECK(fixed.node_names == std::vector<std::string>{"n0", "n1", "n2"});
    CHECK(fixed.labels == std::vector<std::int32_t>{0, 1, 0});
    CHECK(fixed.split ==
          std::vector<SplitPart>{SplitPart::kTrain, SplitPart::kVal, SplitPart::kTest});
    CHECK(fixed.features.dense()(2, 1) == 5.0F);
    CHECK(fixed.preparation.largest_component);
    CHECK(fixed.notes.back() == "largest component: 3 of 5 nodes kept (2 components)");

    // A random split is drawn again on the kept nodes, with its sizes and seed.
    maskgat::draw_split(data, maskgat::RandomSplitSizes{1, 1, 1}, 4);
    maskgat::keep_largest_component(data);
    CHECK(data.preparation.random_split);
    CHECK(data.preparation.split_seed == 4);
    REQUIRE(data.split.size() == 3);
    CHECK(std::count(data.split.begin(), data.split.end(), SplitPart::kTrain) == 2);
  }

  TEST_CASE("compute_statistics counts what info prints") {
    auto files = small_files();
    files.undirected = true;
    const auto stats = maskgat::compute_statistics(maskgat::load_files(files, {}));
    CHECK(stats.nodes == 6);
    CHECK(stats.self_loops == 1);
    CHECK(stats.edges == 8);           // a-b, b-c, c-a, d-a in both directions
    CHECK(stats.isolated_nodes == 2);  // paper_e (only a self-loop) and paper_f
    CHECK(stats.components == 3);
    CHECK(stats.in_degree.min == 0);
    CHECK(stats.in_degree.max == 3);
    CHECK(stats.in_degree.median == 1);  // lower median of 0 0 1 2 2 3
    CHECK(stats.features == 4);
    CHECK(stats.feature_density == doctest::Approx(9.0 / 24.0));
    CHECK(stats.class_counts == std::vector<std::int64_t>{2, 1, 2});
    CHECK(stats.unlabelled == 1);
    CHECK(stats.train == 3);
    CHECK(stats.val == 1);
    CHECK(stats.test == 1);
  }

  TEST_CASE("load_files: without features nodes come from the graph - random split") {
    auto files = small_files();
    files.features.clear();
    files.split.clear();
    maskgat::DatasetOptions options;
    options.split_sizes = maskgat::RandomSplitSizes{1, 1, 1};
    const auto dataset = maskgat::load_files(files, options);
    CHECK(dataset.graph.num_nodes() == 5);
    CHECK(dataset.features.rows() == 5);
    CHECK(dataset.features.cols() == 0);
    CHECK_FALSE(dataset.missing_features.empty());
    CHECK(dataset.nodes_in(maskgat::SplitPart::kTrain).size() == 3);
    CHECK(dataset.nodes_in(maskgat::SplitPart::kVal).size() == 1);
    CHECK(dataset.nodes_in(maskgat::SplitPart::kTest).size() == 1);
  }

  TEST_CASE("load_files: an edge to a node without features is an error") {
    auto files = small_files();
    files.graph = maskgat::test::write_file("dataset", "edges.txt", "paper_a paper_z\n");
    CHECK_THROWS_WITH_AS(maskgat::load_files(files, {}),
                         ("edge_list: " + files.graph.string() +
                          ":1: unknown node 'paper_z': it has no row in the features file")
                             .c_str(),
                         maskgat::ParseError);
  }

  TEST_CASE("load_files: unknown format and unknown dataset names") {
    auto files = small_files();
    files.format = "csv";
    CHECK_THROWS_WITH_AS(maskgat::load_files(files, {}),
                         "unknown graph format 'csv': expected auto, edgelist, graphml or dot",
                         maskgat::InvalidArgument);
    CHECK_THROWS_WITH_AS(maskgat::load_dataset("corax", {}),
                         "unknown dataset 'corax': expected cora, citeseer, pubmed, "
                         "amazon-computers, amazon-photo, coauthor-cs, actor, chameleon-filtered, "
                         "squirrel-filtered, tolokers, cornell, texas, wisconsin or "
                         "synthetic:nodes=N,...",
                         maskgat::InvalidArgument);
    maskgat::DatasetOptions options;
    options.fixed_split = 2;
    CHECK_THROWS_WITH_AS(maskgat::load_files(small_files(), options),
                         "split index 2: edges.txt carries no fixed splits",
                         maskgat::InvalidArgument);
  }

  TEST_CASE("resolve_data_dir: flag - then environment - then fallback") {
    const char* original = std::getenv("MASKGAT_DATA_DIR");
    const std::string saved = original != nullptr ? original : "";
    CHECK(maskgat::resolve_data_dir(std::filesystem::path("flag"), "fallback") == "flag");
    ::setenv("MASKGAT_DATA_DIR", "from-env", 1);
    CHECK(maskgat::resolve_data_dir(std::nullopt, "fallback") == "from-env");
    ::setenv("MASKGAT_DATA_DIR", "", 1);
    CHECK(maskgat::resolve_data_dir(std::nullopt, "fallback") == "fallback");
    if (original != nullptr) {
      ::setenv("MASKGAT_DATA_DIR", saved.c_str(), 1);
    } else {
      ::unsetenv("MASKGAT_DATA_DIR");
    }
  }
}
