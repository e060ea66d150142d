#pragma once
// The line loop shared by the two-column `node value` readers (labels, splits): each node takes
// one value, a line repeating it is ignored with a note (or refused when strict), and a line
// contradicting it is refused.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "io/detail/text.hpp"
#include "maskgat/io/limits.hpp"
#include "maskgat/io/node_index.hpp"

namespace maskgat::detail {

// How one `node value` reader words the messages the shared loop writes.
struct NodeValueWording {
  std::string_view columns;  // in `expected 2 columns (<columns>), got 3`
  std::string_view again;    // in `node 'a' is <again> again (first on line 1) (--strict)`
  std::string_view repeats;  // in the note `<reader>: <path>: 2 <repeats> ignored`
};

// Reads the `node value` lines of `reader` and returns the value of each node of `nodes`, `unset`
// for a node without a line. `unknown_node(node)` words the error for a node not in `nodes`;
// `parse(node, value)` maps the value column of node id `node`, failing through `reader` when it
// is bad;
// `conflict(node, value, first, first_line)` words the error for a node given a second value.
template <typename Value, typename UnknownNode, typename Parse, typename Conflict>
std::vector<Value> read_node_values(LineReader& reader, const NodeIndex& nodes, Value unset,
                                    const NodeValueWording& wording, bool strict, Notes& notes,
                                    const UnknownNode& unknown_node, const Parse& parse,
                                    const Conflict& conflict) {
  const auto num_nodes = static_cast<std::size_t>(nodes.size());
  std::vector<Value> values(num_nodes, unset);
  std::vector<std::int64_t> line_of_node(num_nodes, 0);
  std::int64_t repeated = 0;
  std::string_view line;
  std::vector<std::string_view> fields;
  while (reader.next(line)) {
    if (is_blank_or_comment(line)) continue;
    split_fields(line, fields);
    if (fields.size() != 2) {
      reader.fail("expected 2 columns (" + std::string(wording.columns) + "), got " +
                  std::to_string(fields.size()));
    }
    const auto node = nodes.find(fields[0]);
    if (!node) reader.fail(unknown_node(fields[0]));
    const Value value = parse(*node, fields[1]);
    const auto slot = static_cast<std::size_t>(*node);
    if (values[slot] != unset) {
      if (values[slot] != value) {
        reader.fail(conflict(fields[0], fields[1], values[slot], line_of_node[slot]));
      }
      if (strict) {
        reader.fail("node '" + std::string(fields[0]) + "' is " + std::string(wording.again) +
                    " again (first on line " + std::to_string(line_of_node[slot]) + ") (--strict)");
      }
      ++repeated;
      continue;
    }
    values[slot] = value;
    line_of_node[slot] = reader.line_number();
  }
  if (repeated > 0) {
    notes.push_back(std::string(reader.reader()) + ": " + reader.path() + ": " +
                    std::to_string(repeated) + " " + std::string(wording.repeats) + " ignored");
  }
  return values;
}

}  // namespace maskgat::detail
