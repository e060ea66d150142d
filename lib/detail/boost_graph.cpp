#include "detail/boost_graph.hpp"

#include <cctype>

#include "detail/text.hpp"
#include "maskgat/core/error.hpp"

namespace maskgat::detail {

void throw_boost_error(const std::exception& error, std::string_view function,
                       std::string_view reader, const std::string& path) {
  std::string what = error.what();
  while (!what.empty() && std::isspace(static_cast<unsigned char>(what.back())) != 0) {
    what.pop_back();
  }
  throw ParseError(reader, path, 0, "Boost.Graph " + std::string(function) + ": " + what);
}

std::string describe_edge(std::string_view source, std::string_view target, bool undirected) {
  return "edge " + quoted(source) + (undirected ? " -- " : " -> ") + quoted(target);
}

}  // namespace maskgat::detail
