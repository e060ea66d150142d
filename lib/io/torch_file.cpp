#include "maskgat/io/torch_file.hpp"

#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <bit>
#include <cctype>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <utility>

#include "io/detail/input_file.hpp"
#include "io/detail/pickle.hpp"
#include "io/detail/pickle_writer.hpp"
#include "io/detail/text.hpp"
#include "io/detail/zip_archive.hpp"
#include "maskgat/core/error.hpp"
#include "maskgat/io/output_file.hpp"

namespace maskgat {
namespace {

constexpr std::string_view kReader = "torch";

using detail::Pickle;
using detail::PickleClass;
using detail::PickleId;
using detail::PickleKind;
using detail::quoted_printable;

// A file torch.save wrote before PyTorch 1.6 starts with a protocol-2 pickle of its magic number
// 0x1950a86a20f9469cfc6c: PROTO 2, LONG1 of 10 bytes.
constexpr std::string_view kLegacyStart{"\x80\x02\x8a\x0a", 4};

struct DtypeInfo {
  PickleClass storage;
  TorchDtype dtype;
  std::int64_t bytes;
};

constexpr std::array kDtypes{
    DtypeInfo{PickleClass::kFloatStorage, TorchDtype::kFloat32, 4},
    DtypeInfo{PickleClass::kDoubleStorage, TorchDtype::kFloat64, 8},
    DtypeInfo{PickleClass::kHalfStorage, TorchDtype::kFloat16, 2},
    DtypeInfo{PickleClass::kBFloat16Storage, TorchDtype::kBFloat16, 2},
    DtypeInfo{PickleClass::kLongStorage, TorchDtype::kInt64, 8},
    DtypeInfo{PickleClass::kIntStorage, TorchDtype::kInt32, 4},
    DtypeInfo{PickleClass::kBoolStorage, TorchDtype::kBool, 1},
};

const DtypeInfo& dtype_of(PickleClass storage) {
  for (const auto& info : kDtypes) {
    if (info.storage == storage) return info;
  }
  return kDtypes[0];  // unreachable: the parser admits only these storage classes
}

template <typename T>
T load(const char* bytes) {
  T value;
  std::memcpy(&value, bytes, sizeof(T));
  return value;
}

// Element `index` of a little-endian storage of `dtype`.
double element(const std::string& storage, TorchDtype dtype, std::int64_t index) {
  switch (dtype) {
    case TorchDtype::kFloat32:
      return load<float>(storage.data() + index * 4);
    case TorchDtype::kFloat64:
      return load<double>(storage.data() + index * 8);
    case TorchDtype::kFloat16:
      return static_cast<float>(
          Eigen::numext::bit_cast<Eigen::half>(load<std::uint16_t>(storage.data() + index * 2)));
    case TorchDtype::kBFloat16: {
      const auto high = load<std::uint16_t>(storage.data() + index * 2);
      return std::bit_cast<float>(static_cast<std::uint32_t>(high) << 16U);
    }
    case TorchDtype::kInt64:
      return static_cast<double>(load<std::int64_t>(storage.data() + index * 8));
    case TorchDtype::kInt32:
      return load<std::int32_t>(storage.data() + index * 4);
    case TorchDtype::kBool:
      return storage[static_cast<std::size_t>(index)] != 0 ? 1.0 : 0.0;
  }
  return 0.0;
}

const DtypeInfo& info_of(TorchDtype dtype) {
  for (const auto& info : kDtypes) {
    if (info.dtype == dtype) return info;
  }
  return kDtypes[0];
}

template <typename T>
void store(std::string& out, T value) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  out.append(bytes, sizeof(T));
}

// The little-endian storage of `tensor`'s values in its dtype.
std::string storage_bytes(const NamedTensor& tensor) {
  std::string out;
  out.reserve(tensor.values.size() * static_cast<std::size_t>(info_of(tensor.dtype).bytes));
  for (const double value : tensor.values) {
    switch (tensor.dtype) {
      case TorchDtype::kFloat32:
        store(out, static_cast<float>(value));
        break;
      case TorchDtype::kFloat64:
        store(out, value);
        break;
      case TorchDtype::kFloat16:
        store(out, Eigen::numext::bit_cast<std::uint16_t>(Eigen::half(static_cast<float>(value))));
        break;
      case TorchDtype::kBFloat16:
        store(out,
              Eigen::numext::bit_cast<std::uint16_t>(Eigen::bfloat16(static_cast<float>(value))));
        break;
      case TorchDtype::kInt64:
        store(out, static_cast<std::int64_t>(value));
        break;
      case TorchDtype::kInt32:
        store(out, static_cast<std::int32_t>(value));
        break;
      case TorchDtype::kBool:
        out += static_cast<char>(value != 0.0 ? 1 : 0);
        break;
    }
  }
  return out;
}

// Whether `value` fits an integer or bool dtype exactly (any value fits a float dtype).
bool fits(TorchDtype dtype, double value) {
  switch (dtype) {
    case TorchDtype::kInt64:
      return std::nearbyint(value) == value && value >= -9.223372036854775808e18 &&
             value < 9.223372036854775808e18;
    case TorchDtype::kInt32:
      return std::nearbyint(value) == value && value >= -2147483648.0 && value <= 2147483647.0;
    case TorchDtype::kBool:
      return value == 0.0 || value == 1.0;
    default:
      return true;
  }
}

std::uint32_t crc32(std::string_view bytes) {
  static const std::array<std::uint32_t, 256> kTable = [] {
    std::array<std::uint32_t, 256> table{};
    for (std::uint32_t n = 0; n < 256; ++n) {
      std::uint32_t c = n;
      for (int k = 0; k < 8; ++k) c = (c & 1U) != 0 ? 0xEDB88320U ^ (c >> 1U) : c >> 1U;
      table[n] = c;
    }
    return table;
  }();
  std::uint32_t c = 0xFFFFFFFFU;
  for (const char byte : bytes)
    c = kTable[(c ^ static_cast<unsigned char>(byte)) & 0xFFU] ^ (c >> 8U);
  return c ^ 0xFFFFFFFFU;
}

// A zip archive of stored members, each member's data starting at a multiple of 64 bytes (a
// local extra field of id 0x4246 pads the header, as PyTorch's writer does).
class StoredZip {
 public:
  void add(const std::string& name, std::string_view content) {
    const std::uint64_t header = out_.size();
    const std::uint64_t unpadded = header + 30 + name.size();
    std::uint64_t padding = (64 - unpadded % 64) % 64;
    if (padding != 0 && padding < 4) padding += 64;  // an extra field needs its 4-byte header
    const std::uint32_t crc = crc32(content);
    put32(0x04034b50U);
    put_common(crc, content.size(), name.size());
    put16(static_cast<std::uint16_t>(padding));
    out_ += name;
    if (padding != 0) {
      put16(0x4246U);
      put16(static_cast<std::uint16_t>(padding - 4));
      out_.append(padding - 4, 'Z');
    }
    out_.append(content);
    members_.push_back({name, crc, content.size(), header});
  }

