#include "maskgat/io/npz.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "io/detail/assemble.hpp"
#include "io/detail/csr_arrays.hpp"
#include "io/detail/npy.hpp"
#include "io/detail/pickle_decoders.hpp"
#include "io/detail/text.hpp"
#include "io/detail/zip_archive.hpp"
#include "maskgat/core/error.hpp"

namespace maskgat {
namespace {

constexpr std::string_view kReader = "npz";

std::string member_of(std::string_view key) { return std::string(key) + ".npy"; }

// An npz archive: its arrays by key (member `<key>.npy`), each read and parsed when asked for.
class NpzFile {
 public:
  NpzFile(const std::filesystem::path& path, const Limits& limits)
      : archive_(detail::read_zip(path, kReader, limits)), limits_(limits) {}

  [[nodiscard]] bool has(std::string_view key) const { return archive_->contains(member_of(key)); }
  [[nodiscard]] const std::string& path() const noexcept { return archive_->path(); }
  [[nodiscard]] const Limits& limits() const noexcept { return limits_; }

  // The array `key`; its bytes stay with this file.
  detail::NumpyArray array(std::string_view key) {
    const std::string member = member_of(key);
    if (!archive_->contains(member)) fail(key, "is missing");
    held_.push_back(archive_->read(member));
    return detail::parse_npy(held_.back(), member, kReader, path(), limits_);
  }

  // The pickle held by the 0-d object array `key`; its messages name the member.
  detail::Pickle pickle(std::string_view key) {
    const detail::NumpyArray object = array(key);
    if (object.dtype.kind != detail::NumpyKind::kObject) {
      fail(key, "holds dtype '" + object.dtype.code + "', expected a pickled object ('|O')");
    }
    return detail::Pickle(std::string(object.data), kReader,
                          path() + ": member " + detail::quoted_printable(member_of(key)), limits_);
  }

  [[noreturn]] void fail(std::string_view key, const std::string& message) const {
    throw ParseError(kReader, path(), 0,
                     "member " + detail::quoted_printable(member_of(key)) + " " + message);
  }
  [[noreturn]] void fail_limit(std::string_view key, const std::string& message) const {
    throw LimitError(kReader, path(), 0,
                     "member " + detail::quoted_printable(member_of(key)) + " " + message);
  }

