#include <doctest/doctest.h>

#include <cmath>
#include <string>
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

  TEST_CASE("ROC AUC: Mann-Whitney with midranks, tied pairs counting one half") {
    // scikit-learn's example: of the 4 (positive, negative) pairs, 3 are ordered right.
    CHECK(train::roc_auc(std::vector<double>{0.1, 0.4, 0.35, 0.8},
                         std::vector<std::int32_t>{0, 0, 1, 1}) == 0.75);
    // Pairs: 2 vs 1 right, 2 vs 2 tied (1/2), 3 vs 1 and 3 vs 2 right: 3.5 of 4.
    CHECK(train::roc_auc(std::vector<double>{1, 2, 2, 3}, std::vector<std::int32_t>{0, 0, 1, 1}) ==
          0.875);
    // A run of three equal scores over both classes: 0.5 beats 0.2 and ties twice (2 of 3), 0.9
    // beats all three: 5 of 6.
    CHECK(train::roc_auc(std::vector<double>{0.5, 0.5, 0.5, 0.2, 0.9},
                         std::vector<std::int32_t>{1, 0, 0, 0, 1}) == doctest::Approx(5.0 / 6.0));
    const std::vector<std::int32_t> labels{1, 0, 1, 0, 0};
    CHECK(train::roc_auc(std::vector<double>(5, 0.25), labels) == 0.5);
    CHECK(train::roc_auc(std::vector<double>{0.9, 0.1, 0.8, 0.2, 0.3}, labels) == 1.0);
    CHECK(train::roc_auc(std::vector<double>{0.1, 0.9, 0.2, 0.8, 0.3}, labels) == 0.0);
  }

  TEST_CASE("ROC AUC of a two-class model's logits at some nodes") {
    maskgat::RowMatrix<float> logits(5, 2);
    // Class-1 scores (column 1 minus column 0): 1, -2, 0.5, 3, 0.5.
    logits << 0.0F, 1.0F, 2.0F, 0.0F, 0.0F, 0.5F, -1.0F, 2.0F, 1.0F, 1.5F;
    const std::vector<std::int32_t> labels{1, 0, 0, 1, 1};
    // Nodes 1, 2, 4: the positive (0.5) ties the negative 0.5 and beats -2: 1.5 of 2.
    CHECK(train::roc_auc(logits, labels, std::vector<NodeId>{1, 2, 4}) == 0.75);
    // All nodes: of the 6 pairs only the positive 0.5 against the negative 0.5 ties.
    CHECK(train::roc_auc(logits, labels, std::vector<NodeId>{0, 1, 2, 3, 4}) ==
          doctest::Approx(5.5 / 6.0));
    CHECK_THROWS_WITH_AS(
        static_cast<void>(train::roc_auc(logits, labels, std::vector<NodeId>{0, 3})),
        "roc_auc: the nodes are all of class 1 (2 nodes); ROC AUC needs nodes "
        "of both classes",
        maskgat::InvalidArgument);
    const maskgat::RowMatrix<float> three = maskgat::RowMatrix<float>::Zero(5, 3);
    CHECK_THROWS_WITH_AS(
        static_cast<void>(train::roc_auc(three, labels, std::vector<NodeId>{0, 1})),
        "roc_auc: the scores have 3 columns, expected 2 (ROC AUC is for two-class tasks)",
        maskgat::InvalidArgument);
  }

  TEST_CASE("ROC AUC refuses one class, other labels, NaN and mismatched sizes") {
    CHECK_THROWS_WITH_AS(static_cast<void>(train::roc_auc(std::vector<double>{0.2, 0.4},
                                                          std::vector<std::int32_t>{0, 0})),
                         "roc_auc: the entries are all of class 0 (2 nodes); ROC AUC needs nodes "
                         "of both classes",
                         maskgat::InvalidArgument);
    CHECK_THROWS_WITH_AS(static_cast<void>(train::roc_auc(std::vector<double>{0.2, 0.4},
                                                          std::vector<std::int32_t>{0, 2})),
                         "roc_auc: node 1 of the entries has label 2, expected 0 or 1 (ROC AUC "
                         "is for two-class tasks)",
                         maskgat::InvalidArgument);
    CHECK_THROWS_WITH_AS(static_cast<void>(train::roc_auc(std::vector<double>{0.2, std::nan("")},
                                                          std::vector<std::int32_t>{0, 1})),
                         "roc_auc: score 1 is nan, expected a finite number",
                         maskgat::InvalidArgument);
    CHECK_THROWS_WITH_AS(static_cast<void>(train::roc_auc(std::vector<double>{0.2},
                                                          std::vector<std::int32_t>{0, 1})),
                         "roc_auc: 1 scores for 2 labels, expected one per label",
                         maskgat::InvalidArgument);
    CHECK(train::parse_metric("roc-auc") == train::Metric::kRocAuc);
    CHECK(std::string(train::metric_name(train::Metric::kAccuracy)) == "accuracy");
    CHECK_THROWS_WITH_AS(static_cast<void>(train::parse_metric("auc")),
                         "unknown metric 'auc': expected accuracy or roc-auc",
                         maskgat::InvalidArgument);
  }

  TEST_CASE("average precision by thresholds, ties entering together, as scikit-learn") {
    const std::vector<double> scores{0.9, 0.8, 0.7, 0.6};
    const std::vector<std::int32_t> labels{1, 0, 1, 0};
    CHECK(train::average_precision(scores, labels) == doctest::Approx(0.5 + 0.5 * 2.0 / 3.0));
    // The tied pair enters at once: precision 1/2 at recall 1/2, then 2/3 at recall 1.
    const std::vector<double> tied{0.5, 0.5, 0.2};
    const std::vector<std::int32_t> tied_labels{1, 0, 1};
    CHECK(train::average_precision(tied, tied_labels) ==
          doctest::Approx(0.5 * 0.5 + 0.5 * 2.0 / 3.0));
    const std::vector<std::int32_t> one_class{1, 1, 1, 1};
    CHECK_THROWS_AS(static_cast<void>(train::average_precision(scores, one_class)),
                    maskgat::InvalidArgument);
  }

  TEST_CASE("Hits@K: positives strictly above the K-th negative, as OGB") {
    const std::vector<double> positives{0.9, 0.5, 0.3};
    const std::vector<double> negatives{0.8, 0.6, 0.4, 0.1};
    CHECK(train::hits_at_k(positives, negatives, 2) == doctest::Approx(1.0 / 3.0));
    CHECK(train::hits_at_k(positives, negatives, 3) == doctest::Approx(2.0 / 3.0));
    const std::vector<double> at_kth{0.6};
    CHECK(train::hits_at_k(at_kth, negatives, 2) == 0.0);
    CHECK(train::hits_at_k(positives, negatives, 5) == 1.0);  // fewer negatives than K
    CHECK_THROWS_WITH_AS(static_cast<void>(train::hits_at_k(positives, negatives, 0)),
                         "hits_at_k: K is 0, expected a positive count", maskgat::InvalidArgument);
  }

  TEST_CASE("predict_classes takes the largest score and the lowest index on ties") {
    maskgat::RowMatrix<float> scores(3, 3);
    scores << 0.1F, 0.7F, 0.2F, 0.5F, 0.5F, 0.0F, -1.0F, -2.0F, -0.5F;
    CHECK(train::predict_classes(scores) == std::vector<std::int32_t>{1, 0, 2});
  }
}
