#pragma once
// A bounded reader for numpy's `.npy` format (versions 1.0, 2.0 and 3.0), as the members of an
// npz archive hold it: the magic string, a header that is a Python dict literal
// `{'descr': '<f4', 'fortran_order': False, 'shape': (2708, 1433), }`, then the data.
//
// The header is parsed, not evaluated: exactly the three keys, each once; `descr` a simple type
// code (`numpy_array.hpp`; a structured dtype is refused); `shape` a tuple of at most 32
// non-negative ints whose product stays within `Limits::max_array_elements`. The data must hold
// exactly shape x item size bytes, except for object arrays, whose data is a pickle. Every error
// is a ParseError (LimitError for limits) `<reader>: <path>: member '<name>': <message>`.

#include <string>
#include <string_view>

#include "io/detail/numpy_array.hpp"
#include "maskgat/export.hpp"
#include "maskgat/io/limits.hpp"

namespace maskgat::detail {

// The array in `bytes`, a view into them. `member` names it in messages.
[[nodiscard]] MASKGAT_EXPORT NumpyArray parse_npy(std::string_view bytes, std::string_view member,
                                                  std::string_view reader, const std::string& path,
                                                  const Limits& limits);

}  // namespace maskgat::detail
