#include "maskgat/io/torch_file.hpp"

#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <map>
#include <memory>
#include <utility>

#include "io/detail/input_file.hpp"
#include "io/detail/pickle.hpp"
#include "io/detail/text.hpp"
#include "io/detail/zip_archive.hpp"
#include "maskgat/core/error.hpp"

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
    std::int64_t total = 0;
    for (std::size_t i = 0; i < items.size(); i += 2) {
      const PickleId key = items[i];
      const PickleId value = items[i + 1];
      if (pickle_->value(key).kind != PickleKind::kString) {
        pickle_->fail("the state dict has a key that is " + pickle_->describe_at(key) +
                      ", expected a string");
      }
      std::string name(pickle_->bytes(key));
      if (state.find(name) != nullptr) {
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

}  // namespace maskgat
