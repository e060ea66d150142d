#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "support/paths.hpp"

namespace fs = std::filesystem;

TEST_SUITE("unit") {
  TEST_CASE("a scratch directory starts empty in a process and keeps what is written to it") {
    // A directory of the same name left by an earlier process of the same id.
    const fs::path stale = fs::temp_directory_path() /
                           ("maskgat-test-" + std::to_string(::getpid()) + "-scratch_paths");
    fs::create_directories(stale);
    std::ofstream(stale / "left.txt") << "from an earlier process";

    const fs::path dir = maskgat::test::scratch_dir("scratch_paths");
    CHECK(dir == stale);
    CHECK(fs::is_empty(dir));

    const fs::path written = maskgat::test::write_file("scratch_paths", "kept.txt", "kept");
    CHECK(maskgat::test::scratch_dir("scratch_paths") == dir);
    CHECK(fs::exists(written));
    CHECK(fs::file_size(written) == 4);
  }
}
