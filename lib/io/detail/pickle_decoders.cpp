#include "io/detail/pickle_decoders.hpp"

#include <algorithm>
#include <limits>
#include <optional>
#include <span>
#include <utility>

#include "io/detail/numpy_array.hpp"
#include "io/detail/text.hpp"
#include "maskgat/core/error.hpp"

namespace maskgat::detail {

namespace {

// A numpy array inside a pickle, checked but not yet converted; an object array's elements are
// the items of `objects`.
struct ArrayView {
  NumpyArray array;
  PickleId objects = -1;
  std::int64_t offset = 0;  // where the array was created
};

bool is_int(const Pickle& p, PickleId id) { return p.value(id).kind == PickleKind::kInt; }

bool is_integer(NumpyKind kind) noexcept {
  return kind == NumpyKind::kSigned || kind == NumpyKind::kUnsigned || kind == NumpyKind::kBool;
}

// Checks that `id` is a numpy array and returns its shape, dtype and data. `subject` prefixes
// every message (e.g. `'indptr' of the ...: `), empty for the pickle's root.
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
  NumpyArray& array = view.array;
  view.offset = v.offset;
  const PickleId shape = items[0];
  const auto dims = p.items(shape);
  if (p.value(shape).kind != PickleKind::kTuple || dims.size() > kMaxNumpyDimensions) {
    p.fail(self + ": shape is " + p.describe_at(shape) + ", expected a tuple of at most " +
           std::to_string(kMaxNumpyDimensions) + " ints");
  }
  for (const PickleId dim : dims) {
    if (!is_int(p, dim) || p.value(dim).integer < 0) {
      p.fail(self + ": shape entry is " + p.describe_at(dim) + ", expected a non-negative int");
    }
    array.shape.push_back(p.value(dim).integer);
  }
  const ElementCount count = element_count(array.shape, limits);
  if (!count.error.empty()) p.fail_limit(self + " " + count.error);
  array.count = count.count;

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
  const std::string_view code = p.bytes(dtype_arguments[0]);
  const PickleId dtype_state = p.object_state(dtype);
  const auto dtype_items = dtype_state < 0 ? std::span<const PickleId>() : p.items(dtype_state);
  if (dtype_state < 0 || p.value(dtype_state).kind != PickleKind::kTuple ||
      dtype_items.size() < 2 || p.value(dtype_items[1]).kind != PickleKind::kString) {
    p.fail(self + ": the numpy.dtype" + pickle_created_at(dtype_value.offset) +
           " has no byte order (expected a state tuple with '<', '=' or '|' second)");
  }
  const std::string_view order = p.bytes(dtype_items[1]);
  if (order != "<" && order != "=" && order != "|") {
    p.fail(self + ": byte order " + quoted_printable(order) + " of dtype " +
           quoted_printable(code) + " is not supported, expected little-endian '<'");
  }
  const std::optional<NumpyDtype> parsed = parse_numpy_dtype(code, order[0]);
  if (!parsed) {
    p.fail(self + ": unsupported dtype " + quoted_printable(code) + ", expected " +
           std::string(kNumpyDtypes));
  }
  array.dtype = *parsed;
  array.dtype.code = std::string(code);

  const PickleId fortran = items[2];
  if (p.value(fortran).kind != PickleKind::kBool && !is_int(p, fortran)) {
    p.fail(self + ": fortran flag is " + p.describe_at(fortran) + ", expected a bool");
  }
  array.fortran = p.value(fortran).integer != 0;

