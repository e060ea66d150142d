// Fuzz target: the torch.save reader, its zip container, its pickle in the torch vocabulary and
// the tensors it rebuilds from storages (`read_state_dict`), and the same bytes as a bare
// data.pkl through the pickle reader alone.

#include "fuzz/fuzz_input.hpp"
#include "io/detail/pickle.hpp"
#include "maskgat/io/torch_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace maskgat;
  TorchReadOptions options;
  options.limits.max_file_bytes = 1 << 24;      // members inflate within libFuzzer's memory limit
  options.limits.max_array_elements = 1 << 22;  // and so do the tensors they rebuild
  fuzz::accept_errors([&] {
    (void)detail::Pickle(std::string(fuzz::as_text(data, size)), "torch", "fuzz.pkl",
                         options.limits, detail::PickleVocabulary::kTorch);
  });
  return fuzz::read_input(data, size, "fuzz.pt",
                          [&](const auto& path) { (void)read_state_dict(path, options); });
}
