#include "support/graph_checks.hpp"

#include <doctest/doctest.h>

#include <algorithm>

namespace maskgat::test {

Loaded load_named(GraphReader reader, const std::filesystem::path& path,
                  const EdgeListOptions& options) {
  Loaded loaded;
  loaded.result = reader(path, loaded.nodes, options);
  return loaded;
}

NodeId id_of(const Loaded& loaded, const std::string& name) {
  const auto id = loaded.nodes.find(name);
  REQUIRE(id.has_value());
  return *id;
}

std::vector<std::string> in_names(const Loaded& loaded, const std::string& name) {
  const auto names = loaded.nodes.names();
  std::vector<std::string> sources;
  for (const auto source : loaded.result.graph.in_neighbors(id_of(loaded, name))) {
    sources.push_back(names[static_cast<std::size_t>(source)]);
  }
  std::sort(sources.begin(), sources.end());
  return sources;
}

float weight(const Loaded& loaded, const std::string& source, const std::string& target) {
  const auto& graph = loaded.result.graph;
  const auto dst = id_of(loaded, target);
  const auto src = id_of(loaded, source);
  const auto row = graph.in_neighbors(dst);
  const auto found = std::find(row.begin(), row.end(), src);
  REQUIRE(found != row.end());
  REQUIRE(graph.has_weights());
  return graph.weights()[static_cast<std::size_t>(
      graph.in_offsets()[static_cast<std::size_t>(dst)] + (found - row.begin()))];
}

}  // namespace maskgat::test
