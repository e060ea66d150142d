#pragma once
// Writing small torch.save files for the reader tests: the pickle through the library's
// `PickleWriter` (every field of a tensor record can be set to anything), the storages and side
// members zipped through libzip, stored or deflated.

#include <string>
#include <vector>

#include "io/detail/pickle_writer.hpp"
#include "support/npz_writer.hpp"

namespace maskgat::test {

// The pickle of an OrderedDict of `tensors`, as torch.save writes a state dict.
std::string state_dict_pickle(const std::vector<detail::TorchTensorRecord>& tensors);

// A torch.save archive: `<folder>/data.pkl`, then `storages` as `<folder>/data/<key>`, then
// `<folder>/byteorder` (when not empty) and `<folder>/version`.
std::string torch_zip(const std::string& folder, const std::string& pickle, const Members& storages,
                      const std::string& byteorder = "little", bool deflate = false);

}  // namespace maskgat::test
