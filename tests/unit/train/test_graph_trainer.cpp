// Graph classification: the stratified folds, training that learns a graph-level rule, runs the
// same on any thread count and resumed, checkpoints of the task, inductive prediction on another
// collection, and the refusals.

#include <doctest/doctest.h>
#include <tbb/global_control.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "maskgat/core/error.hpp"
#include "maskgat/nn/spec.hpp"
#include "maskgat/train/checkpoint.hpp"
#include "maskgat/train/graph_trainer.hpp"
#include "support/paths.hpp"
#include "support/random_data.hpp"

namespace {

namespace nn = maskgat::nn;
namespace train = maskgat::train;
using maskgat::GraphCollection;
using maskgat::InvalidArgument;

constexpr const char* kSpec = R"({"modules": [
  {"type": "gat", "heads": 2, "channels": 4, "residual": true},
  {"type": "elu"},
  {"type": "attention_pool", "heads": 2},
  {"type": "linear", "out": 8},
  {"type": "relu"},
  {"type": "dropout", "p": 0.2},
  {"type": "linear", "out": "classes"}]})";

// 120 random trees whose class is 1 when the mean of their nodes' first feature is positive:
// a rule a readout can learn.
GraphCollection learnable() {
  GraphCollection c = maskgat::test::random_collection(120, 3, 17);
  c.class_names = {"negative", "positive"};
  for (std::int64_t g = 0; g < c.num_graphs(); ++g) {
    const auto first = c.offsets[static_cast<std::size_t>(g)];
    const auto n = c.offsets[static_cast<std::size_t>(g) + 1] - first;
    c.labels[static_cast<std::size_t>(g)] = c.features.col(0).segment(first, n).mean() > 0 ? 1 : 0;
  }
  return c;
}

