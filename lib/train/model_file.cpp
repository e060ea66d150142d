#include <string>

#include "io/detail/input_file.hpp"
#include "maskgat/core/error.hpp"
#include "maskgat/train/trainer.hpp"

namespace maskgat::train {

nn::ModelSpec read_model_spec(const std::filesystem::path& path) {
  maskgat::detail::InputFile file(path, "model_spec");
  const std::string text = file.read_up_to(static_cast<std::uint64_t>(kMaxSpecBytes) + 1);
  if (static_cast<std::int64_t>(text.size()) > kMaxSpecBytes) {
    throw LimitError("model_spec", path.string(), 0,
                     "the file is over " + std::to_string(kMaxSpecBytes) +
                         " bytes, the most a model spec may hold");
  }
  return nn::parse_model_spec(text, path.string());
}

}  // namespace maskgat::train
