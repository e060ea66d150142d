// Fuzz target: one `.npy` member of an npz archive, as the npz reader takes it: the bounded
// header parser, the conversions of numeric and string arrays, and for object arrays the pickle
// inside and its decoders (the object, a CSR matrix, a dict's strings).

#include "fuzz/fuzz_input.hpp"
#include "io/detail/npy.hpp"
#include "io/detail/pickle_decoders.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace maskgat;
  const Limits limits;
  return fuzz::accept_errors([&] {
    const detail::NumpyArray array =
        detail::parse_npy(fuzz::as_text(data, size), "fuzz.npy", "npz", "fuzz.npz", limits);
    switch (array.dtype.kind) {
      case detail::NumpyKind::kObject: {
        const detail::Pickle pickle(std::string(array.data), "npz", "fuzz.npz", limits);
        const detail::PickleId item = detail::decode_object_item(pickle, pickle.root(), limits);
        fuzz::accept_errors([&] { (void)detail::decode_csr_matrix(pickle, item, limits); });
        fuzz::accept_errors([&] {
          const detail::PickleId names = detail::dict_item(pickle, item, "class_names");
          if (names >= 0) (void)detail::decode_strings(pickle, names, "", limits);
        });
        break;
      }
      case detail::NumpyKind::kUnicode:
      case detail::NumpyKind::kBytes:
        (void)detail::numpy_strings(array);
        break;
      default:
        (void)detail::numpy_integers(array);
        (void)detail::numpy_floats(array);
    }
  });
}
