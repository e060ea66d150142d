#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "maskgat/core/error.hpp"
#include "maskgat/io/features.hpp"
#include "support/paths.hpp"

using maskgat::NodeIndex;

namespace {

constexpr std::int64_t kMaxNodes = 1000;

maskgat::FeatureTable load(const std::string& content, NodeIndex& nodes,
                           const maskgat::ReadOptions& options = {}) {
  const auto path = maskgat::test::write_file("features", "f.csv", content);
  return maskgat::read_features(path, nodes, options);
}

maskgat::FeatureTable load(const std::string& content) {
  NodeIndex nodes = NodeIndex::named(kMaxNodes);
  return load(content, nodes);
}

std::string where() {
  return "features: " + (maskgat::test::scratch_dir("features") / "f.csv").string();
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("features: CSV defines the nodes in file order and freezes the index") {
    NodeIndex nodes = NodeIndex::named(kMaxNodes);
    const auto table = load("node,w1,w2,w3\nb,1,0,2\na,0,0.5,0\n", nodes);
    CHECK(nodes.frozen());
    CHECK(nodes.names() == std::vector<std::string>{"b", "a"});
    CHECK(table.column_names == std::vector<std::string>{"w1", "w2", "w3"});
    REQUIRE(table.matrix.rows() == 2);
    REQUIRE(table.matrix.cols() == 3);
    CHECK(table.matrix.nonzeros() == 3);
    CHECK_FALSE(table.matrix.is_sparse());  // 50% dense
    CHECK(table.matrix.dense()(0, 2) == 2.0F);
    CHECK(table.matrix.dense()(1, 1) == 0.5F);
  }

  TEST_CASE("features: TSV with CRLF and BOM - sparse storage for sparse data") {
    std::string content = "\xEF\xBB\xBFnode\tf0\tf1\tf2\tf3\tf4\tf5\tf6\tf7\tf8\tf9\r\n";
    for (int r = 0; r < 5; ++r) {
      content += "n" + std::to_string(r);
      for (int c = 0; c < 10; ++c) content += c == r ? "\t1" : "\t0";
      content += "\r\n";
    }
    const auto table = load(content);
    CHECK(table.matrix.is_sparse());
    CHECK(table.matrix.nonzeros() == 5);
    CHECK(table.matrix.density() == doctest::Approx(0.1));
    CHECK(table.matrix.sparse().coeff(3, 3) == 1.0F);
  }

  TEST_CASE("features: numeric ids place rows at their ids") {
    NodeIndex nodes = NodeIndex::numeric(-1, kMaxNodes);
    const auto table = load("node,a\n2,3\n0,1\n1,2\n", nodes);
    CHECK(nodes.size() == 3);
    CHECK(table.matrix.dense()(0, 0) == 1.0F);
    CHECK(table.matrix.dense()(2, 0) == 3.0F);
    NodeIndex gaps = NodeIndex::numeric(-1, kMaxNodes);
    CHECK_THROWS_WITH_AS(load("node,a\n2,3\n0,1\n", gaps),
                         (where() + ": node id 1 has no row: with --numeric-ids the rows must "
                                    "cover every id from 0 to 2").c_str(),
                         maskgat::ParseError);
  }

  TEST_CASE("FeatureMatrix::select_rows gathers rows in the given order, sparse or dense") {
    maskgat::DenseFeatures dense(3, 2);
    dense << 1, 0, 0, 2, 3, 4;
    maskgat::SparseFeatures sparse = dense.sparseView();
    const std::vector<maskgat::NodeId> rows{2, 0, 2};
    for (const maskgat::FeatureMatrix& matrix :
         {maskgat::FeatureMatrix(dense), maskgat::FeatureMatrix(sparse)}) {
      const maskgat::FeatureMatrix selected = matrix.select_rows(rows);
      CHECK(selected.is_sparse() == matrix.is_sparse());
      REQUIRE(selected.rows() == 3);
      REQUIRE(selected.cols() == 2);
      maskgat::DenseFeatures expected(3, 2);
      expected << 3, 4, 1, 0, 3, 4;
      const maskgat::DenseFeatures got =
          selected.is_sparse() ? maskgat::DenseFeatures(selected.sparse()) : selected.dense();
      CHECK(got == expected);
      if (selected.is_sparse()) CHECK(selected.nonzeros() == 5);
      CHECK(matrix.select_rows({}).rows() == 0);
      const std::vector<maskgat::NodeId> outside{1, 3};
      CHECK_THROWS_WITH_AS(matrix.select_rows(outside), "select_rows: row 3 is outside [0, 3)",
                           maskgat::InvalidArgument);
    }
  }

  TEST_CASE("features: row normalisation divides by the row sum") {
    auto table = load("node,a,b\nx,1,3\ny,0,0\n");
    table.matrix.normalize_rows();
    CHECK(table.matrix.dense()(0, 0) == 0.25F);
    CHECK(table.matrix.dense()(0, 1) == 0.75F);
    CHECK(table.matrix.dense()(1, 1) == 0.0F);
  }

  TEST_CASE(
      "features: a row whose float sum would overflow is normalised exactly, dense or sparse") {
    maskgat::DenseFeatures rows(3, 3);
    rows << 0, 3e38F, 3e38F,    // sums past float's range
        1, 2, 1,                // an ordinary row
        3e38F, -3e38F, 1e-38F;  // cancels to 1e-38: divided, past float's range
    for (const bool sparse : {false, true}) {
      CAPTURE(sparse);
      maskgat::DenseFeatures first = rows.topRows(2);
      maskgat::FeatureMatrix matrix =
          sparse ? maskgat::FeatureMatrix(maskgat::SparseFeatures(first.sparseView()))
                 : maskgat::FeatureMatrix(first);
      matrix.normalize_rows();
      const maskgat::DenseFeatures got =
          sparse ? maskgat::DenseFeatures(matrix.sparse()) : matrix.dense();
      CHECK(got(0, 0) == 0.0F);
      CHECK(got(0, 1) == 0.5F);
      CHECK(got(0, 2) == 0.5F);
      CHECK(got(1, 1) == 0.5F);
      maskgat::FeatureMatrix cancelling =
          sparse ? maskgat::FeatureMatrix(maskgat::SparseFeatures(rows.sparseView()))
                 : maskgat::FeatureMatrix(rows);
      CHECK_THROWS_WITH_AS(cancelling.normalize_rows(),
                           doctest::Contains("normalize_rows: row 2 sums to 1e-38: its entry 3e+38 "
                                             "divided by that is 3e+76, outside float's range"),
                           maskgat::InvalidArgument);
    }
  }

  TEST_CASE("features: malformed input gives pinned messages") {
    CHECK_THROWS_WITH_AS(load("node,a,b\nx,1\n"),
                         (where() + ":2: row has 2 columns, expected 3 (node + 2 features, as in "
                                    "the header)").c_str(),
                         maskgat::ParseError);
    CHECK_THROWS_WITH_AS(load("node,a,b\nx,1,big\n"),
                         (where() + ":2: feature 'big' of node 'x' (column 3) is not a number").c_str(),
                         maskgat::ParseError);
    CHECK_THROWS_WITH_AS(load("node,a,b\nx,NaN,1\n"),
                         (where() + ":2: feature 'NaN' of node 'x' (column 2) is not finite").c_str(),
                         maskgat::ParseError);
    CHECK_THROWS_WITH_AS(load("node,a,b\nx,1,inf\n"),
                         (where() + ":2: feature 'inf' of node 'x' (column 3) is not finite").c_str(),
                         maskgat::ParseError);
    CHECK_THROWS_WITH_AS(load("x,1,2\ny,3,4\n"),
                         (where() + ":1: the first line looks like data: expected a header row "
                                    "'node,<feature names...>'").c_str(),
                         maskgat::ParseError);
    CHECK_THROWS_WITH_AS(load("node\nx\n"),
                         (where() + ":1: header 'node' has no feature columns: expected "
                                    "'node,<feature names...>' (comma- or tab-separated)").c_str(),
                         maskgat::ParseError);
    CHECK_THROWS_WITH_AS(load(""),
                         (where() + ": empty file: expected a header row 'node,<feature "
                                    "names...>'").c_str(),
                         maskgat::ParseError);
    CHECK_THROWS_WITH_AS(load("node,a\nx,1\ny,2\nx,3\n"),
                         (where() + ":4: node 'x' has a second row (the first is on line 2)").c_str(),
                         maskgat::ParseError);
    NodeIndex nodes = NodeIndex::named(kMaxNodes);
    maskgat::ReadOptions narrow;
    narrow.limits.max_features = 2;
    CHECK_THROWS_WITH_AS(load("node,a,b,c\n", nodes, narrow),
                         (where() + ":1: 3 feature columns, over the limit of 2 (raise it with "
                                    "--max-features)").c_str(),
                         maskgat::LimitError);
  }
}
