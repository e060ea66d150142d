#pragma once
// Writing the pickle of a torch.save file (protocol 2), one opcode at a time, as PyTorch writes a
// state dict: an OrderedDict of tensors, each `torch._utils._rebuild_tensor_v2` of a storage
// named by a persistent id. `write_state_dict` saves with it; the reader tests build hostile
// files with it, so every field of a tensor record can be set to anything.

// Internal (this header is not installed); MASKGAT_EXPORT only so that the unit tests can call
// it in a shared build.

#include <cstdint>
#include <string>
#include <vector>

#include "maskgat/export.hpp"

namespace maskgat::detail {

// One tensor of a pickled state dict.
struct TorchTensorRecord {
  std::string name;
  std::string storage_class = "FloatStorage";  // torch.<storage_class>
  std::string key;                             // the storage's member data/<key>
  std::int64_t numel = 0;                      // the storage's element count
  std::int64_t offset = 0;
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> stride;  // empty: contiguous
  std::string location = "cpu";
  bool parameter = false;  // wrapped in torch._utils._rebuild_parameter
  bool metadata = false;   // the optional seventh argument (an empty dict), as newer PyTorch
};

class MASKGAT_EXPORT PickleWriter {
 public:
  PickleWriter();  // PROTO 2
  PickleWriter& op(char opcode);
  PickleWriter& integer(std::int64_t value);     // BININT1, BININT2, BININT, LONG1
  PickleWriter& text(const std::string& value);  // BINUNICODE
  PickleWriter& global(const std::string& module, const std::string& name);  // GLOBAL
  PickleWriter& ints(const std::vector<std::int64_t>& values);               // a tuple of ints
  PickleWriter& tensor(const TorchTensorRecord& record);  // the tensor, on the stack
  // An OrderedDict of `tensors` with a `_metadata` state, as torch.save writes a state dict.
  PickleWriter& state_dict(const std::vector<TorchTensorRecord>& tensors);
  [[nodiscard]] std::string finish();  // STOP
 private:
  std::string bytes_;
};

}  // namespace maskgat::detail