 private:
  std::unique_ptr<detail::ZipArchive> archive_;
  Limits limits_;
  std::deque<std::string> held_;  // members read so far (arrays are views into them)
};

// A 1-D array of `key` as int64 values.
std::vector<std::int64_t> integer_vector(NpzFile& file, std::string_view key) {
  const detail::NumpyArray array = file.array(key);
  if (array.shape.size() != 1) {
    file.fail(key, "has shape " + detail::shape_text(array.shape) + ", expected a 1-D array");
  }
  std::optional<std::vector<std::int64_t>> values = detail::numpy_integers(array);
  if (!values) {
    file.fail(key, "holds dtype '" + array.dtype.code + "', expected integers");
  }
  return std::move(*values);
}

// The CSR matrix stored as the plain arrays `<prefix>data`, `indices`, `indptr` and `shape`.
detail::CsrArrays csr_from_arrays(NpzFile& file, const std::string& prefix, std::int64_t max_cols,
                                  std::string_view cols_limit) {
  const std::string shape_key = prefix + "shape";
  const std::vector<std::int64_t> shape = integer_vector(file, shape_key);
  if (shape.size() != 2 || shape[0] < 0 || shape[1] < 0) {
    file.fail(shape_key, "holds " + std::to_string(shape.size()) +
                             " entries, expected 2 non-negative ones (rows, columns)");
  }
  if (shape[0] > file.limits().max_nodes) {
    file.fail_limit(shape_key,
                    "declares " + std::to_string(shape[0]) + " rows, over the node limit of " +
                        std::to_string(file.limits().max_nodes) + " (raise it with --max-nodes)");
  }
  if (shape[1] > max_cols) {
    file.fail_limit(shape_key, "declares " + std::to_string(shape[1]) + " columns, over the " +
                                   std::string(cols_limit) + " of " + std::to_string(max_cols));
  }
  detail::CsrParts parts;
  parts.rows = shape[0];
  parts.cols = shape[1];
  parts.indptr = integer_vector(file, prefix + "indptr");
  parts.indices = integer_vector(file, prefix + "indices");
  const std::string data_key = prefix + "data";
  const detail::NumpyArray data = file.array(data_key);
  if (data.shape.size() != 1 || data.dtype.kind == detail::NumpyKind::kUnicode ||
      data.dtype.kind == detail::NumpyKind::kBytes ||
      data.dtype.kind == detail::NumpyKind::kObject) {
    file.fail(data_key, "has dtype '" + data.dtype.code + "' and shape " +
                            detail::shape_text(data.shape) + ", expected a 1-D numeric array");
  }
  parts.values = detail::numpy_floats(data);
  const auto subject = [](const std::string& key) {
    return "member " + detail::quoted_printable(member_of(key)) + ": ";
  };
  return detail::checked_csr(
      std::move(parts),
      {subject(prefix + "indptr"), subject(prefix + "indices"), subject(data_key)}, kReader,
      file.path());
}

// The CSR matrix pickled in the 0-d object array `key`.
detail::CsrArrays csr_from_pickle(NpzFile& file, std::string_view key) {
  const detail::Pickle pickle = file.pickle(key);
  const detail::PickleId item = detail::decode_object_item(pickle, pickle.root(), file.limits());
  return detail::decode_csr_matrix(pickle, item, file.limits());
}

// The prefix of the plain arrays of matrix `name` (`adj_` or `adj_matrix.`), if the file has them.
std::optional<std::string> array_prefix(const NpzFile& file, const std::string& name) {
  for (const std::string& prefix : {name + "_", name + "_matrix."}) {
    if (file.has(prefix + "indptr")) return prefix;
  }
  return std::nullopt;
}

SparseFeatures sparse_features(const detail::CsrArrays& csr, const NpzFile& file,
                               std::string_view key) {
  using Index = SparseFeatures::StorageIndex;
  const std::int64_t nnz = csr.indptr.back();
  if (nnz > std::numeric_limits<Index>::max()) {
    file.fail_limit(
        key, "holds " + std::to_string(nnz) + " nonzeros, more than a feature matrix can index");
  }
  SparseFeatures features(csr.rows, csr.cols);
  features.resizeNonZeros(static_cast<Eigen::Index>(nnz));
  for (std::size_t r = 0; r < csr.indptr.size(); ++r) {
    features.outerIndexPtr()[r] = static_cast<Index>(csr.indptr[r]);
  }
  std::copy(csr.indices.begin(), csr.indices.end(), features.innerIndexPtr());
  std::copy(csr.values.begin(), csr.values.end(), features.valuePtr());
  return features;
}

// Element (row, col) of the 2-D `array` in its storage order.
std::size_t element_at(const detail::NumpyArray& array, std::int64_t row, std::int64_t col) {
  return static_cast<std::size_t>(array.fortran ? col * array.shape[0] + row
                                                : row * array.shape[1] + col);
}

FeatureMatrix read_features(NpzFile& file, std::int64_t max_features) {
  constexpr std::string_view kLimit = "feature limit (raise it with --max-features)";
  const std::int64_t max_cols =
      std::min<std::int64_t>(max_features, std::numeric_limits<std::int32_t>::max());
  if (const auto prefix = array_prefix(file, "attr")) {
    return FeatureMatrix(
        sparse_features(csr_from_arrays(file, *prefix, max_cols, kLimit), file, *prefix + "data"));
  }
  for (const std::string_view key : {"node_attr", "attr_matrix", "node_features"}) {
    if (!file.has(key)) continue;
    const detail::NumpyArray array = file.array(key);
    if (array.dtype.kind == detail::NumpyKind::kObject) {
      return FeatureMatrix(sparse_features(csr_from_pickle(file, key), file, key));
    }
    if (array.shape.size() != 2 || array.dtype.kind == detail::NumpyKind::kUnicode ||
        array.dtype.kind == detail::NumpyKind::kBytes) {
      file.fail(key, "has dtype '" + array.dtype.code + "' and shape " +
                         detail::shape_text(array.shape) +
                         ", expected a 2-D numeric array or a pickled sparse matrix");
    }
    if (array.shape[1] > max_cols) {
      file.fail_limit(key, "has " + std::to_string(array.shape[1]) + " columns, over the " +
                               std::string(kLimit) + " of " + std::to_string(max_cols));
    }
    const std::vector<float> values = detail::numpy_floats(array);
    DenseFeatures dense(array.shape[0], array.shape[1]);
    for (std::int64_t r = 0; r < dense.rows(); ++r) {
      for (std::int64_t c = 0; c < dense.cols(); ++c) dense(r, c) = values[element_at(array, r, c)];
    }
    if (!dense.allFinite()) file.fail(key, "holds a value that is not a finite float");
    return FeatureMatrix(std::move(dense));
  }
  throw ParseError(kReader, file.path(), 0,
                   "no features: expected the members attr_data.npy, ... (or attr_matrix.data.npy, "
                   "...), attr_matrix.npy, node_attr.npy or node_features.npy");
}

// The adjacency matrix of Shchur et al.'s layouts as its entries (row -> column), and its
// `num_nodes`.
EdgeList read_adjacency(NpzFile& file, std::int64_t& num_nodes) {
  const Limits& limits = file.limits();
  constexpr std::string_view kNodeLimit = "node limit (raise it with --max-nodes)";
  detail::CsrArrays adjacency;
  std::string adjacency_key;
  if (const auto prefix = array_prefix(file, "adj")) {
    adjacency = csr_from_arrays(file, *prefix, limits.max_nodes, kNodeLimit);
    adjacency_key = *prefix + "data";
  } else if (file.has("adj_matrix")) {
    adjacency = csr_from_pickle(file, "adj_matrix");
    adjacency_key = "adj_matrix";
  } else {
    throw ParseError(kReader, file.path(), 0,
                     "no adjacency matrix: expected the members adj_data.npy, adj_indices.npy, "
                     "adj_indptr.npy, adj_shape.npy (or adj_matrix.data.npy, ...) or "
                     "adj_matrix.npy, or edges.npy");
  }
  num_nodes = adjacency.rows;
  if (adjacency.cols != num_nodes) {
    file.fail(adjacency_key, "is a " + std::to_string(adjacency.rows) + " x " +
                                 std::to_string(adjacency.cols) +
                                 " matrix, expected a square adjacency matrix");
  }
  const std::int64_t entries = adjacency.indptr.back();
  if (2 * entries > limits.max_edges) {
    file.fail_limit(adjacency_key,
                    "holds " + std::to_string(entries) + " entries, which make up to " +
                        std::to_string(2 * entries) + " edges both ways: over the edge limit of " +
                        std::to_string(limits.max_edges) + " (raise it with --max-edges)");
  }
  EdgeList edges;
  edges.sources.reserve(static_cast<std::size_t>(entries));
  edges.targets.reserve(static_cast<std::size_t>(entries));
  for (std::int64_t r = 0; r < num_nodes; ++r) {
    const auto row = static_cast<std::size_t>(r);
    for (std::int64_t k = adjacency.indptr[row]; k < adjacency.indptr[row + 1]; ++k) {
      edges.sources.push_back(static_cast<NodeId>(r));
      edges.targets.push_back(adjacency.indices[static_cast<std::size_t>(k)]);
    }
  }
  return edges;
}

// The edges of the heterophily benchmark's layout: `edges`, an E x 2 integer array of node pairs
// in [0, num_nodes), each undirected edge once.
EdgeList read_edge_pairs(NpzFile& file, std::int64_t num_nodes) {
  constexpr std::string_view kKey = "edges";
  const detail::NumpyArray array = file.array(kKey);
  if (array.shape.size() != 2 || array.shape[1] != 2) {
    file.fail(kKey, "has shape " + detail::shape_text(array.shape) +
                        ", expected (E, 2): one row per edge");
  }
  const std::int64_t edges = array.shape[0];
  const std::int64_t max_edges = file.limits().max_edges;
  if (edges > max_edges / 2) {
    file.fail_limit(kKey, "holds " + std::to_string(edges) + " edges, which make " +
                              std::to_string(2 * edges) + " both ways: over the edge limit of " +
                              std::to_string(max_edges) + " (raise it with --max-edges)");
  }
  const std::optional<std::vector<std::int64_t>> ids = detail::numpy_integers(array);
  if (!ids || array.dtype.kind == detail::NumpyKind::kBool) {
    file.fail(kKey, "holds dtype '" + array.dtype.code + "', expected integers");
  }
  EdgeList list;
  list.sources.reserve(static_cast<std::size_t>(edges));
  list.targets.reserve(static_cast<std::size_t>(edges));
  for (std::int64_t e = 0; e < edges; ++e) {
    const std::int64_t source = (*ids)[element_at(array, e, 0)];
    const std::int64_t target = (*ids)[element_at(array, e, 1)];
    for (const std::int64_t node : {source, target}) {
      if (node < 0 || node >= num_nodes) {
        file.fail(kKey, "row " + std::to_string(e) + " holds node " + std::to_string(node) +
                            ", outside [0, " + std::to_string(num_nodes) + ") of the " +
                            std::to_string(num_nodes) + " feature rows");
      }
    }
    list.sources.push_back(static_cast<NodeId>(source));
    list.targets.push_back(static_cast<NodeId>(target));
  }
  return list;
}

// The fixed splits of the heterophily benchmark's layout: bool arrays `train_masks`,
// `val_masks` and `test_masks` of shape K x N, row k marking split k's nodes of that part; a node
// may be in at most one part of a split.
std::vector<std::vector<SplitPart>> read_fixed_splits(NpzFile& file, std::int64_t num_nodes) {
  constexpr std::array<std::pair<std::string_view, SplitPart>, 3> kMasks = {
      std::pair{std::string_view("train_masks"), SplitPart::kTrain},
      std::pair{std::string_view("val_masks"), SplitPart::kVal},
      std::pair{std::string_view("test_masks"), SplitPart::kTest}};
  std::vector<std::vector<SplitPart>> splits;
  for (const auto& [key, part] : kMasks) {
    const detail::NumpyArray array = file.array(key);
    if (array.dtype.kind != detail::NumpyKind::kBool) {
      file.fail(key, "holds dtype '" + array.dtype.code + "', expected bool ('|b1')");
    }
    if (array.shape.size() != 2 || array.shape[0] < 1 || array.shape[1] != num_nodes) {
      file.fail(key, "has shape " + detail::shape_text(array.shape) + ", expected (K, " +
                         std::to_string(num_nodes) + "): one row of the " +
                         std::to_string(num_nodes) + " nodes for each of K >= 1 splits");
    }
    const std::int64_t count = array.shape[0];
    if (splits.empty()) {
      splits.assign(static_cast<std::size_t>(count),
                    std::vector<SplitPart>(static_cast<std::size_t>(num_nodes), SplitPart::kNone));
    } else if (count != static_cast<std::int64_t>(splits.size())) {
      file.fail(key, "holds " + std::to_string(count) + " splits, member 'train_masks.npy' " +
                         std::to_string(splits.size()));
    }
    const std::vector<std::int64_t> marks = *detail::numpy_integers(array);
    for (std::int64_t k = 0; k < count; ++k) {
      std::vector<SplitPart>& split = splits[static_cast<std::size_t>(k)];
      for (std::int64_t i = 0; i < num_nodes; ++i) {
        if (marks[element_at(array, k, i)] == 0) continue;
        SplitPart& node = split[static_cast<std::size_t>(i)];
        if (node != SplitPart::kNone) {
          file.fail(key, "puts node " + std::to_string(i) + " of split " + std::to_string(k) +
                             " in its " + split_part_name(part) + " set, and it is in its " +
                             split_part_name(node) +
                             " set already: expected each node in at most one set of a split");
        }
        node = part;
      }
    }
  }
  return splits;
}

std::vector<std::string> read_class_names(NpzFile& file) {
  if (file.has("class_names")) {
    const detail::NumpyArray array = file.array("class_names");
    std::optional<std::vector<std::string>> names;
    if (array.shape.size() == 1) names = detail::numpy_strings(array);
    if (!names) file.fail("class_names", "is not a 1-D array of strings");
    return std::move(*names);
  }
  if (file.has("metadata")) {
    const detail::Pickle pickle = file.pickle("metadata");
    const detail::PickleId metadata =
        detail::decode_object_item(pickle, pickle.root(), file.limits());
    const detail::PickleId names = detail::dict_item(pickle, metadata, "class_names");
    if (names >= 0) return detail::decode_strings(pickle, names, "'class_names': ", file.limits());
  }
  return {};
}

}  // namespace

Dataset read_npz(const std::filesystem::path& path, const std::string& name,
                 const DatasetOptions& options) {
  const Limits& limits = options.read.limits;
  NpzFile file(path, limits);
  const std::string file_name = path.filename().string();

  Dataset dataset;
  dataset.name = name;
  std::int64_t num_nodes = 0;
  EdgeList edges;
  if (file.has("edges")) {  // the heterophily benchmark's layout: dense features, an edge array
    dataset.features = read_features(file, limits.max_features);
    num_nodes = dataset.features.rows();
    if (num_nodes > limits.max_nodes) {
      throw LimitError(kReader, file.path(), 0,
                       "the features have " + std::to_string(num_nodes) +
                           " rows, over the node limit of " + std::to_string(limits.max_nodes) +
                           " (raise it with --max-nodes)");
    }
    edges = read_edge_pairs(file, num_nodes);
  } else {
    edges = read_adjacency(file, num_nodes);
    dataset.features = read_features(file, limits.max_features);
    if (dataset.features.rows() != num_nodes) {
      throw ParseError(kReader, file.path(), 0,
                       "the features have " + std::to_string(dataset.features.rows()) +
                           " rows, the adjacency matrix " + std::to_string(num_nodes) + " nodes");
    }
  }

  const std::string_view labels_key = file.has("labels")        ? "labels"
                                      : file.has("node_labels") ? "node_labels"
                                                                : "node_label";
  const std::vector<std::int64_t> labels = integer_vector(file, labels_key);
  if (static_cast<std::int64_t>(labels.size()) != num_nodes) {
    file.fail(labels_key, "holds " + std::to_string(labels.size()) + " labels for " +
                              std::to_string(num_nodes) + " nodes");
  }
  dataset.class_names = read_class_names(file);
  const std::int64_t largest =
      labels.empty() ? -1 : *std::max_element(labels.begin(), labels.end());
  if (dataset.class_names.empty()) {
    if (largest + 1 > limits.max_classes) {
      file.fail_limit(labels_key, "holds label " + std::to_string(largest) +
                                      ", over the limit of " + std::to_string(limits.max_classes) +
                                      " classes (raise it with --max-classes)");
    }
    for (std::int64_t c = 0; c <= largest; ++c) dataset.class_names.push_back(std::to_string(c));
  }
  const auto classes = static_cast<std::int64_t>(dataset.class_names.size());
  if (classes > limits.max_classes) {
    throw LimitError(kReader, file.path(), 0,
                     std::to_string(classes) + " class names, over the limit of " +
                         std::to_string(limits.max_classes) +
                         " classes (raise it with --max-classes)");
  }
  dataset.labels.resize(labels.size());
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (labels[i] < 0 || labels[i] >= classes) {
      file.fail(labels_key, "gives node " + std::to_string(i) + " label " +
                                std::to_string(labels[i]) + ", outside [0, " +
                                std::to_string(classes) + ")");
    }
    dataset.labels[i] = static_cast<std::int32_t>(labels[i]);
  }
  if (file.has("train_masks")) dataset.fixed_splits = read_fixed_splits(file, num_nodes);

  dataset.graph = detail::published_graph(num_nodes, std::move(edges), "npz: " + file_name + ": ",
                                          dataset.notes);
  dataset.preparation.undirected = true;  // symmetrised as PyG does
  normalize_features(dataset, options.normalize_features);
  dataset.node_names.reserve(static_cast<std::size_t>(num_nodes));
  for (std::int64_t i = 0; i < num_nodes; ++i) dataset.node_names.push_back(std::to_string(i));
  if (options.fixed_split && options.split_sizes) {
    throw InvalidArgument("npz: " + file_name + ": split index " +
                          std::to_string(*options.fixed_split) +
                          " and the sizes of a random split both given; give one of them");
  }
  if (options.fixed_split || (!dataset.fixed_splits.empty() && !options.split_sizes)) {
    use_fixed_split(dataset, options.fixed_split.value_or(0));
  } else {
    draw_split(dataset, options.split_sizes, options.seed);
  }
  if (options.largest_component) keep_largest_component(dataset);
  return dataset;
}

}  // namespace maskgat