  // The whole archive, with its central directory.
  std::string finish(const std::string& path) {
    const std::uint64_t directory = out_.size();
    for (const Member& member : members_) {
      put32(0x02014b50U);
      put16(20);  // made by: version 2.0
      put_common(member.crc, member.size, member.name.size());
      put16(0);  // extra field length
      put16(0);  // comment length
      put16(0);  // disk number
      put16(0);  // internal attributes
      put32(0);  // external attributes
      put32(static_cast<std::uint32_t>(member.header));
      out_ += member.name;
    }
    const std::uint64_t end = out_.size();
    put32(0x06054b50U);
    put16(0);
    put16(0);
    put16(static_cast<std::uint16_t>(members_.size()));
    put16(static_cast<std::uint16_t>(members_.size()));
    put32(static_cast<std::uint32_t>(end - directory));
    put32(static_cast<std::uint32_t>(directory));
    put16(0);
    if (out_.size() >= (std::uint64_t{1} << 32) || members_.size() >= 65535) {
      throw LimitError("torch", path, 0,
                       "the state dict needs a zip of " + std::to_string(out_.size()) +
                           " bytes and " + std::to_string(members_.size()) +
                           " members; the format without its 64-bit extension holds under 4 GiB "
                           "and 65535 members");
    }
    return std::move(out_);
  }

