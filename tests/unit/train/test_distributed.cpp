// Distributed full-graph training on the parts of a partition, one thread per part standing in
// for MPI ranks (support/thread_group.hpp): every parameter follows single-process training on the
// whole graph, with dropout, for dense and sparse features, GAT and GATv2; the parts' losses and
// accuracies add up to the whole graph's; checkpoints record the whole graph's data and continue
// on another part count; halo rows travel in rounds of any size; mismatched parts and options are
// refused.

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "maskgat/core/error.hpp"
#include "maskgat/graph/masks.hpp"
#include "maskgat/io/partition.hpp"
#include "maskgat/train/checkpoint.hpp"
#include "maskgat/train/halo_exchange.hpp"
#include "maskgat/train/trainer.hpp"
#include "support/paths.hpp"
#include "support/random_data.hpp"
#include "support/thread_group.hpp"
#include "support/trainer_values.hpp"

namespace fs = std::filesystem;
using maskgat::Dataset;
using maskgat::NodeId;
namespace train = maskgat::train;

namespace {

// The largest |a - b| / (1 + |b|) over two runs' parameters.
double largest_difference(const std::vector<float>& a, const std::vector<float>& b) {
  REQUIRE(a.size() == b.size());
  double worst = 0.0;
  for (std::size_t k = 0; k < a.size(); ++k) {
    worst = std::max(worst, std::abs(static_cast<double>(a[k]) - b[k]) / (1.0 + std::abs(b[k])));
  }
  return worst;
}

// Writes `data` in `parts` parts (node v in part (v * 7 + v / 13) % parts) and opens them.
std::vector<maskgat::GraphPart> parts_of(const Dataset& data, std::int32_t parts,
                                         const std::string& tag) {
  std::vector<std::int32_t> owner;
  for (NodeId v = 0; v < data.graph.num_nodes(); ++v) {
    owner.push_back(static_cast<std::int32_t>((v * 7 + v / 13) % parts));
  }
  const fs::path dir = maskgat::test::scratch_dir(tag) / "parts";
  maskgat::write_partition(data, owner, parts, dir, true);
  std::vector<maskgat::GraphPart> opened;
  for (std::int32_t q = 0; q < parts; ++q) {
    opened.push_back(maskgat::open_part(dir / ("part-" + std::to_string(q))));
  }
  return opened;
}

// What one distributed run gives: rank 0's fit result, parameters and checkpoint.
struct Distributed {
  train::FitResult result;
  std::vector<float> values;
  train::Checkpoint checkpoint;
};

// Trains on every part at once, from `options` or (when given) from a checkpoint.
Distributed train_on_parts(const std::vector<maskgat::GraphPart>& parts,
                           const train::TrainOptions& options,
                           const train::Checkpoint* resume = nullptr, std::int64_t epochs = 0) {
  maskgat::test::ThreadGroup group(static_cast<int>(parts.size()));
  Distributed out;
  std::vector<std::vector<float>> values(parts.size());
  group.run([&](int rank, maskgat::Communicator& comm) {
    const maskgat::GraphPart& part = parts[static_cast<std::size_t>(rank)];
    train::Trainer trainer = resume != nullptr ? train::Trainer(part, comm, *resume, epochs)
                                               : train::Trainer(part, comm, options);
    const train::FitResult result = trainer.fit();
    values[static_cast<std::size_t>(rank)] = maskgat::test::parameter_values(trainer);
    if (rank == 0) {
      out.result = result;
      out.checkpoint = trainer.checkpoint();
    }
  });
  for (const auto& rank_values : values) {
    CHECK(rank_values == values.front());  // every rank holds the same parameters, bit for bit
  }
  out.values = values.front();
  return out;
}

train::TrainOptions options_of(maskgat::nn::AttentionKind attention, std::int64_t epochs) {
  train::TrainOptions options;
  options.model.attention = attention;
  options.epochs = epochs;
  options.patience = 0;
  options.receptive_field = false;
  options.seed = 5;
  return options;
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("distributed: every part count trains as one process on the whole graph") {
    const Dataset dense = maskgat::test::synthetic_dataset(300, 5.0, 12, 3, 2);
    const Dataset sparse = [&] {
      Dataset copy = dense;
      copy.features = maskgat::FeatureMatrix(maskgat::test::random_sparse<float>(300, 40, 0.2, 9));
      return copy;
    }();
    for (const auto& [data, name] : {std::pair{&dense, "dense"}, std::pair{&sparse, "sparse"}}) {
      // Not dot-product attention: its key bias shifts every score of a row alike, which the
      // softmax cancels, so its gradient is zero but for rounding, and Adam (dividing by the
      // gradient's size) moves it by rounding noise alone, differently in any two runs that sum
      // in another order (docs/scaling.md).
      for (const auto attention :
           {maskgat::nn::AttentionKind::kGat, maskgat::nn::AttentionKind::kGatV2}) {
        const train::TrainOptions options = options_of(attention, 12);
        train::Trainer one(*data, options);
        const train::FitResult single = one.fit();
        const std::vector<float> expected = maskgat::test::parameter_values(one);
        for (const std::int32_t count : {1, 2, 3}) {
          const std::string what =
              std::string(name) + " " + maskgat::nn::attention_kind_name(attention);
          CAPTURE(what);
          CAPTURE(count);
          const Distributed run = train_on_parts(
              parts_of(*data, count, std::string("distributed_") + name + std::to_string(count)),
              options);
          CHECK(largest_difference(run.values, expected) <= 1e-5);
          CHECK(run.result.test_accuracy == single.test_accuracy);
          CHECK(run.result.val_nodes == single.val_nodes);
          CHECK(run.result.test_nodes == single.test_nodes);
          CHECK(std::abs(run.result.val_loss - single.val_loss) <= 1e-5);
        }
      }
    }
  }

  TEST_CASE("distributed: dot-product attention trains as one process but for its key biases") {
    // The key biases follow rounding noise (see the test above); every other parameter, which the
    // exchange of the keys and values and of their gradients reaches, must follow one process.
    const Dataset data = maskgat::test::synthetic_dataset(300, 5.0, 12, 3, 2);
    const train::TrainOptions options = options_of(maskgat::nn::AttentionKind::kDot, 6);
    train::Trainer one(data, options);
    const train::FitResult single = one.fit();
    const auto& entries = one.model().parameters().entries();
    REQUIRE(std::count_if(entries.begin(), entries.end(), [](const auto& entry) {
              return entry.name.ends_with(".key.bias");
            }) == 2);
    const auto without_key_biases = [&](std::vector<float> values) {
      for (const auto& entry : entries) {
        if (entry.name.ends_with(".key.bias")) {
          std::fill_n(values.begin() + entry.parameter.offset, entry.parameter.size(), 0.0F);
        }
      }
      return values;
    };
    const std::vector<float> expected = without_key_biases(maskgat::test::parameter_values(one));
    for (const std::int32_t count : {2, 3}) {
      CAPTURE(count);
      const Distributed run =
          train_on_parts(parts_of(data, count, "distributed_dot" + std::to_string(count)), options);
      CHECK(largest_difference(without_key_biases(run.values), expected) <= 1e-5);
      CHECK(run.result.test_accuracy == single.test_accuracy);
    }
  }

  TEST_CASE("distributed: checkpoints record the whole graph and resume on other part counts") {
    const Dataset data = maskgat::test::synthetic_dataset(240, 5.0, 10, 3, 4);
    const train::TrainOptions options = options_of(maskgat::nn::AttentionKind::kGat, 6);
    const Distributed three = train_on_parts(parts_of(data, 3, "distributed_resume3"), options);
    REQUIRE(three.checkpoint.data.has_value());
    const train::DataRecord whole = train::record_data(data);
    CHECK(three.checkpoint.data->nodes == whole.nodes);
    CHECK(three.checkpoint.data->nodes_hash == whole.nodes_hash);
    CHECK(three.checkpoint.data->split_hash == whole.split_hash);
    CHECK(three.checkpoint.data->fitted == whole.fitted);  // every part's, gathered
    REQUIRE_FALSE(whole.fitted.empty());
    CHECK_FALSE(three.checkpoint.options.receptive_field);

    train::TrainOptions longer = options;
    longer.epochs = 10;
    train::Trainer straight(data, longer);
    (void)straight.fit();
    const std::vector<float> expected = maskgat::test::parameter_values(straight);
    const Distributed two =
        train_on_parts(parts_of(data, 2, "distributed_resume2"), options, &three.checkpoint, 10);
    CHECK(largest_difference(two.values, expected) <= 1e-5);
    train::Trainer one(data, three.checkpoint, 10);  // the data record matches the whole graph
    (void)one.fit();
    CHECK(largest_difference(maskgat::test::parameter_values(one), expected) <= 1e-5);

    // A model of other data does not resume on these parts.
    const Dataset other = maskgat::test::synthetic_dataset(240, 5.0, 10, 3, 5);
    train::Trainer foreign(other, options);
    (void)foreign.fit();
    const train::Checkpoint foreign_checkpoint = foreign.checkpoint();
    CHECK_THROWS_WITH_AS(
        train_on_parts(parts_of(data, 2, "distributed_foreign"), options, &foreign_checkpoint, 10),
        doctest::Contains("the partition is not of the data the run was trained on"),
        maskgat::InvalidArgument);
  }

  TEST_CASE("distributed: each part forms the rows of the whole graph's receptive field") {
    const Dataset data = maskgat::test::synthetic_dataset(200, 3.0, 6, 2, 7);
    const maskgat::Graph mask = maskgat::masks::from_graph(data.graph, true);
    std::vector<NodeId> outputs;  // every ninth node, spread over the parts
    for (NodeId v = 0; v < data.graph.num_nodes(); v += 9) outputs.push_back(v);
    for (const std::int64_t layers : {1, 2, 3}) {
      const auto whole = maskgat::masks::receptive_rows(mask, outputs, layers);
      const std::vector<maskgat::GraphPart> parts =
          parts_of(data, 3, "distributed_receptive_" + std::to_string(layers));
      std::vector<std::int64_t> wrong(3, -1);  // per part: rows formed otherwise than expected
      maskgat::test::ThreadGroup group(3);
      group.run([&](int rank, maskgat::Communicator& comm) {
        train::HaloExchange halo(parts[static_cast<std::size_t>(rank)], comm);
        const maskgat::Dataset& part = halo.data();
        const maskgat::Graph part_mask = maskgat::masks::from_graph(part.graph, true);
        std::vector<NodeId> mine;  // its rows of the outputs, by their ids in the whole graph
        for (NodeId r = 0; r < part.graph.num_nodes(); ++r) {
          const NodeId origin = halo.origins()[static_cast<std::size_t>(r)];
          if (halo.own_rows()[static_cast<std::size_t>(r)] != 0 && origin % 9 == 0) {
            mine.push_back(r);
          }
        }
        const auto rows = halo.receptive_rows(part_mask, mine, layers);
        std::int64_t differ = rows.size() == static_cast<std::size_t>(layers) ? 0 : 1;
        for (std::size_t l = 0; l < rows.size() && differ == 0; ++l) {
          for (NodeId r = 0; r < part.graph.num_nodes(); ++r) {
            const auto row = static_cast<std::size_t>(r);
            const auto origin = static_cast<std::size_t>(halo.origins()[row]);
            // Own rows as the whole graph needs them; halo rows never (their owners form them).
            const std::uint8_t expected = halo.own_rows()[row] != 0 ? whole[l][origin] : 0;
            differ += rows[l][row] != expected ? 1 : 0;
          }
        }
        wrong[static_cast<std::size_t>(rank)] = differ;
      });
      CHECK(wrong == std::vector<std::int64_t>(3, 0));
      // The field is a proper part of the graph below the output layer, so the test can tell.
      CHECK(std::count(whole.back().begin(), whole.back().end(), 1) <
            std::count(whole.front().begin(), whole.front().end(), 1) + (layers == 1 ? 1 : 0));
    }
  }

  TEST_CASE("distributed: steps and validation on each part's small field train as one process") {
    // A few training and validation nodes of 3000 (every `every`-th): their fields are small
    // parts of every part, so the parts step and validate on them, exchanging only the halo rows
    // the fields read. GAT on dense and sparse features; GATv2 with 3 layers, whose halo rows are
    // read by two layers.
    const Dataset dense = maskgat::test::synthetic_dataset(3000, 3.0, 8, 3, 11);
    Dataset sparse = dense;
    sparse.features =
        maskgat::FeatureMatrix(maskgat::test::random_sparse<float>(3000, 40, 0.2, 12));
    struct Case {
      const Dataset* data;
      const char* name;
      maskgat::nn::AttentionKind attention;
      std::int64_t layers;
      NodeId every;
    };
    for (const Case& c : {Case{&dense, "dense", maskgat::nn::AttentionKind::kGat, 2, 100},
                          Case{&sparse, "sparse", maskgat::nn::AttentionKind::kGat, 2, 100},
                          Case{&dense, "gatv2", maskgat::nn::AttentionKind::kGatV2, 3, 300}}) {
      Dataset data = *c.data;
      for (NodeId v = 0; v < data.graph.num_nodes(); ++v) {
        data.split[static_cast<std::size_t>(v)] = v % c.every == 0 ? maskgat::SplitPart::kTrain
                                                  : v % c.every == c.every / 2
                                                      ? maskgat::SplitPart::kVal
                                                      : maskgat::SplitPart::kTest;
      }
      train::TrainOptions options = options_of(c.attention, 8);
      options.model.layers = c.layers;
      train::Trainer one(data, options);  // the whole graph (no field)
      const train::FitResult single = one.fit();
      const std::vector<float> expected = maskgat::test::parameter_values(one);
      options.receptive_field = true;
      for (const std::int32_t count : {2, 3}) {
        CAPTURE(c.name);
        CAPTURE(count);
        const std::vector<maskgat::GraphPart> parts = parts_of(
            data, count, std::string("distributed_field_") + c.name + std::to_string(count));
        std::vector<std::vector<float>> values(parts.size());
        std::vector<std::int64_t> step_rows(parts.size());
        std::vector<train::FitResult> results(parts.size());
        maskgat::test::ThreadGroup group(count);
        group.run([&](int rank, maskgat::Communicator& comm) {
          const auto r = static_cast<std::size_t>(rank);
          train::Trainer trainer(parts[r], comm, options);
          results[r] = trainer.fit([&](const train::EpochStats& stats) {
            step_rows[r] = std::max(step_rows[r], stats.input_rows);
          });
          values[r] = maskgat::test::parameter_values(trainer);
        });
        for (std::size_t r = 0; r < parts.size(); ++r) {
          CAPTURE(r);
          CHECK(values[r] == values.front());
          // The step read the field's rows, fewer than half the part's.
          CHECK(step_rows[r] > 0);
          CHECK(2 * step_rows[r] < parts[r].data.graph.num_nodes());
        }
        CHECK(largest_difference(values.front(), expected) <= 1e-5);
        CHECK(results.front().test_accuracy == single.test_accuracy);
        CHECK(std::abs(results.front().val_loss - single.val_loss) <= 1e-5);
      }
    }
  }

  TEST_CASE(
      "distributed: halo rows are filled and their gradients returned in rounds of any size") {
    const Dataset data = maskgat::test::synthetic_dataset(150, 4.0, 6, 2, 3);
    const std::vector<maskgat::GraphPart> parts = parts_of(data, 3, "distributed_rounds");
    constexpr std::int64_t kWidth = 5;
    // Per chunk size and part: its rows after `fill`, and after `reduce`.
    struct Rows {
      std::vector<maskgat::RowMatrix<float>> filled, reduced;
    };
    const auto exchange_in = [&](std::size_t chunk_bytes) {
      Rows out{std::vector<maskgat::RowMatrix<float>>(3),
               std::vector<maskgat::RowMatrix<float>>(3)};
      maskgat::test::ThreadGroup group(3);
      group.run([&](int rank, maskgat::Communicator& comm) {
        train::HaloExchange halo(parts[static_cast<std::size_t>(rank)], comm, chunk_bytes);
        const auto count = static_cast<Eigen::Index>(halo.origins().size());
        // Own rows hold their node's id, halo rows -1 until filled.
        maskgat::RowMatrix<float> rows(count, kWidth);
        for (Eigen::Index r = 0; r < count; ++r) {
          const auto origin = static_cast<float>(halo.origins()[static_cast<std::size_t>(r)]);
          rows.row(r).setConstant(halo.own_rows()[static_cast<std::size_t>(r)] != 0 ? origin
                                                                                    : -1.0F);
        }
        halo.fill(rows);
        // Every row, own or halo, adds rank + 1 to its node's gradient.
        maskgat::RowMatrix<float> grad =
            maskgat::RowMatrix<float>::Constant(count, kWidth, static_cast<float>(rank + 1));
        halo.reduce(grad);
        out.filled[static_cast<std::size_t>(rank)] = rows;
        out.reduced[static_cast<std::size_t>(rank)] = grad;
      });
      return out;
    };
    const Rows whole = exchange_in(train::HaloExchange::kChunkBytes);
    double total = 0.0;  // of every part's own rows after reduce
    double expected = 0.0;
    for (std::size_t q = 0; q < parts.size(); ++q) {
      const maskgat::GraphPart& part = parts[q];
      for (NodeId r = 0; r < static_cast<NodeId>(part.globals.size()); ++r) {
        const auto row = static_cast<Eigen::Index>(r);
        CAPTURE(q);
        CAPTURE(r);
        // Every row holds its node's id, halo rows as their owners sent them.
        CHECK((whole.filled[q].row(row).array() ==
               static_cast<float>(part.origins[static_cast<std::size_t>(r)]))
                  .all());
        expected += static_cast<double>(q + 1) * kWidth;
        if (part.is_own(r)) {
          total += whole.reduced[q].row(row).sum();
        } else {
          CHECK(whole.reduced[q].row(row).isZero());
        }
      }
    }
    CHECK(total == expected);  // every row's gradient reached its owner, once
    for (const std::size_t chunk_bytes :
         {std::size_t{1}, std::size_t{3 * kWidth * sizeof(float)}}) {
      CAPTURE(chunk_bytes);
      const Rows rounds = exchange_in(chunk_bytes);
      for (std::size_t q = 0; q < parts.size(); ++q) {
        CHECK(rounds.filled[q] == whole.filled[q]);
        CHECK(rounds.reduced[q] == whole.reduced[q]);
      }
    }
  }

  TEST_CASE("distributed: a field's exchange refuses rows that are not the part's") {
    const Dataset data = maskgat::test::synthetic_dataset(120, 4.0, 6, 2, 4);
    const std::vector<maskgat::GraphPart> parts = parts_of(data, 2, "distributed_field_refused");
    // Every part makes the same wrong call, so each throws before any exchange.
    const auto field_with = [&](const auto& change) {
      maskgat::test::ThreadGroup group(2);
      group.run([&](int rank, maskgat::Communicator& comm) {
        train::HaloExchange halo(parts[static_cast<std::size_t>(rank)], comm);
        const maskgat::Graph mask = maskgat::masks::from_graph(halo.data().graph, true);
        const std::vector<NodeId> none;
        auto rows = halo.receptive_rows(mask, none, 2);
        std::vector<NodeId> field_rows{0, 1};
        change(rows, field_rows);
        (void)halo.field(mask, rows, field_rows);
      });
    };
    CHECK_THROWS_WITH_AS(field_with([](auto&, std::vector<NodeId>& field_rows) {
                           field_rows = {1, 1};
                         }),
                         doctest::Contains("the field's row 1 is 1, expected ascending rows"),
                         maskgat::InvalidArgument);
    CHECK_THROWS_WITH_AS(field_with([](auto&, std::vector<NodeId>& field_rows) {
                           field_rows = {0, 100000};
                         }),
                         doctest::Contains("the field's row 1 is 100000, expected ascending rows"),
                         maskgat::InvalidArgument);
    CHECK_THROWS_WITH_AS(field_with([](auto& rows, auto&) { rows[1].pop_back(); }),
                         doctest::Contains("bytes per layer for a part of"),
                         maskgat::InvalidArgument);
  }

  TEST_CASE("distributed: parts on the wrong ranks and mini-batches are refused") {
    const Dataset data = maskgat::test::synthetic_dataset(120, 4.0, 6, 2, 1);
    const std::vector<maskgat::GraphPart> parts = parts_of(data, 2, "distributed_refused");
    maskgat::test::ThreadGroup swapped(2);
    CHECK_THROWS_WITH_AS(swapped.run([&](int rank, maskgat::Communicator& comm) {
      (void)train::HaloExchange(parts[static_cast<std::size_t>(1 - rank)], comm);
    }),
                         doctest::Contains("expected part r of P on rank r of P"),
                         maskgat::InvalidArgument);
    train::TrainOptions batches = options_of(maskgat::nn::AttentionKind::kGat, 2);
    batches.batch_size = 16;
    maskgat::test::ThreadGroup group(2);
    CHECK_THROWS_WITH_AS(group.run([&](int rank, maskgat::Communicator& comm) {
      (void)train::Trainer(parts[static_cast<std::size_t>(rank)], comm, batches);
    }),
                         doctest::Contains("mini-batches and positional encodings do not run"),
                         maskgat::InvalidArgument);
  }
}
