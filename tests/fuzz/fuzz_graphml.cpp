// Fuzz target: the GraphML reader.

#include "fuzz/fuzz_input.hpp"
#include "maskgat/io/graphml.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return maskgat::fuzz::read_input(data, size, "graph.graphml", [](const auto& path) {
    maskgat::NodeIndex nodes = maskgat::NodeIndex::named(1'000'000);
    (void)maskgat::read_graphml(path, nodes, {});
  });
}
