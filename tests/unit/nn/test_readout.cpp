// The readouts (sum, mean, max, attention pooling with one and several gates) against a direct
// computation, with exact gradients (central differences in double), bitwise the same on any
// thread count; and graph-level models: gradients, a graph in a batch as alone, permutations.

#include <doctest/doctest.h>
#include <tbb/global_control.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "maskgat/core/error.hpp"
#include "maskgat/graph/masks.hpp"
#include "maskgat/io/tu.hpp"
#include "maskgat/nn/loss.hpp"
#include "maskgat/nn/model.hpp"
#include "maskgat/nn/readout.hpp"
#include "support/central_differences.hpp"
#include "support/dense_attention.hpp"
#include "support/random_data.hpp"

using maskgat::InvalidArgument;
using maskgat::Rng;
using maskgat::RowMatrix;
namespace nn = maskgat::nn;
namespace test = maskgat::test;

namespace {

constexpr double kTolerance = 1e-6;

// Graphs of 3, 0, 1 and 4 rows (an empty one included).
const std::vector<std::int64_t> kOffsets{0, 3, 3, 4, 8};

template <typename T>
struct ReadoutCase {
  ReadoutCase(nn::ReadoutKind kind, std::int64_t features, std::int64_t heads)
      : readout(store, "pool", {kind, features, heads}, rng) {}
  nn::ParameterStore<T> store;
  Rng rng{3};
  nn::BasicReadout<T> readout;
  typename nn::BasicReadout<T>::Cache cache;
};

// The readout of graph rows [begin, end) of x, computed directly.
RowMatrix<double> direct(const ReadoutCase<double>& c, const RowMatrix<double>& x) {
  const nn::ReadoutOptions& o = c.readout.options();
  const auto graphs = static_cast<std::int64_t>(kOffsets.size()) - 1;
  RowMatrix<double> out = RowMatrix<double>::Zero(graphs, o.features);
  for (std::int64_t g = 0; g < graphs; ++g) {
    const std::int64_t begin = kOffsets[static_cast<std::size_t>(g)];
    const std::int64_t end = kOffsets[static_cast<std::size_t>(g) + 1];
    if (begin == end) continue;
    for (std::int64_t c_ = 0; c_ < o.features; ++c_) {
      double sum = 0.0;
      double top = -INFINITY;
      for (std::int64_t i = begin; i < end; ++i) {
        sum += x(i, c_);
        top = std::max(top, x(i, c_));
      }
      if (o.kind == nn::ReadoutKind::kSum) out(g, c_) = sum;
      if (o.kind == nn::ReadoutKind::kMean) out(g, c_) = sum / static_cast<double>(end - begin);
      if (o.kind == nn::ReadoutKind::kMax) out(g, c_) = top;
    }
    if (o.kind != nn::ReadoutKind::kAttention) continue;
    const auto w = c.store.value(c.store.entries()[0].parameter);
    const std::int64_t block = o.features / o.heads;
    for (std::int64_t h = 0; h < o.heads; ++h) {
      std::vector<double> e;
      for (std::int64_t i = begin; i < end; ++i) e.push_back(std::exp(x.row(i).dot(w.col(h))));
      double total = 0.0;
      for (const double v : e) total += v;
      for (std::int64_t i = begin; i < end; ++i) {
        out.row(g).segment(h * block, block) +=
            e[static_cast<std::size_t>(i - begin)] / total * x.row(i).segment(h * block, block);
      }
    }
  }
  return out;
}

struct Kind {
  nn::ReadoutKind kind;
  std::int64_t heads;
};
const std::vector<Kind> kKinds{{nn::ReadoutKind::kSum, 1},       {nn::ReadoutKind::kMean, 1},
                               {nn::ReadoutKind::kMax, 1},       {nn::ReadoutKind::kAttention, 1},
                               {nn::ReadoutKind::kAttention, 3}, {nn::ReadoutKind::kAttention, 6}};

// A graph classifier: GAT (2 heads x 3), ELU, the readout, a linear layer to the classes.
nn::ModelSpec graph_spec(std::int64_t features, nn::ReadoutOptions readout) {
  nn::ModelSpec spec;
  nn::GatConvOptions conv;
  conv.heads = 2;
  conv.out_features = 3;
  conv.dropout = 0.0;
  spec.modules = {{"", conv},
                  {"", nn::ActivationOptions{nn::ActivationKind::kElu}},
                  {"", readout},
                  {"", nn::LinearOptions{0, nn::kClassesWidth, true}}};
  spec.in_features = features;
  spec.classes = 3;
  return spec;
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("readout: sum, mean, max and attention pooling match a direct computation") {
    const RowMatrix<double> x = test::random_matrix<double>(8, 6, 11);
    for (const Kind& k : kKinds) {
      CAPTURE(nn::readout_kind_name(k.kind));
      CAPTURE(k.heads);
      ReadoutCase<double> c(k.kind, 6, k.heads);
      RowMatrix<double> out;
      c.readout.forward(x, kOffsets, c.cache, out);
      REQUIRE(out.rows() == 4);
      CHECK(out.row(1).isZero());  // the empty graph
      CHECK(test::relative_error(out, direct(c, x)) < 1e-12);
    }
  }

  TEST_CASE("readout: gradients of the input and the gates are exact (central differences)") {
    RowMatrix<double> x = test::random_matrix<double>(8, 6, 12);
    const RowMatrix<double> weights = test::random_matrix<double>(4, 6, 13);
    for (const Kind& k : kKinds) {
      CAPTURE(nn::readout_kind_name(k.kind));
      CAPTURE(k.heads);
      ReadoutCase<double> c(k.kind, 6, k.heads);
      RowMatrix<double> out;
      const auto loss = [&] {
        c.readout.forward(x, kOffsets, c.cache, out);
        return out.cwiseProduct(weights).sum();
      };
      loss();
      c.store.zero_grad();
      RowMatrix<double> grad_x;
      c.readout.backward(x, kOffsets, c.cache, weights, &grad_x);
      const RowMatrix<double> numeric = test::central_differences(
          std::span(x.data(), static_cast<std::size_t>(x.size())), x.rows(), x.cols(), loss);
      CHECK(test::relative_error(grad_x, numeric) < kTolerance);
      for (const auto& entry : c.store.entries()) {
        CAPTURE(entry.name);
        const RowMatrix<double> expected =
            test::central_differences(c.store.values(), entry.parameter, loss);
        CHECK(test::relative_error(RowMatrix<double>(c.store.grad(entry.parameter)), expected) <
              kTolerance);
      }
      CHECK(c.store.entries().size() == (k.kind == nn::ReadoutKind::kAttention ? 1U : 0U));
    }
  }

  TEST_CASE("readout: outputs and gradients are bitwise the same on 1, 2 and 8 threads") {
    // 150 graphs: three blocks of graphs, so that the threads share the work.
    const maskgat::GraphCollection c = test::random_collection(150, 6, 21);
    const RowMatrix<float> weights = test::random_matrix<float>(150, 6, 22);
    for (const Kind& k : kKinds) {
      CAPTURE(nn::readout_kind_name(k.kind));
      const auto run = [&](std::size_t threads) {
        const tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
        ReadoutCase<float> r(k.kind, 6, k.heads);
        RowMatrix<float> out;
        RowMatrix<float> grad_x;
        r.readout.forward(c.features, c.offsets, r.cache, out);
        r.readout.backward(c.features, c.offsets, r.cache, weights, &grad_x);
        const auto grads = r.store.grads();
        return std::tuple(out, grad_x, std::vector<float>(grads.begin(), grads.end()));
      };
      const auto baseline = run(1);
      CHECK(run(2) == baseline);
      CHECK(run(8) == baseline);
    }
  }

  TEST_CASE("readout: bad options, offsets and gradients are refused with the values") {
    nn::ParameterStore<float> store;
    Rng rng(1);
    CHECK_THROWS_WITH_AS(nn::Readout(store, "p", {nn::ReadoutKind::kSum, 6, 2}, rng),
                         "readout: heads is 2, but a sum readout has no gates (expected 1)",
                         InvalidArgument);
    CHECK_THROWS_WITH_AS(nn::Readout(store, "p", {nn::ReadoutKind::kAttention, 6, 4}, rng),
                         "readout: heads is 4, which does not divide the 6 features",
                         InvalidArgument);
    CHECK_THROWS_WITH_AS(nn::Readout(store, "p", {nn::ReadoutKind::kMean, 0, 1}, rng),
                         "readout: features is 0, expected a positive count", InvalidArgument);
    const nn::Readout readout(store, "p", {nn::ReadoutKind::kMean, 2, 1}, rng);
    nn::Readout::Cache cache;
    RowMatrix<float> out;
    const RowMatrix<float> x = RowMatrix<float>::Ones(4, 2);
    const std::vector<std::int64_t> short_offsets{0, 3};
    CHECK_THROWS_WITH_AS(readout.forward(x, short_offsets, cache, out),
                         "readout.forward: the graph offsets must run from 0 to the 4 rows of x, "
                         "got 0 to 3",
                         InvalidArgument);
    const std::vector<std::int64_t> decreasing{0, 3, 2, 4};
    CHECK_THROWS_WITH_AS(readout.forward(x, decreasing, cache, out),
                         "readout.forward: graph offset 2 is 2, below the one before (3)",
                         InvalidArgument);
    const std::vector<std::int64_t> offsets{0, 2, 4};
    readout.forward(x, offsets, cache, out);
    CHECK(out == RowMatrix<float>::Ones(2, 2));
    CHECK_THROWS_WITH_AS(
        readout.backward(x, offsets, cache, RowMatrix<float>::Ones(3, 2), nullptr),
        "readout.backward: grad_out is 3 x 2, expected 2 x 2 (the number of graphs)",
        InvalidArgument);
  }

  TEST_CASE("graph model: exact gradients through the attention layer and each readout") {
    const maskgat::GraphCollection c = test::random_collection(5, 4, 31);
    const maskgat::Graph mask = maskgat::masks::from_graph(c.graph);
    const RowMatrix<double> x = c.features.cast<double>();
    const std::vector<maskgat::NodeId> graphs{0, 1, 2, 3, 4};
    for (const Kind& k : kKinds) {
      if (k.heads == 6) continue;  // the attention layer's 6 channels: 1 and 3 gates suffice
      CAPTURE(nn::readout_kind_name(k.kind));
      Rng rng(4);
      nn::BasicModel<double> model(graph_spec(4, {k.kind, 0, k.heads}), rng);
      for (auto& value : model.parameters().values()) value += 0.05;
      REQUIRE(model.graph_level());
      model.set_graph_offsets(c.offsets);
      const auto loss_and = [&](RowMatrix<double>* grad) {
        Rng unused(0);
        return nn::nll_loss(model.forward(mask, x, nn::Mode::kTrain, unused), c.labels, graphs,
                            grad);
      };
      RowMatrix<double> grad;
      model.parameters().zero_grad();
      loss_and(&grad);
      CHECK(grad.rows() == 5);
      model.backward(mask, x, grad);
      const std::vector<double> analytic(model.parameters().grads().begin(),
                                         model.parameters().grads().end());
      for (const auto& entry : model.parameters().entries()) {
        CAPTURE(entry.name);
        const RowMatrix<double> numeric = test::central_differences(
            model.parameters().values(), entry.parameter, [&] { return loss_and(nullptr); });
        const RowMatrix<double> backward = Eigen::Map<const RowMatrix<double>>(
            analytic.data() + entry.parameter.offset, entry.parameter.rows, entry.parameter.cols);
        CHECK(test::relative_error(backward, numeric) < kTolerance);
      }
    }
  }

  TEST_CASE("graph model: a graph in a batch scores as alone; permuting graphs permutes rows") {
    const maskgat::GraphCollection c = test::random_collection(7, 4, 41);
    Rng rng(6);
    nn::Model model(graph_spec(4, {nn::ReadoutKind::kAttention, 0, 3}), rng);
    const auto run = [&](const std::vector<std::int64_t>& ids) {
      const maskgat::GraphBatch batch = maskgat::make_batch(c, ids);
      model.set_graph_offsets(batch.offsets);
      Rng unused(0);
      return RowMatrix<float>(model.forward(maskgat::masks::from_graph(batch.graph), batch.features,
                                            nn::Mode::kEval, unused));
    };
    const std::vector<std::int64_t> order{0, 1, 2, 3, 4, 5, 6};
    const std::vector<std::int64_t> permuted{4, 6, 0, 2, 1, 5, 3};
    const RowMatrix<float> all = run(order);
    const RowMatrix<float> shuffled = run(permuted);
    for (std::size_t k = 0; k < permuted.size(); ++k) {
      CAPTURE(k);
      const auto g = static_cast<Eigen::Index>(permuted[k]);
      CHECK((shuffled.row(static_cast<Eigen::Index>(k)) - all.row(g)).cwiseAbs().maxCoeff() <=
            1e-6F);
      CHECK((run({permuted[k]}).row(0) - all.row(g)).cwiseAbs().maxCoeff() <= 1e-6F);
    }
  }

  TEST_CASE("graph model: a readout's place and use are checked, naming the module") {
    Rng rng(1);
    nn::ModelSpec spec = graph_spec(4, {nn::ReadoutKind::kSum, 0, 1});
    spec.modules.insert(spec.modules.begin(), {"", nn::ReadoutOptions{}});
    CHECK_THROWS_WITH_AS(nn::Model(spec, rng),
                         "model: modules[0] (sum_pool pool1): a readout before any attention "
                         "layer, expected one after",
                         InvalidArgument);
    spec = graph_spec(4, {nn::ReadoutKind::kSum, 0, 1});
    spec.modules.push_back({"", nn::ReadoutOptions{nn::ReadoutKind::kMax}});
    CHECK_THROWS_WITH_AS(nn::Model(spec, rng),
                         "model: modules[4] (max_pool pool2): a second readout, expected at most "
                         "one",
                         InvalidArgument);
    nn::Model model(graph_spec(4, {nn::ReadoutKind::kMean, 0, 1}), rng);
    const maskgat::GraphCollection c = test::random_collection(3, 4, 51);
    const maskgat::Graph mask = maskgat::masks::from_graph(c.graph);
    CHECK_THROWS_WITH_AS(
        model.forward(mask, c.features, nn::Mode::kEval, rng),
        "model.forward: the model ends in a readout, but no graph offsets were set "
        "(set_graph_offsets)",
        InvalidArgument);
    const std::vector<std::int64_t> short_offsets{0, 1};
    model.set_graph_offsets(short_offsets);
    CHECK_THROWS_WITH_AS(model.forward(mask, c.features, nn::Mode::kEval, rng),
                         ("model.forward: the graph offsets cover 1 nodes, the readout has " +
                          std::to_string(c.offsets.back()) + " rows")
                             .c_str(),
                         InvalidArgument);
    const std::vector<maskgat::Graph> masks{mask};
    CHECK_THROWS_WITH_AS(model.forward(masks, c.features, nn::Mode::kEval, rng),
                         "model.forward: a mask per layer with a readout, which needs every node "
                         "of each graph of its batch",
                         InvalidArgument);
  }
}
