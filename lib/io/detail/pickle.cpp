#include "io/detail/pickle.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <utility>

#include "io/detail/text.hpp"
#include "maskgat/core/error.hpp"

namespace maskgat::detail {
namespace {

// Protocol-2 and -3 opcodes (Python's pickletools names).
constexpr unsigned char kMark = '(';
constexpr unsigned char kStop = '.';
constexpr unsigned char kBinBytes = 'B';
constexpr unsigned char kShortBinBytes = 'C';
constexpr unsigned char kBinFloat = 'G';
constexpr unsigned char kBinInt = 'J';
constexpr unsigned char kBinInt1 = 'K';
constexpr unsigned char kBinInt2 = 'M';
constexpr unsigned char kNoneOp = 'N';
constexpr unsigned char kBinPersId = 'Q';
constexpr unsigned char kReduce = 'R';
constexpr unsigned char kBinString = 'T';
constexpr unsigned char kShortBinString = 'U';
constexpr unsigned char kBinUnicode = 'X';
constexpr unsigned char kAppend = 'a';
constexpr unsigned char kBuild = 'b';
constexpr unsigned char kGlobal = 'c';
constexpr unsigned char kAppends = 'e';
constexpr unsigned char kBinGet = 'h';
constexpr unsigned char kLongBinGet = 'j';
constexpr unsigned char kEmptyList = ']';
constexpr unsigned char kBinPut = 'q';
constexpr unsigned char kLongBinPut = 'r';
constexpr unsigned char kSetItem = 's';
constexpr unsigned char kTuple = 't';
constexpr unsigned char kSetItems = 'u';
constexpr unsigned char kEmptyDict = '}';
constexpr unsigned char kEmptyTuple = ')';
constexpr unsigned char kProto = 0x80;
constexpr unsigned char kNewObj = 0x81;
constexpr unsigned char kTuple1 = 0x85;
constexpr unsigned char kTuple2 = 0x86;
constexpr unsigned char kTuple3 = 0x87;
constexpr unsigned char kNewTrue = 0x88;
constexpr unsigned char kNewFalse = 0x89;
constexpr unsigned char kLong1 = 0x8A;

// Python batches APPENDS and SETITEMS by 1000 items, so honest files stay far below this; it
// only stops a hostile file from growing the stack without bound.
constexpr std::size_t kMaxStackSize = 1'000'000;
constexpr std::int64_t kMaxGlobalLength = 256;

struct AllowedGlobal {
  std::string_view module;
  std::string_view name;
  PickleClass cls;
};

constexpr std::array kDataGlobals{
    AllowedGlobal{"numpy.core.multiarray", "_reconstruct", PickleClass::kReconstruct},
    AllowedGlobal{"numpy", "ndarray", PickleClass::kNdarray},
    AllowedGlobal{"numpy", "dtype", PickleClass::kDtype},
    AllowedGlobal{"scipy.sparse.csr", "csr_matrix", PickleClass::kCsrMatrix},
    AllowedGlobal{"scipy.sparse._csr", "csr_matrix", PickleClass::kCsrMatrix},
    AllowedGlobal{"collections", "defaultdict", PickleClass::kDefaultDict},
    AllowedGlobal{"__builtin__", "list", PickleClass::kList},
    AllowedGlobal{"copy_reg", "_reconstructor", PickleClass::kCopyRegReconstructor},
    AllowedGlobal{"__builtin__", "object", PickleClass::kObject},
};

constexpr std::array kTorchGlobals{
    AllowedGlobal{"collections", "OrderedDict", PickleClass::kOrderedDict},
    AllowedGlobal{"torch._utils", "_rebuild_tensor_v2", PickleClass::kRebuildTensor},
    AllowedGlobal{"torch._utils", "_rebuild_parameter", PickleClass::kRebuildParameter},
    AllowedGlobal{"torch", "FloatStorage", PickleClass::kFloatStorage},
    AllowedGlobal{"torch", "DoubleStorage", PickleClass::kDoubleStorage},
    AllowedGlobal{"torch", "HalfStorage", PickleClass::kHalfStorage},
    AllowedGlobal{"torch", "BFloat16Storage", PickleClass::kBFloat16Storage},
    AllowedGlobal{"torch", "LongStorage", PickleClass::kLongStorage},
    AllowedGlobal{"torch", "IntStorage", PickleClass::kIntStorage},
    AllowedGlobal{"torch", "BoolStorage", PickleClass::kBoolStorage},
};

std::span<const AllowedGlobal> allowed_globals(PickleVocabulary vocabulary) noexcept {
  if (vocabulary == PickleVocabulary::kTorch) return kTorchGlobals;
  return kDataGlobals;
}

bool is_storage_class(PickleClass cls) noexcept {
  return cls >= PickleClass::kFloatStorage && cls <= PickleClass::kBoolStorage;
}

std::string_view opcode_name(unsigned char op) noexcept {
  switch (op) {
    case kMark:
      return "MARK";
    case kStop:
      return "STOP";
    case kBinFloat:
      return "BINFLOAT";
    case kBinInt:
      return "BININT";
    case kBinInt1:
      return "BININT1";
    case kBinInt2:
      return "BININT2";
    case kNoneOp:
      return "NONE";
    case kBinPersId:
      return "BINPERSID";
    case kLong1:
      return "LONG1";
    case kReduce:
      return "REDUCE";
    case kBinString:
      return "BINSTRING";
    case kShortBinString:
      return "SHORT_BINSTRING";
    case kBinUnicode:
      return "BINUNICODE";
    case kBinBytes:
      return "BINBYTES";
    case kShortBinBytes:
      return "SHORT_BINBYTES";
    case kAppend:
      return "APPEND";
    case kBuild:
      return "BUILD";
    case kGlobal:
      return "GLOBAL";
    case kAppends:
      return "APPENDS";
    case kBinGet:
      return "BINGET";
    case kLongBinGet:
      return "LONG_BINGET";
    case kEmptyList:
      return "EMPTY_LIST";
    case kBinPut:
      return "BINPUT";
    case kLongBinPut:
      return "LONG_BINPUT";
    case kSetItem:
      return "SETITEM";
    case kTuple:
      return "TUPLE";
    case kSetItems:
      return "SETITEMS";
    case kEmptyDict:
      return "EMPTY_DICT";
    case kEmptyTuple:
      return "EMPTY_TUPLE";
    case kProto:
      return "PROTO";
    case kNewObj:
      return "NEWOBJ";
    case kTuple1:
      return "TUPLE1";
    case kTuple2:
      return "TUPLE2";
    case kTuple3:
      return "TUPLE3";
    case kNewTrue:
      return "NEWTRUE";
    case kNewFalse:
      return "NEWFALSE";
    default:
      return {};
  }
}

std::string hex_byte(unsigned char byte) {
  constexpr std::string_view kDigits = "0123456789abcdef";
  std::string text = "0x";
  text += kDigits[byte >> 4U];
  text += kDigits[byte & 0x0FU];
  return text;
}

// `0x58 ('X')` for a printable byte, `0xff` otherwise.
std::string describe_byte(unsigned char byte) {
  std::string text = hex_byte(byte);
  if (byte >= 0x20 && byte < 0x7F)
    text.append(" ('").append(1, static_cast<char>(byte)).append("')");
  return text;
}

std::string byte_at(std::int64_t offset) { return " at byte " + std::to_string(offset); }

}  // namespace

std::string pickle_created_at(std::int64_t offset) {
  return " created at byte " + std::to_string(offset);
}

std::string_view pickle_class_name(PickleClass cls) noexcept {
  switch (cls) {
    case PickleClass::kReconstruct:
      return "numpy.core.multiarray._reconstruct";
    case PickleClass::kNdarray:
      return "numpy.ndarray";
    case PickleClass::kDtype:
      return "numpy.dtype";
    case PickleClass::kCsrMatrix:
      return "scipy.sparse.csr.csr_matrix";
    case PickleClass::kDefaultDict:
      return "collections.defaultdict";
    case PickleClass::kList:
      return "__builtin__.list";
    case PickleClass::kCopyRegReconstructor:
      return "copy_reg._reconstructor";
    case PickleClass::kObject:
      return "__builtin__.object";
    case PickleClass::kOrderedDict:
      return "collections.OrderedDict";
    case PickleClass::kRebuildTensor:
      return "torch._utils._rebuild_tensor_v2";
    case PickleClass::kRebuildParameter:
      return "torch._utils._rebuild_parameter";
    case PickleClass::kFloatStorage:
      return "torch.FloatStorage";
    case PickleClass::kDoubleStorage:
      return "torch.DoubleStorage";
    case PickleClass::kHalfStorage:
      return "torch.HalfStorage";
    case PickleClass::kBFloat16Storage:
      return "torch.BFloat16Storage";
    case PickleClass::kLongStorage:
      return "torch.LongStorage";
    case PickleClass::kIntStorage:
      return "torch.IntStorage";
    case PickleClass::kBoolStorage:
      return "torch.BoolStorage";
    case PickleClass::kStorageRef:
      return "storage reference (BINPERSID)";
    case PickleClass::kNone:
      break;
  }
  return "object";
}

// Runs the opcodes of a pickle into its value arena. Lives only during `Pickle`'s constructor.
class PickleParser {
 public:
  PickleParser(Pickle& pickle, const Limits& limits, PickleVocabulary vocabulary)
      : p_(pickle),
        limits_(limits),
        vocabulary_(vocabulary),
        data_(pickle.bytes_),
        size_(static_cast<std::int64_t>(pickle.bytes_.size())) {}