 private:
  struct Member {
    std::string name;
    std::uint32_t crc;
    std::uint64_t size;
    std::uint64_t header;
  };

  void put16(std::uint16_t value) { store(out_, value); }
  void put32(std::uint32_t value) { store(out_, value); }

  // Version needed, flags, method (stored), time, date, CRC-32, both sizes, name length.
  void put_common(std::uint32_t crc, std::uint64_t size, std::size_t name_length) {
    put16(20);
    put16(0);
    put16(0);
    put16(0);
    put16(0x21);  // 1980-01-01
    put32(crc);
    put32(static_cast<std::uint32_t>(size));
    put32(static_cast<std::uint32_t>(size));
    put16(static_cast<std::uint16_t>(name_length));
  }

  std::string out_;
  std::vector<Member> members_;
};

// One storage: its class and element count as first named, and its bytes.
struct Storage {
  PickleClass cls = PickleClass::kNone;
  std::int64_t numel = 0;
  std::int64_t created_at = 0;
  std::string bytes;
};

class TorchFile {
 public:
  TorchFile(const std::filesystem::path& path, const TorchReadOptions& options)
      : options_(options) {
    detail::InputFile file(path, kReader);
    path_ = file.path();
    std::string bytes =
        detail::read_bounded_file(file, options.limits.max_file_bytes, detail::Content::kBinary);
    if (bytes.starts_with(kLegacyStart)) {
      fail(
          "written in the format of PyTorch before 1.6 (not a zip archive): load it in Python "
          "and save it again with torch.save in PyTorch 1.6 or later");
    }
    if (!bytes.starts_with("PK")) {
      fail("not a torch.save file: expected a zip archive (starting with 'PK'), got " +
           quoted_printable(std::string_view(bytes).substr(0, 8)));
    }
    archive_ = std::make_unique<detail::ZipArchive>(std::move(bytes), kReader, path_,
                                                    options.limits, detail::ZipNames::kFolders);
    find_folder();
    check_byteorder();
    pickle_ = std::make_unique<Pickle>(archive_->read(folder_ + "data.pkl"), kReader,
                                       path_ + ": member " + quoted_printable(folder_ + "data.pkl"),
                                       options.limits, detail::PickleVocabulary::kTorch);
  }

  StateDict state_dict() {
    const PickleId dict = state_dict_object();
    const auto items = pickle_->items(dict);
    StateDict state;
    std::set<std::string, std::less<>> names;
    std::int64_t total = 0;
    for (std::size_t i = 0; i < items.size(); i += 2) {
      const PickleId key = items[i];
      const PickleId value = items[i + 1];
      if (pickle_->value(key).kind != PickleKind::kString) {
        pickle_->fail("the state dict has a key that is " + pickle_->describe_at(key) +
                      ", expected a string");
      }
      std::string name(pickle_->bytes(key));
      if (!names.insert(name).second) {
        pickle_->fail("the state dict gives the key " + quoted_printable(name) + " twice");
      }
      if (pickle_->value(value).kind != PickleKind::kObject ||
          pickle_->value(value).cls != PickleClass::kRebuildTensor) {
        pickle_->fail("the state dict's item " + quoted_printable(name) + " is " +
                      pickle_->describe_at(value) + ", expected a tensor");
      }
      state.tensors.push_back(tensor(std::move(name), value, total));
    }
    return state;
  }

 private:
  [[noreturn]] void fail(std::string_view message) const {
    throw ParseError(kReader, path_, 0, message);
  }

  // The one folder that holds `data.pkl`; a TorchScript archive (code/, constants.pkl) is named.
  void find_folder() {
    std::vector<std::string> folders;
    bool torchscript = false;
    for (const std::string& name : archive_->names()) {
      const std::size_t slash = name.find('/');
      if (slash != std::string::npos && name.substr(slash + 1) == "data.pkl") {
        folders.push_back(name.substr(0, slash + 1));
      }
      if (slash != std::string::npos && name.substr(slash + 1) == "constants.pkl")
        torchscript = true;
    }
    if (folders.size() == 1) {
      folder_ = folders.front();
      return;
    }
    if (folders.empty()) {
      fail(torchscript
               ? std::string("a TorchScript archive (torch.jit.save), not a state dict: save "
                             "model.state_dict() with torch.save")
               : std::string("no member <folder>/data.pkl: not a torch.save file"));
    }
    fail("members " + quoted_printable(folders[0] + "data.pkl") + " and " +
         quoted_printable(folders[1] + "data.pkl") + ": more than one folder holds a data.pkl");
  }

