#include <doctest/doctest.h>
#include <tbb/global_control.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "maskgat/core/error.hpp"
#include "maskgat/train/checkpoint.hpp"
#include "maskgat/train/trainer.hpp"
#include "support/paths.hpp"
#include "support/random_data.hpp"
#include "support/trainer_values.hpp"

namespace train = maskgat::train;
using maskgat::test::parameter_values;

namespace {

train::TrainOptions batch_options(std::int64_t epochs, std::int64_t batch_size,
                                  std::vector<std::int64_t> fanouts) {
  train::TrainOptions options;
  options.epochs = epochs;
  options.patience = 0;
  options.seed = 5;
  options.batch_size = batch_size;
  options.fanouts = std::move(fanouts);
  return options;
}

// The largest difference between two parameter vectors, relative to 1 + the size of the second.
float largest_difference(const std::vector<float>& a, const std::vector<float>& b) {
  REQUIRE(a.size() == b.size());
  float largest = 0.0F;
  for (std::size_t k = 0; k < a.size(); ++k) {
    largest = std::max(largest, std::abs(a[k] - b[k]) / (1.0F + std::abs(b[k])));
  }
  return largest;
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("mini-batch training learns, is reproducible across threads and resumes exactly") {
    // 80 training nodes in batches of 32 (three batches, the last of 16), fanouts 5 and 3.
    const maskgat::Dataset data = maskgat::test::synthetic_dataset(2000, 8.0, 16, 4, 3);
    const auto options = batch_options(40, 32, {5, 3});
    const auto run = [&](std::size_t threads) {
      const tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
      train::Trainer trainer(data, options);
      const train::FitResult result = trainer.fit();
      return std::make_pair(result, parameter_values(trainer));
    };
    const auto [result, parameters] = run(2);
    CHECK(result.test_accuracy > 0.6);  // chance is 0.25
    const auto [single, single_parameters] = run(1);
    CHECK(single.test_accuracy == result.test_accuracy);
    CHECK(single_parameters == parameters);

    auto first_options = options;
    first_options.epochs = 15;
    train::Trainer first(data, first_options);
    first.fit();
    const train::Checkpoint saved = first.checkpoint();
    CHECK(saved.options.batch_size == 32);
    CHECK(saved.options.fanouts == std::vector<std::int64_t>{5, 3});
    const auto path = maskgat::test::scratch_dir("minibatch") / "m.ckpt";
    train::save_checkpoint(path, saved, true);
    train::Trainer resumed(data, train::load_checkpoint(path), 40);
    resumed.fit();
    CHECK(parameter_values(resumed) == parameters);
  }

  TEST_CASE("one batch of every training node with every in-neighbour steps as the full batch") {
    // Without dropout a batch holding every training node, each with its whole receptive field,
    // has the full-batch step's gradients up to the order of floating-point sums.
    const maskgat::Dataset data = maskgat::test::synthetic_dataset(1500, 5.0, 16, 4, 6);
    const auto run = [&](std::int64_t batch_size) {
      auto options = batch_options(25, batch_size, {});
      options.model.dropout = 0.0;
      options.model.attention_dropout = 0.0;
      train::Trainer trainer(data, options);
      trainer.fit();
      return parameter_values(trainer);
    };
    const std::vector<float> whole = run(0);
    CHECK(largest_difference(run(1000), whole) < 1e-4F);
    // Smaller batches take more, smaller steps: another trajectory.
    CHECK(largest_difference(run(16), whole) > 1e-3F);
  }

  TEST_CASE("mini-batch options that cannot work are refused") {
    const maskgat::Dataset data = maskgat::test::synthetic_dataset(300, 5.0, 8, 3, 1);
    CHECK_THROWS_WITH_AS(train::Trainer(data, batch_options(5, 16, {4, 4, 4})),
                         "train: 3 fanouts for a model of 2 layers, expected one per layer",
                         maskgat::InvalidArgument);
    CHECK_THROWS_WITH_AS(train::Trainer(data, batch_options(5, -3, {})),
                         "train: batch size is -3, expected 0 (full batch) or a positive count",
                         maskgat::InvalidArgument);
    CHECK_THROWS_WITH_AS(train::Trainer(data, batch_options(5, 16, {4, -5})),
                         "sampler: fanout -5 of layer 2, expected -1 (all) or a count >= 0",
                         maskgat::InvalidArgument);
  }
}
