#include "io/detail/pickle_writer.hpp"

namespace maskgat::detail {
namespace {

void little_endian(std::string& out, std::uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) {
    out += static_cast<char>((value >> (8U * static_cast<unsigned>(i))) & 0xFFU);
  }
}

}  // namespace

PickleWriter::PickleWriter() : bytes_("\x80\x02", 2) {}

PickleWriter& PickleWriter::op(char opcode) {
  bytes_ += opcode;
  return *this;
}

PickleWriter& PickleWriter::integer(std::int64_t value) {
  if (value >= 0 && value < 256) {
    bytes_ += 'K';
    little_endian(bytes_, static_cast<std::uint64_t>(value), 1);
  } else if (value >= 0 && value < 65536) {
    bytes_ += 'M';
    little_endian(bytes_, static_cast<std::uint64_t>(value), 2);
  } else if (value >= -(std::int64_t{1} << 31) && value < (std::int64_t{1} << 31)) {
    bytes_ += 'J';
    little_endian(bytes_, static_cast<std::uint64_t>(value), 4);
  } else {
    bytes_ += "\x8a\x08";
    little_endian(bytes_, static_cast<std::uint64_t>(value), 8);
  }
  return *this;
}

PickleWriter& PickleWriter::text(const std::string& value) {
  bytes_ += 'X';
  little_endian(bytes_, value.size(), 4);
  bytes_ += value;
  return *this;
}

PickleWriter& PickleWriter::global(const std::string& module, const std::string& name) {
  bytes_ += 'c' + module + '\n' + name + '\n';
  return *this;
}

PickleWriter& PickleWriter::ints(const std::vector<std::int64_t>& values) {
  op('(');
  for (const std::int64_t value : values) integer(value);
  return op('t');
}

PickleWriter& PickleWriter::tensor(const TorchTensorRecord& record) {
  std::vector<std::int64_t> stride = record.stride;
  if (stride.empty()) {
    stride.assign(record.shape.size(), 1);
    for (std::size_t d = record.shape.size(); d-- > 1;) stride[d - 1] = stride[d] * record.shape[d];
  }
  if (record.parameter) global("torch._utils", "_rebuild_parameter").op('(');
  global("torch._utils", "_rebuild_tensor_v2").op('(');
  // The persistent id ('storage', class, key, location, numel), then BINPERSID.
  op('(').text("storage").global("torch", record.storage_class).text(record.key);
  text(record.location).integer(record.numel).op('t').op('Q');
  integer(record.offset).ints(record.shape).ints(stride).op('\x89');  // requires_grad False
  global("collections", "OrderedDict").op(')').op('R');               // no backward hooks
  if (record.metadata) op('}');
  op('t').op('R');
  if (record.parameter) {
    op('\x88').global("collections", "OrderedDict").op(')').op('R').op('t').op('R');
  }
  return *this;
}

PickleWriter& PickleWriter::state_dict(const std::vector<TorchTensorRecord>& tensors) {
  global("collections", "OrderedDict").op(')').op('R').op('(');
  for (const auto& record : tensors) text(record.name).tensor(record);
  op('u');
  // BUILD with the state {'_metadata': OrderedDict({'': {'version': 1}})}.
  op('}').text("_metadata").global("collections", "OrderedDict").op(')').op('R');
  text("").op('}').text("version").integer(1).op('s').op('s').op('s');
  return op('b');
}

std::string PickleWriter::finish() { return bytes_ + '.'; }

}  // namespace maskgat::detail