  PickleId run();

 private:
  struct Mark {
    std::size_t stack_size;
    std::int64_t offset;
  };

  [[noreturn]] void fail(std::string_view message) const { p_.fail(message); }

  [[nodiscard]] unsigned char byte(std::int64_t offset) const {
    return static_cast<unsigned char>(data_[static_cast<std::size_t>(offset)]);
  }

  // Throws unless `count` argument bytes of the opcode at `at` remain.
  void need(std::int64_t at, unsigned char op, std::int64_t count) const {
    const std::int64_t remain = size_ - pos_;
    if (remain < count) {
      fail("truncated file: " + std::string(opcode_name(op)) + byte_at(at) + " needs " +
           std::to_string(count) + " more byte(s), " + std::to_string(remain) + " remain");
    }
  }

  std::uint64_t read_unsigned(std::int64_t at, unsigned char op, int count) {
    need(at, op, count);
    std::uint64_t value = 0;
    for (int i = count - 1; i >= 0; --i) value = (value << 8U) | byte(pos_ + i);
    pos_ += count;
    return value;
  }

  [[nodiscard]] std::size_t floor() const noexcept {
    return marks_.empty() ? 0 : marks_.back().stack_size;
  }

  // Throws unless `count` values lie above the innermost MARK.
  void require(std::int64_t at, unsigned char op, std::size_t count) const {
    const std::size_t available = stack_.size() - floor();
    if (available < count) {
      fail(std::string(opcode_name(op)) + byte_at(at) + " needs " + std::to_string(count) +
           " value(s) on the stack, found " + std::to_string(available));
    }
  }

