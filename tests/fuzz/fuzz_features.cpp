// Fuzz target: the CSV/TSV feature reader.

#include "fuzz/fuzz_input.hpp"
#include "maskgat/io/features.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace maskgat;
  const auto path = fuzz::write_input(fuzz::as_text(data, size), "features.csv");
  return fuzz::accept_errors([&] {
    NodeIndex nodes = NodeIndex::named(1'000'000);
    FeatureTable table = read_features(path, nodes, ReadOptions{});
    table.matrix.normalize_rows();
  });
}
