// Fuzz target: the CSV/TSV feature reader.

#include "fuzz/fuzz_input.hpp"
#include "maskgat/io/features.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return maskgat::fuzz::read_input(data, size, "features.csv", [](const auto& path) {
    maskgat::NodeIndex nodes = maskgat::NodeIndex::named(1'000'000);
    maskgat::FeatureTable table = maskgat::read_features(path, nodes, {});
    table.matrix.normalize_rows();
  });
}