  void push(PickleId id, std::int64_t at) {
    if (stack_.size() >= kMaxStackSize) {
      fail("the stack holds more than " + std::to_string(kMaxStackSize) + " values" + byte_at(at));
    }
    stack_.push_back(id);
  }

  PickleId pop() {
    const PickleId id = stack_.back();
    stack_.pop_back();
    return id;
  }

  // Removes the innermost MARK and returns the stack size it recorded.
  std::size_t pop_mark(std::int64_t at, unsigned char op) {
    if (marks_.empty()) fail(std::string(opcode_name(op)) + byte_at(at) + " has no matching MARK");
    const std::size_t start = marks_.back().stack_size;
    marks_.pop_back();
    return start;
  }

  PickleId add(PickleKind kind, std::int64_t at, std::int64_t integer = 0) {
    PickleValue value;
    value.kind = kind;
    value.offset = at;
    value.integer = integer;
    p_.values_.push_back(value);
    return static_cast<PickleId>(p_.values_.size() - 1);
  }

  PickleId add_container(PickleKind kind, std::int64_t at, std::vector<PickleId> items) {
    p_.containers_.push_back(std::move(items));
    return add(kind, at, static_cast<std::int64_t>(p_.containers_.size() - 1));
  }

  PickleId add_object(PickleClass cls, std::int64_t at, PickleId args) {
    p_.objects_.push_back({args, -1});
    const PickleId id =
        add(PickleKind::kObject, at, static_cast<std::int64_t>(p_.objects_.size() - 1));
    p_.values_.back().cls = cls;
    return id;
  }

  std::vector<PickleId>& container(PickleId id) {
    return p_.containers_[static_cast<std::size_t>(p_.value(id).integer)];
  }

  [[nodiscard]] bool is_global(PickleId id, PickleClass cls) const {
    const PickleValue& value = p_.value(id);
    return value.kind == PickleKind::kGlobal && value.cls == cls;
  }

  [[nodiscard]] bool is_object(PickleId id, PickleClass cls) const {
    const PickleValue& value = p_.value(id);
    return value.kind == PickleKind::kObject && value.cls == cls;
  }

