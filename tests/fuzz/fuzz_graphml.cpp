// Fuzz target: the GraphML reader (MaskGAT's pre-scan, then Boost.Graph's read_graphml).

#include "fuzz/fuzz_input.hpp"
#include "maskgat/io/graphml.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace maskgat;
  const auto path = fuzz::write_input(fuzz::as_text(data, size), "graph.graphml");
  return fuzz::accept_errors([&] {
    NodeIndex nodes = NodeIndex::named(1'000'000);
    (void)read_graphml(path, nodes, EdgeListOptions{});
  });
}
