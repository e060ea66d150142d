#pragma once
/// @file
/// `Dataset`, the one value every app and test uses, how to load one by name or from files, and
/// the statistics `maskgat info` prints for every source alike.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "maskgat/export.hpp"
#include "maskgat/graph/graph.hpp"
#include "maskgat/io/features.hpp"
#include "maskgat/io/limits.hpp"
#include "maskgat/io/splits.hpp"

namespace maskgat {

/// How the loaders normalise features (`DatasetOptions::normalize_features`).
enum class FeatureNormalization : std::uint8_t {
  kAuto,  ///< rows normalised to sum 1 when no entry is negative, else as stored (with a note)
  kRows,  ///< rows normalised to sum 1 (`FeatureMatrix::normalize_rows`)
  kNone,  ///< as stored
};

/// The type of `DatasetOptions::normalize_features`: a `FeatureNormalization`, converted to and
/// from it implicitly, so that it is assigned, compared, switched on and passed as the enum is.
/// Programs written when the option was a `bool` still compile, with a deprecation warning, for
/// one minor version: `true` is `FeatureNormalization::kRows` and `false` is
/// `FeatureNormalization::kNone`, as the `bool` meant (the default is `kAuto`).
class FeatureNormalizationOption {
 public:
  /// The option set to `rule`.
  /// @param rule the normalisation
  // NOLINTNEXTLINE(google-explicit-constructor)
  constexpr FeatureNormalizationOption(FeatureNormalization rule) noexcept : rule_(rule) {}
  /// The option as a `bool` set it: `true` is `kRows`, `false` is `kNone`. Deprecated.
  /// @param rows_normalized whether feature rows are normalised to sum 1
  // NOLINTNEXTLINE(google-explicit-constructor)
  [[deprecated("use FeatureNormalization::kRows / kNone")]] constexpr FeatureNormalizationOption(
      bool rows_normalized) noexcept
      : rule_(rows_normalized ? FeatureNormalization::kRows : FeatureNormalization::kNone) {}
  /// The normalisation the option holds.
  /// @return the rule
  // NOLINTNEXTLINE(google-explicit-constructor)
  constexpr operator FeatureNormalization() const noexcept { return rule_; }

 private:
  FeatureNormalization rule_;
};

/// How a dataset was made from its sources. A checkpoint keeps it (`train::DataRecord`), so that
/// a model is applied to data prepared as its training data was. The model itself adds a
/// self-loop to every node and computes its positional encoding from the graph, so neither is
/// part of the data's preparation.
struct DataPreparation {
  /// Every edge was read both ways: `FileSources::undirected`, a GraphML or DOT file declaring an
  /// undirected graph, and the Planetoid and LINQS datasets (symmetrised as PyG does).
  bool undirected = false;
  bool rows_normalized = false;  ///< feature rows were normalised to sum 1
  bool random_split = false;     ///< the split was drawn (`draw_split`), not read
  /// Only the largest weakly connected component was kept (`keep_largest_component`).
  bool largest_component = false;
  std::uint64_t split_seed = 0;  ///< with `random_split`: its seed
  RandomSplitSizes split_sizes;  ///< with `random_split`: the sizes it was drawn with
  /// The fixed split the split is (an index into `Dataset::fixed_splits`), -1 when it is none of
  /// them (drawn, read from a split file, or the data carries no fixed splits).
  std::int64_t fixed_split = -1;
};

/// A node-classification dataset.
struct MASKGAT_EXPORT Dataset {
  /// `cora`, a synthetic graph's canonical spec, or the graph file's name for own files.
  std::string name;
  /// N nodes; an edge `j -> i` lets node i attend to node j.
  Graph graph;
  /// N x F features; N x 0 when the source has none (see `missing_features`).
  FeatureMatrix features;
  /// Why features are unavailable (as when PubMed's `ind.pubmed.allx` is not mirrored); empty
  /// when they are loaded.
  std::string missing_features;
  /// Feature column names when the source has them, else empty.
  std::vector<std::string> feature_names;
  /// E x D features of the edges of `graph`, in its order (`Graph::in_sources`); E x 0 or empty
  /// when the source has none (own files with `FileSources::edge_features`).
  RowMatrix<float> edge_features{};
  /// Class id per node, -1 for unlabelled nodes (N entries).
  std::vector<std::int32_t> labels;
  /// Name of every class id.
  std::vector<std::string> class_names;
  /// Name of every node (N entries).
  std::vector<std::string> node_names;
  /// Split part of every node (N entries).
  std::vector<SplitPart> split;
  /// The fixed splits that come with the data (each N parts), as the heterophily benchmark's
  /// ten; empty when it has none. `split` is one of them when `preparation.fixed_split` >= 0
  /// (`use_fixed_split`).
  std::vector<std::vector<SplitPart>> fixed_splits;
  /// What the loaders merged or dropped.
  Notes notes;
  /// How the loaders prepared it: direction, normalisation, where the split came from.
  DataPreparation preparation;