  // BINPERSID: the persistent id on the stack, `('storage', class, key, location, numel)`,
  // becomes a storage reference. Its key, class and size are checked against the archive by the
  // torch reader; the location (`cpu`, `cuda:0`) is ignored.
  void persistent_id(std::int64_t at) {
    if (vocabulary_ != PickleVocabulary::kTorch) {
      fail("BINPERSID" + byte_at(at) + ": a persistent id belongs in a torch.save file, not here");
    }
    require(at, kBinPersId, 1);
    const PickleId id = pop();
    const PickleValue& value = p_.value(id);
    if (value.kind != PickleKind::kTuple || p_.items(id).size() != 5) {
      fail("BINPERSID" + byte_at(at) +
           " expects a tuple ('storage', class, key, location, numel), got " + p_.describe_at(id));
    }
    const auto items = p_.items(id);
    const auto bad = [&](std::size_t position, std::string_view expected) {
      fail("BINPERSID" + byte_at(at) + ": item " + std::to_string(position + 1) +
           " of the persistent id is " + p_.describe_at(items[position]) + ", expected " +
           std::string(expected));
    };
    if (p_.bytes(items[0]) != "storage" || p_.value(items[0]).kind != PickleKind::kString) {
      bad(0, "the string 'storage'");
    }
    if (p_.value(items[1]).kind != PickleKind::kGlobal ||
        !is_storage_class(p_.value(items[1]).cls)) {
      bad(1, "a storage class (torch.FloatStorage, ...)");
    }
    if (p_.value(items[2]).kind != PickleKind::kString) bad(2, "a string (the storage key)");
    if (p_.value(items[3]).kind != PickleKind::kString) bad(3, "a string (the location)");
    if (p_.value(items[4]).kind != PickleKind::kInt || p_.value(items[4]).integer < 0) {
      bad(4, "a non-negative int (the element count)");
    }
    push(add_object(PickleClass::kStorageRef, at, id), at);
  }

  void string_value(std::int64_t at, unsigned char op, std::int64_t length) {
    const std::int64_t remain = size_ - pos_;
    if (length > remain) {
      fail(std::string(opcode_name(op)) + byte_at(at) + " declares " + std::to_string(length) +
           " bytes, but only " + std::to_string(remain) + " remain");
    }
    const PickleId id = add(PickleKind::kString, at, pos_);
    p_.values_.back().length = length;
    pos_ += length;
    push(id, at);
  }

  void tuple_of_top(std::int64_t at, std::size_t count) {
    const auto first = stack_.end() - static_cast<std::ptrdiff_t>(count);
    std::vector<PickleId> items(first, stack_.end());
    stack_.erase(first, stack_.end());
    push(add_container(PickleKind::kTuple, at, std::move(items)), at);
  }

  // Moves the values above the MARK that `op` closes into the list or dict just below it.
  void extend_from_mark(std::int64_t at, unsigned char op, PickleKind kind) {
    const std::size_t start = pop_mark(at, op);
    const std::string what = kind == PickleKind::kList ? "list" : "dict";
    if (start == 0 || start - 1 < floor()) {
      fail(std::string(opcode_name(op)) + byte_at(at) + " has no " + what + " below its MARK");
    }
    const PickleId target = stack_[start - 1];
    if (p_.value(target).kind != kind) {
      fail(std::string(opcode_name(op)) + byte_at(at) + " expects a " + what +
           " below its MARK, got " + p_.describe_at(target));
    }
    const std::size_t count = stack_.size() - start;
    if (kind == PickleKind::kDict && count % 2 != 0) {
      fail(std::string(opcode_name(op)) + byte_at(at) + " has an odd number (" +
           std::to_string(count) + ") of keys and values after its MARK");
    }
    auto& items = container(target);
    items.insert(items.end(), stack_.begin() + static_cast<std::ptrdiff_t>(start), stack_.end());
    stack_.resize(start);
  }

  void memo_put(std::int64_t at, unsigned char op, std::uint64_t index) {
    require(at, op, 1);
    // A pickler numbers memo entries 0, 1, 2, ... so an index can never exceed the opcodes
    // read so far; the bound keeps the memo's size tied to the file's.
    if (index > static_cast<std::uint64_t>(at)) {
      fail(std::string(opcode_name(op)) + byte_at(at) + " uses memo index " +
           std::to_string(index) + ", more than the " + std::to_string(at) +
           " bytes before it allow");
    }
    if (index >= memo_.size()) memo_.resize(static_cast<std::size_t>(index) + 1, -1);
    memo_[static_cast<std::size_t>(index)] = stack_.back();
  }

  void memo_get(std::int64_t at, unsigned char op, std::uint64_t index) {
    if (index >= memo_.size() || memo_[static_cast<std::size_t>(index)] < 0) {
      fail(std::string(opcode_name(op)) + byte_at(at) + " refers to memo entry " +
           std::to_string(index) + ", which was never stored");
    }
    push(memo_[static_cast<std::size_t>(index)], at);
  }

