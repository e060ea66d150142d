// Fuzz target: the TU collection reader on a zip (its member names through the folder rules,
// doubled slashes included), every file's lines, the indicator, labels, attributes and edges.

#include "fuzz/fuzz_input.hpp"
#include "maskgat/io/tu.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace maskgat;
  ReadOptions options;
  options.limits.max_file_bytes = 1 << 24;  // members inflate within libFuzzer's memory limit
  options.limits.max_nodes = 1 << 16;
  options.limits.max_edges = 1 << 18;
  options.limits.max_features = 1 << 10;
  return fuzz::read_input(data, size, "fuzz.zip",
                          [&](const auto& path) { (void)read_tu(path, options); });
}
