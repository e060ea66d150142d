#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "maskgat/core/error.hpp"
#include "maskgat/io/linqs.hpp"
#include "support/paths.hpp"

namespace {

using maskgat::DatasetOptions;
using maskgat::read_linqs;
using maskgat::test::write_file;

// Four papers (one with a non-numeric id, one line with CRLF and spaces) and citations with a
// reverse pair, a duplicate, a self-loop and one unknown paper.
constexpr const char* kContent =
    "p1\t0\t1\t0\tB\n"
    "p2\t1\t1\t0\tA\r\n"
    "\n"
    "x-3\t0\t0\t0.5\tB\n"
    "p4 1  0 0 A\n";
constexpr const char* kCites =
    "p1\tp2\n"
    "p2\tp1\n"
    "p1\tp2\n"
    "x-3\tx-3\n"
    "p4\tghost\n"
    "p4\tx-3\n";

std::filesystem::path write_pair(const std::string& tag, const std::string& content,
                                 const std::string& cites) {
  const auto content_path = write_file(tag, "cora.content", content);
  write_file(tag, "cora.cites", cites);
  return content_path.parent_path();
}

DatasetOptions small_split() {
  DatasetOptions options;
  options.split_sizes = maskgat::RandomSplitSizes{1, 1, 1};
  options.normalize_features = maskgat::FeatureNormalization::kNone;  // the files' values
  return options;
}

std::vector<maskgat::NodeId> span_vector(std::span<const maskgat::NodeId> values) {
  return {values.begin(), values.end()};
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("LINQS reader: nodes - features - labels - graph and notes") {
    const auto dir = write_pair("linqs-good", kContent, kCites);
    const auto data = read_linqs(dir, "cora", small_split());

    CHECK(data.name == "cora");
    CHECK(data.preparation.undirected);  // symmetrised
    CHECK(data.preparation.random_split);
    CHECK(data.node_names == std::vector<std::string>{"p1", "p2", "x-3", "p4"});
    CHECK(data.feature_names.empty());
    CHECK(data.class_names == std::vector<std::string>{"A", "B"});
    CHECK(data.labels == std::vector<std::int32_t>{1, 0, 1, 0});

    REQUIRE(data.features.is_sparse());
    const auto& x = data.features.sparse();
    CHECK(x.rows() == 4);
    CHECK(x.cols() == 3);
    CHECK(data.features.nonzeros() == 5);
    CHECK(x.coeff(0, 1) == 1.0F);
    CHECK(x.coeff(1, 0) == 1.0F);
    CHECK(x.coeff(2, 2) == 0.5F);
    CHECK(x.coeff(3, 0) == 1.0F);
    CHECK(x.coeff(3, 1) == 0.0F);

    // citing -> cited, symmetrised, the self-loop and the duplicate gone.
    const auto& g = data.graph;
    CHECK(g.num_nodes() == 4);
    CHECK(g.num_edges() == 4);
    CHECK(g.num_self_loops() == 0);
    CHECK(span_vector(g.in_neighbors(0)) == std::vector<maskgat::NodeId>{1});
    CHECK(span_vector(g.in_neighbors(1)) == std::vector<maskgat::NodeId>{0});
    CHECK(span_vector(g.in_neighbors(2)) == std::vector<maskgat::NodeId>{3});
    CHECK(span_vector(g.in_neighbors(3)) == std::vector<maskgat::NodeId>{2});

    const std::string cites = (dir / "cora.cites").string();
    REQUIRE(data.notes.size() >= 3);
    CHECK(data.notes[0] ==
          "linqs: " + cites + ": 1 citation(s) of papers not in cora.content dropped");
    CHECK(data.notes[1] == "linqs: " + cites + ": 1 duplicate citation(s) merged");
    CHECK(data.notes[2] == "linqs: " + cites + ": 1 self-loop(s) removed");
    CHECK(data.split.size() == 4);
  }

  TEST_CASE("LINQS reader: normalised features sum to one per row") {
    const auto dir = write_pair("linqs-normalize", kContent, kCites);
    auto options = small_split();
    options.normalize_features = maskgat::FeatureNormalization::kRows;
    const auto data = read_linqs(dir, "cora", options);
    CHECK(data.features.sparse().coeff(1, 0) == doctest::Approx(0.5));
    CHECK(data.features.sparse().coeff(2, 2) == doctest::Approx(1.0));
  }

  TEST_CASE("LINQS reader: strict turns an unknown cited paper into an error") {
    const auto dir = write_pair("linqs-strict", kContent, kCites);
    auto options = small_split();
    options.read.strict = true;
    const std::string cites = (dir / "cora.cites").string();
    CHECK_THROWS_WITH_AS(read_linqs(dir, "cora", options),
                         ("linqs: " + cites +
                          ":5: citation of unknown paper 'ghost': it is not in cora.content "
                          "(--strict)")
                             .c_str(),
                         maskgat::ParseError);
  }

  TEST_CASE("LINQS reader: a ragged row is an error") {
    const auto dir = write_pair("linqs-ragged", "a 0 1 X\nb 1 X\n", "a b\n");
    const std::string content = (dir / "cora.content").string();
    CHECK_THROWS_WITH_AS(
        read_linqs(dir, "cora", small_split()),
        ("linqs: " + content + ":2: expected 4 fields (paper id, 2 features, label), got 3")
            .c_str(),
        maskgat::ParseError);
  }

  TEST_CASE("LINQS reader: a row without features is an error") {
    const auto dir = write_pair("linqs-narrow", "a X\n", "a a\n");
    const std::string content = (dir / "cora.content").string();
    CHECK_THROWS_WITH_AS(
        read_linqs(dir, "cora", small_split()),
        ("linqs: " + content + ":1: expected at least 3 fields (paper id, features, label), got 2")
            .c_str(),
        maskgat::ParseError);
  }

  TEST_CASE("LINQS reader: a non-numeric or non-finite feature is an error") {
    const auto dir = write_pair("linqs-nan", "a 0 1 X\nb 1 yes X\nc inf 0 X\n", "a b\n");
    const std::string content = (dir / "cora.content").string();
    CHECK_THROWS_WITH_AS(
        read_linqs(dir, "cora", small_split()),
        ("linqs: " + content + ":2: paper 'b': feature column 1 is 'yes', expected a finite number")
            .c_str(),
        maskgat::ParseError);

    const auto inf_dir = write_pair("linqs-inf", "a 0 1 X\nc inf 0 X\n", "a c\n");
    CHECK_THROWS_WITH_AS(read_linqs(inf_dir, "cora", small_split()),
                         ("linqs: " + (inf_dir / "cora.content").string() +
                          ":2: paper 'c': feature column 0 is 'inf', expected a finite number")
                             .c_str(),
                         maskgat::ParseError);
  }

  TEST_CASE("LINQS reader: a paper listed twice is an error") {
    const auto dir = write_pair("linqs-twice", "a 0 1 X\nb 1 0 Y\na 0 1 X\n", "a b\n");
    const std::string content = (dir / "cora.content").string();
    CHECK_THROWS_WITH_AS(
        read_linqs(dir, "cora", small_split()),
        ("linqs: " + content + ":3: paper 'a' is listed twice (first on line 1)").c_str(),
        maskgat::ParseError);
  }

  TEST_CASE("LINQS reader: citations need exactly two fields") {
    const auto dir = write_pair("linqs-cites", "a 0 1 X\nb 1 0 Y\n", "a b\nb a extra\n");
    const std::string cites = (dir / "cora.cites").string();
    CHECK_THROWS_WITH_AS(
        read_linqs(dir, "cora", small_split()),
        ("linqs: " + cites + ":2: expected 2 fields (cited paper, citing paper), got 3").c_str(),
        maskgat::ParseError);
  }

  TEST_CASE("LINQS reader: an empty content file is an error") {
    const auto dir = write_pair("linqs-empty", "\n\n", "");
    const std::string content = (dir / "cora.content").string();
    CHECK_THROWS_WITH_AS(read_linqs(dir, "cora", small_split()),
                         ("linqs: " + content + ": no papers: the file is empty").c_str(),
                         maskgat::ParseError);
  }

  TEST_CASE("LINQS reader: the feature limit is checked before reading rows") {
    const auto dir = write_pair("linqs-limit", "a 0 1 0 X\n", "a a\n");
    auto options = small_split();
    options.read.limits.max_features = 2;
    const std::string content = (dir / "cora.content").string();
    CHECK_THROWS_WITH_AS(read_linqs(dir, "cora", options),
                         ("linqs: " + content +
                          ":1: 3 features: over the feature limit of 2 (raise it with "
                          "--max-features)")
                             .c_str(),
                         maskgat::LimitError);
  }

  TEST_CASE("LINQS reader: the node limit is checked") {
    const auto dir = write_pair("linqs-nodes", "a 0 1 X\nb 1 0 Y\nc 1 1 Y\n", "a b\n");
    auto options = small_split();
    options.read.limits.max_nodes = 2;
    CHECK_THROWS_AS(read_linqs(dir, "cora", options), maskgat::LimitError);
  }

  TEST_CASE("LINQS reader: unknown dataset name and missing files") {
    CHECK_THROWS_WITH_AS(read_linqs("nowhere", "pubmed", DatasetOptions{}),
                         "linqs: unknown dataset 'pubmed': expected cora or citeseer",
                         maskgat::InvalidArgument);

    const auto root = maskgat::test::scratch_dir("linqs-missing");
    const auto dir = root / "linqs" / "citeseer";
    const std::string path = (dir / "citeseer.content").string();
    CHECK_THROWS_WITH_AS(read_linqs(dir, "citeseer", DatasetOptions{}),
                         ("linqs: cannot open '" + path +
                          "': No such file or directory (fetch it with: datasets/fetch.sh --dest " +
                          root.string() + " citeseer (installed: maskgat-fetch))")
                             .c_str(),
                         maskgat::IoError);
  }
}
