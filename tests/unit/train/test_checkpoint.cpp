#include <doctest/doctest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "maskgat/core/error.hpp"
#include "maskgat/io/synthetic.hpp"
#include "maskgat/nn/loss.hpp"
#include "maskgat/train/checkpoint.hpp"
#include "maskgat/train/predictor.hpp"
#include "support/checkpoint_file.hpp"
#include "support/paths.hpp"
#include "support/random_data.hpp"
#include "support/trainer_values.hpp"

namespace train = maskgat::train;
using maskgat::test::parameter_values;

namespace {

train::TrainOptions options_with(std::int64_t epochs) {
  train::TrainOptions options;
  options.epochs = epochs;
  options.patience = 15;
  options.seed = 2;
  return options;
}

std::string read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// The bytes of the options at the start of a checkpoint's payload: attention kind, 6 counts,
// 7 reals, epochs, patience and seed. Format version 2 follows them with the positional
// encoding's kind (1 byte) and width (8), version 3 with the receptive-field flag (1), version 6
// with the mini-batch size and the fanouts' count (8 each; no fanouts follow in full-batch runs).
constexpr std::size_t kOptionsBytes = 1 + 6 * 8 + 7 * 8 + 3 * 8;
constexpr std::size_t kBatchBytes = 2 * 8;
// Format version 5 ends the payload with the data record: a marker, five flags, the split's
// seed and sizes, the node count and two hashes (version 4: three flags).
constexpr std::size_t kDataRecordBytes = 1 + 5 + 8 + 3 * 8 + 3 * 8;

// Format version 8 ends the payload with the metric (1 byte), the best epoch's validation score
// (8) and, after a data record, the fixed split (8).
constexpr std::size_t kFormat8Bytes = 1 + 8 + 8;

// Format version 9 ends it with the model's spec (a string: its length, 8 bytes, empty for the
// paper's model) and the running statistics (an array: its count, 8 bytes, none without).
constexpr std::size_t kFormat9Bytes = 8 + 8;

// Format version 10 ends it with the rule that picked the kept epoch (1 byte), version 11 with
// the task (1 byte).
constexpr std::size_t kFormat10Bytes = 1;
constexpr std::size_t kFormat11Bytes = 1;

// The payload of a version 11 file `bytes` as version 10 holds it.
std::string version10_payload(const std::string& bytes) {
  REQUIRE(bytes[8] == 11);
  return bytes.substr(maskgat::test::kCheckpointHeader,
                      bytes.size() - maskgat::test::kCheckpointHeader - 8 - kFormat11Bytes);
}

// The payload of a version 11 file `bytes` as version 9 holds it.
std::string version9_payload(const std::string& bytes) {
  const std::string payload = version10_payload(bytes);
  return payload.substr(0, payload.size() - kFormat10Bytes);
}

// The payload of a version 11 file `bytes` of the paper's model as version 8 holds it.
std::string version8_payload(const std::string& bytes) {
  const std::string payload = version9_payload(bytes);
  return payload.substr(0, payload.size() - kFormat9Bytes);
}

// The payload of a version 11 file `bytes` (with a data record) as version 7 holds it.
std::string version7_payload(const std::string& bytes) {
  const std::string payload = version8_payload(bytes);
  return payload.substr(0, payload.size() - kFormat8Bytes);
}

// Format version 7 ends the record with the fitted nodes' hashes: their count, then 8 bytes each.
// The payload of a version 11 file `bytes` as version 6 holds it: without them.
std::string version6_payload(const std::string& bytes, std::size_t fitted) {
  const std::string payload = version7_payload(bytes);
  std::uint64_t count = 0;
  std::memcpy(&count, payload.data() + payload.size() - 8 - 8 * fitted, sizeof(count));
  REQUIRE(count == fitted);
  return payload.substr(0, payload.size() - 8 - 8 * fitted);
}

// The payload of `trainer`'s checkpoint, saved to `dir`, in the layout of format version 6.
std::string saved_payload(const train::Trainer& trainer, const std::filesystem::path& dir) {
  const train::Checkpoint checkpoint = trainer.checkpoint();
  train::save_checkpoint(dir / "saved.ckpt", checkpoint, true);
  return version6_payload(read_bytes(dir / "saved.ckpt"), checkpoint.data->fitted.size());
}

// The checkpoint of a 3-epoch run on the 12-feature synthetic graph.
train::Checkpoint short_run_checkpoint() {
  const maskgat::Dataset data = maskgat::test::synthetic_dataset(300, 5.0, 12, 3, 8);
  train::Trainer trainer(data, options_with(3));
  trainer.fit();
  return trainer.checkpoint();
}

// The payload of a 3-epoch run's checkpoint, saved to `dir`, and the run's parameter values.
std::pair<std::string, std::vector<float>> short_run_payload(const std::filesystem::path& dir) {
  const maskgat::Dataset data = maskgat::test::synthetic_dataset(300, 5.0, 12, 3, 8);
  train::Trainer trainer(data, options_with(3));
  trainer.fit();
  return {saved_payload(trainer, dir), trainer.checkpoint().values};
}

// The class probabilities of the model `checkpoint` holds, run on the trainer's mask over every
// node of `data`.
maskgat::RowMatrix<float> loaded_probabilities(const train::Checkpoint& checkpoint,
                                               const train::Trainer& trainer,
                                               const maskgat::Dataset& data) {
  maskgat::nn::Model model = train::load_model(checkpoint);
  maskgat::Rng unused(0);
  const maskgat::RowMatrix<float> logits =
      model.forward(trainer.mask(), data.features.view(), maskgat::nn::Mode::kEval, unused);
  maskgat::RowMatrix<float> probabilities;
  maskgat::nn::softmax(logits, probabilities);
  return probabilities;
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("a checkpoint round-trips every field and predicts like the trainer") {
    const maskgat::Dataset data = maskgat::test::synthetic_dataset(300, 5.0, 12, 3, 8);
    train::Trainer trainer(data, options_with(25));
    trainer.fit();
    const auto path = maskgat::test::scratch_dir("checkpoint") / "model.ckpt";
    std::filesystem::remove(path);
    const train::Checkpoint saved = trainer.checkpoint();
    train::save_checkpoint(path, saved, false);
    CHECK_THROWS_WITH_AS(train::save_checkpoint(path, saved, false),
                         (path.string() + ": the file exists; pass --force to replace it").c_str(),
                         maskgat::IoError);
    const train::Checkpoint loaded = train::load_checkpoint(path);
    CHECK(loaded.options.model.in_features == 12);
    CHECK(loaded.options.model.classes == 3);
    CHECK(loaded.options.seed == 2);
    CHECK(loaded.options.receptive_field);
    CHECK(loaded.dataset == data.name);
    CHECK(loaded.class_names == data.class_names);
    CHECK(loaded.values == saved.values);
    CHECK(loaded.state.last_values == saved.state.last_values);
    CHECK(loaded.state.optimizer_second == saved.state.optimizer_second);
    CHECK(loaded.state.rng.words == saved.state.rng.words);
    CHECK(loaded.state.epoch == 25);
    REQUIRE(loaded.parameters.size() == saved.parameters.size());
    CHECK(loaded.parameters[0].name == "conv1.weight");
    CHECK(loaded.options.selection == train::Selection::kGat);
    CHECK(loaded_probabilities(loaded, trainer, data) == trainer.predict_probabilities());
  }

  TEST_CASE("a checkpoint keeps the selection rule; version 9 files follow the GAT rule") {
    const maskgat::Dataset data = maskgat::test::synthetic_dataset(300, 5.0, 12, 3, 8);
    auto options = options_with(5);
    options.selection = train::Selection::kMetric;
    train::Trainer trainer(data, options);
    trainer.fit();
    const auto dir = maskgat::test::scratch_dir("checkpoint_selection");
    train::save_checkpoint(dir / "metric.ckpt", trainer.checkpoint(), true);
    CHECK(train::load_checkpoint(dir / "metric.ckpt").options.selection ==
          train::Selection::kMetric);
    write_bytes(dir / "v9.ckpt", maskgat::test::frame_checkpoint(
                                     version9_payload(read_bytes(dir / "metric.ckpt")), 9));
    CHECK(train::load_checkpoint(dir / "v9.ckpt").options.selection == train::Selection::kGat);
    std::string bad = version9_payload(read_bytes(dir / "metric.ckpt")) + std::string(1, '\x02');
    write_bytes(dir / "bad.ckpt", maskgat::test::frame_checkpoint(bad, 10));
    CHECK_THROWS_WITH_AS(train::load_checkpoint(dir / "bad.ckpt"),
                         doctest::Contains("unknown selection rule 2"), maskgat::ParseError);
    // Version 10 files are node tasks; a task byte out of range is refused.
    CHECK(train::load_checkpoint(dir / "metric.ckpt").options.task == train::Task::kNode);
    write_bytes(dir / "v10.ckpt", maskgat::test::frame_checkpoint(
                                      version10_payload(read_bytes(dir / "metric.ckpt")), 10));
    CHECK(train::load_checkpoint(dir / "v10.ckpt").options.task == train::Task::kNode);
    write_bytes(
        dir / "task.ckpt",
        maskgat::test::frame_checkpoint(
            version10_payload(read_bytes(dir / "metric.ckpt")) + std::string(1, '\x02'), 11));
    CHECK_THROWS_WITH_AS(train::load_checkpoint(dir / "task.ckpt"),
                         doctest::Contains("unknown task 2"), maskgat::ParseError);
  }

  TEST_CASE(
      "a model from a spec is saved with its spec and running statistics, and predicts "
      "from the file alone as the trainer does") {
    const maskgat::Dataset data = maskgat::test::synthetic_dataset(300, 5.0, 12, 3, 8);
    train::TrainOptions options = options_with(15);
    options.spec = maskgat::nn::parse_model_spec(
        R"({"modules": [{"type": "linear", "out": 8}, {"type": "residual", "modules": [
              {"type": "gat", "heads": 2, "channels": 4}, {"type": "batch_norm"},
              {"type": "gelu"}]}, {"type": "gatv2", "channels": "classes", "concat": false,
              "add_self_loops": false}]})",
        "spec");
    train::Trainer trainer(data, options);
    trainer.fit();
    CHECK_FALSE(trainer.options().receptive_field);  // batch statistics are over every node
    CHECK_FALSE(trainer.model().mask_self_loops());
    const auto path = maskgat::test::scratch_dir("checkpoint_spec") / "model.ckpt";
    std::filesystem::remove(path);
    const train::Checkpoint saved = trainer.checkpoint();
    REQUIRE(saved.buffers.size() == 16);
    train::save_checkpoint(path, saved, false);
    const train::Checkpoint loaded = train::load_checkpoint(path);
    REQUIRE(loaded.options.spec);
    CHECK(maskgat::nn::model_spec_json(*loaded.options.spec) ==
          maskgat::nn::model_spec_json(*saved.options.spec));
    CHECK(loaded.buffers == saved.buffers);
    CHECK(loaded.parameters[0].name == "lin1.weight");
    const maskgat::RowMatrix<float> probabilities = loaded_probabilities(loaded, trainer, data);
    CHECK(probabilities == trainer.predict_probabilities());
    // The predictor builds the same mask (without the self-loops the GATv2 layer goes without).
    train::Predictor predictor(loaded, data);
    CHECK(predictor.probabilities() == probabilities);
  }

  TEST_CASE("a resumed run ends exactly where an uninterrupted one does") {
    const maskgat::Dataset data = maskgat::test::synthetic_dataset(300, 5.0, 12, 3, 8);
    train::Trainer uninterrupted(data, options_with(70));
    const train::FitResult whole = uninterrupted.fit();
    train::Trainer first(data, options_with(30));
    first.fit();
    train::Trainer second(data, first.checkpoint(), 70);
    const train::FitResult resumed = second.fit();
    CHECK(resumed.epochs == whole.epochs);
    CHECK(resumed.best_epoch == whole.best_epoch);
    CHECK(resumed.test_accuracy == whole.test_accuracy);
    CHECK(parameter_values(second) == parameter_values(uninterrupted));
    const train::Checkpoint a = second.checkpoint();
    const train::Checkpoint b = uninterrupted.checkpoint();
    CHECK(a.state.last_values == b.state.last_values);
    CHECK(a.state.waiting == b.state.waiting);
    CHECK(a.state.rng.words == b.state.rng.words);
  }

  TEST_CASE("a version 1 checkpoint, from before positional encodings, loads without one") {
    const auto dir = maskgat::test::scratch_dir("checkpoint_version1");
    auto [payload, values] = short_run_payload(dir);
    CHECK(payload.substr(kOptionsBytes, 9) == std::string(9, '\0'));  // none, width 0
    CHECK(payload[kOptionsBytes + 9] == 1);                           // receptive field
    payload.erase(kOptionsBytes, 10 + kBatchBytes);
    payload.resize(payload.size() - kDataRecordBytes);
    write_bytes(dir / "v1.ckpt", maskgat::test::frame_checkpoint(payload, 1));
    const train::Checkpoint loaded = train::load_checkpoint(dir / "v1.ckpt");
    CHECK(loaded.options.positional.kind == maskgat::transforms::EncodingKind::kNone);
    CHECK_FALSE(loaded.options.receptive_field);
    CHECK(loaded.options.model.in_features == 12);
    CHECK(loaded.values == values);
  }

  TEST_CASE("a checkpoint records its data, version 6, 4 and 3 files load, bad records fail") {
    const auto dir = maskgat::test::scratch_dir("checkpoint_data_record");
    const maskgat::Dataset data = maskgat::test::synthetic_dataset(300, 5.0, 12, 3, 8);
    train::Trainer trainer(data, options_with(3));
    trainer.fit();
    train::save_checkpoint(dir / "v5.ckpt", trainer.checkpoint(), true);
    const train::Checkpoint loaded = train::load_checkpoint(dir / "v5.ckpt");
    REQUIRE(loaded.data);
    const train::DataRecord expected = train::record_data(data);
    CHECK(loaded.data->nodes == data.graph.num_nodes());
    CHECK(loaded.data->nodes_hash == expected.nodes_hash);
    CHECK(loaded.data->split_hash == expected.split_hash);
    CHECK(loaded.data->preparation.random_split);
    CHECK(loaded.data->preparation.split_sizes.val == data.preparation.split_sizes.val);
    CHECK(train::data_differences(*loaded.data, data, true).empty());
    CHECK(loaded.data->fitted == expected.fitted);
    CHECK(expected.fitted.size() == data.nodes_in(maskgat::SplitPart::kTrain).size() +
                                        data.nodes_in(maskgat::SplitPart::kVal).size());
    REQUIRE(expected.fitted.size() >= 2);
    std::string unsorted = version7_payload(read_bytes(dir / "v5.ckpt"));
    const std::size_t last = unsorted.size() - 8;  // the last hash, at the end of a v7 payload
    std::swap_ranges(unsorted.begin() + static_cast<std::ptrdiff_t>(last - 8),
                     unsorted.begin() + static_cast<std::ptrdiff_t>(last),
                     unsorted.begin() + static_cast<std::ptrdiff_t>(last));
    write_bytes(dir / "unsorted.ckpt", maskgat::test::frame_checkpoint(unsorted, 7));
    CHECK_THROWS_WITH_AS(train::load_checkpoint(dir / "unsorted.ckpt"),
                         doctest::Contains("the fitted nodes' hashes are not strictly ascending"),
                         maskgat::ParseError);

    CHECK_FALSE(loaded.data->preparation.largest_component);
    // Version 7: no metric (accuracy), the best validation score is the accuracy, no fixed split.
    write_bytes(dir / "v7.ckpt",
                maskgat::test::frame_checkpoint(version7_payload(read_bytes(dir / "v5.ckpt")), 7));
    const train::Checkpoint v7 = train::load_checkpoint(dir / "v7.ckpt");
    CHECK(v7.options.metric == train::Metric::kAccuracy);
    CHECK(v7.state.best_val_score == loaded.state.best_val_accuracy);
    REQUIRE(v7.data);
    CHECK(v7.data->preparation.fixed_split == -1);
    CHECK(v7.data->fitted == expected.fitted);
    std::string payload = version6_payload(read_bytes(dir / "v5.ckpt"), expected.fitted.size());
    write_bytes(dir / "v6.ckpt", maskgat::test::frame_checkpoint(payload, 6));
    const train::Checkpoint v6 = train::load_checkpoint(dir / "v6.ckpt");
    REQUIRE(v6.data);
    CHECK(v6.data->fitted.empty());  // cannot tell its training nodes
    CHECK(v6.data->split_hash == expected.split_hash);
    // Version 4: the options without the mini-batch fields, the record without the
    // largest-component and per-class flags.
    std::string v4 = payload;
    v4.erase(kOptionsBytes + 10, kBatchBytes);
    v4.erase(v4.size() - kDataRecordBytes + 4, 2);
    write_bytes(dir / "v4.ckpt", maskgat::test::frame_checkpoint(v4, 4));
    const train::Checkpoint old = train::load_checkpoint(dir / "v4.ckpt");
    REQUIRE(old.data);
    CHECK(old.data->split_hash == expected.split_hash);
    CHECK(old.data->preparation.split_sizes == loaded.data->preparation.split_sizes);
    std::string flag = payload;
    flag[flag.size() - kDataRecordBytes + 1] = 3;  // the undirected flag
    write_bytes(dir / "flag.ckpt", maskgat::test::frame_checkpoint(flag, 6));
    CHECK_THROWS_WITH_AS(train::load_checkpoint(dir / "flag.ckpt"),
                         doctest::Contains("data record flag 3, expected 0 or 1"),
                         maskgat::ParseError);
    std::string marker = payload;
    marker[marker.size() - kDataRecordBytes] = 0;  // no record, but its bytes follow
    write_bytes(dir / "marker.ckpt", maskgat::test::frame_checkpoint(marker, 6));
    CHECK_THROWS_AS(train::load_checkpoint(dir / "marker.ckpt"), maskgat::ParseError);
    payload.erase(kOptionsBytes + 10, kBatchBytes);
    payload.resize(payload.size() - kDataRecordBytes);
    write_bytes(dir / "v3.ckpt", maskgat::test::frame_checkpoint(payload, 3));
    CHECK_FALSE(train::load_checkpoint(dir / "v3.ckpt").data);
  }

  TEST_CASE("a version 5 record keeps the largest-component rule and a per-class split") {
    const auto dir = maskgat::test::scratch_dir("checkpoint_record_v5");
    maskgat::Dataset data = maskgat::test::synthetic_dataset(300, 5.0, 12, 3, 8);
    maskgat::draw_split(data, maskgat::per_class_split(5, 5), 3);
    maskgat::keep_largest_component(data);
    train::Trainer trainer(data, options_with(2));
    trainer.fit();
    train::save_checkpoint(dir / "m.ckpt", trainer.checkpoint(), true);
    const train::Checkpoint loaded = train::load_checkpoint(dir / "m.ckpt");
    REQUIRE(loaded.data);
    CHECK(loaded.data->preparation.largest_component);
    CHECK(loaded.data->preparation.split_sizes == maskgat::per_class_split(5, 5));
    CHECK(train::data_differences(*loaded.data, data, true).empty());

    maskgat::DatasetOptions options;
    static_cast<void>(train::prepare_as_trained(*loaded.data, nullptr, options));
    CHECK(options.largest_component);
    maskgat::Dataset whole = maskgat::test::synthetic_dataset(300, 5.0, 12, 3, 8);
    const auto differences = train::data_differences(*loaded.data, whole, false);
    REQUIRE_FALSE(differences.empty());
    CHECK(differences[0] ==
          "it was trained on its largest component only, this data holds every node");
  }

  TEST_CASE("data_differences names direction, normalisation and another split of the same nodes") {
    const maskgat::Dataset data = maskgat::test::synthetic_dataset(300, 5.0, 12, 3, 8);
    const train::DataRecord trained = train::record_data(data);
    maskgat::Dataset changed = data;
    changed.preparation.undirected = true;
    changed.preparation.rows_normalized = !data.preparation.rows_normalized;
    maskgat::draw_split(changed, data.preparation.split_sizes, 99);
    const auto differences = train::data_differences(trained, changed, true);
    REQUIRE(differences.size() == 3);
    CHECK(differences[0] ==
          "it was trained on its edges as given (directed), this data is read "
          "with every edge also reversed (undirected)");
    CHECK(differences[1].starts_with("its features were "));
    CHECK(differences[2].starts_with("it was trained on a random split with seed "));
    CHECK(differences[2].find("this data has a random split with seed 99") != std::string::npos);
    CHECK(train::data_differences(trained, changed, false).size() == 2);  // prediction
    changed.node_names.back() += "x";  // other nodes: their split is compared node by node
    const auto other_nodes = train::data_differences(trained, changed, true);
    REQUIRE(other_nodes.size() == 3);
    CHECK(other_nodes[2].find("are nodes it trained or was validated on") != std::string::npos);
    changed.node_names = data.node_names;
    REQUIRE(train::data_differences(trained, changed, true).size() == 3);
    changed.labels[0] = (changed.labels[0] + 1) % 3;  // the same names, labelled otherwise:
    const auto relabelled = train::data_differences(trained, changed, true);  // other nodes,
    REQUIRE(relabelled.size() == 3);  // whose test nodes it trained on are still known by name
    CHECK(relabelled[2].find("are nodes it trained or was validated on") != std::string::npos);
  }

  TEST_CASE("a model is never scored on a node it trained or was validated on, known by name") {
    const maskgat::Dataset data = maskgat::test::synthetic_dataset(300, 5.0, 12, 3, 8);
    const train::DataRecord trained = train::record_data(data);
    REQUIRE(std::is_sorted(trained.fitted.begin(), trained.fitted.end()));
    // One label fewer makes other nodes by the fingerprints; a split drawn on them anew puts
    // some of the model's training and validation nodes among its test nodes.
    maskgat::Dataset changed = data;
    changed.labels[0] = -1;
    maskgat::draw_split(changed, data.preparation.split_sizes, 7);
    const std::vector<maskgat::NodeId> fitted = train::fitted_test_nodes(trained, changed);
    REQUIRE_FALSE(fitted.empty());
    std::size_t expected = 0;
    for (std::size_t i = 0; i < data.split.size(); ++i) {
      expected += changed.split[i] == maskgat::SplitPart::kTest &&
                  data.split[i] != maskgat::SplitPart::kTest &&
                  data.split[i] != maskgat::SplitPart::kNone;
    }
    CHECK(fitted.size() == expected);
    for (const maskgat::NodeId node : fitted) {
      CHECK(changed.split[static_cast<std::size_t>(node)] == maskgat::SplitPart::kTest);
    }
    const auto differences = train::data_differences(trained, changed, true);
    REQUIRE(differences.size() == 1);
    CHECK(differences[0].starts_with(std::to_string(fitted.size()) + " of this data's "));
    CHECK(differences[0].find(
              "(the first: " + changed.node_names[static_cast<std::size_t>(fitted[0])] +
              ") are nodes it trained or was validated on") != std::string::npos);
    CHECK(train::data_differences(trained, changed, false).empty());  // prediction scores none
    // The nodes in another order are the same nodes.
    maskgat::Dataset reversed = changed;
    std::reverse(reversed.node_names.begin(), reversed.node_names.end());
    std::reverse(reversed.split.begin(), reversed.split.end());
    CHECK(train::fitted_test_nodes(trained, reversed).size() == fitted.size());
    // Renamed, they are other nodes; and a record from before format 7 cannot tell.
    for (std::string& name : changed.node_names) name += "'";
    CHECK(train::data_differences(trained, changed, true).empty());
    train::DataRecord older = trained;
    older.fitted.clear();
    CHECK(train::fitted_test_nodes(older, reversed).empty());
  }

  TEST_CASE(
      "a version 2 checkpoint trains on the whole graph, and a bad receptive-field flag fails") {
    const auto dir = maskgat::test::scratch_dir("checkpoint_version2");
    auto [payload, values] = short_run_payload(dir);
    std::string flagged = payload;
    flagged[kOptionsBytes + 9] = 2;
    write_bytes(dir / "flag.ckpt", maskgat::test::frame_checkpoint(flagged, 6));
    CHECK_THROWS_WITH_AS(train::load_checkpoint(dir / "flag.ckpt"),
                         doctest::Contains("receptive-field flag 2, expected 0 or 1"),
                         maskgat::ParseError);
    payload.erase(kOptionsBytes + 9, 1 + kBatchBytes);
    payload.resize(payload.size() - kDataRecordBytes);
    write_bytes(dir / "v2.ckpt", maskgat::test::frame_checkpoint(payload, 2));
    const train::Checkpoint loaded = train::load_checkpoint(dir / "v2.ckpt");
    CHECK_FALSE(loaded.options.receptive_field);
    CHECK(loaded.values == values);
  }

  TEST_CASE("a checkpoint's positional encoding is checked before anything is computed from it") {
    const maskgat::Dataset data = maskgat::test::synthetic_dataset(300, 5.0, 12, 3, 8);
    train::Trainer trainer(data, options_with(2));
    trainer.fit();
    const auto dir = maskgat::test::scratch_dir("checkpoint_encoding");
    const std::string payload = saved_payload(trainer, dir);
    const auto with_encoding = [&](std::uint8_t kind, std::int64_t dims) {
      std::string changed = payload;
      changed[kOptionsBytes] = static_cast<char>(kind);
      std::memcpy(changed.data() + kOptionsBytes + 1, &dims, sizeof(dims));
      write_bytes(dir / "bad.ckpt", maskgat::test::frame_checkpoint(changed, 6));
      return dir / "bad.ckpt";
    };
    REQUIRE(train::load_checkpoint(with_encoding(2, 4)).options.positional.dims == 4);
    CHECK_THROWS_WITH_AS(train::load_checkpoint(with_encoding(7, 4)),
                         doctest::Contains("unknown positional encoding kind 7"),
                         maskgat::ParseError);
    CHECK_THROWS_WITH_AS(train::load_checkpoint(with_encoding(0, 5)),
                         doctest::Contains("positional encoding none has width 5, expected 0"),
                         maskgat::ParseError);
    CHECK_THROWS_WITH_AS(
        train::load_checkpoint(with_encoding(1, 1'000'000)),
        doctest::Contains("positional encoding lap has width 1000000, expected 1 to 1024"),
        maskgat::ParseError);
    CHECK_THROWS_WITH_AS(
        train::load_checkpoint(with_encoding(2, 20)),
        doctest::Contains("positional encoding width 20 exceeds the model's 12 input features"),
        maskgat::ParseError);
  }

  TEST_CASE("damaged checkpoints are rejected with what is wrong") {
    const auto dir = maskgat::test::scratch_dir("checkpoint_damage");
    const auto good = dir / "good.ckpt";
    train::save_checkpoint(good, short_run_checkpoint(), true);
    const std::string bytes = read_bytes(good);
    const auto bad = dir / "bad.ckpt";

    write_bytes(bad, "random bytes, not a model");
    CHECK_THROWS_WITH_AS(train::load_checkpoint(bad),
                         (std::string("checkpoint: ") + bad.string() +
                          ": not a MaskGAT checkpoint (the file does not start with MGATCKPT)")
                             .c_str(),
                         maskgat::ParseError);
    write_bytes(bad, bytes.substr(0, bytes.size() / 2));
    CHECK_THROWS_WITH_AS(train::load_checkpoint(bad),
                         doctest::Contains("truncated: the header announces"), maskgat::ParseError);
    std::string flipped = bytes;
    flipped[flipped.size() / 2] = static_cast<char>(flipped[flipped.size() / 2] ^ 0x40);
    write_bytes(bad, flipped);
    CHECK_THROWS_WITH_AS(train::load_checkpoint(bad),
                         doctest::Contains("checksum mismatch: the file is corrupt"),
                         maskgat::ParseError);
    // Format 8's fields after the record: the metric, the best validation score, the fixed split.
    const std::size_t tail =
        bytes.size() - 8 - kFormat11Bytes - kFormat10Bytes - kFormat9Bytes - 17;
    std::string payload8 = version8_payload(bytes);
    const std::size_t metric_at = tail - maskgat::test::kCheckpointHeader;
    std::string metric = payload8;
    metric[metric_at] = 2;
    write_bytes(bad, maskgat::test::frame_checkpoint(metric, 8));
    CHECK_THROWS_WITH_AS(train::load_checkpoint(bad), doctest::Contains("unknown metric 2"),
                         maskgat::ParseError);
    std::string fixed = payload8;
    const std::int64_t split = 3;  // the model's split is random
    std::memcpy(fixed.data() + metric_at + 9, &split, sizeof(split));
    write_bytes(bad, maskgat::test::frame_checkpoint(fixed, 8));
    CHECK_THROWS_WITH_AS(train::load_checkpoint(bad),
                         doctest::Contains("data record: fixed split 3 of a random split, expected "
                                           "-1 (none) or the index of a split that came with the "
                                           "data"),
                         maskgat::ParseError);
    for (const int version : {0, 12}) {
      std::string versioned = bytes;
      versioned[8] = static_cast<char>(version);
      write_bytes(bad, versioned);
      const std::string expected =
          "format version " + std::to_string(version) + ", this build reads versions 1 to 11";
      CHECK_THROWS_WITH_AS(train::load_checkpoint(bad), doctest::Contains(expected.c_str()),
                           maskgat::ParseError);
    }
    CHECK_THROWS_AS(train::load_checkpoint(dir / "missing.ckpt"), maskgat::IoError);
  }

  TEST_CASE("a checkpoint of another input width or classes is rejected naming what differs") {
    const maskgat::Dataset narrow = maskgat::test::synthetic_dataset(300, 5.0, 12, 3, 8);
    const maskgat::Dataset wide = maskgat::test::synthetic_dataset(300, 5.0, 20, 3, 8);
    train::Trainer trainer(narrow, options_with(2));
    trainer.fit();
    CHECK_THROWS_WITH_AS(train::Trainer(wide, trainer.checkpoint(), 5),
                         "the model takes 12 features, the data has 20", maskgat::InvalidArgument);
    maskgat::Dataset relabelled = narrow;
    relabelled.class_names.push_back("extra");
    CHECK_THROWS_WITH_AS(train::Trainer(relabelled, trainer.checkpoint(), 5),
                         "checkpoint: the model was trained on 3 classes that differ from the "
                         "dataset's 4",
                         maskgat::InvalidArgument);
    train::Checkpoint renamed = trainer.checkpoint();
    renamed.parameters[1].name = "conv1.att";
    CHECK_THROWS_WITH_AS(static_cast<void>(train::load_model(renamed)),
                         "checkpoint: parameter 1 is conv1.att, the model expects conv1.att_src",
                         maskgat::InvalidArgument);
  }

  TEST_CASE("checkpoints whose checksum holds but whose content does not are rejected") {
    const auto dir = maskgat::test::scratch_dir("checkpoint_content");
    const auto path = dir / "crafted.ckpt";
    // save_checkpoint writes a valid header and checksum for whatever it is given.
    const auto rejected = [&](const train::Checkpoint& crafted, const std::string& expected) {
      train::save_checkpoint(path, crafted, true);
      CHECK_THROWS_WITH_AS(static_cast<void>(train::load_checkpoint(path)),
                           ("checkpoint: " + path.string() + ": " + expected).c_str(),
                           maskgat::ParseError);
    };
    const train::Checkpoint good = short_run_checkpoint();

    train::Checkpoint crafted = good;
    crafted.class_names.clear();
    rejected(crafted, "0 class names for a model of 3 classes");
    crafted.class_names = {"a", "b", "c", "d", "e", "f"};
    rejected(crafted, "6 class names for a model of 3 classes");
    crafted.class_names = {"a", "b", "a"};
    rejected(crafted, "class name 'a' appears twice");
    crafted.class_names = {"a", "", "c"};
    rejected(crafted, "a class name is empty");

    crafted = good;
    std::fill(crafted.values.begin(), crafted.values.end(), std::nanf(""));
    rejected(crafted, "the model's parameters hold a NaN or an infinity");
    crafted = good;
    crafted.state.best_values.back() = std::numeric_limits<float>::infinity();
    rejected(crafted, "the best epoch's parameters hold a NaN or an infinity");
    crafted = good;
    crafted.state.optimizer_second.front() = -1.0F;
    rejected(crafted, "Adam's moments differ in size or hold a negative second moment");
    crafted = good;
    crafted.state.last_values.pop_back();
    rejected(crafted, "the last epoch's parameters hold " + std::to_string(good.values.size() - 1) +
                          " values, the model " + std::to_string(good.values.size()));

    crafted = good;
    crafted.options.model.dropout = 1.5;
    rejected(crafted, "dropout 1.500000 and attention dropout 0.600000: expected both in [0, 1)");
    crafted = good;
    crafted.options.optimizer.learning_rate = -1.0;
    rejected(crafted,
             "Adam options out of range: learning rate -1.000000 (> 0), betas 0.900000, "
             "0.999000 (in [0, 1)), epsilon 0.000000 and weight decay 0.000500 (>= 0, "
             "finite)");
    crafted = good;
    crafted.options.epochs = 0;
    rejected(crafted, "epochs 0 and patience 15: expected epochs > 0 and patience >= 0");
    crafted = good;
    crafted.state.best_epoch = crafted.state.epoch + 1;
    rejected(crafted, "the training state is inconsistent: epoch 3 of 3, best epoch 4, waiting " +
                          std::to_string(good.state.waiting) + ", Adam steps 3, best accuracy " +
                          std::to_string(good.state.best_accuracy));

    train::save_checkpoint(path, good, true);
    CHECK(train::load_checkpoint(path).class_names == good.class_names);
  }

  TEST_CASE("a checkpoint is read header first: a device or pipe fails fast and bounded") {
    CHECK_THROWS_WITH_AS(static_cast<void>(train::load_checkpoint("/dev/zero")),
                         "checkpoint: /dev/zero: not a MaskGAT checkpoint (the file does not start "
                         "with MGATCKPT)",
                         maskgat::ParseError);
    // A header announcing more than the file limit is refused before the payload is read.
    const auto dir = maskgat::test::scratch_dir("checkpoint_stream");
    const auto fifo = dir / "model.fifo";
    std::filesystem::remove(fifo);
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    std::string header = maskgat::test::frame_checkpoint(std::string(64, 'x'), 3);
    const std::uint64_t claimed = std::uint64_t{1} << 40;
    std::memcpy(header.data() + 12, &claimed, sizeof(claimed));
    std::thread writer([&] { std::ofstream(fifo, std::ios::binary) << header; });
    CHECK_THROWS_WITH_AS(static_cast<void>(train::load_checkpoint(fifo)),
                         ("checkpoint: " + fifo.string() +
                          ": the header announces 1099511627776 "
                          "payload bytes, over the file limit of 1073741824 (raise it with "
                          "--max-file-bytes)")
                             .c_str(),
                         maskgat::LimitError);
    writer.join();
  }
}
