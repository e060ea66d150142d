#include "maskgat/io/linqs.hpp"

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "io/detail/assemble.hpp"
#include "io/detail/text.hpp"
#include "maskgat/core/error.hpp"
#include "maskgat/graph/build.hpp"
#include "maskgat/io/labels.hpp"
#include "maskgat/io/splits.hpp"

namespace maskgat {
namespace {

constexpr std::string_view kReader = "linqs";

// LINQS files separate fields by tabs or spaces only; commas are left inside tokens.
void split_whitespace(std::string_view line, std::vector<std::string_view>& fields) {
  fields.clear();
  const auto is_blank = [](char c) { return c == ' ' || c == '\t' || c == '\v' || c == '\f'; };
  std::size_t pos = 0;
  while (pos < line.size()) {
    while (pos < line.size() && is_blank(line[pos])) ++pos;
    const std::size_t start = pos;
    while (pos < line.size() && !is_blank(line[pos])) ++pos;
    if (pos > start) fields.push_back(line.substr(start, pos - start));
  }
}

bool is_blank_line(std::string_view line) noexcept {
  return line.find_first_not_of(" \t\v\f") == std::string_view::npos;
}

struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view text) const noexcept {
    return std::hash<std::string_view>{}(text);
  }
};

// The feature value of `token`; 0 for entries that are not stored. Binary files make "0" and
// "1" the overwhelming majority, so they skip the general number parser.
float feature_value(std::string_view token, const detail::LineReader& reader,
                    std::string_view paper, std::size_t column) {
  if (token.size() == 1 && token[0] == '0') return 0.0F;
  if (token.size() == 1 && token[0] == '1') return 1.0F;
  const auto value = detail::parse_number(token);
  if (!value || !std::isfinite(*value) ||
      std::abs(*value) > static_cast<double>(std::numeric_limits<float>::max())) {
    reader.fail("paper '" + std::string(paper) + "': feature column " + std::to_string(column) +
                " is " + detail::quoted(token) + ", expected a finite number");
  }
  return static_cast<float>(*value);
}

detail::LineReader open_or_explain(const std::filesystem::path& path,
                                   const std::filesystem::path& dir, std::string_view name,
                                   const Limits& limits) {
  try {
    return detail::LineReader(path, kReader, limits.max_line_bytes);
  } catch (const IoError& error) {
    std::filesystem::path data_dir = dir.parent_path().parent_path();
    if (data_dir.empty()) data_dir = ".";
    throw IoError(std::string(error.what()) + " (fetch it with: datasets/fetch.sh --dest " +
                  data_dir.string() + " " + std::string(name) + " (installed: maskgat-fetch))");
  }
}

struct Content {
  NodeIndex papers;
  SparseFeatures features;
  std::vector<std::int32_t> labels;
  std::vector<std::string> class_names;
};

Content read_content(const std::filesystem::path& path, const std::filesystem::path& dir,
                     std::string_view name, const ReadOptions& options) {
  detail::LineReader reader = open_or_explain(path, dir, name, options.limits);
  Content content{NodeIndex::named(options.limits.max_nodes), {}, {}, {}};

  std::vector<int> row_starts{0};
  std::vector<int> columns;
  std::vector<float> values;
  std::vector<std::int64_t> first_line;
  std::vector<std::int32_t> raw_labels;
  std::unordered_map<std::string, std::int32_t, StringHash, std::equal_to<>> label_ids;
  std::vector<std::string> label_names;

  std::vector<std::string_view> fields;
  std::size_t expected_fields = 0;
  std::string_view line;
  while (reader.next(line)) {
    if (is_blank_line(line)) continue;
    split_whitespace(line, fields);
    if (expected_fields == 0) {
      if (fields.size() < 3) {
        reader.fail("expected at least 3 fields (paper id, features, label), got " +
                    std::to_string(fields.size()));
      }
      const auto width = static_cast<std::int64_t>(fields.size() - 2);
      if (width > options.limits.max_features || width > std::numeric_limits<int>::max()) {
        reader.fail_limit(std::to_string(width) + " features: over the feature limit of " +
                          std::to_string(options.limits.max_features) +
                          " (raise it with --max-features)");
      }
      expected_fields = fields.size();
    } else if (fields.size() != expected_fields) {
      reader.fail("expected " + std::to_string(expected_fields) + " fields (paper id, " +
                  std::to_string(expected_fields - 2) + " features, label), got " +
                  std::to_string(fields.size()));
    }

    const std::string_view paper = fields.front();
    const std::int64_t known = content.papers.size();
    const NodeId id = detail::node_id_or_throw(content.papers, paper, kReader, reader.path(),
                                               reader.line_number());
    if (id < known) {
      reader.fail("paper '" + std::string(paper) + "' is listed twice (first on line " +
                  std::to_string(first_line[static_cast<std::size_t>(id)]) + ")");
    }
    first_line.push_back(reader.line_number());

    for (std::size_t field = 1; field + 1 < fields.size(); ++field) {
      const float value = feature_value(fields[field], reader, paper, field - 1);
      if (value == 0.0F) continue;
      if (columns.size() >= static_cast<std::size_t>(std::numeric_limits<int>::max())) {
        reader.fail_limit("more than " + std::to_string(std::numeric_limits<int>::max()) +
                          " nonzero features: over the sparse index range");
      }
      columns.push_back(static_cast<int>(field - 1));
      values.push_back(value);
    }
    row_starts.push_back(static_cast<int>(columns.size()));

    const std::string_view label = fields.back();
    auto found = label_ids.find(label);
    if (found == label_ids.end()) {
      if (static_cast<std::int64_t>(label_names.size()) >= options.limits.max_classes) {
        reader.fail_limit("label '" + std::string(label) + "' would be class " +
                          std::to_string(label_names.size() + 1) + ", over the limit of " +
                          std::to_string(options.limits.max_classes) +
                          " classes (raise it with --max-classes)");
      }
      found = label_ids.emplace(std::string(label), static_cast<std::int32_t>(label_names.size()))
                  .first;
      label_names.emplace_back(label);
    }
    raw_labels.push_back(found->second);
  }
  if (expected_fields == 0)
    throw ParseError(kReader, reader.path(), 0, "no papers: the file is empty");
  content.papers.freeze();

  const auto rows = static_cast<Eigen::Index>(raw_labels.size());
  const auto cols = static_cast<Eigen::Index>(expected_fields - 2);
  content.features =
      Eigen::Map<const SparseFeatures>(rows, cols, static_cast<Eigen::Index>(values.size()),
                                       row_starts.data(), columns.data(), values.data());

  content.class_names = sort_class_names(label_names);
  std::vector<std::int32_t> sorted_id(label_names.size());
  for (std::size_t sorted = 0; sorted < content.class_names.size(); ++sorted) {
    sorted_id[static_cast<std::size_t>(label_ids.find(content.class_names[sorted])->second)] =
        static_cast<std::int32_t>(sorted);
  }
  content.labels.reserve(raw_labels.size());
  for (const std::int32_t raw : raw_labels) {
    content.labels.push_back(sorted_id[static_cast<std::size_t>(raw)]);
  }
  return content;
}

