#pragma once
/// @file
/// Writing output files safely: never half-written, never replacing a file unasked.

#include <filesystem>
#include <string_view>

namespace maskgat {

/// Writes `content` to `path` through a temporary file in the same directory, renamed over
/// `path` once complete, so readers see the old file or the new one, never a partial one.
/// @param overwrite replace an existing `path`; without it an existing file is an error
/// @throws IoError when `path` exists and `overwrite` is false (the message names the path and
///         `--force`), or on any write or rename failure (the temporary file is removed).
void write_file_atomically(const std::filesystem::path& path, std::string_view content,
                           bool overwrite);

}  // namespace maskgat
