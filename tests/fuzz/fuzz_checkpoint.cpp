// Fuzz target: the checkpoint reader, then building the model it describes. Each input is read
// as it is, and again with its header and checksum repaired (version 1 or 2 by the input's
// length, the payload's size and FNV-1a 64 checksum), so that mutations reach both versions'
// payload parsers instead of stopping at the checksum.

#include <string>

#include "fuzz/fuzz_input.hpp"
#include "maskgat/train/checkpoint.hpp"
#include "support/checkpoint_file.hpp"

namespace {

std::string repaired(std::string_view input) {
  using maskgat::test::kCheckpointHeader;
  const std::string_view payload =
      input.size() >= kCheckpointHeader + 8
          ? input.substr(kCheckpointHeader, input.size() - kCheckpointHeader - 8)
          : input;
  return maskgat::test::frame_checkpoint(payload, input.size() % 2 == 0 ? 2 : 1);
}

void load(const std::filesystem::path& path) {
  maskgat::fuzz::accept_errors([&] {
    const maskgat::train::Checkpoint checkpoint = maskgat::train::load_checkpoint(path);
    (void)maskgat::train::load_model(checkpoint);
  });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input = maskgat::fuzz::as_text(data, size);
  load(maskgat::fuzz::write_input(input, "model.bin"));
  load(maskgat::fuzz::write_input(repaired(input), "model.bin"));
  return 0;
}
