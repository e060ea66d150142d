// Fuzz target: the split reader, against a frozen node set.

#include "fuzz/fuzz_input.hpp"
#include "fuzz/reader_inputs.hpp"
#include "maskgat/io/splits.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const maskgat::NodeIndex nodes = maskgat::fuzz::frozen_nodes();
  return maskgat::fuzz::read_input(data, size, "split.txt", [](const auto& path) {
    maskgat::Notes notes;
    (void)maskgat::read_split(path, nodes, {}, notes);
  });
}