train::TrainOptions options(std::int64_t epochs = 60) {
  train::TrainOptions o;
  o.spec = nn::parse_model_spec(kSpec, "spec");
  o.optimizer.learning_rate = 0.01;
  o.optimizer.weight_decay = 0.0;
  o.epochs = epochs;
  o.patience = 0;
  o.batch_size = 16;
  o.seed = 3;
  return o;
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("graph folds: stratified, the test parts partition the graphs, a tenth validates") {
    std::vector<std::int32_t> labels(103);
    for (std::size_t g = 0; g < labels.size(); ++g) labels[g] = g % 4 == 0 ? 1 : 0;  // 26 : 77
    const auto folds = train::stratified_folds(labels, 10, 5);
    REQUIRE(folds.size() == 10);
    std::vector<int> tested(labels.size(), 0);
    for (const train::GraphSplit& split : folds) {
      for (const auto* part : {&split.train, &split.val, &split.test}) {
        CHECK(std::is_sorted(part->begin(), part->end()));
      }
      for (const std::int64_t g : split.test) ++tested[static_cast<std::size_t>(g)];
      // The three parts cover every graph once.
      std::vector<std::int64_t> all = split.train;
      all.insert(all.end(), split.val.begin(), split.val.end());
      all.insert(all.end(), split.test.begin(), split.test.end());
      std::sort(all.begin(), all.end());
      std::vector<std::int64_t> expected(labels.size());
      std::iota(expected.begin(), expected.end(), 0);
      CHECK(all == expected);
      // Each fold holds 10 or 11 graphs, 2 or 3 of class 1; validation a tenth of the rest.
      const auto ones = std::count_if(split.test.begin(), split.test.end(),
                                      [&](std::int64_t g) { return labels[g] == 1; });
      CHECK((split.test.size() == 10 || split.test.size() == 11));
      CHECK((ones == 2 || ones == 3));
      CHECK(split.val.size() >= 8);
      CHECK(split.val.size() <= 10);
    }
    CHECK(std::all_of(tested.begin(), tested.end(), [](int n) { return n == 1; }));
    CHECK(train::stratified_folds(labels, 10, 5)[3].val == folds[3].val);
    CHECK(train::stratified_folds(labels, 10, 6)[3].test != folds[3].test);
    CHECK_THROWS_WITH_AS(static_cast<void>(train::stratified_folds(labels, 1, 0)),
                         "stratified_folds: 1 folds of 103 graphs, expected 2 to 103",
                         InvalidArgument);
    std::vector<std::int32_t> negative = labels;
    negative[7] = -1;
    CHECK_THROWS_WITH_AS(static_cast<void>(train::stratified_folds(negative, 5, 0)),
                         "stratified_folds: graph 7 has label -1, expected a class id (0 or more)",
                         InvalidArgument);
    CHECK_THROWS_WITH_AS(static_cast<void>(train::stratified_folds(labels, 5, 0, 1.0)),
                         "stratified_folds: the validation share is 1.000000, expected a value "
                         "in (0, 1)",
                         InvalidArgument);
  }

  TEST_CASE("graph trainer: learns a graph-level rule; the test graphs are scored once") {
    const GraphCollection c = learnable();
    const auto folds = train::stratified_folds(c.labels, 5, 1);
    train::GraphTrainer trainer(c, folds[0], options());
    const train::FitResult result = trainer.fit();
    CHECK(result.epochs == 60);
    CHECK(result.test_nodes == static_cast<std::int64_t>(folds[0].test.size()));
    CHECK(trainer.evaluate(folds[0].train).accuracy >= 0.85);
    CHECK(result.test_accuracy >= 0.75);
    CHECK(trainer.evaluate(folds[0].test).accuracy == doctest::Approx(result.test_accuracy));
    CHECK(trainer.options().task == train::Task::kGraph);
  }

  TEST_CASE("graph trainer: bitwise the same run on 1 and 2 threads, and resumed") {
    const GraphCollection c = learnable();
    const auto split = train::stratified_folds(c.labels, 5, 1)[2];
    const auto run = [&](std::size_t threads, std::int64_t epochs) {
      const tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
      train::GraphTrainer trainer(c, split, options(epochs));
      static_cast<void>(trainer.fit());
      return trainer.checkpoint();
    };
    const train::Checkpoint one = run(1, 12);
    CHECK(run(2, 12).values == one.values);
    // Six epochs, saved to a file and read back, then six more: the twelve-epoch run.
    const std::filesystem::path path = maskgat::test::scratch_dir("graph_trainer") / "half.ckpt";
    train::save_checkpoint(path, run(2, 6), true);
    const train::Checkpoint half = train::load_checkpoint(path);
    CHECK(half.options.task == train::Task::kGraph);
    train::GraphTrainer resumed(c, split, half, 12);
    static_cast<void>(resumed.fit());
    CHECK(resumed.checkpoint().values == one.values);
    CHECK(resumed.checkpoint().state.optimizer_steps == one.state.optimizer_steps);
    // Another split is not the run's.
    const auto other = train::stratified_folds(c.labels, 5, 1)[3];
    CHECK_THROWS_WITH_AS(train::GraphTrainer(c, other, half, 12),
                         "checkpoint: the run was trained on other graphs or another split than "
                         "these (their fingerprints differ)",
                         InvalidArgument);
  }

  TEST_CASE("graph model: predicts graphs of another collection as in its own, knows its own") {
    const GraphCollection c = learnable();
    const auto split = train::stratified_folds(c.labels, 5, 1)[0];
    train::GraphTrainer trainer(c, split, options(5));
    static_cast<void>(trainer.fit());
    // A collection of three of its graphs in another order: the same logits per graph.
    const std::vector<std::int64_t> ids{split.test[1], split.train[0], split.test[0]};
    const GraphCollection few = maskgat::collection_of(c, ids);
    CHECK(few.num_graphs() == 3);
    CHECK(few.labels[1] == c.labels[static_cast<std::size_t>(split.train[0])]);
    const std::vector<std::int64_t> all{0, 1, 2};
    const maskgat::RowMatrix<float> there = train::graph_logits(trainer.model(), few, all);
    const maskgat::RowMatrix<float> here = train::graph_logits(trainer.model(), c, ids);
    CHECK((there - here).cwiseAbs().maxCoeff() <= 1e-6F);
    // The graph it trained on is recognised there by its fingerprint, the test graphs are not.
    const train::Checkpoint saved = trainer.checkpoint();
    CHECK(train::fitted_graphs(*saved.data, few, all) == std::vector<std::int64_t>{1});
  }

  TEST_CASE("graph trainer: refuses models without a readout, bad splits, and node trainers") {
    const GraphCollection c = learnable();
    const auto split = train::stratified_folds(c.labels, 5, 1)[0];
    train::TrainOptions paper = options();
    paper.spec.reset();
    CHECK_THROWS_WITH_AS(train::GraphTrainer(c, split, paper),
                         "train: a graph task needs a model spec with a readout "
                         "(TrainOptions::spec, --model); the paper's model classifies nodes",
                         InvalidArgument);
    train::TrainOptions nodes = options();
    nodes.spec =
        nn::parse_model_spec(R"({"modules": [{"type": "gat", "channels": "classes"}]})", "spec");
    CHECK_THROWS_WITH_AS(train::GraphTrainer(c, split, nodes),
                         "train: the model has no readout; a graph task needs one (sum_pool, "
                         "mean_pool, max_pool or attention_pool) after the attention layers "
                         "(docs/model-specs.md)",
                         InvalidArgument);
    train::GraphSplit overlapping = split;
    overlapping.val.push_back(split.train.front());
    CHECK_THROWS_WITH_AS(train::GraphTrainer(c, overlapping, options()),
                         ("train: graph " + std::to_string(split.train.front()) +
                          " is in two parts of the split (or twice in one)")
                             .c_str(),
                         InvalidArgument);
    train::GraphSplit outside = split;
    outside.test.push_back(500);
    CHECK_THROWS_WITH_AS(train::GraphTrainer(c, outside, options()),
                         "train: test graph 500 is outside [0, 120)", InvalidArgument);
    train::TrainOptions edges = options();
    edges.spec = nn::parse_model_spec(
        R"({"modules": [{"type": "gat", "channels": 4, "edge_dim": 2}, {"type": "sum_pool"},)"
        R"( {"type": "linear", "out": "classes"}]})",
        "spec");
    CHECK_THROWS_WITH_AS(train::GraphTrainer(c, split, edges),
                         "train: the model's attention layers read 2 features per edge "
                         "(edge_dim), random has 0",
                         InvalidArgument);
    // A node trainer refuses a graph classifier.
    const maskgat::Dataset dataset = maskgat::test::synthetic_dataset(60, 3.0, 3, 2, 1);
    CHECK_THROWS_WITH_AS(train::Trainer(dataset, options()),
                         "train: the model ends in a readout (one output per graph), a graph "
                         "task; train it on a collection of graphs (GraphTrainer, maskgat train "
                         "--task graph)",
                         InvalidArgument);
  }
}
