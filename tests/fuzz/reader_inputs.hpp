#pragma once
// Inputs shared by the fuzz targets and the hostile-input table test
// (tests/unit/io/test_hostile_inputs.cpp): the frozen node set labels and splits are read
// against, and how one input holds both LINQS files.

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>

#include "maskgat/io/node_index.hpp"

namespace maskgat::fuzz {

// "0".."15" and "a".."f", frozen, as after a features file.
inline NodeIndex frozen_nodes() {
  NodeIndex nodes = NodeIndex::named(1'000);
  NodeIndex::Status status{};
  for (int i = 0; i < 16; ++i) (void)nodes.insert(std::to_string(i), status);
  for (const char* name : {"a", "b", "c", "d", "e", "f"}) (void)nodes.insert(name, status);
  nodes.freeze();
  return nodes;
}

// `<cora.content>\0<cora.cites>`: everything after the first zero byte is the citation file;
// without one, the citation file is empty.
inline std::pair<std::string_view, std::string_view> linqs_parts(std::string_view input) {
  const std::size_t split = std::min(input.find('\0'), input.size());
  return {input.substr(0, split), input.substr(std::min(split + 1, input.size()))};
}

}  // namespace maskgat::fuzz
