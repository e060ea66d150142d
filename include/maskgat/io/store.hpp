#pragma once
/// @file
/// The binary graph store: a dataset as little-endian arrays in a directory, mapped into memory
/// (`mmap`) instead of parsed, so that it loads in seconds, shares its pages between processes
/// and lets features larger than memory be paged in by the rows a mini-batch reads.

#include <cstdint>
#include <filesystem>

#include "maskgat/export.hpp"
#include "maskgat/io/dataset.hpp"
#include "maskgat/io/synthetic.hpp"

namespace maskgat {

/// What `open_store` checks beyond what it always checks.
struct StoreOptions {
  /// Also verify the features' checksums, which reads every page of them. The other arrays'
  /// checksums are always verified; features are not by default, so that a store whose features
  /// exceed memory opens without reading them.
  bool verify_features = false;
  /// Limits on the sizes the header announces (nodes, edges, feature width, classes) and on the
  /// header's own size (`max_file_bytes`).
  Limits limits;
};

/// Writes `dataset` as a store in the directory `dir`:
/// - `header`: magic `MGATSTOR`, format version, then the sizes, names of classes and feature
///   columns, the loaders' notes, how the data was prepared (`DataPreparation`) and a table of the
///   arrays with their element counts and checksums, closed by an FNV-1a 64 checksum;
/// - one `<name>.bin` per array, little-endian, nothing else in the file: `in_offsets` (int64,
///   N+1), `in_sources` (int32, E), `weights` (float, E; weighted graphs only), `out_offsets`,
///   `out_targets`, `out_edge_ids` (the transpose, as `Graph` holds it), `labels` (int32, N),
///   `split` (uint8, N: 0 none, 1 train, 2 val, 3 test), the features as `features` (float,
///   N x F row-major) or as CSR `feature_offsets` (int32, N+1), `feature_columns` (int32) and
///   `feature_values` (float), and the node names as `node_name_offsets` (int64, N+1) and
///   `node_name_bytes` (UTF-8) unless node i is named `i`.
/// The directory is written beside `dir` and renamed into place, so `dir` is always absent, the
/// old store or the whole new one. Serial, O(N + E + stored features).
/// @param dataset   any dataset
/// @param dir       the store's directory; its parent must exist
/// @param overwrite replace an existing store (a directory that is not a store is never replaced)
/// @throws IoError when `dir` exists (and not `overwrite`, or it is not a store) or on any write
///         failure (nothing is left behind); InvalidArgument when the dataset's parts disagree in
///         size or it has edge features (a store does not keep them).
MASKGAT_EXPORT void write_store(const Dataset& dataset, const std::filesystem::path& dir,
                                bool overwrite);

/// Writes the graph `make_synthetic(options, load)` builds straight into a store, a block of
/// nodes at a time: the graph's rows and features are written as they are drawn, and the
/// transpose in passes of bounded memory, so the memory used is the generator's per-node state
/// (about 64 bytes per node) and 1 GiB of buffers, never the edges or features. The store holds
/// the same dataset as `make_synthetic` (`open_store` returns it, bitwise), except that features
/// are never row-normalised here (the generator's have negative entries, which the loaders leave
/// as stored). Parallel over nodes (TBB) as `make_synthetic`.
/// @param options the generator's parameters
/// @param load    `split_sizes` and `read.limits`, as for `make_synthetic`
/// @param dir     the store's directory, as for `write_store`
/// @param overwrite as for `write_store`
/// @return the edges written
/// @throws what `make_synthetic` and `write_store` throw.
MASKGAT_EXPORT EdgeId write_synthetic_store(const SyntheticOptions& options,
                                            const DatasetOptions& load,
                                            const std::filesystem::path& dir, bool overwrite);

/// Opens the store in `dir` by mapping its arrays read-only: the graph and the features are read
/// in place (the returned dataset keeps the mappings alive, as do its copies); labels, split and
/// names are copied into memory. Before anything is used it checks the header (magic, version,
/// checksum, sizes against `options.limits`, the array table), every file's size, the checksums
/// of all arrays but the features (and of those with `verify_features`), every index of the graph
/// and the sparse features (in range, rows ascending), the labels and the split. A store that
/// fails is refused, naming the file and what is wrong. Checks run in parallel (TBB).
/// @param dir     the store's directory
/// @param options checks and limits
/// @return the dataset, as written
/// @throws IoError (no such store, a file that cannot be opened or mapped), ParseError (a
///         truncated, corrupt, inconsistent or other-version store), LimitError (sizes over the
///         limits).
[[nodiscard]] MASKGAT_EXPORT Dataset open_store(const std::filesystem::path& dir,
                                                const StoreOptions& options = {});

}  // namespace maskgat
