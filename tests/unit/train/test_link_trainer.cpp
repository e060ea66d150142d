// Link prediction: training that learns which pairs are edges, runs the same on any thread
// count and resumed, metrics against a direct count, exact top-k recommendation, edge split and
// pair files, and the refusals.

#include <doctest/doctest.h>
#include <tbb/global_control.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "maskgat/core/error.hpp"
#include "maskgat/io/node_pairs.hpp"
#include "maskgat/nn/spec.hpp"
#include "maskgat/train/checkpoint.hpp"
#include "maskgat/train/link_trainer.hpp"
#include "support/paths.hpp"
#include "support/random_data.hpp"

namespace {

namespace nn = maskgat::nn;
namespace train = maskgat::train;
using maskgat::Dataset;
using maskgat::EdgeSplit;
using maskgat::Graph;
using maskgat::InvalidArgument;
using maskgat::NodeId;
using maskgat::NodePairs;
using maskgat::RowMatrix;

constexpr const char* kSpec = R"({"modules": [
  {"type": "gat", "heads": 4, "channels": 8},
  {"type": "elu"},
  {"type": "gat", "heads": 1, "channels": "classes", "concat": false}]})";

// 300 nodes of 3 homophilous classes, directed edges: same-class pairs are the likely edges.
const Dataset& data() {
  static const Dataset dataset = maskgat::test::synthetic_dataset(300, 6.0, 16, 3, 11);
  return dataset;
}

EdgeSplit split(std::uint64_t seed = 0) {
  maskgat::EdgeSplitOptions options;
  options.seed = seed;
  options.undirected = data().preparation.undirected;
  return maskgat::split_edges(data().graph, options);
}

train::TrainOptions options(std::int64_t epochs = 80) {
  train::TrainOptions o = train::link_recipe();
  o.spec = nn::parse_model_spec(kSpec, "spec");
  o.model.classes = 16;
  o.optimizer.learning_rate = 0.01;
  o.epochs = epochs;
  o.patience = 0;
  o.seed = 5;
  return o;
}

// The AUC of positives against negatives counted pair by pair, ties a half.
double counted_auc(const std::vector<double>& positives, const std::vector<double>& negatives) {
  double wins = 0.0;
  for (const double p : positives) {
    for (const double n : negatives) wins += p > n ? 1.0 : (p == n ? 0.5 : 0.0);
  }
  return wins / static_cast<double>(positives.size() * negatives.size());
}

