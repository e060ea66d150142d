#include "support/tiny_planetoid.hpp"

#include <cstdint>
#include <cstring>
#include <map>
#include <stdexcept>
#include <utility>

#include "support/paths.hpp"

namespace maskgat::test {
namespace {

// Emits pickle opcodes with cPickle's memo and global bookkeeping.
class PickleWriter {
 public:
  PickleWriter() : out_("\x80\x02", 2) {}

  void raw(std::string_view opcodes) { out_.append(opcodes); }

  int put() {
    const int index = next_memo_++;
    if (index < 256) {
      out_ += 'q';
      out_ += static_cast<char>(index);
    } else {
      out_ += 'r';
      little_endian(static_cast<std::uint32_t>(index), 4);
    }
    return index;
  }

  void get(int index) {
    out_ += 'h';
    out_ += static_cast<char>(index);
  }

  void global(const std::string& module, const std::string& name) {
    const auto key = module + "." + name;
    if (const auto found = globals_.find(key); found != globals_.end()) {
      get(found->second);
      return;
    }
    out_ += "c" + module + "\n" + name + "\n";
    globals_[key] = put();
  }

  void integer(int value) {
    if (value >= 0 && value < 256) {
      out_ += 'K';
      out_ += static_cast<char>(value);
    } else if (value >= 0 && value < 65536) {
      out_ += 'M';
      little_endian(static_cast<std::uint32_t>(value), 2);
    } else {
      out_ += 'J';
      little_endian(static_cast<std::uint32_t>(value), 4);
    }
  }

  void string(const std::string& data, bool memoize = false) {
    if (data.size() < 256) {
      out_ += 'U';
      out_ += static_cast<char>(data.size());
    } else {
      out_ += 'T';
      little_endian(static_cast<std::uint32_t>(data.size()), 4);
    }
    out_ += data;
    if (memoize) put();
  }

  void dtype(const std::string& code) {
    if (const auto found = dtypes_.find(code); found != dtypes_.end()) {
      get(found->second);
      return;
    }
    global("numpy", "dtype");
    string(code);
    integer(0);
    integer(1);
    raw("\x87R");  // TUPLE3 REDUCE
    dtypes_[code] = put();
    raw("(");  // MARK: dtype state (3, '<', None, None, None, -1, -1, 0)
    integer(3);
    string("<");
    raw("NNN");
    integer(-1);
    integer(-1);
    integer(0);
    raw("tb");  // TUPLE BUILD
  }

  void ndarray(const std::vector<int>& shape, const std::string& code, const std::string& data) {
    global("numpy.core.multiarray", "_reconstruct");
    global("numpy", "ndarray");
    integer(0);
    raw("\x85");  // TUPLE1
    string("b");
    raw("\x87R");  // TUPLE3 REDUCE
    put();
    raw("(");  // MARK: array state (1, shape, dtype, fortran, data)
    integer(1);
    for (const int dim : shape) integer(dim);
    raw(shape.size() == 1 ? "\x85" : "\x86");  // TUPLE1 or TUPLE2
    dtype(code);
    raw("\x89");  // NEWFALSE
    string(data);
    raw("tb");  // TUPLE BUILD
  }

  std::string stop() {
    out_ += '.';
    return std::move(out_);
  }

 private:
  void little_endian(std::uint32_t value, int bytes) {
    for (int k = 0; k < bytes; ++k) out_ += static_cast<char>((value >> (8 * k)) & 0xFFU);
  }

