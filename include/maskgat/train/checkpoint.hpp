#pragma once
/// @file
/// Saving and loading a trained model, and the training run that produced it, in one file.

#include <cstdint>
#include <filesystem>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "maskgat/core/random.hpp"
#include "maskgat/export.hpp"
#include "maskgat/io/limits.hpp"
#include "maskgat/nn/model.hpp"
#include "maskgat/train/trainer.hpp"

namespace maskgat::train {

/// Where a training run stands: with it a `Trainer` continues exactly as if it had not stopped.
struct MASKGAT_EXPORT TrainingState {
  std::int64_t epoch = 0;  ///< epochs completed
  bool stopped = false;    ///< early stopping ended the run
  /// best validation score seen (`TrainOptions::metric`: accuracy unless ROC AUC)
  double best_accuracy = 0.0;
  double best_loss = std::numeric_limits<double>::infinity();  ///< best validation loss seen
  std::int64_t waiting = 0;        ///< epochs since the patience counter was last reset
  std::int64_t best_epoch = 0;     ///< the epoch whose parameters are the best so far
  double best_val_accuracy = 0.0;  ///< validation accuracy at `best_epoch`
  double best_val_loss = 0.0;      ///< validation loss at `best_epoch`
  /// validation score (`TrainOptions::metric`) at `best_epoch`; in files before format 8, where
  /// the score was accuracy, `best_val_accuracy`
  double best_val_score = 0.0;
  std::vector<float> best_values;       ///< parameters at `best_epoch`
  std::vector<float> last_values;       ///< parameters after `epoch` (where training resumes)
  std::int64_t optimizer_steps = 0;     ///< Adam's t
  std::vector<float> optimizer_first;   ///< Adam's m
  std::vector<float> optimizer_second;  ///< Adam's v
  RngState rng;                         ///< the run's generator after `epoch`
};

/// The name and shape of one parameter tensor.
struct ParameterShape {
  std::string name;       ///< e.g. `conv1.weight`
  std::int64_t rows = 0;  ///< the tensor's rows
  std::int64_t cols = 0;  ///< the tensor's columns
};

/// The data a model was trained on: how it was prepared, fingerprints of its nodes and its
/// split, and which nodes it was fitted to, so that the model is applied to data prepared the same
/// way and never scored on a node it trained or was validated on.
struct DataRecord {
  DataPreparation preparation;   ///< direction, normalisation, where the split came from
  std::int64_t nodes = 0;        ///< N
  std::uint64_t nodes_hash = 0;  ///< FNV-1a 64 of the node names and labels, in node order
  std::uint64_t split_hash = 0;  ///< FNV-1a 64 of every node's split part, in node order
  /// FNV-1a 64 of the name of every training and validation node, ascending (`fitted_nodes`);
  /// empty in files before format 7, which cannot tell them
  std::vector<std::uint64_t> fitted;
};

/// The record of `dataset` (O(N) over its node names and split, O(F log F) for its F training and
/// validation nodes).
/// @param dataset any dataset
/// @return its preparation, fingerprints and fitted nodes
[[nodiscard]] MASKGAT_EXPORT DataRecord record_data(const Dataset& dataset);

/// The FNV-1a 64 hashes of the names of `dataset`'s training and validation nodes, ascending:
/// what `DataRecord::fitted` holds. Names, not node ids, identify a node, so the same node is
/// recognised in data with other nodes added, removed or reordered. O(F log F).
/// @param dataset any dataset
/// @return one hash per training or validation node, ascending
[[nodiscard]] MASKGAT_EXPORT std::vector<std::uint64_t> fitted_nodes(const Dataset& dataset);

/// The test nodes of `dataset` whose names are among the nodes a model trained or was validated
/// on (by `DataRecord::fitted`): the nodes on which its test scores would not be test scores.
/// O(T log F) for T test nodes.
/// @param trained the model's record; empty `fitted` (an older file) finds none
/// @param dataset the data it is to be scored on
/// @return the nodes, ascending
[[nodiscard]] MASKGAT_EXPORT std::vector<NodeId> fitted_test_nodes(const DataRecord& trained,
                                                                   const Dataset& dataset);

/// How `dataset` differs from the data a model was trained on, one phrase per difference (empty:
/// none). Its direction and feature normalisation are compared always. With `with_split`, on the
/// same nodes a split other than the model's is a difference; on any nodes, a test node that the
/// model trained or was validated on (`fitted_test_nodes`, by name) is one too, whatever else
/// changed (a model may be scored on other graphs, never on nodes it was fitted to).
/// @param trained    the model's record (`Checkpoint::data`)
/// @param dataset    the data it is to be applied to
/// @param with_split compare the splits too (evaluation, resuming) or not (prediction)
/// @return phrases such as `it was trained with every edge also reversed (undirected), this
///         data is read on its edges as given (directed)`
[[nodiscard]] MASKGAT_EXPORT std::vector<std::string> data_differences(const DataRecord& trained,
                                                                       const Dataset& dataset,
                                                                       bool with_split);

/// Options that read data as the model's data was read: `files.undirected` set when the model's
/// edges were read both ways, and the model's row normalisation and largest-component rule in
/// `options`. Call it before
/// `load_files` or `load_dataset` (built-in datasets fix their direction themselves).
/// @param trained the model's record (`Checkpoint::data`)
/// @param files   own files to be read, or nullptr for a built-in dataset
/// @param options their loading options
/// @return a note for each option changed, e.g. that the edges are read both ways
MASKGAT_EXPORT std::vector<std::string> prepare_as_trained(const DataRecord& trained,
                                                           FileSources* files,
                                                           DatasetOptions& options);

/// Draws the model's random split again on `dataset` when the dataset holds the model's nodes
/// and a random split other than the model's (drawn with another seed or other sizes), or takes
/// the model's fixed split (`DataPreparation::fixed_split`) when the dataset holds the model's
/// nodes and another of its fixed splits, so the model's training nodes are not scored as test
/// nodes. The dataset's notes on its first draw are replaced by the new draw's.
/// @param trained the model's record (`Checkpoint::data`)
/// @param dataset loaded with `prepare_as_trained`'s options
/// @return whether the split was drawn again or another fixed split taken
MASKGAT_EXPORT bool redraw_split_as_trained(const DataRecord& trained, Dataset& dataset);

/// A model with what is needed to use it (class names, feature width in `options.model`) and to
/// resume its training. Holds no timing, so the same run always saves the same bytes.
struct MASKGAT_EXPORT Checkpoint {
  TrainOptions options;                    ///< model shape, recipe and seed
  std::string dataset;                     ///< name of the data it was trained on
  std::vector<std::string> class_names;    ///< K names, in class-id order
  std::vector<ParameterShape> parameters;  ///< in `ParameterStore` order
  std::vector<float> values;               ///< the model's parameters (the best epoch's)
  /// The model's running statistics (batch normalisation, `nn::BasicModel::buffers`), the best
  /// epoch's; empty without, and in files before format 9.
  std::vector<float> buffers;
  TrainingState state;             ///< where training stands, to resume it
  std::optional<DataRecord> data;  ///< its training data; unset in files before format 4
};

/// Writes `checkpoint` as one versioned binary file: magic `MGATCKPT`, format version, payload
/// size, payload (little-endian), FNV-1a 64 checksum of the payload. Written with
/// `write_file_atomically`, so `path` never holds a partial file.
/// @param path       the file to write
/// @param checkpoint what to save
/// @param overwrite  replace an existing file
/// @throws IoError when `path` exists and `overwrite` is false, or writing fails.
MASKGAT_EXPORT void save_checkpoint(const std::filesystem::path& path, const Checkpoint& checkpoint,
                                    bool overwrite);

/// Reads a file `save_checkpoint` wrote. The 20-byte header is read and checked first; the rest
/// is read in chunks, so a device or a pipe is refused as soon as it goes wrong. Every count is
/// checked against the bytes present before anything of that size is allocated, and every field
/// against its range and the others (a valid checksum does not make a file valid).
/// @param path   the file
/// @param limits only `max_file_bytes` is read: the largest file accepted
/// @return the checkpoint as saved
/// @throws IoError when it cannot be opened; LimitError when the file (or, for a pipe, the
///         size its header announces) is over `max_file_bytes`; ParseError (reader `checkpoint`)
///         naming what is wrong: not a checkpoint (magic), another format version, truncated,
///         checksum mismatch, an unknown attention kind, a positional encoding of unknown kind
///         or a width outside `transforms::check_positional_encoding`'s range or wider than the
///         model's input, sizes that contradict each other, class names that are not one
///         distinct non-empty name per output class, options out of their ranges (dropout,
///         Adam's, epochs, patience), parameters or optimizer state that are not finite, or a
///         training state that contradicts itself.
[[nodiscard]] MASKGAT_EXPORT Checkpoint load_checkpoint(const std::filesystem::path& path,
                                                        const Limits& limits = {});

/// Checks that `dataset`'s features, with the checkpoint's positional encoding appended, have the
/// width its model takes, before anything (such as the encoding) is computed for it.
/// @param checkpoint e.g. from `load_checkpoint`
/// @param dataset    the data to run or train the model on
/// @throws IoError when the dataset's features are unavailable; InvalidArgument naming both
///         widths, e.g. `the model takes 14 features (10 of the data's and 4 of its positional
///         encoding lap:4), the data has 8`.
MASKGAT_EXPORT void check_input_width(const Checkpoint& checkpoint, const Dataset& dataset);

/// The model a checkpoint describes, holding its parameters (`values`).
/// @param checkpoint e.g. from `load_checkpoint`
/// @return a model built from `checkpoint.options.model`
/// @throws InvalidArgument when the options are invalid (as `BasicModel`'s constructor) or the
///         parameters do not match the model they describe, naming the first parameter that
///         differs.
[[nodiscard]] MASKGAT_EXPORT nn::Model load_model(const Checkpoint& checkpoint);

/// Puts a checkpoint's running statistics into `model`.
/// @param model   a model built as the checkpoint's (`load_model`, a trainer's)
/// @param buffers `Checkpoint::buffers`
/// @throws InvalidArgument when their number is not the model's.
MASKGAT_EXPORT void restore_buffers(nn::Model& model, std::span<const float> buffers);

/// Checks that `parameters` and `values` fit `store` name for name and shape for shape.
/// @param store      the model's parameters
/// @param parameters the saved names and shapes, in store order
/// @param values     the number of saved values
/// @throws InvalidArgument naming the first parameter that differs, e.g.
///         `checkpoint: parameter conv1.weight is 3703 x 64, the model has 1433 x 64`.
MASKGAT_EXPORT void check_parameters(const nn::ParameterStore<float>& store,
                                     const std::vector<ParameterShape>& parameters,
                                     std::size_t values);

}  // namespace maskgat::train
