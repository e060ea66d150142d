#include "maskgat/io/store.hpp"

#include <algorithm>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/detail/parallel.hpp"
#include "io/detail/store_files.hpp"
#include "maskgat/core/error.hpp"

namespace maskgat {
namespace {

namespace fs = std::filesystem;
using detail::ArrayRecord;
using detail::FeatureLayout;
using detail::StoreHeader;

// Elements per task of the parallel checks: a constant, so the tasks (and which problem is
// reported first) do not depend on the thread count.
constexpr std::int64_t kCheckBlock = 1 << 16;

[[noreturn]] void fail(const fs::path& path, const std::string& message) {
  throw ParseError(detail::kStoreReader, path.string(), 0, message);
}

// Runs `check(begin, end)` over fixed blocks of [0, count) in parallel and throws the first
// block's problem against `path`.
template <typename Check>
void check_blocks(const fs::path& path, std::int64_t count, Check&& check) {
  if (auto problem = detail::first_problem(count, kCheckBlock, check)) fail(path, *problem);
}

// The mapped arrays of an open store; the graph and the features keep them alive.
struct Mappings {
  std::vector<std::unique_ptr<detail::MappedFile>> files;
};

// The header that describes `dataset`, without its arrays.
StoreHeader header_of(const Dataset& dataset) {
  StoreHeader header;
  header.name = dataset.name;
  header.nodes = dataset.graph.num_nodes();
  header.edges = dataset.graph.num_edges();
  header.weighted = dataset.graph.has_weights();
  header.features = dataset.features.cols();
  const InputRef<float> values = dataset.features.view();
  if (dataset.features.cols() == 0) {
    header.layout = FeatureLayout::kNone;
  } else if (values.is_sparse()) {
    header.layout = FeatureLayout::kSparse;
    header.feature_entries = values.sparse().nonZeros();
  } else {
    header.layout = FeatureLayout::kDense;
    header.feature_entries = values.dense().size();
  }
  header.missing_features = dataset.missing_features;
  header.feature_names = dataset.feature_names;
  header.class_names = dataset.class_names;
  header.numeric_node_names = true;
  for (std::size_t i = 0; i < dataset.node_names.size() && header.numeric_node_names; ++i) {
    header.numeric_node_names = dataset.node_names[i] == std::to_string(i);
  }
  header.notes = dataset.notes;
  header.preparation = dataset.preparation;
  return header;
}

// Checks a dataset's parts against each other before they are written.
void check_dataset(const Dataset& dataset, const fs::path& dir) {
  const auto n = static_cast<std::size_t>(dataset.graph.num_nodes());
  const bool features =
      dataset.features.cols() == 0 || dataset.features.rows() == dataset.graph.num_nodes();
  if (dataset.labels.size() != n || dataset.split.size() != n || dataset.node_names.size() != n ||
      !features) {
    throw InvalidArgument("write_store: " + dir.string() + ": the dataset's graph has " +
                          std::to_string(n) + " nodes, its labels " +
                          std::to_string(dataset.labels.size()) + ", split " +
                          std::to_string(dataset.split.size()) + ", node names " +
                          std::to_string(dataset.node_names.size()) + " and features " +
                          std::to_string(dataset.features.rows()) + " rows");
  }
  if (dataset.edge_features.size() > 0) {
    throw InvalidArgument("write_store: " + dir.string() +
                          ": the dataset has edge features, which a store does not keep; train "
                          "from the edge list and its edge features file instead");
  }
}

// Maps every array of `header` in `dir` into `mappings` and checks its checksum (the features'
// only with `verify_features`).
void map_arrays(const fs::path& dir, const StoreHeader& header, bool verify_features,
                Mappings& mappings) {
  for (const ArrayRecord& array : header.arrays) {
    const fs::path path = dir / (array.name + ".bin");
    mappings.files.push_back(
        std::make_unique<detail::MappedFile>(path, array.count * array.element_bytes));
    const bool feature = array.name.starts_with("feature");
    if ((!feature || verify_features) &&
        detail::checksum_of(mappings.files.back()->bytes()) != array.checksum) {
      fail(path, "checksum mismatch: the file is corrupt or belongs to another store");
    }
  }
}

template <typename T>
std::span<const T> mapped(const StoreHeader& header, const Mappings& mappings,
                          std::string_view name) {
  for (std::size_t k = 0; k < header.arrays.size(); ++k) {
    if (header.arrays[k].name == name) return mappings.files[k]->as<T>();
  }
  return {};
}

// The features of an open store, checked: a sparse store's offsets run from 0 to its entries
// without decreasing and its columns lie in [0, F), ascending within each row.
FeatureMatrix features_of(const fs::path& dir, const StoreHeader& header,
                          const std::shared_ptr<Mappings>& mappings) {
  const auto n = static_cast<Eigen::Index>(header.nodes);
  const auto f = static_cast<Eigen::Index>(header.features);
  if (header.layout == FeatureLayout::kNone) return FeatureMatrix(DenseFeatures(n, 0));
  if (header.layout == FeatureLayout::kDense) {
    const auto values = mapped<float>(header, *mappings, "features");
    return FeatureMatrix(MappedFeatures{InputRef<float>::DenseMap(values.data(), n, f), mappings});
  }
  const auto offsets = mapped<std::int32_t>(header, *mappings, "feature_offsets");
  const auto columns = mapped<std::int32_t>(header, *mappings, "feature_columns");
  const auto values = mapped<float>(header, *mappings, "feature_values");
  const fs::path path = dir / "feature_offsets.bin";
  if (offsets.front() != 0 || offsets.back() != header.feature_entries) {
    fail(path, "must start at 0 and end at " + std::to_string(header.feature_entries) +
                   " (the stored values), got " + std::to_string(offsets.front()) + " and " +
                   std::to_string(offsets.back()));
  }
  check_blocks(path, n, [&](std::int64_t begin, std::int64_t end) -> std::optional<std::string> {
    for (std::int64_t row = begin; row < end; ++row) {
      const auto at = static_cast<std::size_t>(row);
      if (offsets[at + 1] < offsets[at]) {
        return "decreases at row " + std::to_string(row) + ": " + std::to_string(offsets[at]) +
               " then " + std::to_string(offsets[at + 1]);
      }
      for (std::int32_t k = offsets[at]; k < offsets[at + 1]; ++k) {
        const std::int32_t column = columns[static_cast<std::size_t>(k)];
        if (column < 0 || column >= f ||
            (k > offsets[at] && column <= columns[static_cast<std::size_t>(k) - 1])) {
          return "row " + std::to_string(row) + " has column " + std::to_string(column) +
                 " at entry " + std::to_string(k) + ", expected columns in [0, " +
                 std::to_string(f) + ") ascending";
        }
      }
    }
    return std::nullopt;
  });
  return FeatureMatrix(
      MappedFeatures{InputRef<float>::SparseMap(n, f, header.feature_entries, offsets.data(),
                                                columns.data(), values.data()),
                     mappings});
}

// The node names of an open store: `i` for node i, or its stored names, checked.
std::vector<std::string> node_names_of(const fs::path& dir, const StoreHeader& header,
                                       const Mappings& mappings) {
  std::vector<std::string> names;
  names.reserve(static_cast<std::size_t>(header.nodes));
  if (header.numeric_node_names) {
    for (std::int64_t i = 0; i < header.nodes; ++i) names.push_back(std::to_string(i));
    return names;
  }
  const auto offsets = mapped<std::int64_t>(header, mappings, "node_name_offsets");
  const auto bytes = mapped<char>(header, mappings, "node_name_bytes");
  const fs::path path = dir / "node_name_offsets.bin";
  if (offsets.front() != 0 || offsets.back() != static_cast<std::int64_t>(bytes.size())) {
    fail(path, "must start at 0 and end at " + std::to_string(bytes.size()) +
                   " (the names' bytes), got " + std::to_string(offsets.front()) + " and " +
                   std::to_string(offsets.back()));
  }
  for (std::int64_t i = 0; i < header.nodes; ++i) {
    const auto at = static_cast<std::size_t>(i);
    if (offsets[at + 1] < offsets[at]) {
      fail(path, "decreases at node " + std::to_string(i) + ": " + std::to_string(offsets[at]) +
                     " then " + std::to_string(offsets[at + 1]));
    }
    // Checked at every node, not only at the end: a later decrease would come too late.
    if (offsets[at + 1] > static_cast<std::int64_t>(bytes.size())) {
      fail(path, "runs past the names' " + std::to_string(bytes.size()) + " bytes at node " +
                     std::to_string(i) + ": " + std::to_string(offsets[at + 1]));
    }
    names.emplace_back(bytes.data() + offsets[at],
                       static_cast<std::size_t>(offsets[at + 1] - offsets[at]));
  }
  return names;
}

// Throws LimitError when `value` (`what`) is over `limit`, naming the flag that raises it.
void check_limit(const fs::path& header, std::int64_t value, std::int64_t limit,
                 const std::string& what, const std::string& flag) {
  if (value > limit) {
    throw LimitError(detail::kStoreReader, header.string(), 0,
                     std::to_string(value) + " " + what + ": over the limit of " +
                         std::to_string(limit) + " (raise it with " + flag + ")");
  }
}

}  // namespace

void write_store(const Dataset& dataset, const fs::path& dir, bool overwrite) {
  check_dataset(dataset, dir);
  detail::StoreDirectory out(dir, overwrite);
  const fs::path& path = out.path();
  StoreHeader header = header_of(dataset);
  std::vector<ArrayRecord>& arrays = header.arrays;
  const Graph& graph = dataset.graph;
  arrays.push_back(detail::write_array(path, "in_offsets", graph.in_offsets()));
  arrays.push_back(detail::write_array(path, "in_sources", graph.in_sources()));
  if (graph.has_weights()) arrays.push_back(detail::write_array(path, "weights", graph.weights()));
  arrays.push_back(detail::write_array(path, "out_offsets", graph.out_offsets()));
  arrays.push_back(detail::write_array(path, "out_targets", graph.out_targets()));
  arrays.push_back(detail::write_array(path, "out_edge_ids", graph.out_edge_ids()));
  arrays.push_back(detail::write_array<std::int32_t>(path, "labels", dataset.labels));
  std::vector<std::uint8_t> split(dataset.split.size());
  std::transform(dataset.split.begin(), dataset.split.end(), split.begin(),
                 [](SplitPart part) { return static_cast<std::uint8_t>(part); });
  arrays.push_back(detail::write_array<std::uint8_t>(path, "split", split));
  const InputRef<float> values = dataset.features.view();
  if (header.layout == FeatureLayout::kDense) {
    const auto dense = values.dense();
    arrays.push_back(detail::write_array(
        path, "features",
        std::span<const float>(dense.data(), static_cast<std::size_t>(dense.size()))));
  } else if (header.layout == FeatureLayout::kSparse) {
    const auto sparse = values.sparse();
    const auto rows = static_cast<std::size_t>(sparse.rows());
    const auto entries = static_cast<std::size_t>(sparse.nonZeros());
    arrays.push_back(detail::write_array(
        path, "feature_offsets", std::span<const std::int32_t>(sparse.outerIndexPtr(), rows + 1)));
    arrays.push_back(detail::write_array(
        path, "feature_columns", std::span<const std::int32_t>(sparse.innerIndexPtr(), entries)));
    arrays.push_back(detail::write_array(path, "feature_values",
                                         std::span<const float>(sparse.valuePtr(), entries)));
  }
  if (!header.numeric_node_names) {
    std::vector<std::int64_t> offsets{0};
    std::string bytes;
    for (const std::string& name : dataset.node_names) {
      bytes += name;
      offsets.push_back(static_cast<std::int64_t>(bytes.size()));
    }
    arrays.push_back(detail::write_array<std::int64_t>(path, "node_name_offsets", offsets));
    arrays.push_back(detail::write_array(
        path, "node_name_bytes",
        std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(bytes.data()),
                                      bytes.size())));
  }
  detail::write_store_header(path, header);
  out.publish();
}