  std::string_view read_line(std::int64_t at, std::string_view what) {
    const std::int64_t remain = size_ - pos_;
    const std::int64_t window = std::min(remain, kMaxGlobalLength + 1);
    const std::string_view text =
        data_.substr(static_cast<std::size_t>(pos_), static_cast<std::size_t>(window));
    const std::size_t end = text.find('\n');
    if (end == std::string_view::npos) {
      if (window == remain) {
        fail("truncated file: the " + std::string(what) + " of GLOBAL" + byte_at(at) +
             " has no terminating newline");
      }
      fail("GLOBAL" + byte_at(at) + ": the " + std::string(what) + " is longer than " +
           std::to_string(kMaxGlobalLength) + " bytes");
    }
    pos_ += static_cast<std::int64_t>(end) + 1;
    return text.substr(0, end);
  }

  void global(std::int64_t at) {
    const std::string_view module = read_line(at, "module name");
    const std::string_view name = read_line(at, "class name");
    const auto globals = allowed_globals(vocabulary_);
    for (const auto& allowed : globals) {
      if (allowed.module == module && allowed.name == name) {
        const PickleId id = add(PickleKind::kGlobal, at);
        p_.values_.back().cls = allowed.cls;
        push(id, at);
        return;
      }
    }
    std::string expected;
    for (const auto& allowed : globals) {
      if (!expected.empty()) expected += ", ";
      expected.append(allowed.module).append(".").append(allowed.name);
    }
    if (vocabulary_ == PickleVocabulary::kTorch) {
      expected +=
          " (a torch.save file is read as a state dict: save model.state_dict(), not the "
          "model)";
    }
    fail("global " + quoted_printable(std::string(module) + "." + std::string(name)) + byte_at(at) +
         " is not allowed: expected one of " + expected);
  }

  // Throws unless `args` holds `count` items.
  std::span<const PickleId> arguments(std::int64_t at, PickleClass callee, PickleId args,
                                      std::size_t count) const {
    const auto items = p_.items(args);
    if (items.size() != count) {
      fail(std::string(pickle_class_name(callee)) + " called" + byte_at(at) + " expects " +
           std::to_string(count) + " argument(s), got " + std::to_string(items.size()));
    }
    return items;
  }

  void expect_argument(std::int64_t at, PickleClass callee, std::size_t position, PickleId arg,
                       bool ok, std::string_view expected) const {
    if (!ok) {
      fail(std::string(pickle_class_name(callee)) + " called" + byte_at(at) + ": argument " +
           std::to_string(position + 1) + " is " + p_.describe_at(arg) + ", expected " +
           std::string(expected));
    }
  }

  void reduce(std::int64_t at) {
    require(at, kReduce, 2);
    const PickleId args = pop();
    const PickleId callable = pop();
    const PickleValue& target = p_.value(callable);
    if (target.kind != PickleKind::kGlobal) {
      fail("REDUCE" + byte_at(at) + " expects a global to call, got " + p_.describe_at(callable));
    }
    if (p_.value(args).kind != PickleKind::kTuple) {
      fail("REDUCE" + byte_at(at) + " expects a tuple of arguments, got " + p_.describe_at(args));
    }
    const PickleClass callee = target.cls;
    switch (callee) {
      case PickleClass::kReconstruct: {
        const auto items = arguments(at, callee, args, 3);
        expect_argument(at, callee, 0, items[0], is_global(items[0], PickleClass::kNdarray),
                        "numpy.ndarray");
        push(add_object(PickleClass::kNdarray, at, args), at);
        return;
      }
      case PickleClass::kDtype: {
        const auto items = arguments(at, callee, args, 3);
        expect_argument(at, callee, 0, items[0], p_.value(items[0]).kind == PickleKind::kString,
                        "a string");
        push(add_object(PickleClass::kDtype, at, args), at);
        return;
      }
      case PickleClass::kDefaultDict: {
        const auto items = arguments(at, callee, args, 1);
        expect_argument(at, callee, 0, items[0], is_global(items[0], PickleClass::kList),
                        "__builtin__.list");
        const PickleId dict = add_container(PickleKind::kDict, at, {});
        p_.values_.back().cls = PickleClass::kDefaultDict;
        push(dict, at);
        return;
      }
      case PickleClass::kCopyRegReconstructor: {
        const auto items = arguments(at, callee, args, 3);
        expect_argument(at, callee, 0, items[0], is_global(items[0], PickleClass::kCsrMatrix),
                        "scipy.sparse.csr.csr_matrix");
        expect_argument(at, callee, 1, items[1], is_global(items[1], PickleClass::kObject),
                        "__builtin__.object");
        expect_argument(at, callee, 2, items[2], p_.value(items[2]).kind == PickleKind::kNone,
                        "None");
        push(add_object(PickleClass::kCsrMatrix, at, args), at);
        return;
      }
      case PickleClass::kOrderedDict: {
        arguments(at, callee, args, 0);
        const PickleId dict = add_container(PickleKind::kDict, at, {});
        p_.values_.back().cls = PickleClass::kOrderedDict;
        push(dict, at);
        return;
      }
      case PickleClass::kRebuildTensor: {
        // (storage, storage_offset, size, stride, requires_grad, backward_hooks[, metadata])
        const auto given = p_.items(args).size();
        const auto items = arguments(at, callee, args, given == 7 ? 7 : 6);
        expect_argument(at, callee, 0, items[0], is_object(items[0], PickleClass::kStorageRef),
                        "a storage reference (BINPERSID)");
        expect_argument(at, callee, 1, items[1], p_.value(items[1]).kind == PickleKind::kInt,
                        "an int (the storage offset)");
        expect_argument(at, callee, 2, items[2], p_.value(items[2]).kind == PickleKind::kTuple,
                        "a tuple (the size)");
        expect_argument(at, callee, 3, items[3], p_.value(items[3]).kind == PickleKind::kTuple,
                        "a tuple (the stride)");
        expect_argument(at, callee, 4, items[4], p_.value(items[4]).kind == PickleKind::kBool,
                        "a bool (requires_grad)");
        expect_argument(at, callee, 5, items[5], p_.value(items[5]).kind == PickleKind::kDict,
                        "a dict (backward hooks)");
        push(add_object(PickleClass::kRebuildTensor, at, args), at);
        return;
      }
      case PickleClass::kRebuildParameter: {
        // (data, requires_grad, backward_hooks): the parameter is its tensor here.
        const auto items = arguments(at, callee, args, 3);
        expect_argument(at, callee, 0, items[0], is_object(items[0], PickleClass::kRebuildTensor),
                        "a tensor (torch._utils._rebuild_tensor_v2)");
        expect_argument(at, callee, 1, items[1], p_.value(items[1]).kind == PickleKind::kBool,
                        "a bool (requires_grad)");
        expect_argument(at, callee, 2, items[2], p_.value(items[2]).kind == PickleKind::kDict,
                        "a dict (backward hooks)");
        push(items[0], at);
        return;
      }
      default:
        fail("REDUCE" + byte_at(at) + " cannot call " + std::string(pickle_class_name(callee)));
    }
  }

