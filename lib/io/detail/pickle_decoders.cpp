#include "io/detail/pickle_decoders.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <span>

#include "io/detail/text.hpp"
#include "maskgat/core/error.hpp"

namespace maskgat::detail {

namespace {

// numpy's own limit on array dimensions.
constexpr std::size_t kMaxDimensions = 32;

template <typename T>
T load_little_endian(const char* bytes) noexcept {
  std::array<char, sizeof(T)> buffer{};
  std::memcpy(buffer.data(), bytes, sizeof(T));
  if constexpr (std::endian::native == std::endian::big) std::reverse(buffer.begin(), buffer.end());
  T value;
  std::memcpy(&value, buffer.data(), sizeof(T));
  return value;
}

enum class DType : std::uint8_t { kInt32, kInt64, kFloat32, kFloat64 };

std::int64_t item_size(DType dtype) noexcept {
  return dtype == DType::kInt32 || dtype == DType::kFloat32 ? 4 : 8;
}

bool is_integer(DType dtype) noexcept { return dtype == DType::kInt32 || dtype == DType::kInt64; }

// A numpy array inside a pickle, checked but not yet converted.
struct ArrayView {
  std::vector<std::int64_t> shape;
  DType dtype = DType::kInt32;
  std::string dtype_name;
  bool fortran = false;
  std::string_view data;
  std::int64_t count = 0;
  std::int64_t offset = 0;  // where the array was created
};

std::string shape_text(std::span<const std::int64_t> shape) {
  std::string text = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) text += ", ";
    text += std::to_string(shape[i]);
  }
  if (shape.size() == 1) text += ",";
  return text + ")";
}

bool is_int(const Pickle& p, PickleId id) { return p.value(id).kind == PickleKind::kInt; }

