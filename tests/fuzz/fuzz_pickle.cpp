// Fuzz target: the bounded pickle reader behind the Planetoid loader, and each decoder the loader
// applies to its root (CSR matrix for x/tx/allx, integer matrix for y/ty/ally, adjacency dict for
// graph).

#include "fuzz/fuzz_input.hpp"
#include "io/detail/pickle_decoders.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace maskgat;
  const auto path = fuzz::write_input(fuzz::as_text(data, size), "ind.fuzz.x");
  const Limits limits;
  return fuzz::accept_errors([&] {
    const detail::Pickle pickle = detail::read_pickle(path, "planetoid", limits);
    fuzz::accept_errors([&] { (void)detail::decode_csr_matrix(pickle, limits); });
    fuzz::accept_errors([&] { (void)detail::decode_int_matrix(pickle, limits); });
    fuzz::accept_errors([&] { (void)detail::decode_adjacency(pickle, 3000, limits); });
  });
}
