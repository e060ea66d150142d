#pragma once
/// @file
/// The exceptions MaskGAT throws at its public boundary.
///
/// Every message says what went wrong, where, and what was expected against what was found, e.g.
/// `edge_list: graph.txt:12: node id -3 is negative`. The library never exits or aborts on bad
/// input; internal invariants use assertions.

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "maskgat/export.hpp"

namespace maskgat {

/// Base class of every MaskGAT exception.
class MASKGAT_EXPORT Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A function argument is invalid (wrong shape, contradictory options, unknown name).
class MASKGAT_EXPORT InvalidArgument : public Error {
 public:
  using Error::Error;
};

/// A node or edge id is outside the range it must lie in.
class MASKGAT_EXPORT IndexError : public Error {
 public:
  using Error::Error;
};

/// A file cannot be opened, read or written.
class MASKGAT_EXPORT IoError : public Error {
 public:
  using Error::Error;
};

/// A file's content is malformed. Carries the file and the 1-based line (0 when the format has no
/// lines, e.g. a binary pickle) next to the formatted message
/// `<reader>: <path>:<line>: <message>`.
class MASKGAT_EXPORT ParseError : public Error {
 public:
  /// @param reader name of the reader, e.g. `edge_list`
  /// @param path   the path as the user gave it
  /// @param line   1-based line number, or 0 when there is none to give
  /// @param message what is wrong, with expected vs got
  ParseError(std::string_view reader, std::string path, std::int64_t line,
             std::string_view message);

  /// The file the error is in, as the caller named it.
  /// @return the path as given to the constructor
  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  /// The line the error is on.
  /// @return the 1-based line, or 0 when the format has no lines
  [[nodiscard]] std::int64_t line() const noexcept { return line_; }

 private:
  std::string path_;
  std::int64_t line_;
};

/// Input would exceed a configurable size limit (nodes, edges, feature width, array length, file
/// size, nesting depth). Thrown before anything of that size is allocated; the message names the
/// limit and how to raise it.
class MASKGAT_EXPORT LimitError : public ParseError {
 public:
  using ParseError::ParseError;
};

}  // namespace maskgat
