// Fuzz target: the label reader, against a frozen node set.

#include "fuzz/fuzz_input.hpp"
#include "fuzz/reader_inputs.hpp"
#include "maskgat/io/labels.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace maskgat;
  static const NodeIndex nodes = fuzz::frozen_nodes();
  const auto path = fuzz::write_input(fuzz::as_text(data, size), "labels.txt");
  return fuzz::accept_errors([&] {
    Notes notes;
    (void)read_labels(path, nodes, ReadOptions{}, notes);
  });
}
