#pragma once
// Loading a graph file and looking into the result by node name, for the graph reader tests.

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "maskgat/io/edge_list.hpp"

namespace maskgat::test {

// Room for every fixture's nodes.
constexpr std::int64_t kMaxNodes = 1000;

// A graph reader's signature, as `read_dot` and `read_graphml` have it.
using GraphReader = LoadedGraph (*)(const std::filesystem::path&, NodeIndex&,
                                    const EdgeListOptions&);

// A loaded graph with the index that names its nodes.
struct Loaded {
  NodeIndex nodes = NodeIndex::named(kMaxNodes);
  LoadedGraph result;
};

// Reads `path` with `reader` into a fresh named index.
Loaded load_named(GraphReader reader, const std::filesystem::path& path,
                  const EdgeListOptions& options);

// The id of the node `name`; fails the test when there is none.
NodeId id_of(const Loaded& loaded, const std::string& name);

// The names of the in-neighbours of `name`, sorted.
std::vector<std::string> in_names(const Loaded& loaded, const std::string& name);

// The weight of the edge `source` -> `target`; fails the test when it or the weights are missing.
float weight(const Loaded& loaded, const std::string& source, const std::string& target);

}  // namespace maskgat::test
