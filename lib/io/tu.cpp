#include "maskgat/io/tu.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <string_view>
#include <utility>

#include "io/detail/input_file.hpp"
#include "io/detail/text.hpp"
#include "io/detail/zip_archive.hpp"
#include "maskgat/core/error.hpp"
#include "maskgat/graph/build.hpp"

namespace maskgat {
namespace {

constexpr std::string_view kReader = "tu";

// The collection's files, from a zip or a folder: `<prefix>_<part>.txt` read whole.
class TuFiles {
 public:
  TuFiles(const std::filesystem::path& path, const Limits& limits)
      : path_(path.string()), limits_(limits) {
    std::vector<std::string> names;
    if (std::filesystem::is_directory(path)) {
      folder_ = path;
      for (const auto& entry : std::filesystem::directory_iterator(path)) {
        if (entry.is_regular_file()) names.push_back(entry.path().filename().string());
      }
      std::sort(names.begin(), names.end());
    } else {
      archive_ = detail::read_zip(path, kReader, limits, detail::ZipNames::kFolders);
      names = archive_->names();
    }
    std::vector<std::string> prefixes;
    for (const std::string& name : names) {
      if (name.ends_with("_A.txt")) prefixes.push_back(name.substr(0, name.size() - 6));
    }
    if (prefixes.size() != 1) {
      fail(prefixes.empty() ? std::string("no <NAME>_A.txt: not a TU collection")
                            : "two collections: " + detail::quoted(prefixes[0] + "_A.txt") +
                                  " and " + detail::quoted(prefixes[1] + "_A.txt"));
    }
    prefix_ = prefixes.front();
    const std::size_t slash = prefix_.rfind('/');
    name_ = slash == std::string::npos ? prefix_ : prefix_.substr(slash + 1);
  }

  [[nodiscard]] const std::string& name() const noexcept { return name_; }

  // Whether the collection has the file `<prefix>_<part>.txt`.
  [[nodiscard]] bool has(std::string_view part) const {
    return archive_ ? archive_->contains(member(part))
                    : std::filesystem::exists(folder_ / member(part));
  }

  // The file `<prefix>_<part>.txt`, which must exist.
  [[nodiscard]] std::string read(std::string_view part) const {
    if (!has(part)) fail("no " + member(part) + ": a TU collection needs it");
    if (archive_) return archive_->read(member(part));
    detail::InputFile input(folder_ / member(part), kReader);
    return detail::read_bounded_file(input, limits_.max_file_bytes, detail::Content::kText);
  }

  // How messages name the file `<prefix>_<part>.txt`.
  [[nodiscard]] std::string where(std::string_view part) const {
    return archive_ ? path_ + ": member " + detail::quoted(member(part))
                    : (folder_ / member(part)).string();
  }

  [[noreturn]] void fail(const std::string& message) const {
    throw ParseError(kReader, path_, 0, message);
  }

 private:
  [[nodiscard]] std::string member(std::string_view part) const {
    return prefix_ + "_" + std::string(part) + ".txt";
  }

  std::string path_;
  Limits limits_;
  std::filesystem::path folder_;
  std::unique_ptr<detail::ZipArchive> archive_;
  std::string prefix_;
  std::string name_;
};

// The lines of one file, each split into its comma- or space-separated fields.
class Lines {
 public:
  Lines(std::string text, std::string where) : text_(std::move(text)), where_(std::move(where)) {
    if (text_.starts_with("\xEF\xBB\xBF")) pos_ = 3;
  }

  // The next line that is not blank, split; false at the end.
  bool next(std::vector<std::string_view>& fields) {
    while (pos_ < text_.size()) {
      const std::size_t end = std::min(text_.find('\n', pos_), text_.size());
      std::string_view line = std::string_view(text_).substr(pos_, end - pos_);
      pos_ = end + 1;
      ++line_;
      if (line.ends_with('\r')) line.remove_suffix(1);
      if (line.find_first_not_of(" \t,") == std::string_view::npos) continue;
      detail::split_fields(line, fields);
      return true;
    }
    return false;
  }

  std::int64_t integer(std::string_view field, std::string_view what) const {
    const auto value = detail::parse_integer(field);
    if (!value) fail(std::string(what) + " " + detail::quoted(field) + " is not an integer");
    return *value;
  }

