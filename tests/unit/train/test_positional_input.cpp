// Positional encodings as model input: the `--pe` spelling, appending encoding columns to sparse
// and dense features, the sign flips' column scaling, and training, resuming and evaluating with
// an encoding.
#include <doctest/doctest.h>
#include <tbb/global_control.h>

#include <Eigen/SparseCore>
#include <vector>

#include "maskgat/core/error.hpp"
#include "maskgat/io/synthetic.hpp"
#include "maskgat/nn/loss.hpp"
#include "maskgat/train/checkpoint.hpp"
#include "maskgat/train/predictor.hpp"
#include "maskgat/train/trainer.hpp"
#include "maskgat/transforms/positional.hpp"
#include "support/random_data.hpp"
#include "support/trainer_values.hpp"

namespace train = maskgat::train;
using maskgat::test::parameter_values;
namespace transforms = maskgat::transforms;
using maskgat::FeatureMatrix;
using maskgat::RowMatrix;
using transforms::EncodingKind;

namespace {

train::TrainOptions options_with(const char* encoding, std::int64_t epochs) {
  train::TrainOptions options;
  options.epochs = epochs;
  options.patience = 0;
  options.seed = 5;
  options.positional = transforms::parse_positional_encoding(encoding);
  return options;
}

RowMatrix<float> dense(const FeatureMatrix& features) {
  if (!features.is_sparse()) return features.dense();
  return RowMatrix<float>(Eigen::MatrixXf(features.sparse()));
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("positional encodings are spelled none, lap:K and rw:K") {
    const auto lap = transforms::parse_positional_encoding("lap:8");
    CHECK(lap.kind == EncodingKind::kLaplacian);
    CHECK(lap.dims == 8);
    const auto rw = transforms::parse_positional_encoding("rw:16");
    CHECK(rw.kind == EncodingKind::kRandomWalk);
    CHECK(rw.dims == 16);
    CHECK(transforms::parse_positional_encoding("none").kind == EncodingKind::kNone);
    for (const char* spec : {"lap:8", "rw:1", "rw:1024", "none"}) {
      CHECK(transforms::positional_encoding_name(transforms::parse_positional_encoding(spec)) ==
            spec);
    }
    for (const char* spec : {"lap:0", "lap:-2", "lap:x", "lap:", "rw:1025", "rw:3.5"}) {
      CHECK_THROWS_WITH_AS((void)transforms::parse_positional_encoding(spec),
                           doctest::Contains("must be an integer from 1 to 1024"),
                           maskgat::InvalidArgument);
    }
    for (const char* spec : {"", "lap", "eig:4", "LAP:4", "none:3"}) {
      CHECK_THROWS_WITH_AS(
          (void)transforms::parse_positional_encoding(spec),
          doctest::Contains("expected none, lap:K (Laplacian eigenvectors) or rw:K"),
          maskgat::InvalidArgument);
    }
    CHECK_THROWS_AS((void)transforms::positional_encoding(maskgat::test::random_graph(5, 2, 1), {}),
                    maskgat::InvalidArgument);
  }

  TEST_CASE("append_columns puts the block after the features, sparse or dense") {
    const RowMatrix<float> block = maskgat::test::random_matrix<float>(40, 3, 7);
    RowMatrix<float> with_zeros = block;
    with_zeros.row(5).setZero();  // a padded row still gets its slots
    const FeatureMatrix sparse(maskgat::test::random_sparse<float>(40, 12, 0.2, 3));
    const FeatureMatrix dense_features(maskgat::test::random_matrix<float>(40, 12, 4));
    for (const FeatureMatrix* features : {&sparse, &dense_features}) {
      const FeatureMatrix out = transforms::append_columns(*features, with_zeros);
      CHECK(out.is_sparse() == features->is_sparse());
      REQUIRE(out.rows() == 40);
      REQUIRE(out.cols() == 15);
      RowMatrix<float> expected(40, 15);
      expected << dense(*features), with_zeros;
      CHECK(dense(out) == expected);
      if (out.is_sparse()) CHECK(out.sparse().nonZeros() == sparse.sparse().nonZeros() + 40 * 3);
    }
    CHECK_THROWS_WITH_AS((void)transforms::append_columns(sparse, block.topRows(39)),
                         "append_columns: the block has 39 rows, the features 40",
                         maskgat::InvalidArgument);
  }

  TEST_CASE("scale_columns scales only the given columns") {
    const RowMatrix<float> block = maskgat::test::random_matrix<float>(30, 4, 2);
    const std::vector<float> factors = {-1.0F, 1.0F, -1.0F, 0.5F};
    for (const bool sparse : {true, false}) {
      const FeatureMatrix features =
          sparse ? FeatureMatrix(maskgat::test::random_sparse<float>(30, 6, 0.3, 9))
                 : FeatureMatrix(maskgat::test::random_matrix<float>(30, 6, 9));
      FeatureMatrix scaled = transforms::append_columns(features, block);
      RowMatrix<float> expected = dense(scaled);
      for (std::int64_t c = 0; c < 4; ++c) expected.col(6 + c) *= factors[c];
      scaled.scale_columns(6, factors);
      CHECK(dense(scaled) == expected);
      CHECK_THROWS_WITH_AS(scaled.scale_columns(7, factors),
                           "scale_columns: columns 7 to 10 of a matrix with 10 columns",
                           maskgat::InvalidArgument);
    }
  }

  TEST_CASE("model_input appends the options' encoding of the dataset's graph") {
    const maskgat::Dataset data = maskgat::test::synthetic_dataset(300, 5.0, 10, 3, 4);
    CHECK(dense(train::model_input(data, options_with("none", 1))) == dense(data.features));
    const FeatureMatrix input = train::model_input(data, options_with("rw:3", 1));
    RowMatrix<float> expected(300, 13);
    expected << dense(data.features), transforms::random_walk_encoding(data.graph, 3);
    CHECK(dense(input) == expected);
  }

  TEST_CASE("training with an encoding: wider input, saved setting, stored signs in evaluation") {
    const maskgat::Dataset data = maskgat::test::synthetic_dataset(300, 5.0, 10, 3, 4);
    for (const char* encoding : {"none", "lap:4", "rw:4"}) {
      CAPTURE(encoding);
      const train::TrainOptions options = options_with(encoding, 12);
      train::Trainer trainer(data, options);
      trainer.fit();
      CHECK(trainer.options().model.in_features == (encoding[0] == 'n' ? 10 : 14));
      const train::Checkpoint checkpoint = trainer.checkpoint();
      CHECK(transforms::positional_encoding_name(checkpoint.options.positional) == encoding);
      // The prediction path of `maskgat evaluate` and `predict` (the model from the checkpoint on
      // a recomputed input) gives the trainer's own evaluation bit for bit, so evaluation sees
      // the encoding's stored signs.
      train::Predictor predictor(checkpoint, data);
      CHECK(predictor.probabilities() == trainer.predict_probabilities());
      CHECK(predictor.predicted_classes() == trainer.predicted_classes());
      const std::vector<maskgat::NodeId> some{5, 0, 299};
      CHECK(predictor.probabilities(some) == trainer.predict_probabilities(some));
      const auto from_predictor = predictor.attention();
      const auto from_trainer = trainer.attention();
      REQUIRE(from_predictor.size() == from_trainer.size());
      for (std::size_t layer = 0; layer < from_trainer.size(); ++layer) {
        CHECK(from_predictor[layer].sources == from_trainer[layer].sources);
        CHECK(from_predictor[layer].alpha == from_trainer[layer].alpha);
      }
    }
  }

  TEST_CASE("sign flips are drawn per step from the seed: runs repeat, resume and ignore threads") {
    const maskgat::Dataset data = maskgat::test::synthetic_dataset(300, 5.0, 10, 3, 4);
    std::vector<float> reference;
    for (const std::size_t threads : {1, 2}) {
      const tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
      train::Trainer whole(data, options_with("lap:4", 30));
      whole.fit();
      if (reference.empty()) reference = parameter_values(whole);
      CHECK(parameter_values(whole) == reference);
    }
    train::Trainer first(data, options_with("lap:4", 12));
    first.fit();
    train::Trainer resumed(data, first.checkpoint(), 30);
    resumed.fit();
    CHECK(parameter_values(resumed) == reference);
  }

  TEST_CASE("training flips exactly the encoding's columns, by flip_signs(seed, epoch)") {
    maskgat::Dataset dense_data = maskgat::test::synthetic_dataset(300, 5.0, 10, 3, 4);
    REQUIRE(!dense_data.features.is_sparse());
    maskgat::Dataset sparse_data = maskgat::test::synthetic_dataset(300, 5.0, 10, 3, 4);
    sparse_data.features = FeatureMatrix(maskgat::test::random_sparse<float>(300, 10, 0.3, 6));
    for (const maskgat::Dataset* data : {&dense_data, &sparse_data}) {
      CAPTURE(data->features.is_sparse());
      // Random-walk encodings are not flipped: the same columns as plain features train alike.
      train::Trainer walks(*data, options_with("rw:4", 10));
      walks.fit();
      maskgat::Dataset appended = *data;
      appended.features = train::model_input(*data, options_with("rw:4", 10));
      train::Trainer plain_walks(appended, options_with("none", 10));
      plain_walks.fit();
      CHECK(parameter_values(walks) == parameter_values(plain_walks));
      // Laplacian ones are: epoch 1 trains on the columns flipped by flip_signs(seed, 1).
      const train::TrainOptions options = options_with("lap:4", 1);
      train::Trainer laplacian(*data, options);
      laplacian.fit();
      RowMatrix<float> flipped = transforms::laplacian_encoding(data->graph, 4);
      const RowMatrix<float> stored = flipped;
      transforms::flip_signs(flipped, options.seed, 1);
      REQUIRE(flipped != stored);  // the step flips some column, so the check below can fail
      appended.features = transforms::append_columns(data->features, flipped);
      train::Trainer plain_flipped(appended, options_with("none", 1));
      plain_flipped.fit();
      CHECK(parameter_values(laplacian) == parameter_values(plain_flipped));
    }
  }

  TEST_CASE("bad encodings are refused before any work") {
    const maskgat::Dataset data = maskgat::test::synthetic_dataset(300, 5.0, 10, 3, 4);
    train::TrainOptions options = options_with("none", 1);
    options.positional.dims = 5;
    CHECK_THROWS_WITH_AS(train::Trainer(data, options),
                         "positional encoding none has width 5, expected 0",
                         maskgat::InvalidArgument);
    options.positional = {EncodingKind::kLaplacian, 2000};
    CHECK_THROWS_WITH_AS(train::Trainer(data, options),
                         "positional encoding lap has width 2000, expected 1 to 1024",
                         maskgat::InvalidArgument);
    options.positional = {EncodingKind::kRandomWalk, 0};
    CHECK_THROWS_WITH_AS(train::Trainer(data, options),
                         "positional encoding rw has width 0, expected 1 to 1024",
                         maskgat::InvalidArgument);
    options.positional = {static_cast<EncodingKind>(7), 0};
    CHECK_THROWS_WITH_AS(train::Trainer(data, options),
                         "positional encoding of unknown kind has width 0, expected 1 to 1024",
                         maskgat::InvalidArgument);
    // Resuming on data of another width fails before the encoding is computed.
    train::Trainer trainer(data, options_with("lap:4", 2));
    trainer.fit();
    maskgat::Dataset narrower = data;
    narrower.features = FeatureMatrix(maskgat::test::random_matrix<float>(300, 8, 1));
    CHECK_THROWS_WITH_AS(train::Trainer(narrower, trainer.checkpoint(), 5),
                         "the model takes 14 features (10 of the data's and 4 of its positional "
                         "encoding lap:4), the data has 8",
                         maskgat::InvalidArgument);
  }
}
