#include "maskgat/train/checkpoint.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <string_view>
#include <unordered_set>
#include <utility>

#include "core/detail/binary_record.hpp"
#include "io/detail/input_file.hpp"
#include "maskgat/core/error.hpp"
#include "maskgat/io/output_file.hpp"

namespace maskgat::train {
namespace {

constexpr std::string_view kMagic = "MGATCKPT";
// Version 2 added the positional encoding after the seed; version 1 files (without one) still
// load, as models without an encoding. Version 3 added the receptive-field flag after it;
// older files train on the whole graph, as they were trained. Version 4 added the data record
// after the training state; older files have none. Version 5 added to the record whether only the
// largest component was kept and whether validation nodes were drawn per class (the test size
// may then be "the rest", -1). Version 6 added the mini-batch size and fanouts after the
// receptive-field flag; older files train in full batches. Version 7 added to the record the hashes
// of the training and validation nodes' names; older files cannot tell which nodes those were.
// Version 8 added, after the data record, the metric, the best epoch's validation score and (with
// a record) the index of the fixed split trained on; older files follow accuracy and record no
// fixed split. Version 9 added after them the model's spec as JSON (empty: the paper's model
// of the options) and its running statistics. Version 10 added after them the rule that picks the
// kept epoch; older files follow the GAT reference implementation's. Version 11 added after it
// the task (node, graph or link); older files are node tasks.
constexpr std::uint32_t kVersion = 11;
constexpr std::uint32_t kOldestVersion = 1;

using detail::fnv1a;
using Writer = detail::RecordWriter;
using Reader = detail::RecordReader;

void write_options(Writer& out, const TrainOptions& options) {
  const nn::ModelOptions& model = options.model;
  out.scalar<std::uint8_t>(static_cast<std::uint8_t>(model.attention));
  for (const std::int64_t value : {model.in_features, model.classes, model.layers, model.heads,
                                   model.hidden, model.output_heads}) {
    out.scalar(value);
  }
  for (const double value :
       {model.dropout, model.attention_dropout, options.optimizer.learning_rate,
        options.optimizer.beta1, options.optimizer.beta2, options.optimizer.epsilon,
        options.optimizer.weight_decay}) {
    out.scalar(value);
  }
  out.scalar(options.epochs);
  out.scalar(options.patience);
  out.scalar(options.seed);
  out.scalar<std::uint8_t>(static_cast<std::uint8_t>(options.positional.kind));
  out.scalar(options.positional.dims);
  out.scalar<std::uint8_t>(options.receptive_field ? 1 : 0);
  out.scalar(options.batch_size);
  out.scalar(static_cast<std::int64_t>(options.fanouts.size()));
  for (const std::int64_t fanout : options.fanouts) out.scalar(fanout);
}

TrainOptions read_options(Reader& in, std::uint32_t version) {
  TrainOptions options;
  nn::ModelOptions& model = options.model;
  const auto kind = in.scalar<std::uint8_t>();
  if (kind > static_cast<std::uint8_t>(nn::AttentionKind::kDot)) {
    in.fail("unknown attention kind " + std::to_string(kind));
  }
  model.attention = static_cast<nn::AttentionKind>(kind);
  for (std::int64_t* value : {&model.in_features, &model.classes, &model.layers, &model.heads,
                              &model.hidden, &model.output_heads}) {
    *value = in.scalar<std::int64_t>();
  }
  for (double* value : {&model.dropout, &model.attention_dropout, &options.optimizer.learning_rate,
                        &options.optimizer.beta1, &options.optimizer.beta2,
                        &options.optimizer.epsilon, &options.optimizer.weight_decay}) {
    *value = in.scalar<double>();
  }
  options.epochs = in.scalar<std::int64_t>();
  options.patience = in.scalar<std::int64_t>();
  options.seed = in.scalar<std::uint64_t>();
  if (version >= 2) {
    const auto encoding = in.scalar<std::uint8_t>();
    if (encoding > static_cast<std::uint8_t>(transforms::EncodingKind::kRandomWalk)) {
      in.fail("unknown positional encoding kind " + std::to_string(encoding));
    }
    options.positional.kind = static_cast<transforms::EncodingKind>(encoding);
    options.positional.dims = in.scalar<std::int64_t>();
    try {
      transforms::check_positional_encoding(options.positional);
    } catch (const InvalidArgument& error) {
      in.fail(error.what());
    }
    if (options.positional.dims > options.model.in_features) {
      in.fail("positional encoding width " + std::to_string(options.positional.dims) +
              " exceeds the model's " + std::to_string(options.model.in_features) +
              " input features");
    }
  }
  options.receptive_field = false;
  if (version >= 3) {
    const auto field = in.scalar<std::uint8_t>();
    if (field > 1) in.fail("receptive-field flag " + std::to_string(field) + ", expected 0 or 1");
    options.receptive_field = field == 1;
  }
  if (version >= 6) {
    options.batch_size = in.scalar<std::int64_t>();
    if (options.batch_size < 0) {
      in.fail("batch size " + std::to_string(options.batch_size) + ", expected 0 or more");
    }
    const auto fanouts = in.scalar<std::int64_t>();
    if (fanouts != 0 && fanouts != options.model.layers) {
      in.fail(std::to_string(fanouts) + " fanouts for a model of " +
              std::to_string(options.model.layers) + " layers");
    }
    for (std::int64_t l = 0; l < fanouts; ++l) {
      options.fanouts.push_back(in.scalar<std::int64_t>());
      if (options.fanouts.back() < -1) {
        in.fail("fanout " + std::to_string(options.fanouts.back()) + ", expected -1 or more");
      }
    }
  }
  return options;
}

void write_state(Writer& out, const TrainingState& state) {
  out.scalar(state.epoch);
  out.scalar<std::uint8_t>(state.stopped ? 1 : 0);
  out.scalar(state.best_accuracy);
  out.scalar(state.best_loss);
  out.scalar(state.waiting);
  out.scalar(state.best_epoch);
  out.scalar(state.best_val_accuracy);
  out.scalar(state.best_val_loss);
  out.array(state.best_values);
  out.array(state.last_values);
  out.scalar(state.optimizer_steps);
  out.array(state.optimizer_first);
  out.array(state.optimizer_second);
  for (const std::uint64_t word : state.rng.words) out.scalar(word);
  out.scalar(state.rng.spare_normal);
  out.scalar<std::uint8_t>(state.rng.has_spare_normal ? 1 : 0);
}

TrainingState read_state(Reader& in) {
  TrainingState state;
  state.epoch = in.scalar<std::int64_t>();
  state.stopped = in.scalar<std::uint8_t>() != 0;
  state.best_accuracy = in.scalar<double>();
  state.best_loss = in.scalar<double>();
  state.waiting = in.scalar<std::int64_t>();
  state.best_epoch = in.scalar<std::int64_t>();
  state.best_val_accuracy = in.scalar<double>();
  state.best_val_loss = in.scalar<double>();
  state.best_val_score = state.best_val_accuracy;  // until format 8 the score was accuracy
  state.best_values = in.array<float>();
  state.last_values = in.array<float>();
  state.optimizer_steps = in.scalar<std::int64_t>();
  state.optimizer_first = in.array<float>();
  state.optimizer_second = in.array<float>();
  for (auto& word : state.rng.words) word = in.scalar<std::uint64_t>();
  state.rng.spare_normal = in.scalar<double>();
  state.rng.has_spare_normal = in.scalar<std::uint8_t>() != 0;
  return state;
}

void write_data(Writer& out, const DataRecord& data) {
  const DataPreparation& preparation = data.preparation;
  for (const bool flag :
       {preparation.undirected, preparation.rows_normalized, preparation.random_split,
        preparation.largest_component, preparation.split_sizes.val_per_class}) {
    out.scalar<std::uint8_t>(flag ? 1 : 0);
  }
  out.scalar(preparation.split_seed);
  out.scalar(preparation.split_sizes.train_per_class);
  out.scalar(preparation.split_sizes.val);
  out.scalar(preparation.split_sizes.test);
  out.scalar(data.nodes);
  out.scalar(data.nodes_hash);
  out.scalar(data.split_hash);
  out.array(data.fitted);
}

DataRecord read_data(Reader& in, std::uint32_t version) {
  DataRecord data;
  DataPreparation& preparation = data.preparation;
  std::vector<bool*> flags{&preparation.undirected, &preparation.rows_normalized,
                           &preparation.random_split};
  if (version >= 5) {
    flags.push_back(&preparation.largest_component);
    flags.push_back(&preparation.split_sizes.val_per_class);
  }
  for (bool* flag : flags) {
    const auto value = in.scalar<std::uint8_t>();
    if (value > 1) in.fail("data record flag " + std::to_string(value) + ", expected 0 or 1");
    *flag = value == 1;
  }
  preparation.split_seed = in.scalar<std::uint64_t>();
  for (std::int64_t* size : {&preparation.split_sizes.train_per_class, &preparation.split_sizes.val,
                             &preparation.split_sizes.test}) {
    *size = in.scalar<std::int64_t>();
    const bool rest =
        version >= 5 && size == &preparation.split_sizes.test && *size == RandomSplitSizes::kRest;
    if (*size < 0 && !rest) in.fail("data record: negative split size " + std::to_string(*size));
  }
  data.nodes = in.scalar<std::int64_t>();
  if (data.nodes < 0) in.fail("data record: " + std::to_string(data.nodes) + " nodes");
  data.nodes_hash = in.scalar<std::uint64_t>();
  data.split_hash = in.scalar<std::uint64_t>();
  if (version >= 7) {
    data.fitted = in.array<std::uint64_t>();
    if (std::adjacent_find(data.fitted.begin(), data.fitted.end(), std::greater_equal<>()) !=
        data.fitted.end()) {
      in.fail("data record: the fitted nodes' hashes are not strictly ascending");
    }
    if (std::cmp_greater(data.fitted.size(), data.nodes)) {
      in.fail("data record: " + std::to_string(data.fitted.size()) + " fitted nodes of " +
              std::to_string(data.nodes));
    }
  }
  return data;
}

// What format 8 added after the data record: the metric, the best epoch's validation score and,
// with a record, the fixed split trained on.
void read_format8_fields(Reader& in, Checkpoint& checkpoint) {
  const auto metric = in.scalar<std::uint8_t>();
  if (metric > static_cast<std::uint8_t>(Metric::kRocAuc)) {
    in.fail("unknown metric " + std::to_string(metric));
  }
  checkpoint.options.metric = static_cast<Metric>(metric);
  checkpoint.state.best_val_score = in.scalar<double>();
  if (!checkpoint.data) return;
  DataPreparation& preparation = checkpoint.data->preparation;
  preparation.fixed_split = in.scalar<std::int64_t>();
  if (preparation.fixed_split < -1 || (preparation.fixed_split >= 0 && preparation.random_split)) {
    in.fail("data record: fixed split " + std::to_string(preparation.fixed_split) +
            (preparation.random_split ? " of a random split" : "") +
            ", expected -1 (none) or the index of a split that came with the data");
  }
}

// Rejects options whose layers could not be filled by the stored values, before any model of
// that size is allocated (a hostile file could otherwise ask for an enormous one): every layer's
// projection (input width x output width) is among the values, so their sum must fit.
void check_stored_sizes(Reader& in, const nn::ModelOptions& model, std::size_t values,
                        std::size_t parameters) {
  const double hidden_width = static_cast<double>(model.heads) * static_cast<double>(model.hidden);
  const double output_width =
      static_cast<double>(model.output_heads) * static_cast<double>(model.classes);
  const double features = static_cast<double>(model.in_features);
  const double layers = static_cast<double>(model.layers);
  const double projections = model.layers == 1 ? features * output_width
                                               : features * hidden_width +
                                                     (layers - 2.0) * hidden_width * hidden_width +
                                                     hidden_width * output_width;
  const bool positive = model.in_features > 0 && model.classes > 0 && model.layers > 0 &&
                        model.heads > 0 && model.hidden > 0 && model.output_heads > 0;
  if (!positive || model.layers > nn::kMaxLayers || layers > static_cast<double>(parameters) ||
      projections > static_cast<double>(values)) {
    in.fail("the model shape (" + std::to_string(model.layers) + " layers, " +
            std::to_string(model.in_features) + " features, " + std::to_string(model.heads) +
            " x " + std::to_string(model.hidden) + " hidden, " +
            std::to_string(model.output_heads) + " x " + std::to_string(model.classes) +
            " output) does not fit the " + std::to_string(values) + " stored values");
  }
}

// Every field against its range and against the others: a checksum guards against accidents,
// not against a file written to pass it. What the model and the CLI rely on must hold here.
void check_content(const Checkpoint& checkpoint, const std::string& where) {
  const auto fail = [&](const std::string& message) {
    throw ParseError("checkpoint", where, 0, message);
  };
  const TrainOptions& options = checkpoint.options;
  const nn::ModelOptions& model = options.model;
  const optim::AdamOptions& adam = options.optimizer;
  const auto in_unit = [](double value) { return value >= 0.0 && value < 1.0; };
  if (!in_unit(model.dropout) || !in_unit(model.attention_dropout)) {
    fail("dropout " + std::to_string(model.dropout) + " and attention dropout " +
         std::to_string(model.attention_dropout) + ": expected both in [0, 1)");
  }
  if (!(adam.learning_rate > 0.0) || !std::isfinite(adam.learning_rate) || !in_unit(adam.beta1) ||
      !in_unit(adam.beta2) || !(adam.epsilon >= 0.0) || !std::isfinite(adam.epsilon) ||
      !(adam.weight_decay >= 0.0) || !std::isfinite(adam.weight_decay)) {
    fail("Adam options out of range: learning rate " + std::to_string(adam.learning_rate) +
         " (> 0), betas " + std::to_string(adam.beta1) + ", " + std::to_string(adam.beta2) +
         " (in [0, 1)), epsilon " + std::to_string(adam.epsilon) + " and weight decay " +
         std::to_string(adam.weight_decay) + " (>= 0, finite)");
  }
  if (options.epochs <= 0 || options.patience < 0) {
    fail("epochs " + std::to_string(options.epochs) + " and patience " +
         std::to_string(options.patience) + ": expected epochs > 0 and patience >= 0");
  }
  if (options.task == Task::kLink) {
    if (!checkpoint.class_names.empty()) {
      fail(std::to_string(checkpoint.class_names.size()) +
           " class names for a link model, which has none");
    }
  } else if (static_cast<std::int64_t>(checkpoint.class_names.size()) != model.classes) {
    fail(std::to_string(checkpoint.class_names.size()) + " class names for a model of " +
         std::to_string(model.classes) + " classes");
  }
  std::unordered_set<std::string_view> names;
  for (const std::string& name : checkpoint.class_names) {
    if (name.empty()) fail("a class name is empty");
    if (!names.insert(name).second) fail("class name '" + name + "' appears twice");
  }
  const auto finite = [](const std::vector<float>& values) {
    return std::all_of(values.begin(), values.end(), [](float v) { return std::isfinite(v); });
  };
  const std::size_t count = checkpoint.values.size();
  if (!finite(checkpoint.values)) fail("the model's parameters hold a NaN or an infinity");
  const TrainingState& state = checkpoint.state;
  const auto check_copy = [&](const std::vector<float>& values, const char* what, bool optional) {
    if ((optional && values.empty()) || values.size() == count) {
      if (!finite(values)) fail(std::string(what) + " hold a NaN or an infinity");
      return;
    }
    fail(std::string(what) + " hold " + std::to_string(values.size()) + " values, the model " +
         std::to_string(count));
  };
  check_copy(state.best_values, "the best epoch's parameters", false);
  check_copy(state.last_values, "the last epoch's parameters", true);
  check_copy(state.optimizer_first, "Adam's first moments", true);
  check_copy(state.optimizer_second, "Adam's second moments", true);
  if (state.optimizer_first.size() != state.optimizer_second.size() ||
      std::any_of(state.optimizer_second.begin(), state.optimizer_second.end(),
                  [](float v) { return v < 0.0F; })) {
    fail("Adam's moments differ in size or hold a negative second moment");
  }
  const bool accuracies = in_unit(state.best_accuracy) || state.best_accuracy == 1.0;
  const bool val_accuracy = (in_unit(state.best_val_accuracy) || state.best_val_accuracy == 1.0) &&
                            (in_unit(state.best_val_score) || state.best_val_score == 1.0);
  if (state.epoch < 0 || state.epoch > options.epochs || state.waiting < 0 ||
      state.best_epoch < 0 || state.best_epoch > state.epoch || state.optimizer_steps < 0 ||
      !accuracies || !val_accuracy || std::isnan(state.best_loss) ||
      !std::isfinite(state.best_val_loss) || !std::isfinite(state.rng.spare_normal)) {
    fail("the training state is inconsistent: epoch " + std::to_string(state.epoch) + " of " +
         std::to_string(options.epochs) + ", best epoch " + std::to_string(state.best_epoch) +
         ", waiting " + std::to_string(state.waiting) + ", Adam steps " +
         std::to_string(state.optimizer_steps) + ", best accuracy " +
         std::to_string(state.best_accuracy));
  }
}

}  // namespace

void save_checkpoint(const std::filesystem::path& path, const Checkpoint& checkpoint,
                     bool overwrite) {
  Writer payload;
  write_options(payload, checkpoint.options);
  payload.string(checkpoint.dataset);
  payload.scalar<std::uint64_t>(checkpoint.class_names.size());
  for (const auto& name : checkpoint.class_names) payload.string(name);
  payload.scalar<std::uint64_t>(checkpoint.parameters.size());
  for (const auto& parameter : checkpoint.parameters) {
    payload.string(parameter.name);
    payload.scalar(parameter.rows);
    payload.scalar(parameter.cols);
  }
  payload.array(checkpoint.values);
  write_state(payload, checkpoint.state);
  payload.scalar<std::uint8_t>(checkpoint.data ? 1 : 0);
  if (checkpoint.data) write_data(payload, *checkpoint.data);
  payload.scalar<std::uint8_t>(static_cast<std::uint8_t>(checkpoint.options.metric));
  payload.scalar(checkpoint.state.best_val_score);
  if (checkpoint.data) payload.scalar(checkpoint.data->preparation.fixed_split);
  payload.string(checkpoint.options.spec ? nn::model_spec_json(*checkpoint.options.spec) : "");
  payload.array(checkpoint.buffers);
  payload.scalar<std::uint8_t>(static_cast<std::uint8_t>(checkpoint.options.selection));
  payload.scalar<std::uint8_t>(static_cast<std::uint8_t>(checkpoint.options.task));

  Writer file;
  std::string content(kMagic);
  file.scalar(kVersion);
  file.scalar<std::uint64_t>(payload.bytes().size());
  content += file.bytes();
  content += payload.bytes();
  Writer checksum;
  checksum.scalar(fnv1a(payload.bytes()));
  content += checksum.bytes();
  write_file_atomically(path, content, overwrite);
}

Checkpoint load_checkpoint(const std::filesystem::path& path, const Limits& limits) {
  detail::InputFile file(path, "checkpoint");
  const std::string& where = file.path();
  const auto error = [&](const std::string& message) {
    return ParseError("checkpoint", where, 0, message);
  };
  constexpr std::size_t kHeader = 8 + sizeof(std::uint32_t) + sizeof(std::uint64_t);
  constexpr std::size_t kChecksum = sizeof(std::uint64_t);
  if (const auto bytes = file.regular_size();
      bytes && *bytes > static_cast<std::uint64_t>(limits.max_file_bytes)) {
    detail::throw_file_too_large(file, *bytes, limits.max_file_bytes);
  }
  // The header alone first: magic, version and payload size are known after its 20 bytes,
  // before anything else of the file (or of a device without end) is read.
  std::string content(kHeader, '\0');
  content.resize(file.read(content.data(), kHeader));
  if (content.size() < kMagic.size() || content.compare(0, kMagic.size(), kMagic) != 0) {
    throw error("not a MaskGAT checkpoint (the file does not start with MGATCKPT)");
  }
  if (content.size() < kHeader) throw error("truncated inside the header");
  std::uint32_t version = 0;
  std::memcpy(&version, content.data() + 8, sizeof(version));
  if (version < kOldestVersion || version > kVersion) {
    throw error("format version " + std::to_string(version) + ", this build reads versions " +
                std::to_string(kOldestVersion) + " to " + std::to_string(kVersion));
  }
  std::uint64_t size = 0;
  std::memcpy(&size, content.data() + 12, sizeof(size));
  const auto limit = static_cast<std::uint64_t>(limits.max_file_bytes);
  if (!file.regular_size() && (size > limit || kHeader + kChecksum + size > limit)) {
    throw LimitError("checkpoint", where, 0,
                     "the header announces " + std::to_string(size) +
                         " payload bytes, over the file limit of " + std::to_string(limit) +
                         " (raise it with --max-file-bytes)");
  }
  // The rest, read in chunks: memory follows the bytes that arrive, not what the header claims.
  // A regular file's size is known, so its tail is checked first; a stream is read up to one
  // byte past the announced end, which must not be there.
  const std::uint64_t wanted = size + kChecksum;
  const auto regular = file.regular_size();
  const std::uint64_t after_header =
      regular ? *regular - std::min<std::uint64_t>(*regular, kHeader) : 0;
  const auto truncated = [&](std::uint64_t available) {
    return error("truncated: the header announces " + std::to_string(size) +
                 " payload bytes plus an 8-byte checksum, the file has " +
                 std::to_string(available) + " bytes after the header");
  };
  if (regular && (after_header < kChecksum || size > after_header - kChecksum)) {
    throw truncated(after_header);
  }
  if (regular && after_header != wanted) {
    throw error(std::to_string(after_header - wanted) + " unexpected bytes after the checksum");
  }
  const std::string rest = file.read_up_to(wanted + 1);
  if (rest.size() < wanted) throw truncated(rest.size());
  if (rest.size() > wanted) throw error("unexpected bytes after the checksum");
  const std::string_view payload(rest.data(), static_cast<std::size_t>(size));
  std::uint64_t checksum = 0;
  std::memcpy(&checksum, rest.data() + size, sizeof(checksum));
  if (checksum != fnv1a(payload)) throw error("checksum mismatch: the file is corrupt");

  Reader in(payload, "checkpoint", where);
  Checkpoint checkpoint;
  checkpoint.options = read_options(in, version);
  checkpoint.dataset = in.string();
  checkpoint.class_names.resize(in.count(8, "the class list"));
  for (auto& name : checkpoint.class_names) name = in.string();
  checkpoint.parameters.resize(in.count(24, "the parameter list"));
  for (auto& parameter : checkpoint.parameters) {
    parameter.name = in.string();
    parameter.rows = in.scalar<std::int64_t>();
    parameter.cols = in.scalar<std::int64_t>();
  }
  checkpoint.values = in.array<float>();
  checkpoint.state = read_state(in);
  if (version >= 4) {
    const auto recorded = in.scalar<std::uint8_t>();
    if (recorded > 1) in.fail("data record marker " + std::to_string(recorded));
    if (recorded == 1) checkpoint.data = read_data(in, version);
  }
  if (version >= 8) read_format8_fields(in, checkpoint);
  if (version >= 9) {
    const std::string spec = in.string();
    if (!spec.empty()) {
      try {
        checkpoint.options.spec = nn::parse_model_spec(spec, where);
      } catch (const ParseError& bad) {
        in.fail(std::string("the model spec: ") + bad.what());
      }
      checkpoint.options.spec->in_features = checkpoint.options.model.in_features;
      checkpoint.options.spec->classes = checkpoint.options.model.classes;
    }
    checkpoint.buffers = in.array<float>();
  }
  if (version >= 10) {
    const auto selection = in.scalar<std::uint8_t>();
    if (selection > static_cast<std::uint8_t>(Selection::kMetric)) {
      in.fail("unknown selection rule " + std::to_string(selection));
    }
    checkpoint.options.selection = static_cast<Selection>(selection);
  }
  if (version >= 11) {
    const auto task = in.scalar<std::uint8_t>();
    if (task > static_cast<std::uint8_t>(Task::kLink))
      in.fail("unknown task " + std::to_string(task));
    checkpoint.options.task = static_cast<Task>(task);
  }
  in.finish();
  // A link model's MLP decoder is saved as its parameters.
  for (const ParameterShape& parameter : checkpoint.parameters) {
    if (checkpoint.options.task == Task::kLink && parameter.name == "decoder.lin1.weight") {
      checkpoint.options.decoder_hidden = parameter.cols;
    }
  }
  if (checkpoint.options.spec) {
    // The spec's projections cannot hold more weights than the file stores values (each
    // attention layer is counted with a second projection, so up to twice those).
    const double weights = nn::spec_size(*checkpoint.options.spec).weights;
    if (weights > 2.0 * static_cast<double>(checkpoint.values.size()) + 1.0) {
      in.fail("the model spec's projections hold up to " + std::to_string(weights) +
              " weights, more than the " + std::to_string(checkpoint.values.size()) +
              " stored values");
    }
  } else {
    check_stored_sizes(in, checkpoint.options.model, checkpoint.values.size(),
                       checkpoint.parameters.size());
  }
  check_content(checkpoint, where);
  return checkpoint;
}

DataRecord record_data(const Dataset& dataset) {
  DataRecord record;
  record.preparation = dataset.preparation;
  record.nodes = dataset.graph.num_nodes();
  const DatasetFingerprint fingerprints = fingerprint(dataset);
  record.nodes_hash = fingerprints.nodes;
  record.split_hash = fingerprints.split;
  record.fitted = fitted_nodes(dataset);
  return record;
}

std::vector<std::uint64_t> fitted_nodes(const Dataset& dataset) {
  std::vector<std::uint64_t> hashes;
  for (std::size_t i = 0; i < dataset.split.size(); ++i) {
    if (dataset.split[i] == SplitPart::kTrain || dataset.split[i] == SplitPart::kVal) {
      hashes.push_back(fnv1a(dataset.node_names[i]));
    }
  }
  std::sort(hashes.begin(), hashes.end());
  // Names are unique, so equal hashes are a collision, which may only make a check stricter.
  hashes.erase(std::unique(hashes.begin(), hashes.end()), hashes.end());
  return hashes;
}

std::vector<NodeId> fitted_test_nodes(const DataRecord& trained, const Dataset& dataset) {
  std::vector<NodeId> nodes;
  if (trained.fitted.empty()) return nodes;
  for (const NodeId node : dataset.nodes_in(SplitPart::kTest)) {
    if (std::binary_search(trained.fitted.begin(), trained.fitted.end(),
                           fnv1a(dataset.node_names[static_cast<std::size_t>(node)]))) {
      nodes.push_back(node);
    }
  }
  return nodes;
}

namespace {

std::string describe_split(const DataPreparation& preparation) {
  if (preparation.fixed_split >= 0) {
    return "fixed split " + std::to_string(preparation.fixed_split) +
           " of those that come with the data";
  }
  if (!preparation.random_split) return "the split that comes with the data";
  const RandomSplitSizes& sizes = preparation.split_sizes;
  return "a random split with seed " + std::to_string(preparation.split_seed) + " (" +
         std::to_string(sizes.train_per_class) + " per class, " + std::to_string(sizes.val) +
         (sizes.val_per_class ? " val per class, " : " val, ") +
         (sizes.test == RandomSplitSizes::kRest ? std::string("the rest")
                                                : std::to_string(sizes.test)) +
         " test)";
}

}  // namespace

std::vector<std::string> data_differences(const DataRecord& trained, const Dataset& dataset,
                                          bool with_split) {
  const DataRecord given = record_data(dataset);
  const DataPreparation& before = trained.preparation;
  const DataPreparation& now = given.preparation;
  std::vector<std::string> differences;
  const auto edges = [](bool undirected) {
    return undirected ? std::string("with every edge also reversed (undirected)")
                      : std::string("on its edges as given (directed)");
  };
  if (before.undirected != now.undirected) {
    differences.push_back("it was trained " + edges(before.undirected) + ", this data is read " +
                          edges(now.undirected));
  }
  const auto nodes = [](bool largest) {
    return largest ? std::string("its largest component only") : std::string("every node");
  };
  if (before.largest_component != now.largest_component) {
    differences.push_back("it was trained on " + nodes(before.largest_component) +
                          ", this data holds " + nodes(now.largest_component));
  }
  const auto features = [](bool normalized) {
    return normalized ? std::string("rows normalised") : std::string("as stored");
  };
  if (before.rows_normalized != now.rows_normalized) {
    differences.push_back("its features were " + features(before.rows_normalized) +
                          ", this data's are " + features(now.rows_normalized));
  }
  if (!with_split) return differences;
  const bool same_nodes = trained.nodes == given.nodes && trained.nodes_hash == given.nodes_hash;
  if (same_nodes && trained.split_hash != given.split_hash) {
    const std::string was = describe_split(before);
    const std::string is = describe_split(now);
    differences.push_back("it was trained on " + was + ", this data has " +
                          (was == is ? "another one" : is) +
                          ", so nodes it trained on could be scored as validation or test nodes");
  } else if (!same_nodes) {
    const std::vector<NodeId> fitted = fitted_test_nodes(trained, dataset);
    if (!fitted.empty()) {
      differences.push_back(
          std::to_string(fitted.size()) + " of this data's " +
          std::to_string(dataset.nodes_in(SplitPart::kTest).size()) +
          " test nodes (the first: " + dataset.node_names[static_cast<std::size_t>(fitted[0])] +
          ") are nodes it trained or was validated on, so its test scores would not be test "
          "scores");
    }
  }
  return differences;
}

std::vector<std::string> prepare_as_trained(const DataRecord& trained, FileSources* files,
                                            DatasetOptions& options) {
  std::vector<std::string> notes;
  if (trained.preparation.undirected && files != nullptr && !files->undirected) {
    files->undirected = true;
    notes.emplace_back(
        "it was trained with every edge read both ways; these edges are read so too (undirected)");
  }
  options.normalize_features = trained.preparation.rows_normalized ? FeatureNormalization::kAuto
                                                                   : FeatureNormalization::kNone;
  options.largest_component = trained.preparation.largest_component;
  return notes;
}

bool redraw_split_as_trained(const DataRecord& trained, Dataset& dataset) {
  const DataPreparation& preparation = trained.preparation;
  const bool fixed = preparation.fixed_split >= 0 && dataset.preparation.fixed_split >= 0 &&
                     preparation.fixed_split < std::ssize(dataset.fixed_splits);
  if (!fixed && (!preparation.random_split || !dataset.preparation.random_split)) return false;
  const DataRecord given = record_data(dataset);
  if (given.nodes != trained.nodes || given.nodes_hash != trained.nodes_hash ||
      given.split_hash == trained.split_hash) {
    return false;
  }
  if (fixed) {
    use_fixed_split(dataset, preparation.fixed_split);
    return true;
  }
  std::erase_if(dataset.notes,
                [](const std::string& note) { return note.starts_with("random split:"); });
  draw_split(dataset, preparation.split_sizes, preparation.split_seed);
  return true;
}

void check_input_width(const Checkpoint& checkpoint, const Dataset& dataset) {
  dataset.require_features();
  const std::int64_t width = checkpoint.options.model.in_features;
  const std::int64_t encoded = checkpoint.options.positional.dims;
  if (dataset.features.cols() + encoded == width) return;
  std::string message = "the model takes " + std::to_string(width) + " features";
  if (encoded > 0) {
    message += " (" + std::to_string(width - encoded) + " of the data's and " +
               std::to_string(encoded) + " of its positional encoding " +
               transforms::positional_encoding_name(checkpoint.options.positional) + ")";
  }
  throw InvalidArgument(message + ", the data has " + std::to_string(dataset.features.cols()));
}

void check_parameters(const nn::ParameterStore<float>& store,
                      const std::vector<ParameterShape>& parameters, std::size_t values) {
  const auto& entries = store.entries();
  for (std::size_t k = 0; k < std::max(entries.size(), parameters.size()); ++k) {
    if (k >= parameters.size()) {
      throw InvalidArgument("checkpoint: parameter " + entries[k].name +
                            " of the model is missing from the checkpoint");
    }
    if (k >= entries.size()) {
      throw InvalidArgument("checkpoint: parameter " + parameters[k].name +
                            " is not part of the model");
    }
    const auto& saved = parameters[k];
    const auto& entry = entries[k];
    if (saved.name != entry.name) {
      throw InvalidArgument("checkpoint: parameter " + std::to_string(k) + " is " + saved.name +
                            ", the model expects " + entry.name);
    }
    if (saved.rows != entry.parameter.rows || saved.cols != entry.parameter.cols) {
      throw InvalidArgument("checkpoint: parameter " + saved.name + " is " +
                            std::to_string(saved.rows) + " x " + std::to_string(saved.cols) +
                            ", the model has " + std::to_string(entry.parameter.rows) + " x " +
                            std::to_string(entry.parameter.cols));
    }
  }
  if (values != static_cast<std::size_t>(store.size())) {
    throw InvalidArgument("checkpoint: " + std::to_string(values) +
                          " parameter values, the model has " + std::to_string(store.size()));
  }
}

void restore_buffers(nn::Model& model, std::span<const float> buffers) {
  auto values = model.buffers().values();
  if (buffers.size() != values.size()) {
    throw InvalidArgument("checkpoint: " + std::to_string(buffers.size()) +
                          " running statistics, the model has " + std::to_string(values.size()));
  }
  std::copy(buffers.begin(), buffers.end(), values.begin());
}

nn::Model load_model(const Checkpoint& checkpoint) {
  Rng rng(checkpoint.options.seed);
  nn::Model model = make_model(checkpoint.options, rng);
  check_parameters(model.parameters(), checkpoint.parameters, checkpoint.values.size());
  std::copy(checkpoint.values.begin(), checkpoint.values.end(),
            model.parameters().values().begin());
  restore_buffers(model, checkpoint.buffers);
  return model;
}

}  // namespace maskgat::train