// Self-loops and duplicate citations are facts of the published files (CiteSeer cites itself
// 124 times), not contradictions, so they stay notes even with `strict`; only a citation of a
// paper missing from `.content` is an error when strict, since it drops information.
Graph read_cites(const std::filesystem::path& path, const std::filesystem::path& dir,
                 std::string_view name, const NodeIndex& papers, const ReadOptions& options,
                 Notes& notes) {
  detail::LineReader reader = open_or_explain(path, dir, name, options.limits);
  const std::string content_name = std::string(name) + ".content";
  EdgeListOptions edge_options;
  edge_options.read = options;

  EdgeList edges;
  std::int64_t dropped = 0;
  std::vector<std::string_view> fields;
  std::string_view line;
  while (reader.next(line)) {
    if (is_blank_line(line)) continue;
    split_whitespace(line, fields);
    if (fields.size() != 2) {
      reader.fail("expected 2 fields (cited paper, citing paper), got " +
                  std::to_string(fields.size()));
    }
    const auto cited = papers.find(fields[0]);
    const auto citing = papers.find(fields[1]);
    if (!cited || !citing) {
      if (options.strict) {
        reader.fail("citation of unknown paper '" + std::string(cited ? fields[1] : fields[0]) +
                    "': it is not in " + content_name + " (--strict)");
      }
      ++dropped;
      continue;
    }
    detail::check_edge_limit(static_cast<std::int64_t>(edges.sources.size()) + 1, edge_options,
                             kReader, reader.path(), reader.line_number());
    edges.sources.push_back(*citing);
    edges.targets.push_back(*cited);
  }

  const std::string prefix = std::string(kReader) + ": " + reader.path() + ": ";
  if (dropped > 0) {
    notes.push_back(prefix + std::to_string(dropped) + " citation(s) of papers not in " +
                    content_name + " dropped");
  }
  GraphEdit built = build_graph(papers.size(), edges);
  if (built.removed > 0) {
    notes.push_back(prefix + std::to_string(built.removed) + " duplicate citation(s) merged");
  }
  detail::check_edge_limit(2 * built.graph.num_edges(), edge_options, kReader, reader.path(), 0);
  GraphEdit both = symmetrize(built.graph);
  GraphEdit simple = remove_self_loops(both.graph);
  if (simple.removed > 0) {
    notes.push_back(prefix + std::to_string(simple.removed) + " self-loop(s) removed");
  }
  return std::move(simple.graph);
}

}  // namespace

Dataset read_linqs(const std::filesystem::path& dir, std::string_view name,
                   const DatasetOptions& options) {
  if (name != "cora" && name != "citeseer") {
    throw InvalidArgument("linqs: unknown dataset '" + std::string(name) +
                          "': expected cora or citeseer");
  }
  std::filesystem::path base = dir;
  if (!base.has_filename()) base = base.parent_path();

  Content content = read_content(base / (std::string(name) + ".content"), base, name, options.read);
  Dataset dataset;
  dataset.name = std::string(name);
  dataset.preparation.undirected = true;  // read_cites symmetrises
  dataset.graph = read_cites(base / (std::string(name) + ".cites"), base, name, content.papers,
                             options.read, dataset.notes);
  dataset.features = FeatureMatrix(std::move(content.features));
  normalize_features(dataset, options.normalize_features);
  dataset.labels = std::move(content.labels);
  dataset.class_names = std::move(content.class_names);
  dataset.node_names = content.papers.names();
  draw_split(dataset, options.split_sizes, options.seed);
  return dataset;
}

}  // namespace maskgat