// A link model of `width`-column states over 4 input features: the dot product, or with
// `decoder_hidden` an MLP decoder.
nn::Model link_model(std::int64_t width, std::int64_t decoder_hidden = 0) {
  train::TrainOptions o = train::link_recipe();
  o.model.in_features = 4;
  o.model.classes = width;
  o.spec->in_features = 4;
  o.spec->classes = width;
  o.decoder_hidden = decoder_hidden;
  maskgat::Rng rng(9);
  return train::make_model(o, rng);
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("link trainer: learns which pairs are edges, and no held-out edge reaches the graph") {
    REQUIRE_FALSE(data().preparation.undirected);  // directed: held out one way (undirected
                                                   // splits: test_edge_split.cpp)
    train::LinkTrainer trainer(data(), split(), options());
    const EdgeSplit& s = trainer.split();
    for (const NodePairs* held : {&s.val, &s.test}) {
      for (std::int64_t k = 0; k < held->size(); ++k) {
        const auto u = held->sources[static_cast<std::size_t>(k)];
        const auto v = held->targets[static_cast<std::size_t>(k)];
        CHECK(data().graph.has_edge(u, v));
        CHECK_FALSE(s.train.has_edge(u, v));
      }
    }
    const double before = trainer.evaluate(s.test, s.test_negatives).roc_auc;
    const train::FitResult result = trainer.fit();
    CHECK(result.epochs == 80);
    CHECK(result.test_nodes == s.test.size());
    const train::LinkMetrics test = trainer.evaluate(s.test, s.test_negatives);
    // The untrained model scores 0.57 on these pairs.
    CHECK(test.roc_auc >= 0.75);
    CHECK(test.roc_auc >= before + 0.15);
    CHECK(test.roc_auc == doctest::Approx(result.test_score));
    CHECK(trainer.options().task == train::Task::kLink);
    CHECK(trainer.options().metric == train::Metric::kRocAuc);
  }

  TEST_CASE("link metrics: ROC AUC and AP equal a direct computation, ties included") {
    // States of one column: a pair's logit is the product of its nodes' values.
    RowMatrix<float> states(6, 1);
    states << 1.0F, 2.0F, 0.5F, 0.0F, -1.0F, 2.0F;
    NodePairs positives{{0, 1, 2}, {1, 5, 5}};        // logits 2, 4, 1
    NodePairs negatives{{0, 3, 4, 2}, {2, 4, 0, 0}};  // logits 0.5, 0, -1, 0.5
    const nn::Model dot = link_model(1);
    const train::LinkMetrics m = train::link_metrics(dot, states, positives, negatives);
    CHECK(m.roc_auc == doctest::Approx(counted_auc({2, 4, 1}, {0.5, 0, -1, 0.5})));
    CHECK(m.roc_auc == 1.0);
    positives.sources[2] = 3;  // logit 0: ties with a negative
    const train::LinkMetrics tied = train::link_metrics(dot, states, positives, negatives);
    CHECK(tied.roc_auc == doctest::Approx(counted_auc({2, 4, 0}, {0.5, 0, -1, 0.5})));
    // AP: 4, 2 positive | 0.5, 0.5 negative | 0 one of each | -1: precision 1 up to recall
    // 2/3, then 3/6 at recall 1.
    CHECK(tied.average_precision == doctest::Approx(2.0 / 3.0 + (1.0 / 3.0) * (3.0 / 6.0)));
    CHECK(tied.hits_at_10 == 1.0);  // fewer negatives than K
    CHECK(tied.positives == 3);
    CHECK(tied.negatives == 4);
    const std::vector<double> scores = train::pair_scores(dot, states, positives);
    CHECK(scores[0] == doctest::Approx(1.0 / (1.0 + std::exp(-2.0))));
    CHECK_THROWS_WITH_AS(
        static_cast<void>(train::link_metrics(dot, states, positives, NodePairs{})),
        "link_metrics: 3 positive and 0 negative pairs; both must be present", InvalidArgument);
    CHECK_THROWS_WITH_AS(static_cast<void>(train::pair_scores(dot, states, NodePairs{{6}, {0}})),
                         "pair_scores: node 6 is outside [0, 6)", maskgat::IndexError);
  }

  TEST_CASE("recommend: the k best nodes without an edge from the node, as a full sort") {
    const RowMatrix<float> states = maskgat::test::random_matrix<float>(300, 8, 21);
    const Graph& graph = data().graph;
    for (const std::int64_t hidden : {0, 5}) {  // the dot product, an MLP decoder
      CAPTURE(hidden);
      const nn::Model model = link_model(8, hidden);
      for (const NodeId node : {NodeId{0}, NodeId{17}, NodeId{299}}) {
        NodePairs every;
        for (NodeId v = 0; v < 300; ++v) {
          if (v == node || graph.has_edge(node, v)) continue;
          every.sources.push_back(node);
          every.targets.push_back(v);
        }
        const std::vector<double> scores = train::pair_scores(model, states, every);
        std::vector<std::pair<double, NodeId>> all;
        for (std::size_t k = 0; k < scores.size(); ++k)
          all.emplace_back(-scores[k], every.targets[k]);
        std::sort(all.begin(), all.end());
        const auto best = train::recommend(model, states, graph, node, 7);
        REQUIRE(best.size() == 7);
        for (std::size_t r = 0; r < best.size(); ++r) {
          CHECK(best[r].node == all[r].second);
          CHECK(best[r].score == doctest::Approx(-all[r].first));
        }
      }
    }
    const nn::Model dot = link_model(2);
    // Equal scores: the lower id first.
    const RowMatrix<float> equal = RowMatrix<float>::Ones(300, 2);
    const auto tied = train::recommend(dot, equal, graph, 5, 3);
    CHECK(tied[0].node < tied[1].node);
    CHECK(tied[1].node < tied[2].node);
    std::int64_t candidates = 0;
    for (NodeId v = 0; v < 300; ++v) candidates += v != 5 && !graph.has_edge(5, v) ? 1 : 0;
    CHECK(train::recommendation_candidates(graph, 5) == candidates);
    CHECK_THROWS_WITH_AS(static_cast<void>(train::recommendation_candidates(graph, -1)),
                         "recommendation_candidates: node -1 is outside [0, 300)",
                         maskgat::IndexError);
    CHECK_THROWS_WITH_AS(
        static_cast<void>(train::recommend(dot, equal, graph, 5, 1000)),
        ("recommend: top 1000 asked for, but node 5 has " + std::to_string(candidates) +
         " candidates (nodes it has no edge to), expected 1 to that")
            .c_str(),
        InvalidArgument);
    CHECK_THROWS_AS(static_cast<void>(train::recommend(dot, equal, graph, 300, 1)),
                    maskgat::IndexError);
  }

  TEST_CASE("link trainer: bitwise the same run on 1 and 2 threads, and resumed") {
    const auto run = [&](std::size_t threads, std::int64_t epochs) {
      const tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
      train::LinkTrainer trainer(data(), split(), options(epochs));
      static_cast<void>(trainer.fit());
      return trainer.checkpoint();
    };
    const train::Checkpoint one = run(1, 12);
    CHECK(run(2, 12).values == one.values);
    const std::filesystem::path path = maskgat::test::scratch_dir("link_trainer") / "half.ckpt";
    train::save_checkpoint(path, run(2, 6), true);
    const train::Checkpoint half = train::load_checkpoint(path);
    CHECK(half.options.task == train::Task::kLink);
    CHECK(half.class_names.empty());
    train::LinkTrainer resumed(data(), split(), half, 12);
    static_cast<void>(resumed.fit());
    CHECK(resumed.checkpoint().values == one.values);
    // Another split is refused.
    CHECK_THROWS_WITH_AS(train::LinkTrainer(data(), split(1), half, 12),
                         "checkpoint: the run was trained on other nodes or another edge split "
                         "than these (their fingerprints differ)",
                         InvalidArgument);
  }

  TEST_CASE("link trainer: an MLP decoder learns, saves with the model, loads back, resumes") {
    train::TrainOptions mlp = options(60);
    mlp.decoder_hidden = 16;
    train::LinkTrainer trainer(data(), split(), mlp);
    const double before =
        trainer.evaluate(trainer.split().test, trainer.split().test_negatives).roc_auc;
    const train::FitResult result = trainer.fit();
    CHECK(result.test_score >= before + 0.1);
    const train::Checkpoint saved = trainer.checkpoint();
    CHECK(std::count_if(saved.parameters.begin(), saved.parameters.end(),
                        [](const auto& p) { return p.name.rfind("decoder.", 0) == 0; }) == 4);
    const std::filesystem::path path = maskgat::test::scratch_dir("link_trainer") / "mlp.ckpt";
    train::save_checkpoint(path, saved, true);
    const train::Checkpoint loaded = train::load_checkpoint(path);
    CHECK(loaded.options.decoder_hidden == 16);
    const nn::Model model = train::load_model(loaded);
    const RowMatrix<float> states = trainer.states();
    CHECK(train::link_metrics(model, states, trainer.split().test, trainer.split().test_negatives)
              .roc_auc == result.test_score);
    // Resumed with the decoder: the same parameters as one run.
    const auto run = [&](std::int64_t epochs, std::size_t threads = 2) {
      const tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
      train::TrainOptions o = mlp;
      o.epochs = epochs;
      train::LinkTrainer t(data(), split(), o);
      static_cast<void>(t.fit());
      return t.checkpoint();
    };
    // The same on 1 and 2 threads, and run to run (the decoder's sums do not follow alignment).
    CHECK(run(8, 1).values == run(8).values);
    CHECK(run(8).values == run(8).values);
    train::LinkTrainer resumed(data(), split(), run(4), 8);
    static_cast<void>(resumed.fit());
    CHECK(resumed.checkpoint().values == run(8).values);
  }

  TEST_CASE("edge split file: written and read back, the same split, fingerprint and metrics") {
    train::LinkTrainer trainer(data(), split(3), options(5));
    static_cast<void>(trainer.fit());
    const std::filesystem::path path = maskgat::test::scratch_dir("link_trainer") / "split.txt";
    maskgat::write_edge_split(path, data().node_names, trainer.split(), true);
    const EdgeSplit read = maskgat::read_edge_split(path, data().graph, data().node_names, false);
    CHECK(train::edge_split_fingerprint(read) == train::edge_split_fingerprint(trainer.split()));
    CHECK(read.train.in_sources().size() == trainer.split().train.in_sources().size());
    const RowMatrix<float> states = trainer.states();
    const train::LinkMetrics direct =
        train::link_metrics(trainer.model(), states, read.test, read.test_negatives);
    CHECK(direct.roc_auc ==
          trainer.evaluate(trainer.split().test, trainer.split().test_negatives).roc_auc);
    CHECK(train::node_states(trainer.model(), read.train, data().features) == states);
  }

  TEST_CASE("edge split and pairs files: bad lines are refused naming the line") {
    const auto& names = data().node_names;
    const Graph& graph = data().graph;
    const NodeId u = graph.in_neighbors(0).front() == 0 ? graph.in_neighbors(0)[1]
                                                        : graph.in_neighbors(0).front();
    NodeId far = 1;
    while (far == u || graph.has_edge(far, 0) || graph.has_edge(0, far)) ++far;
    const std::string edge = names[static_cast<std::size_t>(u)] + " " + names[0];  // u -> 0
    const std::string non_edge = names[0] + " " + names[static_cast<std::size_t>(far)];
    const auto read_split = [&](const std::string& text) {
      const auto path = maskgat::test::write_file("link_trainer", "bad_split.txt", text);
      return maskgat::read_edge_split(path, graph, names, false);
    };
    CHECK_THROWS_WITH_AS(
        read_split("train " + non_edge + "\n"),
        doctest::Contains(
            (":1: the train pair " + non_edge + " is not an edge of the graph").c_str()),
        maskgat::ParseError);
    CHECK_THROWS_WITH_AS(
        read_split("train " + edge + "\nval_negative " + edge + "\n"),
        doctest::Contains((":2: the negative pair " + edge + " is an edge of the graph").c_str()),
        maskgat::ParseError);
    CHECK_THROWS_WITH_AS(
        read_split("train " + edge + "\n# c\ntest " + edge + "\n"),
        doctest::Contains((":3: the pair " + edge + " is listed again (first on line 1)").c_str()),
        maskgat::ParseError);
    CHECK_THROWS_WITH_AS(read_split("held " + edge + "\n"),
                         doctest::Contains(":1: unknown part 'held'"), maskgat::ParseError);
    CHECK_THROWS_WITH_AS(read_split("train " + edge + "\nval " + names[0] + " " + names[0] + "\n"),
                         doctest::Contains(":2: the pair is a self-loop"), maskgat::ParseError);
    CHECK_THROWS_WITH_AS(read_split("train " + edge + "\ntest_negative " + non_edge + "\n"),
                         doctest::Contains("lists 0 test pairs and 1 negatives"), InvalidArgument);
    const auto read_pairs = [&](const std::string& text) {
      const auto path = maskgat::test::write_file("link_trainer", "pairs.txt", text);
      return maskgat::read_node_pairs(path, names);
    };
    const NodePairs pairs =
        read_pairs("# comment\n" + edge + "\n" + names[2] + "," + names[3] + "\n");
    CHECK(pairs.sources == std::vector<NodeId>{u, 2});
    CHECK(pairs.targets == std::vector<NodeId>{0, 3});
    CHECK_THROWS_WITH_AS(read_pairs("source target\n" + edge + "\n"),
                         doctest::Contains(":1: node 'source' is not in the graph (a pairs file "
                                           "has no header line)"),
                         maskgat::ParseError);
    CHECK_THROWS_WITH_AS(read_pairs(edge + "\n" + edge + " 0.5\n"),
                         doctest::Contains(":2: expected 2 columns (source target), got 3"),
                         maskgat::ParseError);
    CHECK_THROWS_WITH_AS(read_pairs(edge + "\n" + names[0] + " nosuch\n"),
                         doctest::Contains(":2: node 'nosuch' is not in the graph"),
                         maskgat::ParseError);
  }

  TEST_CASE("link trainer: models and settings it cannot train are refused") {
    train::TrainOptions batched = options();
    batched.batch_size = 32;
    CHECK_THROWS_WITH_AS(train::LinkTrainer(data(), split(), batched),
                         "train: a link task takes full-graph steps; mini-batches and fanouts are "
                         "for node tasks",
                         InvalidArgument);
    train::TrainOptions pooled = options();
    pooled.spec = nn::parse_model_spec(
        R"({"modules": [{"type": "gat", "heads": 1, "channels": 4}, {"type": "mean_pool"},
            {"type": "linear", "out": "classes"}]})",
        "spec");
    CHECK_THROWS_WITH_AS(train::LinkTrainer(data(), split(), pooled),
                         doctest::Contains("the model ends in a readout"), InvalidArgument);
    train::TrainOptions waiting = options();
    waiting.patience = 10;
    EdgeSplit no_val = split();
    no_val.val = {};
    no_val.val_negatives = {};
    CHECK_THROWS_WITH_AS(train::LinkTrainer(data(), no_val, waiting),
                         "train: the edge split has no validation pairs, which early stopping "
                         "needs (use patience 0)",
                         InvalidArgument);
    // A node trainer refuses a link run.
    CHECK_THROWS_WITH_AS(train::Trainer(data(), options()),
                         doctest::Contains("the run is of a link task"), InvalidArgument);
  }
}
