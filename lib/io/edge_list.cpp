#include "maskgat/io/edge_list.hpp"

#include <cmath>
#include <string>
#include <vector>

#include "io/detail/assemble.hpp"
#include "io/detail/text.hpp"
#include "maskgat/core/error.hpp"

namespace maskgat {
namespace {

constexpr std::string_view kReader = "edge_list";

}  // namespace

LoadedGraph read_edge_list(const std::filesystem::path& path, NodeIndex& nodes,
                           const EdgeListOptions& options) {
  detail::LineReader reader(path, kReader, options.read.limits.max_line_bytes);
  std::string_view line;
  std::vector<std::string_view> fields;
  EdgeList edges;
  std::int64_t weighted_line = 0;    // first line with a weight
  std::int64_t unweighted_line = 0;  // first line without one
  while (reader.next(line)) {
    if (detail::is_blank_or_comment(line)) continue;
    detail::split_fields(line, fields);
    if (fields.size() != 2 && fields.size() != 3) {
      reader.fail("expected 2 or 3 columns (src dst [weight]), got " +
                  std::to_string(fields.size()));
    }
    auto& first_of_kind = fields.size() == 3 ? weighted_line : unweighted_line;
    if (first_of_kind == 0) first_of_kind = reader.line_number();
    if (weighted_line != 0 && unweighted_line != 0) {
      reader.fail("this line has " + std::to_string(fields.size()) + " columns but line " +
                  std::to_string(fields.size() == 3 ? unweighted_line : weighted_line) + " has " +
                  (fields.size() == 3 ? "2" : "3") + ": either every edge has a weight or none");
    }
    detail::check_edge_limit(static_cast<std::int64_t>(edges.sources.size()) + 1, options, kReader,
                             reader.path(), reader.line_number());
    edges.sources.push_back(
        detail::node_id_or_throw(nodes, fields[0], kReader, reader.path(), reader.line_number()));
    edges.targets.push_back(
        detail::node_id_or_throw(nodes, fields[1], kReader, reader.path(), reader.line_number()));
    if (fields.size() == 3) {
      const auto weight = detail::parse_number(fields[2]);
      if (!weight) reader.fail("weight " + detail::quoted(fields[2]) + " is not a number");
      if (!std::isfinite(*weight) || !std::isfinite(static_cast<float>(*weight))) {
        reader.fail("weight " + detail::quoted(fields[2]) + " is not finite");
      }
      edges.weights.push_back(static_cast<float>(*weight));
    }
  }
  if (edges.sources.empty()) {
    throw ParseError(kReader, reader.path(), 0, "no edges: expected lines 'src dst [weight]'");
  }
  return detail::assemble_graph(edges, nodes, options, kReader, reader.path());
}

}  // namespace maskgat
