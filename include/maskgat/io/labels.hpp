#pragma once
/// @file
/// The node-labels reader.

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "maskgat/export.hpp"
#include "maskgat/io/limits.hpp"
#include "maskgat/io/node_index.hpp"

namespace maskgat {

/// Class ids per node and the class names they stand for.
struct MASKGAT_EXPORT LabelTable {
  /// Class id per node (`nodes.size()` entries); -1 for an unlabelled node.
  std::vector<std::int32_t> labels;
  /// Name of each class id: numeric order when every name is an integer, else byte order.
  std::vector<std::string> class_names;
};

/// Reads `node label` lines (exactly two fields, separated by spaces, tabs or commas; comments,
/// blank lines, CRLF and a BOM as in the edge list). `nodes` must be frozen: every node must
/// exist. A node without a line is unlabelled. Serial.
/// @param path    the file
/// @param nodes   the frozen node index of the dataset
/// @param options strictness (repeated lines)
/// @param notes   receives a note counting repeated identical lines
/// @return `nodes.size()` class ids and the class names, ordered by `sort_class_names`
/// @throws IoError (cannot open), ParseError (wrong column count, unknown node, two different
///         labels for one node; a repeated identical line is a note, or an error when `strict`),
///         LimitError (more distinct labels than `max_classes`, a line over `max_line_bytes`).
[[nodiscard]] MASKGAT_EXPORT LabelTable read_labels(const std::filesystem::path& path,
                                                    const NodeIndex& nodes,
                                                    const ReadOptions& options, Notes& notes);

/// Orders class names as `read_labels` does: numerically when every name is an integer, else by
/// bytes.
/// @param names class names, in any order
/// @return the same names, sorted; a name's position is its class id
[[nodiscard]] MASKGAT_EXPORT std::vector<std::string> sort_class_names(
    std::vector<std::string> names);

}  // namespace maskgat
