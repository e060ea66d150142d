// Fuzz target: the DOT reader.

#include "fuzz/fuzz_input.hpp"
#include "maskgat/io/dot.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return maskgat::fuzz::read_input(data, size, "graph.dot", [](const auto& path) {
    maskgat::NodeIndex nodes = maskgat::NodeIndex::named(1'000'000);
    (void)maskgat::read_dot(path, nodes, {});
  });
}
