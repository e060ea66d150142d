#include "maskgat/io/dataset.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <iomanip>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/detail/binary_record.hpp"
#include "io/detail/input_file.hpp"
#include "io/detail/normalization.hpp"
#include "maskgat/core/error.hpp"
#include "maskgat/graph/bgl.hpp"
#include "maskgat/graph/build.hpp"
#include "maskgat/io/dot.hpp"
#include "maskgat/io/edge_features.hpp"
#include "maskgat/io/edge_list.hpp"
#include "maskgat/io/graphml.hpp"
#include "maskgat/io/labels.hpp"
#include "maskgat/io/linqs.hpp"
#include "maskgat/io/npz.hpp"
#include "maskgat/io/planetoid.hpp"
#include "maskgat/io/synthetic.hpp"

namespace maskgat {
namespace {

enum class GraphFormat { kEdgeList, kGraphMl, kDot };

GraphFormat graph_format(const FileSources& files) {
  std::string format = files.format;
  if (format == "auto") {
    std::string extension = files.graph.extension().string();
    std::transform(extension.begin(), extension.end(), extension.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (extension == ".graphml") return GraphFormat::kGraphMl;
    if (extension == ".dot" || extension == ".gv") return GraphFormat::kDot;
    return GraphFormat::kEdgeList;
  }
  if (format == "edgelist") return GraphFormat::kEdgeList;
  if (format == "graphml") return GraphFormat::kGraphMl;
  if (format == "dot") return GraphFormat::kDot;
  throw InvalidArgument("unknown graph format '" + format +
                        "': expected auto, edgelist, graphml or dot");
}

DegreeSummary summarize(std::vector<EdgeId> degrees) {
  DegreeSummary summary;
  if (degrees.empty()) return summary;
  const auto middle = degrees.begin() + static_cast<std::ptrdiff_t>((degrees.size() - 1) / 2);
  std::nth_element(degrees.begin(), middle, degrees.end());
  summary.median = *middle;
  const auto [low, high] = std::minmax_element(degrees.begin(), degrees.end());
  summary.min = *low;
  summary.max = *high;
  return summary;
}

}  // namespace

std::vector<NodeId> Dataset::nodes_in(SplitPart part) const {
  std::vector<NodeId> ids;
  for (std::size_t i = 0; i < split.size(); ++i) {
    if (split[i] == part) ids.push_back(static_cast<NodeId>(i));
  }
  return ids;
}

void Dataset::require_features() const {
  if (!missing_features.empty()) throw IoError(name + ": " + missing_features);
}

std::filesystem::path resolve_data_dir(const std::optional<std::filesystem::path>& flag,
                                       const std::filesystem::path& fallback) {
  if (flag) return *flag;
  const char* env = std::getenv("MASKGAT_DATA_DIR");
  if (env != nullptr && *env != '\0') return env;
  return fallback;
}

bool detail::normalizes_rows(FeatureNormalization rule, bool has_negative, Notes& notes) {
  if (rule != FeatureNormalization::kAuto) return rule == FeatureNormalization::kRows;
  if (has_negative) notes.push_back("features have negative entries, so rows are not normalised");
  return !has_negative;
}

DatasetFingerprint fingerprint(const Dataset& dataset) {
  std::string nodes;
  for (std::size_t i = 0; i < dataset.node_names.size(); ++i) {
    nodes += dataset.node_names[i];
    nodes += '\0';
    const std::int32_t label = i < dataset.labels.size() ? dataset.labels[i] : -1;
    nodes.append(reinterpret_cast<const char*>(&label), sizeof(label));
  }
  std::string parts;
  parts.reserve(dataset.split.size());
  for (const SplitPart part : dataset.split) parts += static_cast<char>(part);
  return {detail::fnv1a(nodes), detail::fnv1a(parts)};
}

void normalize_features(Dataset& dataset, FeatureNormalization rule) {
  FeatureMatrix& features = dataset.features;
  bool has_negative = false;
  if (rule == FeatureNormalization::kAuto) {
    const InputRef<float> values = features.view();
    if (values.is_sparse()) {
      const auto sparse = values.sparse();
      has_negative = std::any_of(sparse.valuePtr(), sparse.valuePtr() + sparse.nonZeros(),
                                 [](float value) { return value < 0.0F; });
    } else {
      has_negative = values.dense().size() > 0 && values.dense().minCoeff() < 0.0F;
    }
  }
  const bool normalize = detail::normalizes_rows(rule, has_negative, dataset.notes);
  if (normalize) features.normalize_rows();
  dataset.preparation.rows_normalized = normalize;
}

Notes direction_notes(const Graph& graph) {
  std::int64_t without_in_edges = 0;
  EdgeId edges = 0;
  EdgeId reversed = 0;
  for (NodeId node = 0; node < graph.num_nodes(); ++node) {
    std::int64_t in_edges = 0;
    for (const NodeId source : graph.in_neighbors(node)) {
      if (source == node) continue;
      ++in_edges;
      const auto back = graph.in_neighbors(source);
      reversed += std::binary_search(back.begin(), back.end(), node) ? 1 : 0;
    }
    edges += in_edges;
    const auto out = graph.out_neighbors(node);
    const bool points_out =
        std::any_of(out.begin(), out.end(), [node](NodeId t) { return t != node; });
    if (in_edges == 0 && points_out) ++without_in_edges;
  }
  Notes notes;
  const auto nodes = static_cast<double>(graph.num_nodes());
  if (without_in_edges > 0 && static_cast<double>(without_in_edges) >= 0.05 * nodes) {
    notes.push_back(std::to_string(without_in_edges) + " of " + std::to_string(graph.num_nodes()) +
                    " nodes have out-edges but no in-edge other than their self-loop, so they "
                    "attend only to themselves; an edge j -> i lets i attend to j, and "
                    "--undirected makes every edge count both ways");
  }
  if (edges > 0 && reversed == edges) {
    notes.push_back("every edge has its reverse: the edge list is undirected as given");
  } else if (edges > 0 && static_cast<double>(reversed) >= 0.9 * static_cast<double>(edges)) {
    std::ostringstream share;
    share << std::fixed << std::setprecision(1)
          << 100.0 * static_cast<double>(reversed) / static_cast<double>(edges);
    notes.push_back(share.str() +
                    " % of the edges have their reverse: the edge list looks "
                    "undirected with " +
                    std::to_string(edges - reversed) +
                    " reverse edge(s) missing; --undirected adds them");
  }
  return notes;
}

void draw_split(Dataset& dataset, const std::optional<RandomSplitSizes>& sizes,
                std::uint64_t seed) {
  const RandomSplitSizes drawn =
      sizes ? *sizes : default_split_sizes(dataset.labels, dataset.num_classes(), dataset.notes);
  dataset.split = random_split(dataset.labels, dataset.num_classes(), drawn, seed, dataset.notes);
  dataset.preparation.random_split = true;
  dataset.preparation.split_seed = seed;
  dataset.preparation.split_sizes = drawn;
  dataset.preparation.fixed_split = -1;
}

void use_fixed_split(Dataset& dataset, std::int64_t index) {
  const auto count = static_cast<std::int64_t>(dataset.fixed_splits.size());
  if (count == 0) {
    throw InvalidArgument("split index " + std::to_string(index) + ": " + dataset.name +
                          " carries no fixed splits");
  }
  if (index < 0 || index >= count) {
    throw InvalidArgument(
        "split index " + std::to_string(index) + " is out of range: " + dataset.name + " carries " +
        std::to_string(count) + " fixed splits, 0 to " + std::to_string(count - 1));
  }
  dataset.split = dataset.fixed_splits[static_cast<std::size_t>(index)];
  dataset.preparation.random_split = false;
  dataset.preparation.fixed_split = index;
}

void keep_largest_component(Dataset& dataset) {
  dataset.preparation.largest_component = true;
  std::vector<std::int32_t> component;
  const std::int64_t count = weak_components(dataset.graph, &component);
  if (count <= 1) return;
  std::vector<std::int64_t> sizes(static_cast<std::size_t>(count), 0);
  for (const std::int32_t c : component) ++sizes[static_cast<std::size_t>(c)];
  const auto largest =
      static_cast<std::int32_t>(std::max_element(sizes.begin(), sizes.end()) - sizes.begin());
  std::vector<NodeId> kept;
  std::vector<NodeId> new_id(component.size(), -1);
  for (std::size_t i = 0; i < component.size(); ++i) {
    if (component[i] != largest) continue;
    new_id[i] = static_cast<NodeId>(kept.size());
    kept.push_back(static_cast<NodeId>(i));
  }
  EdgeList edges = to_edge_list(dataset.graph);
  EdgeList inside;
  for (std::size_t e = 0; e < edges.sources.size(); ++e) {
    const NodeId source = new_id[static_cast<std::size_t>(edges.sources[e])];
    if (source < 0) continue;  // both ends lie in one component
    inside.sources.push_back(source);
    inside.targets.push_back(new_id[static_cast<std::size_t>(edges.targets[e])]);
    if (!edges.weights.empty()) inside.weights.push_back(edges.weights[e]);
  }
  edges = EdgeList();
  dataset.graph = build_graph(static_cast<std::int64_t>(kept.size()), inside).graph;
  if (dataset.features.rows() == static_cast<std::int64_t>(component.size())) {
    dataset.features = dataset.features.select_rows(kept);
  }
  const auto keep = [&](auto& values) {
    if (values.size() != component.size()) return;  // absent (or not per node)
    std::remove_reference_t<decltype(values)> selected;
    selected.reserve(kept.size());
    for (const NodeId node : kept) selected.push_back(values[static_cast<std::size_t>(node)]);
    values = std::move(selected);
  };
  keep(dataset.labels);
  keep(dataset.node_names);
  keep(dataset.split);
  for (std::vector<SplitPart>& fixed : dataset.fixed_splits) keep(fixed);
  dataset.notes.push_back("largest component: " + std::to_string(kept.size()) + " of " +
                          std::to_string(component.size()) + " nodes kept (" +
                          std::to_string(count) + " components)");
  if (dataset.preparation.random_split) {
    std::erase_if(dataset.notes,
                  [](const std::string& note) { return note.starts_with("random split:"); });
    draw_split(dataset, dataset.preparation.split_sizes, dataset.preparation.split_seed);
  }
}

void read_split_into(Dataset& dataset, const std::filesystem::path& path,
                     const ReadOptions& options) {
  NodeIndex nodes = NodeIndex::named(static_cast<std::int64_t>(dataset.node_names.size()));
  NodeIndex::Status status{};
  for (const std::string& name : dataset.node_names) static_cast<void>(nodes.insert(name, status));
  nodes.freeze();
  dataset.split = read_split(path, nodes, options, dataset.notes, dataset.labels);
  dataset.preparation.random_split = false;
  dataset.preparation.fixed_split = -1;
  std::erase_if(dataset.notes,
                [](const std::string& note) { return note.starts_with("random split:"); });
}

namespace {

// The largest component when the options ask for it (read_npz keeps it itself); a fixed split
// asked of data that carries none is refused (read_npz picks its own).
Dataset with_option_rules(Dataset dataset, const DatasetOptions& options) {
  if (options.fixed_split && dataset.fixed_splits.empty()) {
    use_fixed_split(dataset, *options.fixed_split);
  }
  if (options.largest_component && !dataset.preparation.largest_component) {
    if (dataset.edge_features.size() > 0) {
      throw InvalidArgument(dataset.name +
                            ": the largest component is not taken of a graph with edge features");
    }
    keep_largest_component(dataset);
  }
  return dataset;
}

Dataset load_named(std::string_view name, const DatasetOptions& options) {
  // Names are matched without regard to case (`Cora` is `cora`); a spec's keys are lower case.
  std::string canonical(name);
  const std::size_t spec = std::min(canonical.find(':'), canonical.size());
  std::transform(canonical.begin(), canonical.begin() + static_cast<std::ptrdiff_t>(spec),
                 canonical.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (canonical.starts_with("synthetic:")) {
    return make_synthetic(parse_synthetic_spec(canonical), options);
  }
  if (canonical == "cora" || canonical == "citeseer" || canonical == "pubmed") {
    if (options.source == DatasetSource::kLinqs) {
      return read_linqs(options.data_dir / "linqs" / canonical, canonical, options);
    }
    return read_planetoid(options.data_dir / "planetoid", canonical, options);
  }
  // Shchur et al.'s graphs and the heterophily benchmark's, as the mirror and datasets/fetch.sh
  // keep them.
  constexpr std::pair<std::string_view, std::string_view> kNpzGraphs[] = {
      {"amazon-computers", "graphdata/amazon_cs.npz"},
      {"amazon-photo", "graphdata/amazon_photo.npz"},
      {"coauthor-cs", "graphdata/coauthor_cs.npz"},
      {"actor", "heterophily/actor.npz"},
      {"chameleon-filtered", "heterophily/chameleon_filtered.npz"},
      {"squirrel-filtered", "heterophily/squirrel_filtered.npz"},
      {"tolokers", "heterophily/tolokers.npz"},
      {"cornell", "heterophily/cornell.npz"},
      {"texas", "heterophily/texas.npz"},
      {"wisconsin", "heterophily/wisconsin.npz"}};
  for (const auto& [graph, file] : kNpzGraphs) {
    if (canonical != graph) continue;
    try {
      return read_npz(options.data_dir / file, canonical, options);
    } catch (const IoError& error) {
      throw IoError(std::string(error.what()) + " (fetch it with: datasets/fetch.sh --dest " +
                    options.data_dir.string() + " " + canonical + " (installed: maskgat-fetch))");
    }
  }
  throw InvalidArgument("unknown dataset '" + std::string(name) +
                        "': expected cora, citeseer, pubmed, amazon-computers, amazon-photo, "
                        "coauthor-cs, actor, chameleon-filtered, squirrel-filtered, tolokers, "
                        "cornell, texas, wisconsin or synthetic:nodes=N,...");
}

}  // namespace

Dataset load_dataset(std::string_view name, const DatasetOptions& options) {
  return with_option_rules(load_named(name, options), options);
}

Dataset load_files(const FileSources& files, const DatasetOptions& options) {
  NodeIndex nodes = files.numeric_ids
                        ? NodeIndex::numeric(files.num_nodes, options.read.limits.max_nodes)
                        : NodeIndex::named(options.read.limits.max_nodes);
  Dataset dataset;
  dataset.name = files.graph.filename().string();
  // Every file is checked before any is parsed: a missing labels file is reported at once, not
  // after a large features file has been read.
  const GraphFormat format = graph_format(files);
  const std::string_view graph_reader = format == GraphFormat::kGraphMl ? "graphml"
                                        : format == GraphFormat::kDot   ? "dot"
                                                                        : "edge_list";
  if (!files.edge_features.empty() && format != GraphFormat::kEdgeList) {
    throw InvalidArgument(
        files.graph.string() + ": edge features (" + files.edge_features.string() +
        ") are read beside an edge list only, not a " + std::string(graph_reader) + " file");
  }
  for (const auto& [path, reader] :
       {std::pair{&files.graph, graph_reader},
        std::pair{&files.edge_features, std::string_view("edge_features")},
        std::pair{&files.features, std::string_view("features")},
        std::pair{&files.labels, std::string_view("labels")},
        std::pair{&files.split, std::string_view("split")}}) {
    if (!path->empty()) detail::require_readable(*path, reader);
  }
  if (!files.features.empty()) {
    FeatureTable table = read_features(files.features, nodes, options.read);
    dataset.features = std::move(table.matrix);
    dataset.feature_names = std::move(table.column_names);
  } else {
    dataset.missing_features = "no features file was given (--features)";
  }
  const EdgeListOptions graph_options{files.undirected, options.read, !files.edge_features.empty()};
  LoadedGraph loaded;
  switch (format) {
    case GraphFormat::kEdgeList:
      loaded = read_edge_list(files.graph, nodes, graph_options);
      break;
    case GraphFormat::kGraphMl:
      loaded = read_graphml(files.graph, nodes, graph_options);
      break;
    case GraphFormat::kDot:
      loaded = read_dot(files.graph, nodes, graph_options);
      break;
  }
  nodes.freeze();
  if (!files.edge_features.empty()) {
    const RowMatrix<float> listed = read_edge_features(files.edge_features, options.read);
    if (listed.rows() != loaded.edges_read) {
      throw ParseError("edge_features", files.edge_features.string(), 0,
                       std::to_string(listed.rows()) + " rows, but " + files.graph.string() +
                           " lists " + std::to_string(loaded.edges_read) +
                           " edges: expected one row per edge, in its order");
    }
    dataset.edge_features.resize(loaded.graph.num_edges(), listed.cols());
    for (std::size_t e = 0; e < loaded.origins.size(); ++e) {
      dataset.edge_features.row(static_cast<EdgeId>(e)) = listed.row(loaded.origins[e]);
    }
  }
  dataset.graph = std::move(loaded.graph);
  dataset.notes = std::move(loaded.notes);
  dataset.node_names = nodes.names();
  const auto num_nodes = static_cast<std::size_t>(dataset.graph.num_nodes());
  if (files.features.empty())
    dataset.features = FeatureMatrix(DenseFeatures(dataset.graph.num_nodes(), 0));
  if (!files.labels.empty()) {
    LabelTable table = read_labels(files.labels, nodes, options.read, dataset.notes);
    dataset.labels = std::move(table.labels);
    dataset.class_names = std::move(table.class_names);
  } else {
    dataset.labels.assign(num_nodes, -1);
  }
  if (!files.split.empty()) {
    dataset.split =
        read_split(files.split, nodes, options.read, dataset.notes,
                   files.labels.empty() ? std::span<const std::int32_t>()
                                        : std::span<const std::int32_t>(dataset.labels));
  } else if (!files.labels.empty()) {
    draw_split(dataset, options.split_sizes, options.seed);
  } else {
    dataset.split.assign(num_nodes, SplitPart::kNone);
  }
  dataset.preparation.undirected = loaded.undirected;
  if (!loaded.undirected) {
    for (std::string& note : direction_notes(dataset.graph))
      dataset.notes.push_back(std::move(note));
  }
  if (!files.features.empty()) normalize_features(dataset, options.normalize_features);
  return with_option_rules(std::move(dataset), options);
}

Statistics compute_statistics(const Dataset& dataset) {
  const Graph& graph = dataset.graph;
  Statistics stats;
  stats.nodes = graph.num_nodes();
  stats.self_loops = graph.num_self_loops();
  stats.edges = graph.num_edges() - stats.self_loops;
  std::vector<EdgeId> in_degrees(static_cast<std::size_t>(graph.num_nodes()));
  std::vector<EdgeId> out_degrees(in_degrees.size());
  for (NodeId node = 0; node < graph.num_nodes(); ++node) {
    const auto i = static_cast<std::size_t>(node);
    const auto has_loop = [node](std::span<const NodeId> neighbors) {
      return std::binary_search(neighbors.begin(), neighbors.end(), node) ? 1 : 0;
    };
    in_degrees[i] = graph.in_degree(node) - has_loop(graph.in_neighbors(node));
    out_degrees[i] = graph.out_degree(node) - has_loop(graph.out_neighbors(node));
    if (in_degrees[i] == 0 && out_degrees[i] == 0) ++stats.isolated_nodes;
  }
  stats.in_degree = summarize(std::move(in_degrees));
  stats.out_degree = summarize(std::move(out_degrees));
  stats.components = weak_components(graph);
  stats.features = dataset.missing_features.empty() ? dataset.features.cols() : 0;
  stats.feature_density = dataset.missing_features.empty() ? dataset.features.density() : 0.0;
  stats.class_counts.assign(static_cast<std::size_t>(dataset.num_classes()), 0);
  for (const std::int32_t label : dataset.labels) {
    if (label < 0) {
      ++stats.unlabelled;
    } else {
      ++stats.class_counts[static_cast<std::size_t>(label)];
    }
  }
  for (const SplitPart part : dataset.split) {
    stats.train += part == SplitPart::kTrain ? 1 : 0;
    stats.val += part == SplitPart::kVal ? 1 : 0;
    stats.test += part == SplitPart::kTest ? 1 : 0;
  }
  return stats;
}

}  // namespace maskgat