  const PickleId data = items[3];
  if (array.dtype.kind == NumpyKind::kObject) {
    if (p.value(data).kind != PickleKind::kList) {
      p.fail(self + ": data is " + p.describe_at(data) + ", expected a list of its objects");
    }
    if (static_cast<std::int64_t>(p.items(data).size()) != array.count) {
      p.fail(self + " holds " + std::to_string(p.items(data).size()) + " objects, expected " +
             std::to_string(array.count) + " for shape " + shape_text(array.shape));
    }
    view.objects = data;
    return view;
  }
  if (p.value(data).kind != PickleKind::kString) {
    p.fail(self + ": data is " + p.describe_at(data) + ", expected raw bytes");
  }
  array.data = p.bytes(data);
  const std::int64_t expected = array.count * array.dtype.item_size;
  if (static_cast<std::int64_t>(array.data.size()) != expected) {
    p.fail(self + " holds " + std::to_string(array.data.size()) + " data bytes, expected " +
           std::to_string(expected) + " for shape " + shape_text(array.shape) + " of dtype '" +
           array.dtype.code + "'");
  }
  return view;
}

std::string array_origin(const ArrayView& view) {
  return " (the numpy.ndarray" + pickle_created_at(view.offset) + ")";
}

void require_vector(const Pickle& p, const ArrayView& view, const std::string& subject,
                    bool integer) {
  if (view.array.shape.size() != 1) {
    p.fail(subject + "expected a 1-D array, got shape " + shape_text(view.array.shape) +
           array_origin(view));
  }
  const NumpyKind kind = view.array.dtype.kind;
  if (integer ? !is_integer(kind) : kind != NumpyKind::kFloat) {
    p.fail(subject + "expected " +
           (integer ? "an integer array (such as 'i4' or 'i8')" : "a float array ('f4' or 'f8')") +
           ", got dtype '" + view.array.dtype.code + "'" + array_origin(view));
  }
}

std::vector<std::int64_t> integers(const Pickle& p, const ArrayView& view,
                                   const std::string& subject) {
  std::optional<std::vector<std::int64_t>> values = numpy_integers(view.array);
  if (!values) {
    p.fail(subject + "an entry is above the int64 range" + array_origin(view));
  }
  return std::move(*values);
}

}  // namespace

PickleId decode_object_item(const Pickle& p, PickleId id, const Limits& limits) {
  const ArrayView view = array_view(p, id, "", limits);
  if (view.array.dtype.kind != NumpyKind::kObject || !view.array.shape.empty()) {
    p.fail("expected a 0-d object array (dtype 'O'), got dtype '" + view.array.dtype.code +
           "' and shape " + shape_text(view.array.shape) + array_origin(view));
  }
  return p.items(view.objects)[0];
}

CsrArrays decode_csr_matrix(const Pickle& p, PickleId id, const Limits& limits) {
  const PickleValue& v = p.value(id);
  if (v.kind != PickleKind::kObject || v.cls != PickleClass::kCsrMatrix) {
    p.fail("expected a scipy.sparse.csr.csr_matrix, got " + p.describe_at(id));
  }
  const std::string self = "the scipy.sparse.csr.csr_matrix" + pickle_created_at(v.offset);
  const PickleId state = p.object_state(id);
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
  for (const auto& [item, name] : required) {
    if (item < 0) p.fail(self + " has no '" + std::string(name) + "' in its state");
  }

  const auto dims = p.items(shape);
  if (p.value(shape).kind != PickleKind::kTuple || dims.size() != 2 || !is_int(p, dims[0]) ||
      !is_int(p, dims[1]) || p.value(dims[0]).integer < 0 || p.value(dims[1]).integer < 0) {
    p.fail(self + ": '_shape' is " + p.describe_at(shape) +
           ", expected a tuple of 2 non-negative ints");
  }
  CsrParts parts;
  parts.rows = p.value(dims[0]).integer;
  parts.cols = p.value(dims[1]).integer;
  if (parts.rows > limits.max_nodes) {
    p.fail_limit(self + " has " + std::to_string(parts.rows) + " rows, over the node limit of " +
                 std::to_string(limits.max_nodes) + " (raise it with --max-nodes)");
  }
  const std::int64_t max_cols =
      std::min<std::int64_t>(limits.max_features, std::numeric_limits<std::int32_t>::max());
  if (parts.cols > max_cols) {
    p.fail_limit(self + " has " + std::to_string(parts.cols) +
                 " columns, over the feature limit of " + std::to_string(max_cols) +
                 " (raise it with --max-features)");
  }

  const CsrSubjects subjects{"'indptr' of " + self + ": ", "'indices' of " + self + ": ",
                             "'data' of " + self + ": "};
  const ArrayView indptr_view = array_view(p, indptr, subjects.indptr, limits);
  require_vector(p, indptr_view, subjects.indptr, true);
  const ArrayView indices_view = array_view(p, indices, subjects.indices, limits);
  require_vector(p, indices_view, subjects.indices, true);
  const ArrayView data_view = array_view(p, data, subjects.data, limits);
  require_vector(p, data_view, subjects.data, false);
  if (indptr_view.array.count != parts.rows + 1) {
    p.fail(subjects.indptr + std::to_string(indptr_view.array.count) +
           " entries, expected rows + 1 = " + std::to_string(parts.rows + 1));
  }
  parts.indptr = integers(p, indptr_view, subjects.indptr);
  parts.indices = integers(p, indices_view, subjects.indices);
  parts.values = numpy_floats(data_view.array);
  return checked_csr(std::move(parts), subjects, p.reader(), p.path());
}

