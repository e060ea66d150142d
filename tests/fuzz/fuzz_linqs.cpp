// Fuzz target: the LINQS reader, on both files held in one input (`fuzz::linqs_parts`).

#include "fuzz/fuzz_input.hpp"
#include "fuzz/reader_inputs.hpp"
#include "maskgat/io/linqs.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace maskgat;
  const auto [content_text, cites_text] = fuzz::linqs_parts(fuzz::as_text(data, size));
  const auto content = fuzz::write_input(content_text, "cora.content");
  (void)fuzz::write_input(cites_text, "cora.cites");
  return fuzz::accept_errors([&] {
    DatasetOptions options;
    options.split_sizes = RandomSplitSizes{1, 1, 1};
    (void)read_linqs(content.parent_path(), "cora", options);
  });
}