  double number(std::string_view field, std::string_view what) const {
    const auto value = detail::parse_number(field);
    if (!value || !std::isfinite(*value)) {
      fail(std::string(what) + " " + detail::quoted(field) + " is not a finite number");
    }
    return *value;
  }

  [[noreturn]] void fail(const std::string& message) const {
    throw ParseError(kReader, where_, line_, message);
  }
  [[nodiscard]] std::int64_t line() const noexcept { return line_; }
  [[nodiscard]] const std::string& where() const noexcept { return where_; }

 private:
  std::string text_;
  std::string where_;
  std::size_t pos_ = 0;
  std::int64_t line_ = 0;
};

// A file of one row per item, each of the same number of fields, checked to hold `count` rows.
struct Table {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::vector<std::string> cells;  // row-major
};

Table read_table(const TuFiles& files, std::string_view part, std::int64_t count,
                 std::string_view items, const Limits& limits) {
  Lines lines(files.read(part), files.where(part));
  Table table;
  std::vector<std::string_view> fields;
  while (lines.next(fields)) {
    if (table.rows == 0) {
      table.cols = static_cast<std::int64_t>(fields.size());
      if (table.cols > limits.max_features) {
        throw LimitError(kReader, lines.where(), lines.line(),
                         std::to_string(table.cols) + " columns, over the limit of " +
                             std::to_string(limits.max_features) +
                             " (raise it with --max-features)");
      }
    } else if (static_cast<std::int64_t>(fields.size()) != table.cols) {
      lines.fail("row has " + std::to_string(fields.size()) + " fields, expected " +
                 std::to_string(table.cols) + " as on the first row");
    }
    if (table.rows == count) {
      lines.fail("more rows than the " + std::to_string(count) + " " + std::string(items));
    }
    for (const auto field : fields) table.cells.emplace_back(field);
    ++table.rows;
  }
  if (table.rows != count) {
    throw ParseError(kReader, lines.where(), 0,
                     std::to_string(table.rows) + " rows, expected one for each of the " +
                         std::to_string(count) + " " + std::string(items));
  }
  return table;
}

// One-hot blocks of integer labels (one block per column, each from its column's smallest value
// to its largest), as PyG's TUDataset encodes node and edge labels.
RowMatrix<float> one_hot(const Table& table, const std::string& where, const Limits& limits) {
  std::vector<std::int64_t> values(table.cells.size());
  std::vector<std::int64_t> low(static_cast<std::size_t>(table.cols), 0);
  std::vector<std::int64_t> high(static_cast<std::size_t>(table.cols), 0);
  for (std::size_t k = 0; k < table.cells.size(); ++k) {
    const auto value = detail::parse_integer(table.cells[k]);
    const auto row = static_cast<std::int64_t>(k) / std::max<std::int64_t>(table.cols, 1);
    if (!value) {
      throw ParseError(kReader, where, row + 1,
                       "label " + detail::quoted(table.cells[k]) + " is not an integer");
    }
    values[k] = *value;
    const auto col = k % static_cast<std::size_t>(table.cols);
    low[col] = row == 0 ? *value : std::min(low[col], *value);
    high[col] = row == 0 ? *value : std::max(high[col], *value);
  }
  std::vector<std::int64_t> start(static_cast<std::size_t>(table.cols) + 1, 0);
  for (std::size_t c = 0; c < low.size(); ++c) {
    const std::int64_t width = high[c] - low[c] + 1;
    if (width > limits.max_features - start[c]) {
      throw LimitError(kReader, where, 0,
                       "labels from " + std::to_string(low[c]) + " to " + std::to_string(high[c]) +
                           " need more one-hot columns than the limit of " +
                           std::to_string(limits.max_features) + " (raise it with --max-features)");
    }
    start[c + 1] = start[c] + width;
  }
  RowMatrix<float> out = RowMatrix<float>::Zero(table.rows, start.back());
  for (std::size_t k = 0; k < values.size(); ++k) {
    const auto row = static_cast<Eigen::Index>(k / static_cast<std::size_t>(table.cols));
    const auto col = k % static_cast<std::size_t>(table.cols);
    out(row, start[col] + values[k] - low[col]) = 1.0F;
  }
  return out;
}

RowMatrix<float> numbers(const Table& table, const std::string& where) {
  RowMatrix<float> out(table.rows, table.cols);
  for (std::size_t k = 0; k < table.cells.size(); ++k) {
    const auto row = static_cast<std::int64_t>(k / static_cast<std::size_t>(table.cols));
    const auto value = detail::parse_number(table.cells[k]);
    if (!value || !std::isfinite(*value)) {
      throw ParseError(kReader, where, row + 1,
                       "attribute " + detail::quoted(table.cells[k]) + " is not a finite number");
    }
    out(row, static_cast<Eigen::Index>(k % static_cast<std::size_t>(table.cols))) =
        static_cast<float>(*value);
  }
  return out;
}

// The one-hot `<kind>_labels.txt` beside the numbers of `<kind>_attributes.txt`, one row for
// each of `rows` items, as PyG's TUDataset encodes node and edge features; 0 columns without
// either file.
RowMatrix<float> labels_and_attributes(const TuFiles& files, const std::string& kind,
                                       std::int64_t rows, std::string_view items,
                                       const Limits& limits) {
  RowMatrix<float> labels(rows, 0);
  RowMatrix<float> attributes(rows, 0);
  if (files.has(kind + "_labels")) {
    labels = one_hot(read_table(files, kind + "_labels", rows, items, limits),
                     files.where(kind + "_labels"), limits);
  }
  if (files.has(kind + "_attributes")) {
    attributes = numbers(read_table(files, kind + "_attributes", rows, items, limits),
                         files.where(kind + "_attributes"));
  }
  RowMatrix<float> out(rows, labels.cols() + attributes.cols());
  out.leftCols(labels.cols()) = labels;
  out.rightCols(attributes.cols()) = attributes;
  return out;
}

}  // namespace

GraphCollection read_tu(const std::filesystem::path& path, const ReadOptions& options) {
  const Limits& limits = options.limits;
  const TuFiles files(path, limits);
  GraphCollection out;
  out.name = files.name();

  // The graph indicator: node count, graph of each node, offsets.
  Lines indicator(files.read("graph_indicator"), files.where("graph_indicator"));
  std::vector<std::int32_t> graph_of;
  std::vector<std::string_view> fields;
  out.offsets.push_back(0);
  while (indicator.next(fields)) {
    if (fields.size() != 1)
      indicator.fail("expected one graph id, got " + std::to_string(fields.size()) + " fields");
    const std::int64_t id = indicator.integer(fields[0], "graph id");
    const auto node = static_cast<std::int64_t>(graph_of.size());
    if (node == limits.max_nodes) {
      throw LimitError(kReader, indicator.where(), indicator.line(),
                       "more than " + std::to_string(limits.max_nodes) +
                           " nodes: over the node limit (raise it with --max-nodes)");
    }
    const auto graphs = static_cast<std::int64_t>(out.offsets.size()) - 1;
    if (id == graphs + 1) {
      if (graphs > 0 && out.offsets.back() == node) {
        indicator.fail("graph " + std::to_string(graphs) + " has no nodes");
      }
      out.offsets.push_back(node);
    } else if (id != graphs) {
      indicator.fail(graphs == 0 ? "the first graph id is " + std::to_string(id) + ", expected 1"
                     : id < graphs
                         ? "graph id " + std::to_string(id) + " after " + std::to_string(graphs) +
                               ": the ids must not decrease (a graph's nodes are contiguous)"
                         : "graph id " + std::to_string(id) + " after " + std::to_string(graphs) +
                               ": graph " + std::to_string(graphs + 1) + " has no nodes");
    }
    graph_of.push_back(static_cast<std::int32_t>(id - 1));
  }
  if (graph_of.empty()) files.fail(files.name() + "_graph_indicator.txt lists no node");
  // offsets holds each graph's first node after a leading 0: make it G + 1 bounds.
  out.offsets.erase(out.offsets.begin());
  const auto num_nodes = static_cast<std::int64_t>(graph_of.size());
  out.offsets.push_back(num_nodes);
  const auto num_graphs = static_cast<std::int64_t>(out.offsets.size()) - 1;

  // Graph labels, mapped to classes in numeric order.
  {
    const Table table = read_table(files, "graph_labels", num_graphs, "graphs", limits);
    if (table.cols != 1) {
      throw ParseError(kReader, files.where("graph_labels"), 1,
                       "expected one label per line, got " + std::to_string(table.cols));
    }
    std::map<std::int64_t, std::int32_t> classes;
    std::vector<std::int64_t> values;
    for (std::size_t g = 0; g < table.cells.size(); ++g) {
      const auto value = detail::parse_integer(table.cells[g]);
      if (!value) {
        throw ParseError(kReader, files.where("graph_labels"), static_cast<std::int64_t>(g) + 1,
                         "graph label " + detail::quoted(table.cells[g]) + " is not an integer");
      }
      values.push_back(*value);
      classes.emplace(*value, 0);
    }
    if (static_cast<std::int64_t>(classes.size()) > limits.max_classes) {
      throw LimitError(kReader, files.where("graph_labels"), 0,
                       std::to_string(classes.size()) + " classes, over the limit of " +
                           std::to_string(limits.max_classes) + " (raise it with --max-classes)");
    }
    std::int32_t next = 0;
    for (auto& [value, id] : classes) {
      id = next++;
      out.class_names.push_back(std::to_string(value));
    }
    for (const std::int64_t value : values) out.labels.push_back(classes.at(value));
  }

  // Edges: `row, col` per line, 1-based, within one graph.
  Lines edges(files.read("A"), files.where("A"));
  EdgeList list;
  std::int64_t self_loops = 0;
  std::int64_t position = 0;
  std::vector<std::int64_t> kept_rows;  // the file row of each edge of `list`
  while (edges.next(fields)) {
    if (fields.size() != 2) {
      edges.fail("expected 2 fields (row, col), got " + std::to_string(fields.size()));
    }
    std::int64_t ends[2];
    for (int k = 0; k < 2; ++k) {
      ends[k] = edges.integer(fields[static_cast<std::size_t>(k)], "node id");
      if (ends[k] < 1 || ends[k] > num_nodes) {
        edges.fail("node " + std::to_string(ends[k]) + " is outside the " +
                   std::to_string(num_nodes) + " nodes of the graph indicator (ids 1 to " +
                   std::to_string(num_nodes) + ")");
      }
    }
    const auto source = static_cast<NodeId>(ends[0] - 1);
    const auto target = static_cast<NodeId>(ends[1] - 1);
    if (graph_of[static_cast<std::size_t>(source)] != graph_of[static_cast<std::size_t>(target)]) {
      edges.fail("the edge " + std::to_string(ends[0]) + " -> " + std::to_string(ends[1]) +
                 " joins graph " + std::to_string(graph_of[static_cast<std::size_t>(source)] + 1) +
                 " to graph " + std::to_string(graph_of[static_cast<std::size_t>(target)] + 1));
    }
    if (position == limits.max_edges) {
      throw LimitError(kReader, edges.where(), edges.line(),
                       "more than " + std::to_string(limits.max_edges) +
                           " edges: over the edge limit (raise it with --max-edges)");
    }
    if (source == target) {
      ++self_loops;
    } else {
      list.sources.push_back(source);
      list.targets.push_back(target);
      kept_rows.push_back(position);
    }
    ++position;
  }
  const GraphEdit built = build_graph(num_nodes, list);
  out.graph = built.graph;
  if (self_loops > 0) {
    out.notes.push_back(files.name() + "_A.txt: " + std::to_string(self_loops) +
                        " self-loop(s) dropped, as PyG does (attention layers add their own)");
  }
  if (built.removed > 0) {
    if (options.strict) {
      throw ParseError(kReader, files.where("A"), 0,
                       std::to_string(built.removed) + " duplicate edge(s) (--strict)");
    }
    out.notes.push_back(files.name() + "_A.txt: " + std::to_string(built.removed) +
                        " duplicate edge(s) merged, the first kept");
  }

  // Node features: one-hot labels, then attributes; or the one-hot in-degree.
  out.features = labels_and_attributes(files, "node", num_nodes, "nodes", limits);
  if (out.features.cols() == 0) {
    std::int64_t top = 0;
    for (NodeId v = 0; v < num_nodes; ++v)
      top = std::max<std::int64_t>(top, out.graph.in_degree(v));
    const std::int64_t columns = std::min(top + 1, kMaxDegreeColumns);
    out.features = RowMatrix<float>::Zero(num_nodes, columns);
    for (NodeId v = 0; v < num_nodes; ++v) {
      out.features(v, std::min<std::int64_t>(out.graph.in_degree(v), columns - 1)) = 1.0F;
    }
    out.notes.push_back(files.name() + ": no node labels or attributes: the features are the " +
                        "one-hot in-degree (" + std::to_string(columns) + " columns" +
                        (top + 1 > columns
                             ? ", degrees from " + std::to_string(columns - 1) + " up in the last"
                             : std::string()) +
                        ")");
  }

  // Edge features: one row per listed edge, carried to the graph's edges by their first listing.
  const RowMatrix<float> per_listed =
      labels_and_attributes(files, "edge", position, "edges of _A.txt", limits);
  out.edge_features = RowMatrix<float>(out.graph.num_edges(), per_listed.cols());
  if (per_listed.cols() > 0) {
    const std::vector<EdgeId> origins = edge_origins(out.graph, list);
    for (EdgeId e = 0; e < out.graph.num_edges(); ++e) {
      out.edge_features.row(e) =
          per_listed.row(kept_rows[static_cast<std::size_t>(origins[static_cast<std::size_t>(e)])]);
    }
  }
  return out;
}

GraphBatch make_batch(const GraphCollection& collection, std::span<const std::int64_t> graphs) {
  const Graph& whole = collection.graph;
  const auto in_offsets = whole.in_offsets();
  const auto in_sources = whole.in_sources();
  GraphBatch batch;
  batch.offsets.push_back(0);
  std::int64_t nodes = 0;
  std::int64_t edges = 0;
  for (const std::int64_t g : graphs) {
    if (g < 0 || g >= collection.num_graphs()) {
      throw IndexError("make_batch: graph " + std::to_string(g) + " is outside [0, " +
                       std::to_string(collection.num_graphs()) + ")");
    }
    const auto i = static_cast<std::size_t>(g);
    nodes += collection.offsets[i + 1] - collection.offsets[i];
    edges += in_offsets[static_cast<std::size_t>(collection.offsets[i + 1])] -
             in_offsets[static_cast<std::size_t>(collection.offsets[i])];
    batch.offsets.push_back(nodes);
    batch.labels.push_back(collection.labels[i]);
    batch.graphs.push_back(g);
  }
  std::vector<EdgeId> offsets;
  offsets.reserve(static_cast<std::size_t>(nodes) + 1);
  offsets.push_back(0);
  std::vector<NodeId> sources;
  sources.reserve(static_cast<std::size_t>(edges));
  batch.features.resize(nodes, collection.features.cols());
  batch.edge_features.resize(edges, collection.edge_features.cols());
  for (std::size_t b = 0; b < batch.graphs.size(); ++b) {
    const auto first =
        static_cast<std::size_t>(collection.offsets[static_cast<std::size_t>(batch.graphs[b])]);
    const auto count = static_cast<std::size_t>(batch.offsets[b + 1] - batch.offsets[b]);
    const auto shift = static_cast<NodeId>(batch.offsets[b]) - static_cast<NodeId>(first);
    const EdgeId edge_begin = in_offsets[first];
    const EdgeId edge_end = in_offsets[first + count];
    const auto at = static_cast<Eigen::Index>(sources.size());
    for (EdgeId e = edge_begin; e < edge_end; ++e) {
      sources.push_back(in_sources[static_cast<std::size_t>(e)] + shift);
    }
    for (std::size_t v = first; v < first + count; ++v) {
      offsets.push_back(offsets.back() + (in_offsets[v + 1] - in_offsets[v]));
    }
    batch.features.middleRows(batch.offsets[b], static_cast<Eigen::Index>(count)) =
        collection.features.middleRows(static_cast<Eigen::Index>(first),
                                       static_cast<Eigen::Index>(count));
    if (collection.edge_features.cols() > 0) {
      batch.edge_features.middleRows(at, edge_end - edge_begin) =
          collection.edge_features.middleRows(edge_begin, edge_end - edge_begin);
    }
  }
  batch.graph = Graph(nodes, std::move(offsets), std::move(sources));
  return batch;
}

GraphCollection collection_of(const GraphCollection& collection,
                              std::span<const std::int64_t> graphs) {
  GraphBatch batch = make_batch(collection, graphs);
  GraphCollection subset;
  subset.name = collection.name;
  subset.graph = std::move(batch.graph);
  subset.features = std::move(batch.features);
  subset.edge_features = std::move(batch.edge_features);
  subset.offsets = std::move(batch.offsets);
  subset.labels = std::move(batch.labels);
  subset.class_names = collection.class_names;
  return subset;
}

}  // namespace maskgat