Dataset open_store(const fs::path& dir, const StoreOptions& options) {
  std::error_code error;
  if (!fs::is_directory(dir, error)) {
    throw IoError(std::string(detail::kStoreReader) + ": " + dir.string() +
                  ": no such store (not a directory)");
  }
  if (!fs::exists(dir / detail::kStoreHeaderFile, error)) {
    throw IoError(std::string(detail::kStoreReader) + ": " + dir.string() +
                  ": not a MaskGAT graph store (no header file; maskgat convert writes one)");
  }
  const StoreHeader header = detail::read_store_header(dir, options.limits.max_file_bytes);
  const fs::path header_path = dir / detail::kStoreHeaderFile;
  const Limits& limits = options.limits;
  check_limit(header_path, header.nodes, limits.max_nodes, "nodes", "--max-nodes");
  check_limit(header_path, header.edges, limits.max_edges, "edges", "--max-edges");
  check_limit(header_path, header.features, limits.max_features, "feature columns",
              "--max-features");
  check_limit(header_path, static_cast<std::int64_t>(header.class_names.size()), limits.max_classes,
              "classes", "--max-classes");

  auto mappings = std::make_shared<Mappings>();
  map_arrays(dir, header, options.verify_features, *mappings);
  Dataset dataset;
  dataset.name = header.name;
  Graph::Arrays arrays;
  arrays.in_offsets = mapped<EdgeId>(header, *mappings, "in_offsets");
  arrays.in_sources = mapped<NodeId>(header, *mappings, "in_sources");
  arrays.weights = mapped<float>(header, *mappings, "weights");
  arrays.out_offsets = mapped<EdgeId>(header, *mappings, "out_offsets");
  arrays.out_targets = mapped<NodeId>(header, *mappings, "out_targets");
  arrays.out_edge_ids = mapped<EdgeId>(header, *mappings, "out_edge_ids");
  try {
    dataset.graph = Graph(header.nodes, arrays, mappings);
  } catch (const InvalidArgument& graph_error) {
    fail(dir, graph_error.what());
  }
  const auto classes = static_cast<std::int32_t>(header.class_names.size());
  const auto labels = mapped<std::int32_t>(header, *mappings, "labels");
  check_blocks(dir / "labels.bin", header.nodes,
               [&](std::int64_t begin, std::int64_t end) -> std::optional<std::string> {
                 for (std::int64_t i = begin; i < end; ++i) {
                   const std::int32_t label = labels[static_cast<std::size_t>(i)];
                   if (label < -1 || label >= classes) {
                     return "node " + std::to_string(i) + " has label " + std::to_string(label) +
                            ", expected -1 (none) or a class id in [0, " + std::to_string(classes) +
                            ")";
                   }
                 }
                 return std::nullopt;
               });
  dataset.labels.assign(labels.begin(), labels.end());
  const auto split = mapped<std::uint8_t>(header, *mappings, "split");
  dataset.split.resize(split.size());
  for (std::size_t i = 0; i < split.size(); ++i) {
    if (split[i] > static_cast<std::uint8_t>(SplitPart::kTest)) {
      fail(dir / "split.bin", "node " + std::to_string(i) + " is in part " +
                                  std::to_string(split[i]) +
                                  ", expected 0 (none), 1 (train), 2 (val) or 3 (test)");
    }
    dataset.split[i] = static_cast<SplitPart>(split[i]);
  }
  dataset.features = features_of(dir, header, mappings);
  dataset.missing_features = header.missing_features;
  dataset.feature_names = header.feature_names;
  dataset.class_names = header.class_names;
  dataset.node_names = node_names_of(dir, header, *mappings);
  dataset.notes = header.notes;
  dataset.preparation = header.preparation;
  return dataset;
}

}  // namespace maskgat