// Checks that `id` is a numpy array and returns its shape, dtype and data bytes. `subject`
// prefixes every message (e.g. `'indptr' of the ...: `), empty for the pickle's root.
ArrayView array_view(const Pickle& p, PickleId id, const std::string& subject,
                     const Limits& limits) {
  const PickleValue& v = p.value(id);
  if (v.kind != PickleKind::kObject || v.cls != PickleClass::kNdarray) {
    p.fail(subject + "expected a numpy.ndarray, got " + p.describe_at(id));
  }
  const std::string self = subject + "the numpy.ndarray" + pickle_created_at(v.offset);
  const PickleId state = p.object_state(id);
  if (state < 0) p.fail(self + " has no state (no BUILD)");
  auto items = p.items(state);
  if (p.value(state).kind != PickleKind::kTuple || (items.size() != 4 && items.size() != 5)) {
    p.fail(self + ": expected a state tuple (version, shape, dtype, fortran, data), got " +
           p.describe_at(state));
  }
  if (items.size() == 5) {
    if (!is_int(p, items[0])) {
      p.fail(self + ": state version is " + p.describe_at(items[0]) + ", expected an int");
    }
    items = items.subspan(1);
  }

  ArrayView view;
  view.offset = v.offset;
  const PickleId shape = items[0];
  const auto dims = p.items(shape);
  if (p.value(shape).kind != PickleKind::kTuple || dims.size() > kMaxDimensions) {
    p.fail(self + ": shape is " + p.describe_at(shape) + ", expected a tuple of at most " +
           std::to_string(kMaxDimensions) + " ints");
  }
  bool empty = false;
  for (const PickleId dim : dims) {
    if (!is_int(p, dim) || p.value(dim).integer < 0) {
      p.fail(self + ": shape entry is " + p.describe_at(dim) + ", expected a non-negative int");
    }
    view.shape.push_back(p.value(dim).integer);
    empty = empty || p.value(dim).integer == 0;
  }
  view.count = empty ? 0 : 1;
  for (const std::int64_t dim : view.shape) {
    if (empty) break;
    if (view.count > limits.max_array_elements / dim) {
      p.fail_limit(self + " has shape " + shape_text(view.shape) + ", over the limit of " +
                   std::to_string(limits.max_array_elements) +
                   " elements (Limits::max_array_elements)");
    }
    view.count *= dim;
  }

  const PickleId dtype = items[1];
  const PickleValue& dtype_value = p.value(dtype);
  if (dtype_value.kind != PickleKind::kObject || dtype_value.cls != PickleClass::kDtype) {
    p.fail(self + ": dtype is " + p.describe_at(dtype) + ", expected a numpy.dtype");
  }
  // numpy.dtype('i4', False, True): the type code is the first argument.
  const PickleId dtype_args = p.object_args(dtype);
  const auto dtype_arguments = dtype_args < 0 ? std::span<const PickleId>() : p.items(dtype_args);
  if (dtype_arguments.empty() || p.value(dtype_arguments[0]).kind != PickleKind::kString) {
    p.fail(self + ": the numpy.dtype" + pickle_created_at(dtype_value.offset) +
           " has no type code (expected a string as its first argument)");
  }
  view.dtype_name = std::string(p.bytes(dtype_arguments[0]));
  if (view.dtype_name == "i4") {
    view.dtype = DType::kInt32;
  } else if (view.dtype_name == "i8") {
    view.dtype = DType::kInt64;
  } else if (view.dtype_name == "f4") {
    view.dtype = DType::kFloat32;
  } else if (view.dtype_name == "f8") {
    view.dtype = DType::kFloat64;
  } else {
    p.fail(self + ": unsupported dtype " + quoted_printable(view.dtype_name) +
           ", expected 'i4', 'i8', 'f4' or 'f8'");
  }
  const PickleId dtype_state = p.object_state(dtype);
  const auto dtype_items = dtype_state < 0 ? std::span<const PickleId>() : p.items(dtype_state);
  if (dtype_state < 0 || p.value(dtype_state).kind != PickleKind::kTuple ||
      dtype_items.size() < 2 || p.value(dtype_items[1]).kind != PickleKind::kString) {
    p.fail(self + ": the numpy.dtype" + pickle_created_at(dtype_value.offset) +
           " has no byte order (expected a state tuple with '<', '=' or '|' second)");
  }
  const std::string_view order = p.bytes(dtype_items[1]);
  if (order != "<" && order != "=" && order != "|") {
    p.fail(self + ": byte order " + quoted_printable(order) + " of dtype '" + view.dtype_name +
           "' is not supported, expected little-endian '<'");
  }

  const PickleId fortran = items[2];
  if (p.value(fortran).kind != PickleKind::kBool && !is_int(p, fortran)) {
    p.fail(self + ": fortran flag is " + p.describe_at(fortran) + ", expected a bool");
  }
  view.fortran = p.value(fortran).integer != 0;

  const PickleId data = items[3];
  if (p.value(data).kind != PickleKind::kString) {
    p.fail(self + ": data is " + p.describe_at(data) + ", expected raw bytes");
  }
  view.data = p.bytes(data);
  const std::int64_t expected = view.count * item_size(view.dtype);
  if (static_cast<std::int64_t>(view.data.size()) != expected) {
    p.fail(self + " holds " + std::to_string(view.data.size()) + " data bytes, expected " +
           std::to_string(expected) + " for shape " + shape_text(view.shape) + " of dtype '" +
           view.dtype_name + "'");
  }
  return view;
}

std::string array_origin(const ArrayView& view) {
  return " (the numpy.ndarray" + pickle_created_at(view.offset) + ")";
}

void require_vector(const Pickle& p, const ArrayView& view, const std::string& subject,
                    bool integer) {
  if (view.shape.size() != 1) {
    p.fail(subject + "expected a 1-D array, got shape " + shape_text(view.shape) +
           array_origin(view));
  }
  if (is_integer(view.dtype) != integer) {
    p.fail(subject + "expected " +
           (integer ? "an integer array ('i4' or 'i8')" : "a float array ('f4' or 'f8')") +
           ", got dtype '" + view.dtype_name + "'" + array_origin(view));
  }
}

