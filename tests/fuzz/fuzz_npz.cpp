// Fuzz target: the npz container (libzip, member names and sizes) and the whole npz graph reader
// on it: every member read and parsed as an `.npy` array, then `read_npz`, which decodes the
// arrays and pickles of both layouts and builds the graph.

#include "fuzz/fuzz_input.hpp"
#include "io/detail/npy.hpp"
#include "io/detail/zip_archive.hpp"
#include "maskgat/io/npz.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace maskgat;
  Limits limits;
  limits.max_file_bytes = 1 << 24;  // members inflate within libFuzzer's memory limit
  fuzz::accept_errors([&] {
    const detail::ZipArchive archive(std::string(fuzz::as_text(data, size)), "npz", "fuzz.npz",
                                     limits);
    for (const std::string& name : archive.names()) {
      fuzz::accept_errors([&] {
        const std::string member = archive.read(name);
        (void)detail::parse_npy(member, name, "npz", "fuzz.npz", limits);
      });
    }
  });
  DatasetOptions options;
  options.read.limits = limits;
  return fuzz::read_input(data, size, "fuzz.npz",
                          [&](const auto& path) { (void)read_npz(path, "fuzz", options); });
}
