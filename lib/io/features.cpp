#include "maskgat/io/features.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "core/detail/parallel.hpp"
#include "io/detail/assemble.hpp"
#include "io/detail/normalization.hpp"
#include "io/detail/text.hpp"
#include "maskgat/core/error.hpp"

namespace maskgat {
namespace {

constexpr std::string_view kReader = "features";
// Stored sparse at or below this fraction of nonzeros: sparse x dense then beats dense GEMM.
constexpr double kSparseDensity = 0.10;
// Rows per task of `select_rows`: a constant, so tasks do not depend on the thread count.
constexpr std::int64_t kSelectBlock = 1024;

bool looks_like_data(const std::vector<std::string_view>& fields) {
  for (std::size_t k = 1; k < fields.size(); ++k) {
    if (!detail::parse_number(fields[k])) return false;
  }
  return true;
}

FeatureMatrix to_matrix(const std::vector<float>& values, std::int64_t rows, std::int64_t cols) {
  std::int64_t nonzeros = 0;
  for (const float v : values) nonzeros += v != 0.0F ? 1 : 0;
  const auto total = static_cast<double>(rows) * static_cast<double>(cols);
  if (total > 0 && static_cast<double>(nonzeros) <= kSparseDensity * total) {
    SparseFeatures sparse(rows, cols);
    sparse.reserve(nonzeros);
    for (std::int64_t r = 0; r < rows; ++r) {
      sparse.startVec(r);
      for (std::int64_t c = 0; c < cols; ++c) {
        const float v = values[static_cast<std::size_t>(r * cols + c)];
        if (v != 0.0F) sparse.insertBack(r, c) = v;
      }
    }
    sparse.finalize();
    return FeatureMatrix(std::move(sparse));
  }
  DenseFeatures dense(rows, cols);
  std::copy(values.begin(), values.end(), dense.data());
  return FeatureMatrix(std::move(dense));
}

// `value / sum` as a float, the row's sum taken in double. Only entries of both signs that nearly
// cancel can make the quotient leave float's range, which is refused (a float cast out of range
// would be undefined).
float divided(float value, double sum, std::int64_t row) {
  const double quotient = static_cast<double>(value) / sum;
  if (!(std::abs(quotient) <= static_cast<double>(std::numeric_limits<float>::max()))) {
    std::ostringstream message;
    message << "normalize_rows: row " << row << " sums to " << sum << ": its entry " << value
            << " divided by that is " << quotient
            << ", outside float's range; keep these features as stored (no normalisation)";
    throw InvalidArgument(message.str());
  }
  return static_cast<float>(quotient);
}

}  // namespace

InputRef<float> FeatureMatrix::view() const noexcept {
  switch (values_.index()) {
    case 0:
      return InputRef<float>(std::get<SparseFeatures>(values_));
    case 1:
      return InputRef<float>(std::get<DenseFeatures>(values_));
    default:
      return std::get<MappedFeatures>(values_).values;
  }
}

std::int64_t FeatureMatrix::rows() const noexcept { return view().rows(); }

std::int64_t FeatureMatrix::cols() const noexcept { return view().cols(); }

std::int64_t FeatureMatrix::nonzeros() const noexcept {
  const InputRef<float> values = view();
  if (values.is_sparse()) {
    const auto m = values.sparse();
    std::int64_t count = 0;
    for (Eigen::Index k = 0; k < m.nonZeros(); ++k) count += m.valuePtr()[k] != 0.0F ? 1 : 0;
    return count;
  }
  return static_cast<std::int64_t>((values.dense().array() != 0.0F).count());
}

double FeatureMatrix::density() const noexcept {
  const double total = static_cast<double>(rows()) * static_cast<double>(cols());
  return total > 0 ? static_cast<double>(nonzeros()) / total : 0.0;
}

void FeatureMatrix::copy_into_memory() {
  if (!is_mapped()) return;
  const InputRef<float> values = view();
  if (values.is_sparse()) {
    values_ = SparseFeatures(values.sparse());
  } else {
    values_ = DenseFeatures(values.dense());
  }
}

void FeatureMatrix::normalize_rows() {
  copy_into_memory();
  if (is_sparse()) {
    auto& m = std::get<SparseFeatures>(values_);
    for (Eigen::Index r = 0; r < m.outerSize(); ++r) {
      double sum = 0.0;
      for (SparseFeatures::InnerIterator it(m, r); it; ++it) sum += it.value();
      if (sum == 0.0) continue;
      for (SparseFeatures::InnerIterator it(m, r); it; ++it) {
        it.valueRef() = divided(it.value(), sum, r);
      }
    }
    return;
  }
  detail::normalize_dense_rows(std::get<DenseFeatures>(values_));
}

void detail::normalize_dense_rows(DenseFeatures& rows, std::int64_t first_row) {
  for (Eigen::Index r = 0; r < rows.rows(); ++r) {
    double sum = 0.0;
    for (Eigen::Index c = 0; c < rows.cols(); ++c) sum += rows(r, c);
    if (sum == 0.0) continue;
    for (Eigen::Index c = 0; c < rows.cols(); ++c) {
      rows(r, c) = divided(rows(r, c), sum, first_row + r);
    }
  }
}

void FeatureMatrix::scale_columns(std::int64_t first, std::span<const float> factors) {
  const auto count = static_cast<std::int64_t>(factors.size());
  if (first < 0 || first + count > cols()) {
    throw InvalidArgument("scale_columns: columns " + std::to_string(first) + " to " +
                          std::to_string(first + count - 1) + " of a matrix with " +
                          std::to_string(cols()) + " columns");
  }
  copy_into_memory();
  if (is_sparse()) {
    auto& m = std::get<SparseFeatures>(values_);
    for (Eigen::Index r = 0; r < m.outerSize(); ++r) {
      for (SparseFeatures::InnerIterator it(m, r); it; ++it) {
        const std::int64_t c = it.col() - first;
        if (c >= 0 && c < count) it.valueRef() *= factors[static_cast<std::size_t>(c)];
      }
    }
    return;
  }
  auto& m = std::get<DenseFeatures>(values_);
  for (std::int64_t c = 0; c < count; ++c) m.col(first + c) *= factors[static_cast<std::size_t>(c)];
}

FeatureMatrix FeatureMatrix::select_rows(std::span<const NodeId> rows) const {
  for (const NodeId row : rows) {
    if (row < 0 || row >= this->rows()) {
      throw InvalidArgument("select_rows: row " + std::to_string(row) + " is outside [0, " +
                            std::to_string(this->rows()) + ")");
    }
  }
  const auto count = static_cast<std::int64_t>(rows.size());
  const InputRef<float> values = view();
  const auto source_row = [&](std::int64_t k) {
    return static_cast<Eigen::Index>(rows[static_cast<std::size_t>(k)]);
  };
  if (!values.is_sparse()) {
    const auto m = values.dense();
    DenseFeatures selected(count, m.cols());
    detail::for_each_block(count, kSelectBlock, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t k = begin; k < end; ++k) selected.row(k) = m.row(source_row(k));
    });
    return FeatureMatrix(std::move(selected));
  }
  // Filled as compressed CSR arrays (Eigen's reserve-and-insert path reads past its per-row
  // counts when there are no rows, AddressSanitizer, Eigen 3.4): the rows' counts, their prefix
  // sums, then each row's entries copied in parallel.
  const auto m = values.sparse();
  const auto* outer = m.outerIndexPtr();
  SparseFeatures selected(count, m.cols());
  auto* selected_outer = selected.outerIndexPtr();
  selected_outer[0] = 0;
  for (std::int64_t k = 0; k < count; ++k) {
    const auto row = source_row(k);
    selected_outer[k + 1] = selected_outer[k] + (outer[row + 1] - outer[row]);
  }
  selected.resizeNonZeros(selected_outer[count]);
  detail::for_each_block(count, kSelectBlock, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t k = begin; k < end; ++k) {
      const auto row = source_row(k);
      std::copy(m.innerIndexPtr() + outer[row], m.innerIndexPtr() + outer[row + 1],
                selected.innerIndexPtr() + selected_outer[k]);
      std::copy(m.valuePtr() + outer[row], m.valuePtr() + outer[row + 1],
                selected.valuePtr() + selected_outer[k]);
    }
  });
  return FeatureMatrix(std::move(selected));
}