std::vector<std::int64_t> to_integers(const ArrayView& view) {
  std::vector<std::int64_t> out(static_cast<std::size_t>(view.count));
  const char* bytes = view.data.data();
  if (view.dtype == DType::kInt32) {
    for (std::size_t i = 0; i < out.size(); ++i)
      out[i] = load_little_endian<std::int32_t>(bytes + 4 * i);
  } else {
    for (std::size_t i = 0; i < out.size(); ++i)
      out[i] = load_little_endian<std::int64_t>(bytes + 8 * i);
  }
  return out;
}

std::vector<float> to_floats(const ArrayView& view) {
  std::vector<float> out(static_cast<std::size_t>(view.count));
  const char* bytes = view.data.data();
  if (view.dtype == DType::kFloat32) {
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = load_little_endian<float>(bytes + 4 * i);
  } else {
    for (std::size_t i = 0; i < out.size(); ++i) {
      out[i] = static_cast<float>(load_little_endian<double>(bytes + 8 * i));
    }
  }
  return out;
}

}  // namespace

CsrArrays decode_csr_matrix(const Pickle& p, const Limits& limits) {
  const PickleId root = p.root();
  const PickleValue& v = p.value(root);
  if (v.kind != PickleKind::kObject || v.cls != PickleClass::kCsrMatrix) {
    p.fail("expected a scipy.sparse.csr.csr_matrix, got " + p.describe_at(root));
  }
  const std::string self = "the scipy.sparse.csr.csr_matrix" + pickle_created_at(v.offset);
  const PickleId state = p.object_state(root);
  if (state < 0) p.fail(self + " has no state (no BUILD)");
  if (p.value(state).kind != PickleKind::kDict) {
    p.fail(self + ": expected a dict as its state, got " + p.describe_at(state));
  }

  PickleId shape = -1;
  PickleId indptr = -1;
  PickleId indices = -1;
  PickleId data = -1;
  const auto entries = p.items(state);
  for (std::size_t i = 0; i < entries.size(); i += 2) {
    const PickleId key = entries[i];
    if (p.value(key).kind != PickleKind::kString) {
      p.fail(self + ": state key is " + p.describe_at(key) + ", expected a string");
    }
    const std::string_view name = p.bytes(key);
    const PickleId item = entries[i + 1];
    if (name == "_shape" || name == "shape") {
      shape = item;
    } else if (name == "indptr") {
      indptr = item;
    } else if (name == "indices") {
      indices = item;
    } else if (name == "data") {
      data = item;
    } else if (name == "format") {
      if (p.value(item).kind != PickleKind::kString || p.bytes(item) != "csr") {
        p.fail(self + ": format is " +
               (p.value(item).kind == PickleKind::kString ? quoted_printable(p.bytes(item))
                                                          : p.describe_at(item)) +
               ", expected 'csr'");
      }
    }
  }
  const std::pair<PickleId, std::string_view> required[] = {
      {shape, "_shape"}, {indptr, "indptr"}, {indices, "indices"}, {data, "data"}};
  for (const auto& [id, name] : required) {
    if (id < 0) p.fail(self + " has no '" + std::string(name) + "' in its state");
  }

  const auto dims = p.items(shape);
  if (p.value(shape).kind != PickleKind::kTuple || dims.size() != 2 || !is_int(p, dims[0]) ||
      !is_int(p, dims[1]) || p.value(dims[0]).integer < 0 || p.value(dims[1]).integer < 0) {
    p.fail(self + ": '_shape' is " + p.describe_at(shape) +
           ", expected a tuple of 2 non-negative ints");
  }
  CsrArrays out;
  out.rows = p.value(dims[0]).integer;
  out.cols = p.value(dims[1]).integer;
  if (out.rows > limits.max_nodes) {
    p.fail_limit(self + " has " + std::to_string(out.rows) + " rows, over the node limit of " +
                 std::to_string(limits.max_nodes) + " (raise it with --max-nodes)");
  }
  const std::int64_t max_cols =
      std::min<std::int64_t>(limits.max_features, std::numeric_limits<std::int32_t>::max());
  if (out.cols > max_cols) {
    p.fail_limit(self + " has " + std::to_string(out.cols) +
                 " columns, over the feature limit of " + std::to_string(max_cols) +
                 " (raise it with --max-features)");
  }

  const std::string indptr_subject = "'indptr' of " + self + ": ";
  const std::string indices_subject = "'indices' of " + self + ": ";
  const std::string data_subject = "'data' of " + self + ": ";
  const ArrayView indptr_view = array_view(p, indptr, indptr_subject, limits);
  require_vector(p, indptr_view, indptr_subject, true);
  const ArrayView indices_view = array_view(p, indices, indices_subject, limits);
  require_vector(p, indices_view, indices_subject, true);
  const ArrayView data_view = array_view(p, data, data_subject, limits);
  require_vector(p, data_view, data_subject, false);

  if (indptr_view.count != out.rows + 1) {
    p.fail(indptr_subject + std::to_string(indptr_view.count) +
           " entries, expected rows + 1 = " + std::to_string(out.rows + 1));
  }
  out.indptr = to_integers(indptr_view);
  if (out.indptr[0] != 0) {
    p.fail(indptr_subject + "indptr[0] = " + std::to_string(out.indptr[0]) + ", expected 0");
  }
  for (std::size_t r = 1; r < out.indptr.size(); ++r) {
    if (out.indptr[r] < out.indptr[r - 1]) {
      p.fail(indptr_subject + "not monotone: indptr[" + std::to_string(r) +
             "] = " + std::to_string(out.indptr[r]) + " is less than indptr[" +
             std::to_string(r - 1) + "] = " + std::to_string(out.indptr[r - 1]));
    }
  }
  const std::int64_t nnz = out.indptr.back();
  if (indices_view.count != nnz) {
    p.fail(indices_subject + std::to_string(indices_view.count) +
           " entries, expected indptr[rows] = " + std::to_string(nnz));
  }
  if (data_view.count != nnz) {
    p.fail(data_subject + std::to_string(data_view.count) +
           " entries, expected indptr[rows] = " + std::to_string(nnz));
  }

  const std::vector<std::int64_t> columns = to_integers(indices_view);
  out.indices.resize(columns.size());
  for (std::size_t k = 0; k < columns.size(); ++k) {
    if (columns[k] < 0 || columns[k] >= out.cols) {
      p.fail(indices_subject + "indices[" + std::to_string(k) + "] = " +
             std::to_string(columns[k]) + " is outside [0, " + std::to_string(out.cols) + ")");
    }
    out.indices[k] = static_cast<std::int32_t>(columns[k]);
  }
  out.values = to_floats(data_view);
  for (std::size_t k = 0; k < out.values.size(); ++k) {
    if (!std::isfinite(out.values[k])) {
      p.fail(data_subject + "data[" + std::to_string(k) + "] is not a finite float");
    }
  }

  // scipy allows unsorted rows; Eigen needs sorted ones, and a repeated column is ambiguous.
  std::vector<std::pair<std::int32_t, float>> scratch;
  for (std::int64_t r = 0; r < out.rows; ++r) {
    const auto begin = static_cast<std::size_t>(out.indptr[static_cast<std::size_t>(r)]);
    const auto end = static_cast<std::size_t>(out.indptr[static_cast<std::size_t>(r) + 1]);
    bool sorted = true;
    for (std::size_t k = begin + 1; k < end && sorted; ++k)
      sorted = out.indices[k - 1] < out.indices[k];
    if (sorted) continue;
    scratch.clear();
    for (std::size_t k = begin; k < end; ++k) scratch.emplace_back(out.indices[k], out.values[k]);
    std::sort(scratch.begin(), scratch.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    for (std::size_t k = 0; k < scratch.size(); ++k) {
      if (k > 0 && scratch[k - 1].first == scratch[k].first) {
        p.fail(indices_subject + "row " + std::to_string(r) + " lists column " +
               std::to_string(scratch[k].first) + " twice");
      }
      out.indices[begin + k] = scratch[k].first;
      out.values[begin + k] = scratch[k].second;
    }
  }
  return out;
}

IntMatrix decode_int_matrix(const Pickle& p, const Limits& limits) {
  const ArrayView view = array_view(p, p.root(), "", limits);
  if (view.shape.size() != 2) {
    p.fail("expected a 2-D array, got shape " + shape_text(view.shape) + array_origin(view));
  }
  if (!is_integer(view.dtype)) {
    p.fail("expected an integer array ('i4' or 'i8'), got dtype '" + view.dtype_name + "'" +
           array_origin(view));
  }
  IntMatrix out;
  out.rows = view.shape[0];
  out.cols = view.shape[1];
  if (out.rows > limits.max_nodes) {
    p.fail_limit("the array has " + std::to_string(out.rows) + " rows, over the node limit of " +
                 std::to_string(limits.max_nodes) + " (raise it with --max-nodes)");
  }
  out.values = to_integers(view);
  if (view.fortran && out.rows > 1 && out.cols > 1) {
    std::vector<std::int64_t> row_major(out.values.size());
    const auto rows = static_cast<std::size_t>(out.rows);
    const auto cols = static_cast<std::size_t>(out.cols);
    for (std::size_t c = 0; c < cols; ++c) {
      for (std::size_t r = 0; r < rows; ++r) row_major[r * cols + c] = out.values[c * rows + r];
    }
    out.values = std::move(row_major);
  }
  return out;
}

AdjacencyLists decode_adjacency(const Pickle& p, std::int64_t num_nodes, const Limits& limits) {
  const PickleId root = p.root();
  if (p.value(root).kind != PickleKind::kDict) {
    p.fail("expected a dict of int -> list of int (collections.defaultdict), got " +
           p.describe_at(root));
  }
  const auto entries = p.items(root);
  const std::string range = "[0, " + std::to_string(num_nodes) + ")";

  std::int64_t total = 0;
  std::vector<std::pair<std::int64_t, std::int64_t>> keys;  // (key, offset)
  keys.reserve(entries.size() / 2);
  for (std::size_t i = 0; i < entries.size(); i += 2) {
    const PickleId key = entries[i];
    const PickleId list = entries[i + 1];
    if (!is_int(p, key)) p.fail("dict key is " + p.describe_at(key) + ", expected an int");
    const std::int64_t id = p.value(key).integer;
    if (id < 0 || id >= num_nodes) {
      p.fail("dict key " + std::to_string(id) + pickle_created_at(p.value(key).offset) +
             " is outside " + range);
    }
    if (p.value(list).kind != PickleKind::kList) {
      p.fail("the value of key " + std::to_string(id) + " is " + p.describe_at(list) +
             ", expected a list of ints");
    }
    keys.emplace_back(id, p.value(key).offset);
    total += static_cast<std::int64_t>(p.items(list).size());
  }
  if (total > limits.max_edges) {
    p.fail_limit("the dict holds " + std::to_string(total) + " edges, over the edge limit of " +
                 std::to_string(limits.max_edges) + " (raise it with --max-edges)");
  }
  std::sort(keys.begin(), keys.end());
  for (std::size_t i = 1; i < keys.size(); ++i) {
    if (keys[i].first == keys[i - 1].first) {
      p.fail("dict key " + std::to_string(keys[i].first) + " appears twice (at bytes " +
             std::to_string(keys[i - 1].second) + " and " + std::to_string(keys[i].second) + ")");
    }
  }

  AdjacencyLists out;
  out.sources.reserve(static_cast<std::size_t>(total));
  out.targets.reserve(static_cast<std::size_t>(total));
  for (std::size_t i = 0; i < entries.size(); i += 2) {
    const auto source = static_cast<NodeId>(p.value(entries[i]).integer);
    for (const PickleId item : p.items(entries[i + 1])) {
      if (!is_int(p, item)) {
        p.fail("an item of the list of key " + std::to_string(source) + " is " +
               p.describe_at(item) + ", expected an int");
      }
      const std::int64_t target = p.value(item).integer;
      if (target < 0 || target >= num_nodes) {
        p.fail("node id " + std::to_string(target) + pickle_created_at(p.value(item).offset) +
               " in the list of key " + std::to_string(source) + " is outside " + range);
      }
      out.sources.push_back(source);
      out.targets.push_back(static_cast<NodeId>(target));
    }
  }
  return out;
}

}  // namespace maskgat::detail