  void new_object(std::int64_t at) {
    require(at, kNewObj, 2);
    const PickleId args = pop();
    const PickleId cls = pop();
    if (!is_global(cls, PickleClass::kCsrMatrix)) {
      fail("NEWOBJ" + byte_at(at) + " can only create a scipy.sparse.csr.csr_matrix, got " +
           p_.describe_at(cls));
    }
    if (p_.value(args).kind != PickleKind::kTuple || !p_.items(args).empty()) {
      fail("NEWOBJ" + byte_at(at) + " expects an empty tuple of arguments, got " +
           p_.describe_at(args));
    }
    push(add_object(PickleClass::kCsrMatrix, at, args), at);
  }

  void build(std::int64_t at) {
    require(at, kBuild, 2);
    const PickleId state = pop();
    const PickleId target = stack_.back();
    const PickleValue& value = p_.value(target);
    if (value.kind == PickleKind::kDict && value.cls == PickleClass::kOrderedDict) {
      // A state dict's `_metadata` attribute (per-module versions): not needed, not kept.
      return;
    }
    if (value.kind != PickleKind::kObject) {
      fail("BUILD" + byte_at(at) + " expects an object below the state, got " +
           p_.describe_at(target));
    }
    auto& record = p_.objects_[static_cast<std::size_t>(value.integer)];
    if (record.state >= 0) {
      fail("BUILD" + byte_at(at) + " sets the state of the " +
           std::string(pickle_class_name(value.cls)) + pickle_created_at(value.offset) + " twice");
    }
    record.state = state;
  }

