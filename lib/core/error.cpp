#include "maskgat/core/error.hpp"

#include <utility>

namespace maskgat {
namespace {

std::string locate(std::string_view reader, const std::string& path, std::int64_t line,
                   std::string_view message) {
  std::string text;
  text.append(reader).append(": ").append(path);
  if (line > 0) text.append(":").append(std::to_string(line));
  text.append(": ").append(message);
  return text;
}

}  // namespace

ParseError::ParseError(std::string_view reader, std::string path, std::int64_t line,
                       std::string_view message)
    : Error(locate(reader, path, line, message)), path_(std::move(path)), line_(line) {}

}  // namespace maskgat
