// Fuzz target: the edge-list reader, with named nodes (directed) and with numeric ids
// (undirected, under a 10^6-node limit so that a ten-byte file naming id 99999999 meets the
// limit instead of legitimately allocating a 10^8-node graph).

#include "fuzz/fuzz_input.hpp"
#include "maskgat/io/edge_list.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace maskgat;
  const auto path = fuzz::write_input(fuzz::as_text(data, size), "edges.txt");
  fuzz::accept_errors([&] {
    NodeIndex nodes = NodeIndex::named(1'000'000);
    (void)read_edge_list(path, nodes, EdgeListOptions{});
  });
  return fuzz::accept_errors([&] {
    EdgeListOptions options;
    options.undirected = true;
    options.read.limits.max_nodes = 1'000'000;
    NodeIndex nodes = NodeIndex::numeric(-1, options.read.limits.max_nodes);
    (void)read_edge_list(path, nodes, options);
  });
}
