#pragma once
/// @file
/// Train / validation / test splits: reading a split file and seeded stratified random splits.

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "maskgat/export.hpp"
#include "maskgat/io/limits.hpp"
#include "maskgat/io/node_index.hpp"

namespace maskgat {

/// The part of the split a node belongs to.
enum class SplitPart : std::uint8_t { kNone, kTrain, kVal, kTest };

/// The name used in split files and output: `none`, `train`, `val`, `test`.
/// @param part any part
/// @return a static string
[[nodiscard]] MASKGAT_EXPORT const char* split_part_name(SplitPart part) noexcept;

/// Sizes of a random split: as Planetoid's random splits (`train_per_class` training nodes per
/// class, then `val` and `test` nodes from the rest), or as Shchur et al.'s (`val` validation
/// nodes per class too, and every other labelled node for test: `per_class_split`).
struct RandomSplitSizes {
  /// `test` value: every labelled node not in training or validation.
  static constexpr std::int64_t kRest = -1;
  std::int64_t train_per_class = 20;  ///< training nodes per class (>= 0)
  std::int64_t val = 500;             ///< validation nodes (>= 0), per class with `val_per_class`
  std::int64_t test = 1000;           ///< test nodes (>= 0), or `kRest`
  bool val_per_class = false;         ///< `val` counts per class

  /// Equal when every size and flag is.
  /// @return whether they are equal
  bool operator==(const RandomSplitSizes&) const = default;
};

/// Shchur et al.'s protocol: `train` and `val` nodes per class, every other labelled node for test.
/// @param train training nodes per class (Shchur et al.: 20)
/// @param val   validation nodes per class (Shchur et al.: 30)
/// @return the sizes
[[nodiscard]] constexpr RandomSplitSizes per_class_split(std::int64_t train, std::int64_t val) {
  return {train, val, RandomSplitSizes::kRest, true};
}

/// Writes `split` as `read_split` reads it: one `node train|val|test` line per node in a part,
/// in node order, with `write_file_atomically`.
/// @param path       the file
/// @param node_names the name of every node (N entries)
/// @param split      the part of every node (N entries)
/// @param overwrite  replace an existing file
/// @throws InvalidArgument when the sizes differ or a node's name cannot be read back (empty,
///         holding a space, tab, comma or line end, or starting with `#` or `%`); IoError when
///         `path` exists and `overwrite` is false, or writing fails.
MASKGAT_EXPORT void write_split(const std::filesystem::path& path,
                                std::span<const std::string> node_names,
                                std::span<const SplitPart> split, bool overwrite);

/// The sizes of a random split when none are given: Planetoid's (20 per class, 500, 1000) when
/// the labelled nodes hold them (every class at least 20 nodes, and 1500 left after training);
/// otherwise scaled down to the graph: per class a fifth of the smallest non-empty class, a fifth
/// of the labelled nodes for validation (each at least 1), and the rest for test, none above
/// Planetoid's size, with a note.
/// @param labels      N class ids, -1 for an unlabelled node
/// @param num_classes K; labels at or above it are not counted
/// @param notes       receives a note when the sizes are scaled
/// @return the sizes to draw with
[[nodiscard]] MASKGAT_EXPORT RandomSplitSizes
default_split_sizes(std::span<const std::int32_t> labels, std::int32_t num_classes, Notes& notes);

/// Reads `node train|val|test` lines (two fields; comments etc. as the edge list). `nodes` must
/// be frozen. Nodes not listed are in no part. Serial.
/// @param path    the file
/// @param nodes   the frozen node index of the dataset
/// @param options strictness (repeated lines)
/// @param notes   receives a note counting repeated identical lines
/// @param labels  when not empty, the class of each node (-1: unlabelled); a node without a
///                label may then be in no part
/// @return the part of each of the `nodes.size()` nodes
/// @throws IoError (cannot open), ParseError (column count, unknown node, unknown part name, a
///         node in two parts, an unlabelled node in a part; a repeated identical line is a note,
///         or an error when `strict`).
[[nodiscard]] MASKGAT_EXPORT std::vector<SplitPart> read_split(
    const std::filesystem::path& path, const NodeIndex& nodes, const ReadOptions& options,
    Notes& notes, std::span<const std::int32_t> labels = {});

/// A seeded stratified split of the labelled nodes (`labels[i] >= 0`): `train_per_class` nodes of
/// each class (and `val` more of each with `val_per_class`), then `val` (unless per class) and
/// `test` nodes drawn from the rest (all of it with `kRest`). When fewer labelled nodes exist than
/// asked for, parts are filled in that order with what exists and a note says so.
/// Serial; the same labels, sizes and seed give the same split on every platform.
/// @param labels      N class ids, -1 for an unlabelled node
/// @param num_classes K; every label must be below it
/// @param sizes       how many nodes each part gets
/// @param seed        seeds the shuffles (an `Rng`)
/// @param notes       receives a note for each part that could not be filled
/// @return the part of each of the N nodes; unlabelled nodes are in no part
/// @throws InvalidArgument when a size is negative (but `test` = `kRest`) or a label is K or more.
[[nodiscard]] MASKGAT_EXPORT std::vector<SplitPart> random_split(
    std::span<const std::int32_t> labels, std::int32_t num_classes, const RandomSplitSizes& sizes,
    std::uint64_t seed, Notes& notes);

}  // namespace maskgat