  std::string out_;
  int next_memo_ = 1;
  std::map<std::string, int> globals_;
  std::map<std::string, int> dtypes_;
};

template <typename T>
std::string packed(const std::vector<T>& values) {
  std::string data(values.size() * sizeof(T), '\0');
  std::memcpy(data.data(), values.data(), data.size());
  return data;
}

using SparseRow = std::vector<std::pair<int, float>>;  // (column, value), columns ascending

std::string csr_pickle(int rows, int cols, const std::vector<SparseRow>& sparse_rows) {
  std::vector<std::int32_t> indptr{0};
  std::vector<std::int32_t> indices;
  std::vector<float> data;
  for (const auto& row : sparse_rows) {
    for (const auto& [col, value] : row) {
      indices.push_back(col);
      data.push_back(value);
    }
    indptr.push_back(static_cast<std::int32_t>(indices.size()));
  }
  PickleWriter w;
  w.global("scipy.sparse.csr", "csr_matrix");
  w.raw(")\x81");  // EMPTY_TUPLE NEWOBJ
  w.put();
  w.raw("}");  // EMPTY_DICT
  w.put();
  w.raw("(");  // MARK
  w.string("format", true);
  w.string("csr");
  w.string("_shape", true);
  w.integer(rows);
  w.integer(cols);
  w.raw("\x86");  // TUPLE2
  w.string("indptr", true);
  w.ndarray({rows + 1}, "i4", packed(indptr));
  w.string("_cs_matrix__has_sorted_indices", true);
  w.raw("\x88");  // NEWTRUE
  w.string("indices", true);
  w.ndarray({static_cast<int>(indices.size())}, "i4", packed(indices));
  w.string("maxprint", true);
  w.integer(50);
  w.string("data", true);
  w.ndarray({static_cast<int>(data.size())}, "f4", packed(data));
  w.raw("ub");  // SETITEMS BUILD
  return w.stop();
}

std::string onehot_pickle(const std::vector<int>& classes, int num_classes) {
  std::vector<std::int32_t> values;
  for (const int c : classes) {
    for (int k = 0; k < num_classes; ++k) values.push_back(k == c ? 1 : 0);
  }
  PickleWriter w;
  w.ndarray({static_cast<int>(classes.size()), num_classes}, "i4", packed(values));
  return w.stop();
}

std::string graph_pickle(const std::vector<std::pair<int, std::vector<int>>>& adjacency) {
  PickleWriter w;
  w.global("collections", "defaultdict");
  w.global("__builtin__", "list");
  w.raw("\x85R");  // TUPLE1 REDUCE
  w.put();
  w.raw("(");  // MARK: one SETITEMS batch (fewer than 1000 keys)
  for (const auto& [key, items] : adjacency) {
    w.integer(key);
    w.raw("]");  // EMPTY_LIST
    w.put();
    if (items.size() == 1) {
      w.integer(items.front());
      w.raw("a");  // APPEND
    } else if (!items.empty()) {
      w.raw("(");
      for (const int item : items) w.integer(item);
      w.raw("e");  // APPENDS
    }
  }
  w.raw("u");  // SETITEMS
  return w.stop();
}

const std::vector<SparseRow> kAllx = {{{0, 1.0F}, {3, 1.0F}}, {{1, 1.0F}}, {{2, 0.5F}, {4, 0.25F}}, {}};
const std::vector<int> kAlly = {0, 2, 1, 2};
const std::vector<SparseRow> kTx = {{{4, 2.0F}}, {{0, 1.0F}, {1, 1.0F}}, {{3, 1.0F}}};
const std::vector<int> kTy = {1, 0, 2};

}  // namespace

const std::vector<std::string>& planetoid_parts() {
  static const std::vector<std::string> parts = {"x",  "tx",   "allx",  "y",
                                                 "ty", "ally", "graph", "test.index"};
  return parts;
}

std::string tiny_planetoid_part(const std::string& part) {
  if (part == "x") return csr_pickle(2, 5, {kAllx[0], kAllx[1]});
  if (part == "tx") return csr_pickle(3, 5, kTx);
  if (part == "allx") return csr_pickle(4, 5, kAllx);
  if (part == "y") return onehot_pickle({kAlly[0], kAlly[1]}, 3);
  if (part == "ty") return onehot_pickle(kTy, 3);
  if (part == "ally") return onehot_pickle(kAlly, 3);
  if (part == "graph") {
    return graph_pickle({{0, {1, 2, 1}}, {1, {0}}, {2, {0, 2}}, {3, {4}}, {4, {7}}, {5, {6}},
                         {6, {5}}, {7, {4}}});
  }
  if (part == "test.index") return "7\n4\n6\n";
  throw std::invalid_argument("tiny_planetoid_part: unknown part " + part);
}

std::filesystem::path write_tiny_planetoid(const std::string& tag) {
  for (const auto& part : planetoid_parts()) {
    write_file(tag, "planetoid/ind.citeseer." + part, tiny_planetoid_part(part));
  }
  return scratch_dir(tag) / "planetoid";
}

}  // namespace maskgat::test
