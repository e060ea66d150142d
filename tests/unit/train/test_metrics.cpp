#include <doctest/doctest.h>

#include <vector>

#include "maskgat/core/error.hpp"
#include "maskgat/train/metrics.hpp"

namespace train = maskgat::train;
using maskgat::NodeId;

TEST_SUITE("unit") {
  TEST_CASE("confusion matrix, accuracy and macro-F1") {
    //                         node: 0  1  2  3  4  5
    const std::vector<std::int32_t> labels{0, 0, 1, 1, 2, 2};
    const std::vector<std::int32_t> predicted{0, 1, 1, 1, 0, 0};
    const std::vector<NodeId> nodes{0, 1, 2, 3, 4, 5};
    const train::ConfusionMatrix confusion(3, labels, predicted, nodes);
    CHECK(confusion.count(0, 0) == 1);
    CHECK(confusion.count(0, 1) == 1);
    CHECK(confusion.count(2, 0) == 2);
    CHECK(confusion.total() == 6);
    CHECK(confusion.accuracy() == doctest::Approx(0.5));
    // F1 = 2 TP / (true + predicted): class 0 2/5, class 1 4/5, class 2 0.
    CHECK(confusion.macro_f1() == doctest::Approx((0.4 + 0.8 + 0.0) / 3.0));
    const std::vector<NodeId> some{2, 3};
    CHECK(train::ConfusionMatrix(3, labels, predicted, some).accuracy() == 1.0);
    const std::vector<NodeId> outside{9};
    CHECK_THROWS_WITH_AS(train::ConfusionMatrix(3, labels, predicted, outside),
                         "confusion matrix: node 9 has no label or prediction",
                         maskgat::InvalidArgument);
  }

  TEST_CASE("predict_classes takes the largest score and the lowest index on ties") {
    maskgat::RowMatrix<float> scores(3, 3);
    scores << 0.1F, 0.7F, 0.2F, 0.5F, 0.5F, 0.0F, -1.0F, -2.0F, -0.5F;
    CHECK(train::predict_classes(scores) == std::vector<std::int32_t>{1, 0, 2});
  }
}
