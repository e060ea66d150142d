// Fuzz target: the split reader, against a frozen node set.

#include "fuzz/fuzz_input.hpp"
#include "fuzz/reader_inputs.hpp"
#include "maskgat/io/splits.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace maskgat;
  static const NodeIndex nodes = fuzz::frozen_nodes();
  const auto path = fuzz::write_input(fuzz::as_text(data, size), "split.txt");
  return fuzz::accept_errors([&] {
    Notes notes;
    (void)read_split(path, nodes, ReadOptions{}, notes);
  });
}