  Pickle& p_;
  const Limits& limits_;
  PickleVocabulary vocabulary_;
  std::string_view data_;
  std::int64_t size_;
  std::int64_t pos_ = 0;
  std::vector<PickleId> stack_;
  std::vector<Mark> marks_;
  std::vector<PickleId> memo_;
};

PickleId PickleParser::run() {
  if (size_ == 0) fail("empty file: expected a protocol-2 or -3 pickle");
  if (byte(0) != kProto) {
    fail("not a protocol-2 or -3 pickle: expected PROTO (0x80) at byte 0, got " +
         describe_byte(byte(0)));
  }
  while (true) {
    if (pos_ >= size_) {
      fail("truncated file: no STOP opcode before the end" + byte_at(size_));
    }
    const std::int64_t at = pos_;
    const unsigned char op = byte(pos_++);
    switch (op) {
      case kProto: {
        const std::uint64_t version = read_unsigned(at, op, 1);
        if (at != 0) fail("PROTO" + byte_at(at) + " is not at the start of the file");
        if (version != 2 && version != 3) {
          fail("unsupported pickle protocol " + std::to_string(version) + byte_at(1) +
               ", expected 2 or 3");
        }
        break;
      }
      case kStop: {
        if (!marks_.empty()) {
          fail("STOP" + byte_at(at) + " with the MARK" + byte_at(marks_.back().offset) +
               " still open");
        }
        if (stack_.size() != 1) {
          fail("STOP" + byte_at(at) + " leaves " + std::to_string(stack_.size()) +
               " value(s) on the stack, expected 1");
        }
        if (pos_ != size_) {
          fail(std::to_string(size_ - pos_) + " trailing byte(s) after STOP" + byte_at(at));
        }
        return stack_.back();
      }
      case kMark:
        if (static_cast<std::int64_t>(marks_.size()) >= limits_.max_nesting_depth) {
          p_.fail_limit("MARK" + byte_at(at) + " nests deeper than " +
                        std::to_string(limits_.max_nesting_depth) +
                        " (raise it with --max-nesting-depth)");
        }
        marks_.push_back({stack_.size(), at});
        break;
      case kNoneOp:
        push(add(PickleKind::kNone, at), at);
        break;
      case kNewTrue:
        push(add(PickleKind::kBool, at, 1), at);
        break;
      case kNewFalse:
        push(add(PickleKind::kBool, at, 0), at);
        break;
      case kBinInt1:
        push(add(PickleKind::kInt, at, static_cast<std::int64_t>(read_unsigned(at, op, 1))), at);
        break;
      case kBinInt2:
        push(add(PickleKind::kInt, at, static_cast<std::int64_t>(read_unsigned(at, op, 2))), at);
        break;
      case kBinInt: {
        const auto raw = static_cast<std::uint32_t>(read_unsigned(at, op, 4));
        push(add(PickleKind::kInt, at, static_cast<std::int32_t>(raw)), at);
        break;
      }
      case kLong1: {
        const auto count = static_cast<int>(read_unsigned(at, op, 1));
        if (count > 8) {
          fail("LONG1" + byte_at(at) + " holds " + std::to_string(count) +
               " bytes, more than the 8 of a 64-bit integer");
        }
        std::uint64_t raw = read_unsigned(at, op, count);
        if (count > 0 && count < 8 && (raw >> (8U * static_cast<unsigned>(count) - 1U)) != 0) {
          raw |= ~std::uint64_t{0} << (8U * static_cast<unsigned>(count));  // sign-extend
        }
        push(add(PickleKind::kInt, at, static_cast<std::int64_t>(raw)), at);
        break;
      }
      case kBinPersId:
        persistent_id(at);
        break;
      case kBinFloat: {
        need(at, op, 8);
        std::uint64_t bits = 0;
        for (int i = 0; i < 8; ++i) bits = (bits << 8U) | byte(pos_ + i);  // big-endian
        pos_ += 8;
        const PickleId id = add(PickleKind::kFloat, at);
        p_.values_.back().real = std::bit_cast<double>(bits);
        push(id, at);
        break;
      }
      case kShortBinString:
      case kShortBinBytes:
        string_value(at, op, static_cast<std::int64_t>(read_unsigned(at, op, 1)));
        break;
      case kBinUnicode:
      case kBinBytes:
        string_value(at, op, static_cast<std::int64_t>(read_unsigned(at, op, 4)));
        break;
      case kBinString: {
        const auto length =
            static_cast<std::int32_t>(static_cast<std::uint32_t>(read_unsigned(at, op, 4)));
        if (length < 0) {
          fail("BINSTRING" + byte_at(at) + " declares a negative length " + std::to_string(length));
        }
        string_value(at, op, length);
        break;
      }
      case kEmptyTuple:
        push(add_container(PickleKind::kTuple, at, {}), at);
        break;
      case kTuple1:
      case kTuple2:
      case kTuple3: {
        const std::size_t count = static_cast<std::size_t>(op - kTuple1) + 1;
        require(at, op, count);
        tuple_of_top(at, count);
        break;
      }
      case kTuple: {
        const std::size_t start = pop_mark(at, op);
        tuple_of_top(at, stack_.size() - start);
        break;
      }
      case kEmptyList:
        push(add_container(PickleKind::kList, at, {}), at);
        break;
      case kEmptyDict:
        push(add_container(PickleKind::kDict, at, {}), at);
        break;
      case kAppend: {
        require(at, op, 2);
        const PickleId item = pop();
        const PickleId target = stack_.back();
        if (p_.value(target).kind != PickleKind::kList) {
          fail("APPEND" + byte_at(at) + " expects a list below the value, got " +
               p_.describe_at(target));
        }
        container(target).push_back(item);
        break;
      }
      case kAppends:
        extend_from_mark(at, op, PickleKind::kList);
        break;
      case kSetItem: {
        require(at, op, 3);
        const PickleId item = pop();
        const PickleId key = pop();
        const PickleId target = stack_.back();
        if (p_.value(target).kind != PickleKind::kDict) {
          fail("SETITEM" + byte_at(at) + " expects a dict below the key and value, got " +
               p_.describe_at(target));
        }
        auto& items = container(target);
        items.push_back(key);
        items.push_back(item);
        break;
      }
      case kSetItems:
        extend_from_mark(at, op, PickleKind::kDict);
        break;
      case kBinPut:
        memo_put(at, op, read_unsigned(at, op, 1));
        break;
      case kLongBinPut:
        memo_put(at, op, read_unsigned(at, op, 4));
        break;
      case kBinGet:
        memo_get(at, op, read_unsigned(at, op, 1));
        break;
      case kLongBinGet:
        memo_get(at, op, read_unsigned(at, op, 4));
        break;
      case kGlobal:
        global(at);
        break;
      case kReduce:
        reduce(at);
        break;
      case kNewObj:
        new_object(at);
        break;
      case kBuild:
        build(at);
        break;
      default:
        fail("unsupported opcode " + describe_byte(op) + byte_at(at));
    }
  }
}

Pickle::Pickle(std::string bytes, std::string_view reader, std::string path, const Limits& limits,
               PickleVocabulary vocabulary)
    : bytes_(std::move(bytes)), reader_(reader), path_(std::move(path)) {
  PickleParser parser(*this, limits, vocabulary);
  root_ = parser.run();
}

std::span<const PickleId> Pickle::items(PickleId id) const {
  const PickleValue& v = value(id);
  if (v.kind != PickleKind::kList && v.kind != PickleKind::kTuple && v.kind != PickleKind::kDict) {
    return {};
  }
  return containers_[static_cast<std::size_t>(v.integer)];
}

std::string_view Pickle::bytes(PickleId id) const {
  const PickleValue& v = value(id);
  if (v.kind != PickleKind::kString) return {};
  return std::string_view(bytes_).substr(static_cast<std::size_t>(v.integer),
                                         static_cast<std::size_t>(v.length));
}

PickleId Pickle::object_args(PickleId id) const {
  const PickleValue& v = value(id);
  return v.kind == PickleKind::kObject ? objects_[static_cast<std::size_t>(v.integer)].args : -1;
}

PickleId Pickle::object_state(PickleId id) const {
  const PickleValue& v = value(id);
  return v.kind == PickleKind::kObject ? objects_[static_cast<std::size_t>(v.integer)].state : -1;
}

std::string Pickle::describe(PickleId id) const {
  const PickleValue& v = value(id);
  switch (v.kind) {
    case PickleKind::kNone:
      return "None";
    case PickleKind::kBool:
      return "a bool";
    case PickleKind::kInt:
      return "an int";
    case PickleKind::kFloat:
      return "a float";
    case PickleKind::kString:
      return "a string";
    case PickleKind::kList:
      return "a list";
    case PickleKind::kTuple:
      return "a tuple of " + std::to_string(items(id).size()) + " item(s)";
    case PickleKind::kDict:
      if (v.cls == PickleClass::kDefaultDict || v.cls == PickleClass::kOrderedDict) {
        return "a " + std::string(pickle_class_name(v.cls));
      }
      return "a dict";
    case PickleKind::kGlobal:
      return "the global " + std::string(pickle_class_name(v.cls));
    case PickleKind::kObject:
      if (v.cls == PickleClass::kRebuildTensor) return "a tensor";
      return "a " + std::string(pickle_class_name(v.cls));
  }
  return "a value";
}

std::string Pickle::describe_at(PickleId id) const {
  return describe(id) + " (created at byte " + std::to_string(value(id).offset) + ")";
}

void Pickle::fail(std::string_view message) const { throw ParseError(reader_, path_, 0, message); }

void Pickle::fail_limit(std::string_view message) const {
  throw LimitError(reader_, path_, 0, message);
}

Pickle read_pickle(const std::filesystem::path& path, std::string_view reader,
                   const Limits& limits) {
  InputFile file(path, reader);
  // A pickle starts with PROTO: anything else is refused from its first byte, before the rest
  // of a file (or a device without end) is read.
  std::string first(1, '\0');
  first.resize(file.read(first.data(), 1));
  if (first != "\x80") return Pickle(std::move(first), reader, file.path(), limits);
  std::string bytes = first + read_bounded_file(file, limits.max_file_bytes, Content::kBinary);
  return Pickle(std::move(bytes), reader, file.path(), limits);
}

}  // namespace maskgat::detail
