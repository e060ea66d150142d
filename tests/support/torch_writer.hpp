#pragma once
// Writing small torch.save files for the reader tests, byte by byte as PyTorch writes them: a
// protocol-2 pickle of an OrderedDict of tensors (each `_rebuild_tensor_v2` of a persistent-id
// storage reference), raw storages and the archive's side members, zipped through libzip.
// Every part can be changed to make a file hostile.

#include <cstdint>
#include <string>
#include <vector>

#include "support/npz_writer.hpp"

namespace maskgat::test {

// One tensor of the pickled state dict.
struct TorchTensorSpec {
  std::string name;
  std::string storage_class = "FloatStorage";  // torch.<storage_class>
  std::string key;                             // the storage's member data/<key>
  std::int64_t numel = 0;                      // the storage's element count
  std::int64_t offset = 0;
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> stride;  // empty: contiguous
  std::string location = "cpu";
  bool parameter = false;  // wrapped in torch._utils._rebuild_parameter
};

// Protocol-2 pickle writing, one opcode at a time.
class PickleBytes {
 public:
  PickleBytes();
  PickleBytes& op(char opcode);
  PickleBytes& integer(std::int64_t value);     // BININT1, BININT2, BININT or LONG1
  PickleBytes& text(const std::string& value);  // BINUNICODE
  PickleBytes& global(const std::string& module, const std::string& name);
  PickleBytes& ints(const std::vector<std::int64_t>& values);  // a tuple of ints
  PickleBytes& tensor(const TorchTensorSpec& spec);  // _rebuild_tensor_v2(...) on the stack
  std::string finish();                              // STOP
  std::string bytes;
};

// The pickle of an OrderedDict of `tensors` with a `_metadata` state, as torch.save writes a
// state dict.
std::string state_dict_pickle(const std::vector<TorchTensorSpec>& tensors);

// A torch.save archive: `<folder>/data.pkl`, then `storages` as `<folder>/data/<key>`, then
// `<folder>/byteorder` (when not empty) and `<folder>/version`.
std::string torch_zip(const std::string& folder, const std::string& pickle, const Members& storages,
                      const std::string& byteorder = "little", bool deflate = false);

}  // namespace maskgat::test
