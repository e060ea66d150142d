// Fuzz target: the checkpoint reader, then building the model it describes. Each input is read
// as it is, and again with its header and checksum repaired (version 1, the payload's size and
// FNV-1a 64 checksum), so that mutations reach the payload's parser instead of stopping at the
// checksum.

#include <cstring>
#include <string>

#include "fuzz/fuzz_input.hpp"
#include "maskgat/train/checkpoint.hpp"

namespace {

constexpr std::size_t kHeader = 8 + 4 + 8;  // magic, version, payload size

std::string repaired(std::string_view input) {
  const std::string_view payload =
      input.size() >= kHeader + 8 ? input.substr(kHeader, input.size() - kHeader - 8) : input;
  std::uint64_t checksum = 0xcbf29ce484222325ULL;
  for (const char byte : payload) {
    checksum ^= static_cast<unsigned char>(byte);
    checksum *= 0x100000001b3ULL;
  }
  const std::uint32_t version = 1;
  const std::uint64_t size = payload.size();
  std::string file = "MGATCKPT";
  file.append(reinterpret_cast<const char*>(&version), sizeof(version));
  file.append(reinterpret_cast<const char*>(&size), sizeof(size));
  file.append(payload);
  file.append(reinterpret_cast<const char*>(&checksum), sizeof(checksum));
  return file;
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
