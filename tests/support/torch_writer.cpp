#include "support/torch_writer.hpp"

#include <cstring>

namespace maskgat::test {
namespace {

void little_endian(std::string& out, std::uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i)
    out += static_cast<char>((value >> (8U * static_cast<unsigned>(i))) & 0xFFU);
}

}  // namespace

PickleBytes::PickleBytes() { bytes = std::string("\x80\x02", 2); }

PickleBytes& PickleBytes::op(char opcode) {
  bytes += opcode;
  return *this;
}

PickleBytes& PickleBytes::integer(std::int64_t value) {
  if (value >= 0 && value < 256) {
    bytes += 'K';
    little_endian(bytes, static_cast<std::uint64_t>(value), 1);
  } else if (value >= 0 && value < 65536) {
    bytes += 'M';
    little_endian(bytes, static_cast<std::uint64_t>(value), 2);
  } else if (value >= -(std::int64_t{1} << 31) && value < (std::int64_t{1} << 31)) {
    bytes += 'J';
    little_endian(bytes, static_cast<std::uint64_t>(value), 4);
  } else {
    bytes += '\x8a';
    bytes += '\x08';
    little_endian(bytes, static_cast<std::uint64_t>(value), 8);
  }
  return *this;
}

PickleBytes& PickleBytes::text(const std::string& value) {
  bytes += 'X';
  little_endian(bytes, value.size(), 4);
  bytes += value;
  return *this;
}

PickleBytes& PickleBytes::global(const std::string& module, const std::string& name) {
  bytes += 'c' + module + '\n' + name + '\n';
  return *this;
}

PickleBytes& PickleBytes::ints(const std::vector<std::int64_t>& values) {
  op('(');
  for (const std::int64_t value : values) integer(value);
  return op('t');
}

PickleBytes& PickleBytes::tensor(const TorchTensorSpec& spec) {
  std::vector<std::int64_t> stride = spec.stride;
  if (stride.empty()) {
    stride.assign(spec.shape.size(), 1);
    for (std::size_t d = spec.shape.size(); d-- > 1;) stride[d - 1] = stride[d] * spec.shape[d];
  }
  if (spec.parameter) global("torch._utils", "_rebuild_parameter").op('(');
  global("torch._utils", "_rebuild_tensor_v2").op('(');
  op('(').text("storage").global("torch", spec.storage_class).text(spec.key).text(spec.location);
  integer(spec.numel).op('t').op('Q');
  integer(spec.offset).ints(spec.shape).ints(stride).op('\x89');
  global("collections", "OrderedDict").op(')').op('R');
  op('t').op('R');
  if (spec.parameter) {
    op('\x88').global("collections", "OrderedDict").op(')').op('R').op('t').op('R');
  }
  return *this;
}

std::string PickleBytes::finish() { return bytes + '.'; }

std::string state_dict_pickle(const std::vector<TorchTensorSpec>& tensors) {
  PickleBytes p;
  p.global("collections", "OrderedDict").op(')').op('R').op('(');
  for (const auto& spec : tensors) p.text(spec.name).tensor(spec);
  p.op('u');
  // state: {'_metadata': OrderedDict({'': {'version': 1}})}
  p.op('}').text("_metadata").global("collections", "OrderedDict").op(')').op('R');
  p.text("").op('}').text("version").integer(1).op('s').op('s').op('s').op('b');
  return p.finish();
}

std::string torch_zip(const std::string& folder, const std::string& pickle, const Members& storages,
                      const std::string& byteorder, bool deflate) {
  Members members{{folder + "/data.pkl", pickle}};
  for (const auto& [key, content] : storages)
    members.emplace_back(folder + "/data/" + key, content);
  if (!byteorder.empty()) members.emplace_back(folder + "/byteorder", byteorder);
  members.emplace_back(folder + "/version", "3\n");
  return zip_bytes(members, deflate);
}

}  // namespace maskgat::test