IntMatrix decode_int_matrix(const Pickle& p, const Limits& limits) {
  const ArrayView view = array_view(p, p.root(), "", limits);
  if (view.array.shape.size() != 2) {
    p.fail("expected a 2-D array, got shape " + shape_text(view.array.shape) + array_origin(view));
  }
  if (!is_integer(view.array.dtype.kind)) {
    p.fail("expected an integer array (such as 'i4' or 'i8'), got dtype '" + view.array.dtype.code +
           "'" + array_origin(view));
  }
  IntMatrix out;
  out.rows = view.array.shape[0];
  out.cols = view.array.shape[1];
  if (out.rows > limits.max_nodes) {
    p.fail_limit("the array has " + std::to_string(out.rows) + " rows, over the node limit of " +
                 std::to_string(limits.max_nodes) + " (raise it with --max-nodes)");
  }
  out.values = integers(p, view, "");
  if (view.array.fortran && out.rows > 1 && out.cols > 1) {
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

PickleId dict_item(const Pickle& p, PickleId dict, std::string_view key) {
  if (p.value(dict).kind != PickleKind::kDict) {
    p.fail("expected a dict, got " + p.describe_at(dict));
  }
  const auto entries = p.items(dict);
  for (std::size_t i = 0; i < entries.size(); i += 2) {
    if (p.value(entries[i]).kind == PickleKind::kString && p.bytes(entries[i]) == key) {
      return entries[i + 1];
    }
  }
  return -1;
}

std::vector<std::string> decode_strings(const Pickle& p, PickleId id, const std::string& subject,
                                        const Limits& limits) {
  const PickleValue& v = p.value(id);
  std::span<const PickleId> items;
  if (v.kind == PickleKind::kList || v.kind == PickleKind::kTuple) {
    items = p.items(id);
  } else if (v.kind == PickleKind::kObject && v.cls == PickleClass::kNdarray) {
    const ArrayView view = array_view(p, id, subject, limits);
    const NumpyKind kind = view.array.dtype.kind;
    if (view.array.shape.size() != 1 ||
        (kind != NumpyKind::kObject && kind != NumpyKind::kUnicode && kind != NumpyKind::kBytes)) {
      p.fail(subject + "expected a 1-D array of strings, got dtype '" + view.array.dtype.code +
             "' and shape " + shape_text(view.array.shape) + array_origin(view));
    }
    if (kind != NumpyKind::kObject) {
      std::optional<std::vector<std::string>> strings = numpy_strings(view.array);
      if (!strings) p.fail(subject + "an element is not valid unicode" + array_origin(view));
      return std::move(*strings);
    }
    items = p.items(view.objects);
  } else {
    p.fail(subject + "expected a list or array of strings, got " + p.describe_at(id));
  }
  std::vector<std::string> out;
  out.reserve(items.size());
  for (const PickleId item : items) {
    if (p.value(item).kind != PickleKind::kString) {
      p.fail(subject + "an item is " + p.describe_at(item) + ", expected a string");
    }
    out.emplace_back(p.bytes(item));
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
