#pragma once
/// @file
/// Size limits and strictness shared by every reader.

#include <cstdint>
#include <string>
#include <vector>

namespace maskgat {

/// Upper bounds a reader checks before allocating, and while it reads: a file that declares or
/// implies more throws `LimitError` naming the limit and its command-line flag, whatever the file
/// is (a pipe or a device such as `/dev/zero` is refused as soon as it passes a limit, not read
/// to its end first). A reader holds about 160 bytes per node, 70 per edge (at the peak of
/// building the graph) and 4 per feature value, plus the file itself for the formats read whole;
/// so these limits bound its memory (README, Reliability). Raise them for larger inputs.
struct Limits {
  std::int64_t max_nodes = 100'000'000;             ///< `--max-nodes`
  std::int64_t max_edges = 200'000'000;             ///< `--max-edges`
  std::int64_t max_features = 1'000'000;            ///< feature width, `--max-features`
  std::int64_t max_classes = 1'000;                 ///< distinct labels, `--max-classes`
  std::int64_t max_array_elements = 1'000'000'000;  ///< declared array sizes in binary files
  /// Files read whole (GraphML, DOT, Planetoid pickles), `--max-file-bytes`.
  std::int64_t max_file_bytes = std::int64_t{1} << 30;
  /// One line of a text file (edge lists, features, labels, splits, LINQS), `--max-line-bytes`.
  std::int64_t max_line_bytes = std::int64_t{1} << 26;
  std::int64_t max_nesting_depth = 256;  ///< XML / DOT nesting, `--max-nesting-depth`
};

/// Options every reader takes.
struct ReadOptions {
  Limits limits;  ///< size limits checked before allocating
  /// Turn every merged or dropped item (duplicate edge, citation of an unknown paper, ...) into
  /// a `ParseError` instead of a note.
  bool strict = false;
};

/// Human-readable lines about input that was merged or dropped (printed as `note:` lines).
using Notes = std::vector<std::string>;

}  // namespace maskgat