  /// The number of classes.
  /// @return K, the size of `class_names`
  [[nodiscard]] std::int32_t num_classes() const noexcept {
    return static_cast<std::int32_t>(class_names.size());
  }
  /// Ids of the nodes in `part`, ascending. O(N).
  /// @param part `SplitPart::kNone` gives the nodes in no part
  /// @return the node ids, possibly none
  [[nodiscard]] std::vector<NodeId> nodes_in(SplitPart part) const;
  /// Checks that features are loaded.
  /// @throws IoError `<name>: <missing_features>` when they are unavailable.
  void require_features() const;
};

/// Where the built-in datasets come from.
enum class DatasetSource { kPlanetoid, kLinqs };

/// Options for `load_dataset` and `load_files`.
struct DatasetOptions {
  /// Data directory with the mirror's layout (`planetoid/ind.cora.x`, `linqs/cora/...`).
  std::filesystem::path data_dir;
  /// Which files `cora` and `citeseer` load from (PubMed exists only as Planetoid files).
  DatasetSource source = DatasetSource::kPlanetoid;
  /// Fail when features are unavailable (PubMed) instead of loading without them.
  bool require_features = true;
  /// How features are normalised; the default is the `maskgat` command line's, as the GAT paper.
  /// A `FeatureNormalization` (assigning a `bool` is deprecated: `FeatureNormalizationOption`).
  FeatureNormalizationOption normalize_features = FeatureNormalization::kAuto;
  /// Seed of random splits (LINQS, own files without a split); a synthetic graph takes graph,
  /// features and split from the `seed=` of its spec instead.
  std::uint64_t seed = 0;
  /// The sizes of those random splits; unset: `default_split_sizes` of the labels. Data that
  /// carries fixed splits then uses a random split instead of them.
  std::optional<RandomSplitSizes> split_sizes;
  /// Of data that carries fixed splits, the one to use (`use_fixed_split`); unset: the first.
  /// Set for data without fixed splits, or together with `split_sizes`, it is an error.
  std::optional<std::int64_t> fixed_split;
  /// Keep only the largest weakly connected component (`keep_largest_component`), as Shchur et
  /// al. evaluate; the split is then drawn on it.
  bool largest_component = false;
  ReadOptions read;  ///< limits and strictness of every reader
};

/// Own data: a graph file plus optional features, labels and split files.
struct FileSources {
  std::filesystem::path graph;  ///< the graph file (required)
  /// `auto` (by extension: `.graphml`; `.dot`/`.gv`; else edge list), `edgelist`, `graphml`, `dot`.
  std::string format = "auto";
  std::filesystem::path features;  ///< empty: none; nodes then come from the graph file
  std::filesystem::path labels;    ///< empty: none
  std::filesystem::path split;     ///< empty: seeded stratified random split over labelled nodes
  bool numeric_ids = false;        ///< node tokens are 0-based ids
  std::int64_t num_nodes = -1;     ///< with `numeric_ids`: fixed node count, -1 = largest id + 1
  bool undirected = false;         ///< add every reverse edge
  /// Empty: none; else a row of features per edge of the edge list (`read_edge_features`), in its
  /// order. A reverse edge that `undirected` adds takes its edge's row; a repeated edge, its first.
  std::filesystem::path edge_features{};
};

/// The data directory: `flag` if given, else `$MASKGAT_DATA_DIR` if set and non-empty, else
/// `fallback` (the apps pass the source tree's `datasets/`).
/// @param flag     the directory the user named (`--data-dir`), if any
/// @param fallback used when neither `flag` nor the environment variable names one
/// @return the directory, as given (not checked to exist)
[[nodiscard]] MASKGAT_EXPORT std::filesystem::path resolve_data_dir(
    const std::optional<std::filesystem::path>& flag, const std::filesystem::path& fallback);

/// Normalises `dataset.features` by `rule` and records it in `dataset.preparation`. With `kAuto`
/// and a negative entry the features stay as stored and a note says so. O(nonzeros).
/// @param dataset a dataset whose features are loaded (or N x 0)
/// @param rule    the normalisation
MASKGAT_EXPORT void normalize_features(Dataset& dataset, FeatureNormalization rule);

/// FNV-1a 64 fingerprints of a dataset: of its nodes (names and labels, in node order) and of its
/// split (every node's part), as checkpoints record them (`train::DataRecord`).
struct DatasetFingerprint {
  std::uint64_t nodes = 0;  ///< of the node names and labels
  std::uint64_t split = 0;  ///< of the split parts
};

/// The fingerprints of `dataset`. O(N) over its node names and split.
/// @param dataset any dataset
/// @return its fingerprints
[[nodiscard]] MASKGAT_EXPORT DatasetFingerprint fingerprint(const Dataset& dataset);

/// What may surprise in a graph read edge for edge: many nodes (5 % or more) that have out-edges
/// but no in-edge other than a self-loop, so that they attend only to themselves; and an edge list
/// in which 90 % or more of the edges have their reverse. `load_files` adds these notes when its
/// edges are read as given (not `FileSources::undirected`). O(E log D), serial.
/// @param graph any graph
/// @return zero, one or two notes, each saying how many and what `--undirected` would change
[[nodiscard]] MASKGAT_EXPORT Notes direction_notes(const Graph& graph);

/// Draws a seeded stratified random split of the labelled nodes (`random_split`) and records it
/// in `dataset.preparation`.
/// @param dataset labels and class names set; its split is replaced
/// @param sizes   the sizes; unset: `default_split_sizes` of its labels
/// @param seed    seeds the draw
/// @throws InvalidArgument as `random_split`.
MASKGAT_EXPORT void draw_split(Dataset& dataset, const std::optional<RandomSplitSizes>& sizes,
                               std::uint64_t seed);

/// Makes fixed split `index` of those `dataset` carries its split (`Dataset::fixed_splits`) and
/// records it in `dataset.preparation`.
/// @param dataset any dataset
/// @param index   in [0, K) for K fixed splits
/// @throws InvalidArgument when the dataset carries no fixed splits or `index` is out of range,
///         e.g. `split index 10 is out of range: tolokers carries 10 fixed splits, 0 to 9`.
MASKGAT_EXPORT void use_fixed_split(Dataset& dataset, std::int64_t index);

/// Keeps only the largest weakly connected component of `dataset` (the first of equal ones, in
/// order of their smallest node), as Shchur et al. and PyG's `LargestConnectedComponents` do: its
/// nodes keep their order and names, the other nodes and their features and labels are dropped,
/// a random split is drawn again on what is kept (with the sizes and seed it was drawn with) and a
/// split that came with the data (and every fixed split) keeps its parts. A note says how many
/// nodes were kept; it is recorded in `dataset.preparation`. O(N + E).
/// @param dataset any dataset
MASKGAT_EXPORT void keep_largest_component(Dataset& dataset);

/// Replaces `dataset`'s split by the split file at `path`, which names the dataset's nodes by
/// `Dataset::node_names` (as `write_split` writes them); nodes it does not list are in no part.
/// Records that the split came with the data (`DataPreparation::random_split` false).
/// @param dataset node names and labels set
/// @param path    the split file (`read_split`'s format)
/// @param options strictness and limits
/// @throws what `read_split` throws: IoError, ParseError (an unknown node, a node in two parts,
///         an unlabelled node in a part).
MASKGAT_EXPORT void read_split_into(Dataset& dataset, const std::filesystem::path& path,
                                    const ReadOptions& options);

/// Loads `cora`, `citeseer`, `pubmed` (from `options.source`), Shchur et al.'s
/// `amazon-computers`, `amazon-photo` and `coauthor-cs` (`graphdata/*.npz`), the heterophily
/// benchmark's `actor`, `chameleon-filtered`, `squirrel-filtered`, `tolokers`, `cornell`, `texas`
/// and `wisconsin` (`heterophily/*.npz`, with their ten fixed splits) or `synthetic:...`;
/// names and the `synthetic:` prefix are matched without regard to case.
/// @param name    a built-in name, or a `synthetic:` spec (`parse_synthetic_spec`)
/// @param options data directory, source, feature handling, split seed and reader limits
/// @return the dataset (`read_planetoid`, `read_linqs`, `read_npz` or `make_synthetic`)
/// @throws InvalidArgument (unknown name, `pubmed` from LINQS, bad synthetic spec,
///         `options.fixed_split` for data without fixed splits or out of range), IoError
///         naming a missing file and the fetch command, ParseError / LimitError from the readers.
[[nodiscard]] MASKGAT_EXPORT Dataset load_dataset(std::string_view name,
                                                  const DatasetOptions& options);

/// Loads own files: the features file (if any) defines nodes and their order, then the graph,
/// labels and split. Without a split file, a stratified random split with `options.seed`; without
/// labels, every node is unlabelled and in no part. Without features, `features` is N x 0 and
/// `missing_features` says so.
/// @param files   the files and how to read them
/// @param options split seed and sizes, feature normalisation and reader limits
/// @return the dataset, named after the graph file, with the readers' notes
/// @throws InvalidArgument (unknown `files.format`, negative split sizes, `options.fixed_split`
///         set: own files carry no fixed splits), IoError (a file
///         cannot be read), ParseError / LimitError from the readers.
[[nodiscard]] MASKGAT_EXPORT Dataset load_files(const FileSources& files,
                                                const DatasetOptions& options);

/// Minimum, median (lower median) and maximum of a degree sequence.
struct DegreeSummary {
  EdgeId min = 0;     ///< smallest degree (0 for no nodes)
  EdgeId median = 0;  ///< lower median degree
  EdgeId max = 0;     ///< largest degree
};

/// What `maskgat info` prints.
struct Statistics {
  std::int64_t nodes = 0;                  ///< N
  EdgeId edges = 0;                        ///< directed edges, self-loops excluded
  EdgeId self_loops = 0;                   ///< edges `i -> i`
  std::int64_t isolated_nodes = 0;         ///< no in- or out-edge other than a self-loop
  std::int64_t components = 0;             ///< weakly connected components (Boost.Graph)
  DegreeSummary in_degree;                 ///< in-degrees, self-loops excluded
  DegreeSummary out_degree;                ///< out-degrees, self-loops excluded
  std::int64_t features = 0;               ///< width (0 when unavailable)
  double feature_density = 0.0;            ///< fraction of nonzero features (0 when unavailable)
  std::vector<std::int64_t> class_counts;  ///< labelled nodes per class id
  std::int64_t unlabelled = 0;             ///< nodes with label -1
  std::int64_t train = 0;                  ///< nodes in the training part
  std::int64_t val = 0;                    ///< nodes in the validation part
  std::int64_t test = 0;                   ///< nodes in the test part
};

/// Statistics of `dataset`; O(N + E), serial.
/// @param dataset any dataset, with or without features
/// @return what `maskgat info` prints
[[nodiscard]] MASKGAT_EXPORT Statistics compute_statistics(const Dataset& dataset);

}  // namespace maskgat