  void check_byteorder() const {
    const std::string member = folder_ + "byteorder";
    if (!archive_->contains(member)) return;  // PyTorch before 1.10 wrote little-endian only
    const std::string order = archive_->read(member);
    if (order == "little") return;
    fail("member " + quoted_printable(member) + " holds " + quoted_printable(order) +
         ", expected 'little' (files written on big-endian machines are not read)");
  }

  PickleId state_dict_object() const {
    const PickleId root = pickle_->root();
    if (pickle_->value(root).kind != PickleKind::kDict) {
      pickle_->fail("the file holds " + pickle_->describe_at(root) +
                    ", expected a state dict (an OrderedDict of tensors)");
    }
    if (options_.key.empty()) {
      const auto items = pickle_->items(root);
      for (std::size_t i = 1; i < items.size(); i += 2) {
        const auto& value = pickle_->value(items[i]);
        if (value.kind == PickleKind::kObject && value.cls == PickleClass::kRebuildTensor) continue;
        pickle_->fail("the file holds a dict whose item " +
                      quoted_printable(pickle_->bytes(items[i - 1])) + " is " +
                      pickle_->describe_at(items[i]) +
                      ", not a tensor: if it wraps a state dict, name the item with --key; its "
                      "keys are " +
                      keys_of(root));
      }
      return root;
    }
    const auto items = pickle_->items(root);
    for (std::size_t i = 0; i < items.size(); i += 2) {
      if (pickle_->value(items[i]).kind == PickleKind::kString &&
          pickle_->bytes(items[i]) == options_.key) {
        const PickleId value = items[i + 1];
        if (pickle_->value(value).kind != PickleKind::kDict) {
          pickle_->fail("item " + quoted_printable(options_.key) + " is " +
                        pickle_->describe_at(value) + ", expected a state dict");
        }
        return value;
      }
    }
    pickle_->fail("the file's dict has no item " + quoted_printable(options_.key) +
                  "; its keys are " + keys_of(root));
  }

  std::string keys_of(PickleId dict) const {
    std::string text;
    const auto items = pickle_->items(dict);
    for (std::size_t i = 0; i < items.size(); i += 2) {
      if (!text.empty()) text += ", ";
      text += pickle_->value(items[i]).kind == PickleKind::kString
                  ? quoted_printable(pickle_->bytes(items[i]))
                  : pickle_->describe(items[i]);
    }
    return text.empty() ? "none" : text;
  }

  // The storage a reference names, read when first named.
  const Storage& storage(PickleId ref) {
    const auto id = pickle_->items(pickle_->object_args(ref));
    const PickleClass cls = pickle_->value(id[1]).cls;
    const std::string key(pickle_->bytes(id[2]));
    const std::int64_t numel = pickle_->value(id[4]).integer;
    const auto found = storages_.find(key);
    if (found != storages_.end()) {
      const Storage& known = found->second;
      if (known.cls != cls || known.numel != numel) {
        pickle_->fail("storage " + quoted_printable(key) + " is named as " +
                      std::string(detail::pickle_class_name(known.cls)) + " of " +
                      std::to_string(known.numel) + " elements" +
                      detail::pickle_created_at(known.created_at) + " and as " +
                      std::string(detail::pickle_class_name(cls)) + " of " + std::to_string(numel) +
                      detail::pickle_created_at(pickle_->value(ref).offset));
      }
      return known;
    }
    const std::string member = folder_ + "data/" + key;
    if (!archive_->contains(member)) {
      pickle_->fail("storage " + quoted_printable(key) +
                    detail::pickle_created_at(pickle_->value(ref).offset) + " has no member " +
                    quoted_printable(member));
    }
    const DtypeInfo& info = dtype_of(cls);
    Storage entry{cls, numel, pickle_->value(ref).offset, archive_->read(member)};
    const auto size = static_cast<std::int64_t>(entry.bytes.size());
    if (size / info.bytes != numel || size % info.bytes != 0) {
      fail("member " + quoted_printable(member) + " holds " + std::to_string(size) +
           " bytes, but its storage is named as " + std::string(detail::pickle_class_name(cls)) +
           " of " + std::to_string(numel) + " elements (" + std::to_string(info.bytes) +
           " bytes each)");
    }
    return storages_.emplace(key, std::move(entry)).first->second;
  }

