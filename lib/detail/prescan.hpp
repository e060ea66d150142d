#pragma once
// Bounded, non-recursive checks run before Boost.Graph's GraphML and DOT parsers. Those parsers
// recurse once per nesting level and report no line numbers, so a hostile file could exhaust the
// stack and a truncated one would get a vague message; these scans read the text once, in
// constant stack space, and report what is wrong with the line it is on.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "maskgat/io/limits.hpp"

namespace maskgat::detail {

// A GraphML `<key>` declaration the reader cares about.
struct GraphmlKey {
  std::string id;
  std::string type;  // the `attr.type` value, empty when absent
};

// What the GraphML pre-scan learnt besides "the structure is sound".
struct GraphmlScan {
  std::optional<GraphmlKey> node_name;    // first `<key for="node|all" attr.name="name">`
  std::optional<GraphmlKey> edge_weight;  // first `<key for="edge|all" attr.name="weight">`
  bool has_graph = false;                 // a `<graph>` among the root's children
  bool undirected = false;                // `edgedefault="undirected"` on the first of them
  std::int64_t declared_nodes = 0;        // `<node>` elements anywhere
};

// Checks XML element nesting against `limits.max_nesting_depth` (LimitError) and that every
// element, comment, CDATA section, processing instruction, declaration and quoted attribute value
// is closed, and closing tags match (ParseError at the offending line). Reader name `graphml`.
[[nodiscard]] GraphmlScan prescan_graphml(std::string_view text, const Limits& limits,
                                          const std::string& path);

// What the DOT pre-scan learnt about the first graph.
struct DotScan {
  bool directed = false;  // `digraph` rather than `graph`
  bool strict = false;    // preceded by `strict`
};

// Checks `{` `[` `(` nesting against `limits.max_nesting_depth` (LimitError) and balance, and
// that quoted strings, `<...>` HTML strings and `/* */` comments are closed (ParseError at the
// line). `//` comments and `#` lines (in column 0) are skipped. The file must start, after an
// optional byte-order mark and comments, with `[strict] graph` or `[strict] digraph`. Reader
// name `dot`.
[[nodiscard]] DotScan prescan_dot(std::string_view text, const Limits& limits,
                                  const std::string& path);

}  // namespace maskgat::detail
