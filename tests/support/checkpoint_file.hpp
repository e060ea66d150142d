#pragma once
// Frames a checkpoint payload as `save_checkpoint` does (magic, format version, payload size,
// payload, FNV-1a 64 checksum), so tests and fuzz targets can build files of any version or
// content that get past the header and checksum checks.

#include <cstdint>
#include <string>
#include <string_view>

namespace maskgat::test {

// Bytes of the header before the payload: magic, version, payload size.
inline constexpr std::size_t kCheckpointHeader = 8 + 4 + 8;

inline std::string frame_checkpoint(std::string_view payload, std::uint32_t version) {
  std::uint64_t checksum = 0xcbf29ce484222325ULL;
  for (const char byte : payload) {
    checksum ^= static_cast<unsigned char>(byte);
    checksum *= 0x100000001b3ULL;
  }
  const std::uint64_t size = payload.size();
  std::string file = "MGATCKPT";
  file.append(reinterpret_cast<const char*>(&version), sizeof(version));
  file.append(reinterpret_cast<const char*>(&size), sizeof(size));
  file.append(payload);
  file.append(reinterpret_cast<const char*>(&checksum), sizeof(checksum));
  return file;
}

}  // namespace maskgat::test