  // An int item of a size or stride tuple.
  std::int64_t dimension(PickleId tuple, std::size_t d, std::string_view what,
                         const std::string& name) const {
    const PickleId item = pickle_->items(tuple)[d];
    if (pickle_->value(item).kind != PickleKind::kInt || pickle_->value(item).integer < 0) {
      pickle_->fail("tensor " + quoted_printable(name) + ": " + std::string(what) + " " +
                    std::to_string(d) + " is " +
                    (pickle_->value(item).kind == PickleKind::kInt
                         ? std::to_string(pickle_->value(item).integer)
                         : pickle_->describe_at(item)) +
                    ", expected a non-negative int");
    }
    return pickle_->value(item).integer;
  }

  NamedTensor tensor(std::string name, PickleId id, std::int64_t& total) {
    const auto args = pickle_->items(pickle_->object_args(id));
    const std::int64_t offset = pickle_->value(args[1]).integer;
    const PickleId size = args[2];
    const PickleId stride = args[3];
    const std::size_t dims = pickle_->items(size).size();
    if (pickle_->items(stride).size() != dims) {
      pickle_->fail("tensor " + quoted_printable(name) + " has " + std::to_string(dims) +
                    " sizes but " + std::to_string(pickle_->items(stride).size()) + " strides");
    }
    if (offset < 0) {
      pickle_->fail("tensor " + quoted_printable(name) + " has the negative storage offset " +
                    std::to_string(offset));
    }
    const std::int64_t max_elements = options_.limits.max_array_elements;
    NamedTensor tensor;
    tensor.name = std::move(name);
    std::int64_t numel = 1;
    std::vector<std::int64_t> strides(dims);
    for (std::size_t d = 0; d < dims; ++d) {
      const std::int64_t extent = dimension(size, d, "size", tensor.name);
      strides[d] = dimension(stride, d, "stride", tensor.name);
      tensor.shape.push_back(extent);
      if (extent != 0 && numel > (max_elements - total) / extent) {
        throw LimitError(kReader, path_, 0,
                         "tensor " + quoted_printable(tensor.name) + " of shape " +
                             shape_text(pickle_, size) + " takes the state dict past " +
                             std::to_string(max_elements) +
                             " elements (Limits::max_array_elements)");
      }
      numel *= extent;
    }
    const Storage& from = storage(args[0]);
    tensor.dtype = dtype_of(from.cls).dtype;
    if (numel > 0) {
      // The last element read is offset + sum (size - 1) * stride; every term is checked so that
      // none of the sums overflows.
      std::int64_t last = offset;
      for (std::size_t d = 0; d < dims; ++d) {
        const std::int64_t span = tensor.shape[d] - 1;
        if (strides[d] != 0 && span > (from.numel - last) / strides[d]) {
          last = from.numel;
          break;
        }
        last += span * strides[d];
      }
      if (last >= from.numel) {
        pickle_->fail("tensor " + quoted_printable(tensor.name) + " of shape " +
                      shape_text(pickle_, size) + ", strides " + shape_text(pickle_, stride) +
                      " and offset " + std::to_string(offset) + " reads past the end of its " +
                      std::to_string(from.numel) + "-element storage");
      }
    }
    total += numel;
    tensor.values.resize(static_cast<std::size_t>(numel));
    std::vector<std::int64_t> index(dims, 0);
    for (std::int64_t i = 0; i < numel; ++i) {
      std::int64_t at = offset;
      for (std::size_t d = 0; d < dims; ++d) at += index[d] * strides[d];
      tensor.values[static_cast<std::size_t>(i)] = element(from.bytes, tensor.dtype, at);
      for (std::size_t d = dims; d-- > 0;) {
        if (++index[d] < tensor.shape[d]) break;
        index[d] = 0;
      }
    }
    return tensor;
  }

