#include <doctest/doctest.h>
#include <tbb/global_control.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "maskgat/core/error.hpp"
#include "maskgat/graph/masks.hpp"
#include "maskgat/io/synthetic.hpp"
#include "maskgat/train/checkpoint.hpp"
#include "maskgat/train/trainer.hpp"
#include "support/random_data.hpp"
#include "support/trainer_values.hpp"

namespace train = maskgat::train;
using maskgat::test::parameter_values;

namespace {

maskgat::Dataset small_synthetic() { return maskgat::test::synthetic_dataset(600, 6.0, 16, 4, 3); }

train::TrainOptions quick_options(std::int64_t epochs = 60, std::int64_t patience = 10) {
  train::TrainOptions options;
  options.epochs = epochs;
  options.patience = patience;
  options.seed = 5;
  return options;
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE(
      "Trainer with ROC AUC: early stopping follows the validation AUC, the test AUC reported") {
    const maskgat::Dataset data = maskgat::test::synthetic_dataset(400, 5.0, 8, 2, 11);
    train::TrainOptions options = quick_options(40, 5);
    options.metric = train::Metric::kRocAuc;
    train::Trainer trainer(data, options);
    double best_score = 0.0;
    double best_loss = std::numeric_limits<double>::infinity();
    bool differs = false;
    const train::FitResult result = trainer.fit([&](const train::EpochStats& stats) {
      // The rule of early stopping, on the AUC: both at least as good takes the parameters.
      CHECK(stats.checkpoint == (stats.val_score >= best_score && stats.val_loss <= best_loss));
      best_score = std::max(best_score, stats.val_score);
      best_loss = std::min(best_loss, stats.val_loss);
      differs = differs || stats.val_score != stats.val_accuracy;
    });
    CHECK(differs);
    CHECK(result.val_score > 0.5);
    const train::SplitMetrics test = trainer.evaluate(maskgat::SplitPart::kTest);
    REQUIRE(test.roc_auc);
    CHECK(result.test_score == *test.roc_auc);
    CHECK(result.test_accuracy == test.accuracy);
    const std::vector<maskgat::NodeId> val = data.nodes_in(maskgat::SplitPart::kVal);
    CHECK(result.val_score ==
          doctest::Approx(train::roc_auc(trainer.logits(), data.labels, val)).epsilon(1e-5));
    const train::Checkpoint saved = trainer.checkpoint();
    CHECK(saved.options.metric == train::Metric::kRocAuc);
    CHECK(saved.state.best_val_score == result.val_score);
  }

  TEST_CASE("Trainer with ROC AUC refuses a task of more than two classes and a one-class set") {
    train::TrainOptions options = quick_options();
    options.metric = train::Metric::kRocAuc;
    const maskgat::Dataset four = small_synthetic();
    CHECK_THROWS_WITH_AS(
        train::Trainer(four, options),
        ("train: ROC AUC is for two-class tasks, " + four.name + " has 4 classes").c_str(),
        maskgat::InvalidArgument);
    maskgat::Dataset one = maskgat::test::synthetic_dataset(200, 5.0, 8, 2, 11);
    for (const maskgat::NodeId node : one.nodes_in(maskgat::SplitPart::kVal)) {
      one.labels[static_cast<std::size_t>(node)] = 1;
    }
    CHECK_THROWS_WITH_AS(train::Trainer(one, options),
                         doctest::Contains("roc_auc: the validation nodes are all of class 1 ("),
                         maskgat::InvalidArgument);
  }

  TEST_CASE("Trainer learns a homophilous synthetic graph and is reproducible across threads") {
    const maskgat::Dataset data = small_synthetic();
    const auto run = [&](std::size_t threads) {
      const tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
      train::Trainer trainer(data, quick_options());
      const train::FitResult result = trainer.fit();
      return std::make_pair(result, parameter_values(trainer));
    };
    const auto [result, parameters] = run(2);
    CHECK(result.test_accuracy > 0.6);  // chance is 0.25
    const auto [again, again_parameters] = run(2);
    const auto [single, single_parameters] = run(1);
    CHECK(again.test_accuracy == result.test_accuracy);
    CHECK(again.best_epoch == result.best_epoch);
    CHECK(again_parameters == parameters);
    CHECK(single.test_accuracy == result.test_accuracy);
    CHECK(single_parameters == parameters);
  }

  TEST_CASE("Trainer steps on the receptive field follow the whole graph's trajectory") {
    // 20 training nodes per class among 3000 of in-degree 3: their 2-hop field is a fraction of
    // the graph. Without dropout a step's gradients are the same function of the parameters on
    // either graph, so both runs take the same path up to the order of floating-point sums.
    const maskgat::Dataset data = maskgat::test::synthetic_dataset(3000, 3.0, 16, 4, 4);
    const auto run = [&](bool field, double dropout, std::int64_t layers) {
      auto options = quick_options(30, 0);
      options.model.layers = layers;
      options.model.dropout = dropout;
      options.model.attention_dropout = dropout;
      options.receptive_field = field;
      train::Trainer trainer(data, options);
      trainer.fit();
      return std::make_pair(trainer.step_mask().num_edges(), parameter_values(trainer));
    };
    for (const std::int64_t layers : {1, 2, 3}) {
      INFO("layers ", layers);
      const auto [field_edges, field] = run(true, 0.0, layers);
      const auto [whole_edges, whole] = run(false, 0.0, layers);
      CHECK(whole_edges == maskgat::masks::from_graph(data.graph, true).num_edges());
      CHECK(2 * field_edges <= whole_edges);
      REQUIRE(field.size() == whole.size());
      float largest = 0.0F;
      for (std::size_t k = 0; k < field.size(); ++k) {
        largest = std::max(largest, std::abs(field[k] - whole[k]) / (1.0F + std::abs(whole[k])));
      }
      CHECK(largest < 1e-4F);
    }
    // With dropout the field's draws are its own: a different sample of the same training.
    CHECK(run(true, 0.6, 2).second != run(false, 0.6, 2).second);
    // A run on the field resumed from a checkpoint ends where an uninterrupted one does.
    auto options = quick_options(30, 0);
    train::Trainer uninterrupted(data, options);
    uninterrupted.fit();
    options.epochs = 12;
    train::Trainer first(data, options);
    first.fit();
    train::Trainer resumed(data, first.checkpoint(), 30);
    CHECK(resumed.step_mask().num_edges() < resumed.mask().num_edges());
    resumed.fit();
    CHECK(parameter_values(resumed) == parameter_values(uninterrupted));
  }

  TEST_CASE("validation on the validation nodes' field reports the whole graph's numbers") {
    // 500 validation nodes among 10,000 of in-degree 3: their 2-hop field is a fraction of the
    // graph, so while steps run on the training nodes' field, validation runs on this one.
    const maskgat::Dataset data = maskgat::test::synthetic_dataset(10000, 3.0, 16, 4, 4);
    const maskgat::Graph mask = maskgat::masks::from_graph(data.graph, true);
    const std::vector<maskgat::NodeId> val_nodes = data.nodes_in(maskgat::SplitPart::kVal);
    REQUIRE(2 * maskgat::masks::receptive_subgraph(mask, val_nodes, 2).masks.front().num_edges() <=
            mask.num_edges());
    train::Trainer trainer(data, quick_options(6, 0));
    std::vector<train::EpochStats> epochs;
    trainer.fit([&](const train::EpochStats& stats) { epochs.push_back(stats); });
    REQUIRE(epochs.size() == 6);
    CHECK(trainer.step_mask().num_edges() < mask.num_edges());
    // The last epoch's parameters are kept (patience 0); evaluate() runs on the whole graph. The
    // same sums up to their order: equal to float rounding.
    const train::SplitMetrics whole = trainer.evaluate(maskgat::SplitPart::kVal);
    CHECK(whole.accuracy == epochs.back().val_accuracy);
    CHECK(whole.loss == doctest::Approx(epochs.back().val_loss).epsilon(1e-6));
    CHECK(epochs.front().val_loss != epochs.back().val_loss);
  }

  TEST_CASE("Trainer early stopping follows the reference rule") {
    const maskgat::Dataset data = small_synthetic();
    const auto options = quick_options(400, 5);
    train::Trainer trainer(data, options);
    std::vector<train::EpochStats> epochs;
    const train::FitResult result =
        trainer.fit([&](const train::EpochStats& stats) { epochs.push_back(stats); });
    // Replay the rule on the reported validation numbers.
    double best_accuracy = 0.0;
    double best_loss = std::numeric_limits<double>::infinity();
    std::int64_t waiting = 0;
    std::int64_t best_epoch = 0;
    for (const auto& stats : epochs) {
      const bool improved = stats.val_accuracy >= best_accuracy || stats.val_loss <= best_loss;
      const bool checkpoint = stats.val_accuracy >= best_accuracy && stats.val_loss <= best_loss;
      CHECK(stats.improved == improved);
      CHECK(stats.checkpoint == checkpoint);
      if (checkpoint) best_epoch = stats.epoch;
      if (improved) {
        best_accuracy = std::max(best_accuracy, stats.val_accuracy);
        best_loss = std::min(best_loss, stats.val_loss);
        waiting = 0;
      } else {
        ++waiting;
      }
    }
    CHECK(waiting == options.patience);  // it stopped exactly when patience ran out
    CHECK(result.epochs == static_cast<std::int64_t>(epochs.size()));
    CHECK(result.epochs < options.epochs);
    CHECK(result.best_epoch == best_epoch);
    // The model holds the best epoch's parameters: evaluation reproduces its validation numbers.
    const train::SplitMetrics val = trainer.evaluate(maskgat::SplitPart::kVal);
    CHECK(val.accuracy == result.val_accuracy);
    CHECK(val.loss == doctest::Approx(result.val_loss).epsilon(1e-12));
  }

  TEST_CASE("Trainer early stopping by the metric alone keeps the first epoch of the best score") {
    const maskgat::Dataset data = small_synthetic();
    auto options = quick_options(400, 5);
    options.selection = train::Selection::kMetric;
    train::Trainer trainer(data, options);
    std::vector<train::EpochStats> epochs;
    const train::FitResult result =
        trainer.fit([&](const train::EpochStats& stats) { epochs.push_back(stats); });
    double best = 0.0;
    std::int64_t waiting = 0;
    std::int64_t best_epoch = 0;
    for (const auto& stats : epochs) {
      const bool improved = stats.val_score > best;
      CHECK(stats.improved == improved);
      CHECK(stats.checkpoint == improved);
      if (improved) {
        best = stats.val_score;
        best_epoch = stats.epoch;
        waiting = 0;
      } else {
        ++waiting;
      }
    }
    CHECK(waiting == options.patience);
    CHECK(result.best_epoch == best_epoch);
    CHECK(result.val_score == best);
    CHECK(trainer.evaluate(maskgat::SplitPart::kVal).accuracy == best);
  }

  TEST_CASE("Trainer with patience 0 trains exactly the given epochs and keeps the last") {
    const maskgat::Dataset data = small_synthetic();
    train::Trainer trainer(data, quick_options(7, 0));
    const train::FitResult result = trainer.fit();
    CHECK(result.epochs == 7);
    CHECK(result.best_epoch == 7);
    const auto probabilities = trainer.predict_probabilities();
    CHECK(probabilities.rows() == 600);
    CHECK((probabilities.rowwise().sum().array() - 1.0F).abs().maxCoeff() < 1e-5F);
    const std::vector<std::int32_t> predicted = trainer.predicted_classes();
    REQUIRE(predicted.size() == 600);
    for (Eigen::Index i = 0; i < probabilities.rows(); ++i) {
      Eigen::Index best = 0;
      probabilities.row(i).maxCoeff(&best);
      CHECK(predicted[static_cast<std::size_t>(i)] == best);
    }
    const auto attention = trainer.attention();
    REQUIRE(attention.size() == 2);
    CHECK(attention[0].alpha.rows() == trainer.mask().num_edges());
    CHECK(attention[0].alpha.cols() == 8);
    CHECK(attention[1].alpha.cols() == 1);
    // A node's row of the mask: its in-edges, as the scan over every edge finds them.
    for (const maskgat::NodeId node : {0, 17, 599}) {
      const auto [first, last] = attention[0].in_edges(node);
      const auto in_mask = trainer.mask().in_neighbors(node);
      REQUIRE(last - first == in_mask.size());
      for (std::size_t e = first; e < last; ++e) {
        CHECK(attention[0].destinations[e] == node);
        CHECK(attention[0].sources[e] == in_mask[e - first]);
      }
    }
    const auto [none_first, none_last] = attention[0].in_edges(600);  // past the last node
    CHECK(none_first == none_last);
  }

  TEST_CASE("predictions at chosen nodes equal those rows of the whole graph's") {
    const maskgat::Dataset data = small_synthetic();
    train::Trainer trainer(data, quick_options(5, 0));
    trainer.fit();
    const maskgat::RowMatrix<float> all = trainer.predict_probabilities();
    const std::vector<maskgat::NodeId> chosen{17, 0, 599, 17, 301};
    // A few nodes: their two-layer field is well under half the graph, so it runs on the field.
    REQUIRE(4 * maskgat::masks::receptive_subgraph(trainer.mask(), chosen, 2)
                    .masks.front()
                    .num_edges() <
            trainer.mask().num_edges());
    const maskgat::RowMatrix<float> some = trainer.predict_probabilities(chosen);
    REQUIRE(some.rows() == 5);
    REQUIRE(some.cols() == all.cols());
    // The same sums over the same edges, but the field's dense products see its rows at other
    // positions, and Eigen's kernels sum a product's last rows in another order: equal to float
    // rounding.
    for (std::size_t r = 0; r < chosen.size(); ++r) {
      const auto row = static_cast<Eigen::Index>(r);
      for (Eigen::Index k = 0; k < all.cols(); ++k)
        CHECK(some(row, k) == doctest::Approx(all(chosen[r], k)).epsilon(1e-6));
    }
    // Every node: the field is the whole graph, which runs as such.
    std::vector<maskgat::NodeId> every(600);
    for (std::size_t i = 0; i < every.size(); ++i) every[i] = static_cast<maskgat::NodeId>(599 - i);
    const maskgat::RowMatrix<float> reversed = trainer.predict_probabilities(every);
    CHECK(reversed == all.colwise().reverse());
    // The whole graph's buffers were not left at the field's size.
    CHECK(trainer.predict_probabilities() == all);
    CHECK(trainer.predict_probabilities({}).rows() == 0);
    const std::vector<maskgat::NodeId> outside{3, 600};
    CHECK_THROWS_WITH_AS(trainer.predict_probabilities(outside),
                         "masks::receptive_subgraph: node 600 is outside [0, 600)",
                         maskgat::InvalidArgument);
    const maskgat::FeatureMatrix fewer = data.features.select_rows(chosen);
    CHECK_THROWS_WITH_AS(train::logits_at(trainer.model(), trainer.mask(), fewer, chosen),
                         "logits_at: input has 5 rows, the mask has 600 nodes",
                         maskgat::InvalidArgument);
  }

  TEST_CASE("Trainer rejects data it cannot train on") {
    maskgat::Dataset data = small_synthetic();
    auto options = quick_options();
    options.epochs = 0;
    CHECK_THROWS_WITH_AS(train::Trainer(data, options),
                         "train: epochs is 0, expected a positive count", maskgat::InvalidArgument);
    for (auto& part : data.split) {
      if (part == maskgat::SplitPart::kTrain) part = maskgat::SplitPart::kNone;
    }
    CHECK_THROWS_WITH_AS(train::Trainer(data, quick_options()),
                         "train: the split has no training nodes", maskgat::InvalidArgument);
  }

  TEST_CASE("Trainer stops with the epoch when the loss or a gradient is no longer finite") {
    const maskgat::Dataset data = small_synthetic();
    auto options = quick_options();
    options.optimizer.learning_rate = 1e30;
    train::Trainer trainer(data, options);
    CHECK_THROWS_WITH_AS(trainer.fit(), doctest::Contains("at epoch "), maskgat::Error);
  }
}
