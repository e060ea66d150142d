#pragma once
// Where tests find their fixtures and the public datasets.

#include <filesystem>
#include <string>

namespace maskgat::test {

// `tests/data/<name>`.
std::filesystem::path fixture(const std::string& name);

// The data directory: `$MASKGAT_DATA_DIR` if set, else the source tree's `datasets/`.
std::filesystem::path data_dir();

// A directory under the system temp directory, unique to this process and `tag`: fresh and empty
// when the process first asks for it, the same (with what was written into it) afterwards, and
// removed with its contents when the process exits.
std::filesystem::path scratch_dir(const std::string& tag);

// Writes `content` to `<scratch_dir(tag)>/<name>` byte for byte (creating the folders `name`
// names) and returns the path.
std::filesystem::path write_file(const std::string& tag, const std::string& name,
                                 const std::string& content);

}  // namespace maskgat::test