  static std::string shape_text(const std::unique_ptr<Pickle>& pickle, PickleId tuple) {
    std::string text = "(";
    const auto items = pickle->items(tuple);
    for (std::size_t d = 0; d < items.size(); ++d) {
      if (d > 0) text += ", ";
      text += std::to_string(pickle->value(items[d]).integer);
    }
    return text + ")";
  }

  const TorchReadOptions& options_;
  std::string path_;
  std::unique_ptr<detail::ZipArchive> archive_;
  std::string folder_;
  std::unique_ptr<Pickle> pickle_;
  std::map<std::string, Storage, std::less<>> storages_;
};

}  // namespace

const char* torch_dtype_name(TorchDtype dtype) noexcept {
  switch (dtype) {
    case TorchDtype::kFloat32:
      return "float32";
    case TorchDtype::kFloat64:
      return "float64";
    case TorchDtype::kFloat16:
      return "float16";
    case TorchDtype::kBFloat16:
      return "bfloat16";
    case TorchDtype::kInt64:
      return "int64";
    case TorchDtype::kInt32:
      return "int32";
    case TorchDtype::kBool:
      return "bool";
  }
  return "unknown";
}

const NamedTensor* StateDict::find(std::string_view name) const noexcept {
  for (const auto& tensor : tensors) {
    if (tensor.name == name) return &tensor;
  }
  return nullptr;
}

StateDict read_state_dict(const std::filesystem::path& path, const TorchReadOptions& options) {
  TorchFile file(path, options);
  return file.state_dict();
}

void write_state_dict(const std::filesystem::path& path, const StateDict& state, bool overwrite) {
  const auto fail = [](const std::string& message) {
    throw InvalidArgument("write_state_dict: " + message);
  };
  // The folder torch.save names after the file; a stem that is not a plain name is replaced.
  std::string folder = path.stem().string();
  const bool plain = !folder.empty() && std::all_of(folder.begin(), folder.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-';
  });
  if (!plain) folder = "archive";
  std::vector<detail::TorchTensorRecord> records;
  std::vector<std::string> storages;
  std::map<std::string, int, std::less<>> names;
  for (const NamedTensor& tensor : state.tensors) {
    if (tensor.name.empty()) fail("a tensor has an empty name");
    if (!names.emplace(tensor.name, 0).second)
      fail("the name '" + tensor.name + "' is given twice");
    std::int64_t numel = 1;
    for (const std::int64_t extent : tensor.shape) {
      if (extent < 0) fail("tensor '" + tensor.name + "' has a negative size");
      numel *= extent;
    }
    if (numel != static_cast<std::int64_t>(tensor.values.size())) {
      fail("tensor '" + tensor.name + "' has " + std::to_string(tensor.values.size()) +
           " values for a shape of " + std::to_string(numel) + " elements");
    }
    for (const double value : tensor.values) {
      if (!fits(tensor.dtype, value)) {
        fail("tensor '" + tensor.name + "' holds " + std::to_string(value) + ", which " +
             torch_dtype_name(tensor.dtype) + " cannot hold");
      }
    }
    detail::TorchTensorRecord record;
    record.name = tensor.name;
    record.storage_class = std::string(detail::pickle_class_name(info_of(tensor.dtype).storage))
                               .substr(std::string_view("torch.").size());
    record.key = std::to_string(records.size());
    record.numel = numel;
    record.shape = tensor.shape;
    records.push_back(std::move(record));
    storages.push_back(storage_bytes(tensor));
  }
  StoredZip zip;
  zip.add(folder + "/data.pkl", detail::PickleWriter().state_dict(records).finish());
  zip.add(folder + "/byteorder", "little");
  for (std::size_t i = 0; i < storages.size(); ++i) {
    zip.add(folder + "/data/" + std::to_string(i), storages[i]);
  }
  zip.add(folder + "/version", "3\n");
  write_file_atomically(path, zip.finish(path.string()), overwrite);
}

}  // namespace maskgat