FeatureTable read_features(const std::filesystem::path& path, NodeIndex& nodes,
                           const ReadOptions& options) {
  if (nodes.size() != 0 || nodes.frozen()) {
    throw InvalidArgument(
        "read_features: the node index must be empty: the features file "
        "defines the nodes");
  }
  detail::LineReader reader(path, kReader, options.limits.max_line_bytes);
  std::string_view line;
  std::vector<std::string_view> fields;
  bool have_header = false;
  char delimiter = ',';
  FeatureTable table;
  std::int64_t width = 0;
  std::vector<float> values;
  std::vector<std::int64_t> row_of_node;  // file row holding each node id, -1 if none yet
  std::vector<std::int64_t> line_of_row;
  while (reader.next(line)) {
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
    if (!have_header) {
      const std::size_t tab = line.find('\t');
      delimiter = tab != std::string_view::npos ? '\t' : ',';
      detail::split_delimited(line, delimiter, fields);
      if (fields.size() < 2) {
        reader.fail("header " + detail::quoted(line) +
                    " has no feature columns: expected 'node,<feature names...>' "
                    "(comma- or tab-separated)");
      }
      if (looks_like_data(fields)) {
        reader.fail(
            "the first line looks like data: expected a header row "
            "'node,<feature names...>'");
      }
      width = static_cast<std::int64_t>(fields.size()) - 1;
      if (width > options.limits.max_features) {
        reader.fail_limit(std::to_string(width) + " feature columns, over the limit of " +
                          std::to_string(options.limits.max_features) +
                          " (raise it with --max-features)");
      }
      for (std::size_t k = 1; k < fields.size(); ++k) table.column_names.emplace_back(fields[k]);
      have_header = true;
      continue;
    }
    detail::split_delimited(line, delimiter, fields);
    if (static_cast<std::int64_t>(fields.size()) != width + 1) {
      reader.fail("row has " + std::to_string(fields.size()) + " columns, expected " +
                  std::to_string(width + 1) + " (node + " + std::to_string(width) +
                  " features, as in the header)");
    }
    const NodeId id =
        detail::node_id_or_throw(nodes, fields[0], kReader, reader.path(), reader.line_number());
    const auto slot = static_cast<std::size_t>(id);
    if (slot >= row_of_node.size()) row_of_node.resize(slot + 1, -1);
    if (row_of_node[slot] >= 0) {
      reader.fail("node '" + std::string(fields[0]) + "' has a second row (the first is on line " +
                  std::to_string(line_of_row[static_cast<std::size_t>(row_of_node[slot])]) + ")");
    }
    row_of_node[slot] = static_cast<std::int64_t>(line_of_row.size());
    line_of_row.push_back(reader.line_number());
    for (std::int64_t c = 1; c <= width; ++c) {
      const std::string_view token = fields[static_cast<std::size_t>(c)];
      const auto value = detail::parse_number(token);
      if (!value) {
        reader.fail("feature " + detail::quoted(token) + " of node '" + std::string(fields[0]) +
                    "' (column " + std::to_string(c + 1) + ") is not a number");
      }
      if (!std::isfinite(*value) || !std::isfinite(static_cast<float>(*value))) {
        reader.fail("feature " + detail::quoted(token) + " of node '" + std::string(fields[0]) +
                    "' (column " + std::to_string(c + 1) + ") is not finite");
      }
      values.push_back(static_cast<float>(*value));
    }
  }
  if (!have_header)
    throw ParseError(kReader, reader.path(), 0,
                     "empty file: expected a header row 'node,<feature names...>'");
  nodes.freeze();
  const std::int64_t rows = nodes.size();
  if (static_cast<std::int64_t>(line_of_row.size()) != rows) {
    // Numeric ids: the rows must cover 0..N-1.
    for (std::int64_t id = 0; id < rows; ++id) {
      const auto slot = static_cast<std::size_t>(id);
      if (slot >= row_of_node.size() || row_of_node[slot] < 0) {
        throw ParseError(kReader, reader.path(), 0,
                         "node id " + std::to_string(id) +
                             " has no row: with --numeric-ids the "
                             "rows must cover every id from 0 to " +
                             std::to_string(rows - 1));
      }
    }
  }
  // Rows go to their node's position (file order for names, the id for numeric ids).
  bool in_order = true;
  for (std::size_t id = 0; id < row_of_node.size(); ++id) {
    in_order = in_order && row_of_node[id] == static_cast<std::int64_t>(id);
  }
  if (!in_order) {
    std::vector<float> ordered(values.size());
    for (std::size_t id = 0; id < row_of_node.size(); ++id) {
      const auto from = static_cast<std::size_t>(row_of_node[id]) * static_cast<std::size_t>(width);
      std::copy_n(
          values.begin() + static_cast<std::ptrdiff_t>(from), width,
          ordered.begin() + static_cast<std::ptrdiff_t>(id * static_cast<std::size_t>(width)));
    }
    values.swap(ordered);
  }
  table.matrix = to_matrix(values, rows, width);
  return table;
}

}  // namespace maskgat
