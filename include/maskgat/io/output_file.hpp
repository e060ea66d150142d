#pragma once
/// @file
/// Writing output files safely: never half-written, never replacing a file unasked.

#include <filesystem>
#include <string>
#include <string_view>

#include "maskgat/export.hpp"

namespace maskgat {

/// Writes `content` to `path` so that `path` is always either absent, the old file or the whole
/// new one, even if the process is killed at any moment:
/// - the content goes to an anonymous file (`O_TMPFILE`) in `path`'s directory and is synced;
/// - without `overwrite` that file is linked to `path`, which fails if `path` exists;
/// - with `overwrite` it is linked to `.<name>.maskgat-tmp-<pid>` and renamed over `path`. Killed
///   between those two calls, a process leaves that name behind; the next write to `path`
///   removes it (after checking that its process is gone).
/// File systems without `O_TMPFILE` get the same steps through the named temporary file.
/// @param path      the file to write; its directory must exist
/// @param content   the complete new content
/// @param overwrite replace an existing `path`; without it an existing file is an error
/// @throws IoError when `path` exists and `overwrite` is false (the message names the path and
///         `--force`), when `path` exists and is not a regular file (a device, FIFO, directory
///         or symbolic link is never replaced), or on any write, sync, link or rename failure
///         (no temporary file is left).
MASKGAT_EXPORT void write_file_atomically(const std::filesystem::path& path,
                                          std::string_view content, bool overwrite);

/// A CSV field: `text` as it is, or in double quotes with its quotes doubled (RFC 4180) when it
/// holds a comma, a double quote or a newline.
/// @param text a node or class name, or any other field
/// @return the field as it goes between commas
[[nodiscard]] MASKGAT_EXPORT std::string csv_field(std::string_view text);

}  // namespace maskgat
