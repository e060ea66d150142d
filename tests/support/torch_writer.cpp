#include "support/torch_writer.hpp"

namespace maskgat::test {

std::string state_dict_pickle(const std::vector<detail::TorchTensorRecord>& tensors) {
  return detail::PickleWriter().state_dict(tensors).finish();
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
