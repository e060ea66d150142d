#include "maskgat/io/planetoid.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "io/detail/assemble.hpp"
#include "io/detail/pickle_decoders.hpp"
#include "io/detail/text.hpp"
#include "maskgat/core/error.hpp"

namespace maskgat {
namespace {

constexpr std::string_view kReader = "planetoid";
// Planetoid's standard split: the validation nodes are the 500 rows after the training rows.
constexpr std::int64_t kValidationSize = 500;

// Paths and messages for one dataset's `ind.<name>.*` files.
class Files {
 public:
  Files(const std::filesystem::path& dir, std::string_view name) : dir_(dir), name_(name) {}

  [[nodiscard]] std::string file_name(std::string_view part) const {
    return "ind." + name_ + "." + std::string(part);
  }
  [[nodiscard]] std::filesystem::path path(std::string_view part) const {
    return dir_ / file_name(part);
  }

  // `datasets/fetch.sh` writes `<data dir>/planetoid/...`, so its destination is dir's parent.
  [[nodiscard]] std::string fetch_command() const {
    std::filesystem::path data_dir = dir_.parent_path();
    if (data_dir.empty()) data_dir = ".";
    return "datasets/fetch.sh --dest " + data_dir.string() + " " + name_ +
           " (installed: maskgat-fetch)";
  }

  [[nodiscard]] detail::Pickle open_pickle(std::string_view part, const Limits& limits) const {
    try {
      return detail::read_pickle(path(part), kReader, limits);
    } catch (const IoError& error) {
      throw IoError(std::string(error.what()) + " (fetch it with: " + fetch_command() + ")");
    }
  }

  [[nodiscard]] detail::LineReader open_text(std::string_view part, const Limits& limits) const {
    try {
      return detail::LineReader(path(part), kReader, limits.max_line_bytes);
    } catch (const IoError& error) {
      throw IoError(std::string(error.what()) + " (fetch it with: " + fetch_command() + ")");
    }
  }

  [[noreturn]] void fail(std::string_view part, std::string_view message) const {
    throw ParseError(kReader, path(part).string(), 0, message);
  }

  [[noreturn]] void fail_limit(std::string_view part, std::string_view message) const {
    throw LimitError(kReader, path(part).string(), 0, message);
  }

  [[nodiscard]] const std::string& name() const noexcept { return name_; }

 private:
  std::filesystem::path dir_;
  std::string name_;
};

struct TestIndex {
  std::vector<std::int64_t> ids;    // in file order: tx/ty row k is node ids[k]
  std::vector<std::int64_t> lines;  // line of every id, for messages
};

TestIndex read_test_index(const Files& files, const Limits& limits) {
  detail::LineReader reader = files.open_text("test.index", limits);
  TestIndex index;
  std::vector<std::string_view> fields;
  std::string_view line;
  while (reader.next(line)) {
    detail::split_fields(line, fields);
    if (fields.empty()) continue;
    if (fields.size() != 1) {
      reader.fail("expected one test index per line, got " + std::to_string(fields.size()) +
                  " fields");
    }
    const auto id = detail::parse_integer(fields[0]);
    if (!id) reader.fail("test index " + detail::quoted(fields[0]) + " is not an integer");
    if (static_cast<std::int64_t>(index.ids.size()) >= limits.max_nodes) {
      reader.fail_limit("more than " + std::to_string(limits.max_nodes) +
                        " test indices, over the node limit (raise it with --max-nodes)");
    }
    index.ids.push_back(*id);
    index.lines.push_back(reader.line_number());
  }
  if (index.ids.empty()) files.fail("test.index", "no test indices: expected one node id per line");
  return index;
}

// The class of a one-hot row: the first column holding the row's largest positive value, or -1
// for a row without any (PyG's argmax would call such a row class 0).
std::int32_t row_class(const detail::IntMatrix& matrix, std::int64_t row) {
  std::int32_t best = -1;
  std::int64_t best_value = 0;
  const auto begin = static_cast<std::size_t>(row * matrix.cols);
  for (std::int64_t c = 0; c < matrix.cols; ++c) {
    const std::int64_t value = matrix.values[begin + static_cast<std::size_t>(c)];
    if (value > best_value) {
      best = static_cast<std::int32_t>(c);
      best_value = value;
    }
  }
  return best;
}

void check_rows(const Files& files, std::string_view part, std::int64_t rows, std::int64_t expected,
                std::string_view why) {
  if (rows != expected) {
    files.fail(part, "the matrix has " + std::to_string(rows) + " rows, expected " +
                         std::to_string(expected) + " (" + std::string(why) + ")");
  }
}

void check_cols(const Files& files, std::string_view part, std::int64_t cols, std::int64_t expected,
                std::string_view why) {
  if (cols != expected) {
    files.fail(part, "the matrix has " + std::to_string(cols) + " columns, expected " +
                         std::to_string(expected) + " (" + std::string(why) + ")");
  }
}

// allx rows, then tx row k at node test_ids[k]; test-range nodes without a row stay empty.
SparseFeatures assemble_features(const Files& files, const detail::CsrArrays& allx,
                                 const detail::CsrArrays& tx,
                                 const std::vector<std::int64_t>& tx_row, std::int64_t num_nodes) {
  using Index = SparseFeatures::StorageIndex;
  const std::int64_t nnz = allx.indptr.back() + tx.indptr.back();
  if (nnz > std::numeric_limits<Index>::max()) {
    files.fail_limit("tx", "allx and tx hold " + std::to_string(nnz) +
                               " nonzeros together, more than a feature matrix can index");
  }
  SparseFeatures features(num_nodes, allx.cols);
  features.resizeNonZeros(static_cast<Eigen::Index>(nnz));
  Index* outer = features.outerIndexPtr();
  Index* inner = features.innerIndexPtr();
  float* values = features.valuePtr();

  std::int64_t written = 0;
  const auto copy_row = [&](const detail::CsrArrays& source, std::int64_t row) {
    const auto begin = static_cast<std::size_t>(source.indptr[static_cast<std::size_t>(row)]);
    const auto end = static_cast<std::size_t>(source.indptr[static_cast<std::size_t>(row) + 1]);
    for (std::size_t k = begin; k < end; ++k, ++written) {
      inner[written] = static_cast<Index>(source.indices[k]);
      values[written] = source.values[k];
    }
  };
  outer[0] = 0;
  for (std::int64_t node = 0; node < num_nodes; ++node) {
    if (node < allx.rows) {
      copy_row(allx, node);
    } else if (const std::int64_t row = tx_row[static_cast<std::size_t>(node - allx.rows)];
               row >= 0) {
      copy_row(tx, row);
    }
    outer[node + 1] = static_cast<Index>(written);
  }
  return features;
}

}  // namespace

Dataset read_planetoid(const std::filesystem::path& dir, std::string_view name,
                       const DatasetOptions& options) {
  if (name != "cora" && name != "citeseer" && name != "pubmed") {
    throw InvalidArgument("planetoid: unknown dataset '" + std::string(name) +
                          "': expected cora, citeseer or pubmed");
  }
  const Files files(dir, name);
  const Limits& limits = options.read.limits;
  std::error_code error;
  const bool with_features =
      options.require_features || std::filesystem::exists(files.path("allx"), error);

  // Read in PyG's order, so a missing file is reported as PyG would.
  std::optional<detail::CsrArrays> x;
  std::optional<detail::CsrArrays> tx;
  std::optional<detail::CsrArrays> allx;
  if (with_features) {
    x = detail::decode_csr_matrix(files.open_pickle("x", limits), limits);
    tx = detail::decode_csr_matrix(files.open_pickle("tx", limits), limits);
    allx = detail::decode_csr_matrix(files.open_pickle("allx", limits), limits);
  }
  const detail::IntMatrix y = detail::decode_int_matrix(files.open_pickle("y", limits), limits);
  const detail::IntMatrix ty = detail::decode_int_matrix(files.open_pickle("ty", limits), limits);
  const detail::IntMatrix ally =
      detail::decode_int_matrix(files.open_pickle("ally", limits), limits);
  const detail::Pickle graph = files.open_pickle("graph", limits);
  const TestIndex test = read_test_index(files, limits);

  // The files must agree with each other before any of them is trusted for sizes.
  const std::int64_t num_classes = ally.cols;
  if (num_classes == 0) files.fail("ally", "the matrix has 0 columns, expected one per class");
  if (num_classes > limits.max_classes) {
    files.fail_limit("ally", "the matrix has " + std::to_string(num_classes) +
                                 " columns (classes), over the limit of " +
                                 std::to_string(limits.max_classes) +
                                 " (raise it with --max-classes)");
  }
  const std::string classes_why = "one per class, as " + files.file_name("ally");
  check_cols(files, "y", y.cols, num_classes, classes_why);
  check_cols(files, "ty", ty.cols, num_classes, classes_why);
  const auto num_test = static_cast<std::int64_t>(test.ids.size());
  check_rows(files, "ty", ty.rows, num_test, "one per line of " + files.file_name("test.index"));
  const std::int64_t num_labelled = ally.rows;
  if (y.rows > num_labelled) {
    files.fail("y", "the matrix has " + std::to_string(y.rows) + " rows, expected at most the " +
                        std::to_string(num_labelled) + " rows of " + files.file_name("ally"));
  }
  if (with_features) {
    check_rows(files, "x", x->rows, y.rows, "one per row of " + files.file_name("y"));
    check_rows(files, "allx", allx->rows, num_labelled,
               "one per row of " + files.file_name("ally"));
    check_rows(files, "tx", tx->rows, num_test, "one per line of " + files.file_name("test.index"));
    const std::string width_why = "the width of " + files.file_name("allx");
    check_cols(files, "x", x->cols, allx->cols, width_why);
    check_cols(files, "tx", tx->cols, allx->cols, width_why);
  }

  // Nodes: the labelled rows, then the whole test range [min, max] of test.index, gaps included
  // (CiteSeer's test range has 15 ids without a tx/ty row).
  const auto [min_it, max_it] = std::minmax_element(test.ids.begin(), test.ids.end());
  const std::uint64_t span =
      static_cast<std::uint64_t>(*max_it) - static_cast<std::uint64_t>(*min_it) + 1;
  const std::int64_t max_nodes = std::min(limits.max_nodes, kMaxNodeCount);
  if (span == 0 || num_labelled > max_nodes ||
      span > static_cast<std::uint64_t>(max_nodes - num_labelled)) {
    files.fail_limit("test.index", "the test indices span [" + std::to_string(*min_it) + ", " +
                                       std::to_string(*max_it) + "], which with the " +
                                       std::to_string(num_labelled) +
                                       " labelled rows exceeds the node limit of " +
                                       std::to_string(max_nodes) + " (raise it with --max-nodes)");
  }
  const std::int64_t num_nodes = num_labelled + static_cast<std::int64_t>(span);
  const std::string test_path = files.path("test.index").string();
  std::vector<std::int64_t> tx_row(static_cast<std::size_t>(num_nodes - num_labelled), -1);
  for (std::size_t k = 0; k < test.ids.size(); ++k) {
    const std::int64_t id = test.ids[k];
    if (id < num_labelled || id >= num_nodes) {
      throw ParseError(kReader, test_path, test.lines[k],
                       "test index " + std::to_string(id) + " is outside [" +
                           std::to_string(num_labelled) + ", " + std::to_string(num_nodes) + ")");
    }
    std::int64_t& row = tx_row[static_cast<std::size_t>(id - num_labelled)];
    if (row >= 0) {
      throw ParseError(kReader, test_path, test.lines[k],
                       "test index " + std::to_string(id) + " is listed twice (first on line " +
                           std::to_string(test.lines[static_cast<std::size_t>(row)]) + ")");
    }
    row = static_cast<std::int64_t>(k);
  }

  Dataset dataset;
  dataset.name = std::string(name);

  dataset.labels.assign(static_cast<std::size_t>(num_nodes), -1);
  std::int64_t unlabelled_ally = 0;
  for (std::int64_t i = 0; i < num_labelled; ++i) {
    const std::int32_t label = row_class(ally, i);
    dataset.labels[static_cast<std::size_t>(i)] = label;
    if (label < 0) ++unlabelled_ally;
  }
  std::int64_t unlabelled_ty = 0;
  for (std::size_t k = 0; k < test.ids.size(); ++k) {
    const std::int32_t label = row_class(ty, static_cast<std::int64_t>(k));
    dataset.labels[static_cast<std::size_t>(test.ids[k])] = label;
    if (label < 0) ++unlabelled_ty;
  }
  if (unlabelled_ally > 0) {
    dataset.notes.push_back("planetoid: " + files.file_name("ally") + ": " +
                            std::to_string(unlabelled_ally) +
                            " row(s) without a positive entry left unlabelled");
  }
  if (unlabelled_ty > 0) {
    dataset.notes.push_back("planetoid: " + files.file_name("ty") + ": " +
                            std::to_string(unlabelled_ty) +
                            " row(s) without a positive entry left unlabelled");
  }

  if (with_features) {
    dataset.features = FeatureMatrix(assemble_features(files, *allx, *tx, tx_row, num_nodes));
    normalize_features(dataset, options.normalize_features);
  } else {
    dataset.features = FeatureMatrix(SparseFeatures(num_nodes, 0));
    dataset.missing_features =
        "'" + files.path("allx").string() + "' is missing (" +
        (name == "pubmed" ? "PubMed's ind.pubmed.allx is not in the local mirror; " : "") +
        "fetch it with: " + files.fetch_command() + " where the internet is reachable)";
  }

  detail::AdjacencyLists adjacency = detail::decode_adjacency(graph, num_nodes, limits);
  EdgeList edges;
  edges.sources = std::move(adjacency.sources);
  edges.targets = std::move(adjacency.targets);
  // Duplicates and self-loops are known properties of the published files, so they stay notes
  // even under `strict`.
  dataset.graph = detail::published_graph(
      num_nodes, std::move(edges), "planetoid: " + files.file_name("graph") + ": ", dataset.notes);
  dataset.preparation.undirected = true;  // symmetrised above

  dataset.class_names.reserve(static_cast<std::size_t>(num_classes));
  for (std::int64_t c = 0; c < num_classes; ++c) dataset.class_names.push_back(std::to_string(c));
  dataset.node_names.reserve(static_cast<std::size_t>(num_nodes));
  for (std::int64_t i = 0; i < num_nodes; ++i) dataset.node_names.push_back(std::to_string(i));

  // Validation nodes come from the labelled rows only, so they never overlap the test range.
  const std::int64_t val_end = std::min(y.rows + kValidationSize, num_labelled);
  if (val_end - y.rows < kValidationSize) {
    dataset.notes.push_back("planetoid: " + files.file_name("ally") + ": only " +
                            std::to_string(val_end - y.rows) + " validation node(s) after the " +
                            std::to_string(y.rows) + " training rows, expected " +
                            std::to_string(kValidationSize));
  }
  dataset.split.assign(static_cast<std::size_t>(num_nodes), SplitPart::kNone);
  for (std::int64_t i = 0; i < y.rows; ++i)
    dataset.split[static_cast<std::size_t>(i)] = SplitPart::kTrain;
  for (std::int64_t i = y.rows; i < val_end; ++i)
    dataset.split[static_cast<std::size_t>(i)] = SplitPart::kVal;
  for (const std::int64_t id : test.ids)
    dataset.split[static_cast<std::size_t>(id)] = SplitPart::kTest;
  return dataset;
}

}  // namespace maskgat
