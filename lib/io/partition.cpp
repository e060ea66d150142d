#include "maskgat/io/partition.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "core/detail/binary_record.hpp"
#include "io/detail/input_file.hpp"
#include "io/detail/store_files.hpp"
#include "maskgat/core/error.hpp"
#include "maskgat/io/output_file.hpp"

namespace maskgat {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kPartReader = "partition";
constexpr std::string_view kPartFile = "part";
constexpr detail::Frame kPartFrame{"MGATPART", 3, "part file (it", "partition the data again"};

std::string part_name(std::int32_t part) { return "part-" + std::to_string(part); }

// The checksum that binds a `part` file to its store: FNV-1a 64 of the store's header file.
std::uint64_t header_checksum(const fs::path& store, std::int64_t max_bytes) {
  detail::InputFile file(store / detail::kStoreHeaderFile, kPartReader);
  return detail::fnv1a(detail::read_bounded_file(file, max_bytes, detail::Content::kBinary));
}

// What a `part` file holds.
struct PartRecord {
  std::int32_t part = 0;
  std::int32_t parts = 0;
  std::int64_t global_nodes = 0;
  std::uint64_t header = 0;
  std::vector<NodeId> offsets;
  std::vector<NodeId> globals;
  std::vector<NodeId> origins;
  std::vector<EdgeId> first_edges;
  std::vector<std::int64_t> first_entries;
  DatasetFingerprint whole;
};

void write_part_record(const fs::path& store, const PartRecord& record) {
  detail::RecordWriter payload;
  payload.scalar(record.part);
  payload.scalar(record.parts);
  payload.scalar(record.global_nodes);
  payload.scalar(record.header);
  payload.array(record.offsets);
  payload.array(record.globals);
  payload.array(record.origins);
  payload.array(record.first_edges);
  payload.array(record.first_entries);
  payload.scalar(record.whole.nodes);
  payload.scalar(record.whole.split);
  write_file_atomically(store / kPartFile, detail::framed(kPartFrame, payload), false);
}

[[noreturn]] void fail(const fs::path& path, const std::string& message) {
  throw ParseError(kPartReader, path.string(), 0, message);
}

PartRecord read_part_record(const fs::path& store, std::int64_t max_bytes) {
  const fs::path path = store / kPartFile;
  std::error_code error;
  if (!fs::exists(path, error)) {
    throw IoError(std::string(kPartReader) + ": " + store.string() +
                  ": not a part of a partition (no part file; maskgat partition writes them)");
  }
  detail::InputFile file(path, kPartReader);
  const std::string content = read_bounded_file(file, max_bytes, detail::Content::kBinary);
  const std::string_view payload =
      detail::framed_payload(content, kPartFrame, std::string(kPartReader), path.string());
  detail::RecordReader in(payload, std::string(kPartReader), path.string());
  PartRecord record;
  record.part = in.scalar<std::int32_t>();
  record.parts = in.scalar<std::int32_t>();
  record.global_nodes = in.scalar<std::int64_t>();
  record.header = in.scalar<std::uint64_t>();
  record.offsets = in.array<NodeId>();
  record.globals = in.array<NodeId>();
  record.origins = in.array<NodeId>();
  record.first_edges = in.array<EdgeId>();
  record.first_entries = in.array<std::int64_t>();
  record.whole.nodes = in.scalar<std::uint64_t>();
  record.whole.split = in.scalar<std::uint64_t>();
  in.finish();
  return record;
}

// Checks a part's record against itself and its store's dataset.
void check_part(const fs::path& path, const PartRecord& record, const Dataset& data) {
  if (record.parts < 1 || record.part < 0 || record.part >= record.parts) {
    fail(path, "part " + std::to_string(record.part) + " of " + std::to_string(record.parts) +
                   ", expected a part in [0, parts) and parts >= 1");
  }
  const auto parts = static_cast<std::size_t>(record.parts);
  if (record.offsets.size() != parts + 1) {
    fail(path, "holds " + std::to_string(record.offsets.size()) + " offsets, expected " +
                   std::to_string(parts + 1) + " (parts + 1)");
  }
  if (record.offsets.front() != 0 || record.offsets.back() != record.global_nodes) {
    fail(path, "offsets must run from 0 to " + std::to_string(record.global_nodes) +
                   " (the global nodes), got " + std::to_string(record.offsets.front()) + " to " +
                   std::to_string(record.offsets.back()));
  }
  for (std::size_t q = 0; q < parts; ++q) {
    if (record.offsets[q + 1] < record.offsets[q]) {
      fail(path, "offsets decrease at part " + std::to_string(q));
    }
  }
  const auto local = static_cast<std::size_t>(data.graph.num_nodes());
  const bool sparse = data.features.cols() > 0 && data.features.is_sparse();
  const NodeId first = record.offsets[static_cast<std::size_t>(record.part)];
  const NodeId own = record.offsets[static_cast<std::size_t>(record.part) + 1] - first;
  if (record.globals.size() != local || record.origins.size() != local ||
      record.first_edges.size() != static_cast<std::size_t>(own) ||
      record.first_entries.size() != (sparse ? local : 0)) {
    fail(path, "holds " + std::to_string(record.globals.size()) + " global ids, " +
                   std::to_string(record.origins.size()) + " origins, " +
                   std::to_string(record.first_edges.size()) + " first edges and " +
                   std::to_string(record.first_entries.size()) + " first entries, expected " +
                   std::to_string(local) + ", " + std::to_string(local) + ", " +
                   std::to_string(own) + " and " + std::to_string(sparse ? local : 0));
  }
  NodeId next = first;  // the global id the next own node must have
  std::vector<NodeId> halo;
  for (std::size_t k = 0; k < local; ++k) {
    const NodeId origin = record.origins[k];
    if (origin < 0 || origin >= record.global_nodes || (k > 0 && origin <= record.origins[k - 1])) {
      fail(path, "node " + std::to_string(k) + " has origin " + std::to_string(origin) +
                     ", expected ids in [0, " + std::to_string(record.global_nodes) +
                     ") ascending");
    }
    const NodeId global = record.globals[k];
    if (global >= first && global < first + own) {
      if (global != next) {
        fail(path, "own node " + std::to_string(k) + " has global id " + std::to_string(global) +
                       ", expected " + std::to_string(next) +
                       " (the own nodes hold the part's ids in order)");
      }
      ++next;
      continue;
    }
    if (global < 0 || global >= record.global_nodes) {
      fail(path, "node " + std::to_string(k) + " has global id " + std::to_string(global) +
                     ", expected an id in [0, " + std::to_string(record.global_nodes) + ")");
    }
    if (data.graph.in_degree(static_cast<NodeId>(k)) != 0) {
      fail(path, "halo node " + std::to_string(k) + " (global id " + std::to_string(global) +
                     ") has in-edges in the store");
    }
    halo.push_back(global);
  }
  if (next != first + own) {
    fail(path, "holds " + std::to_string(next - first) + " of the part's " + std::to_string(own) +
                   " own nodes");
  }
  std::sort(halo.begin(), halo.end());
  if (const auto twice = std::adjacent_find(halo.begin(), halo.end()); twice != halo.end()) {
    fail(path, "halo node " + std::to_string(*twice) + " appears twice");
  }
  const auto negative = [](const auto& values) {
    return std::any_of(values.begin(), values.end(), [](std::int64_t v) { return v < 0; });
  };
  if (negative(record.first_edges) || negative(record.first_entries)) {
    fail(path, "a first edge or first entry number is negative");
  }
}

}  // namespace

std::int32_t GraphPart::owner_of(NodeId global) const noexcept {
  return static_cast<std::int32_t>(std::upper_bound(offsets.begin(), offsets.end(), global) -
                                   offsets.begin() - 1);
}

namespace {
// The largest value over the mean (1 is perfect balance); 0 when they sum to 0.
double balance(const std::vector<std::int64_t>& values) {
  const std::int64_t total = std::accumulate(values.begin(), values.end(), std::int64_t{0});
  if (total == 0) return 0.0;
  return static_cast<double>(*std::max_element(values.begin(), values.end())) *
         static_cast<double>(values.size()) / static_cast<double>(total);
}
}  // namespace

double PartitionStats::node_balance() const { return balance(nodes); }

double PartitionStats::edge_balance() const { return balance(in_edges); }

double PartitionStats::train_balance() const { return balance(train_nodes); }

PartitionStats write_partition(const Dataset& dataset, std::span<const std::int32_t> owner,
                               std::int32_t parts, const fs::path& dir, bool overwrite) {
  const Graph& graph = dataset.graph;
  const NodeId n = graph.num_nodes();
  if (parts < 1 || static_cast<std::int64_t>(owner.size()) != n) {
    throw InvalidArgument("write_partition: " + std::to_string(owner.size()) +
                          " owners for a graph of " + std::to_string(n) + " nodes into " +
                          std::to_string(parts) + " parts, expected one owner per node and " +
                          "parts >= 1");
  }
  const auto p_count = static_cast<std::size_t>(parts);
  std::vector<NodeId> offsets(p_count + 1, 0);
  for (NodeId v = 0; v < n; ++v) {
    const std::int32_t part = owner[static_cast<std::size_t>(v)];
    if (part < 0 || part >= parts) {
      throw InvalidArgument("write_partition: node " + std::to_string(v) + " is given part " +
                            std::to_string(part) + ", expected a part in [0, " +
                            std::to_string(parts) + ")");
    }
    ++offsets[static_cast<std::size_t>(part) + 1];
  }
  for (std::size_t q = 0; q < p_count; ++q) {
    if (offsets[q + 1] == 0) {
      throw InvalidArgument("write_partition: part " + std::to_string(q) +
                            " has no nodes; every part must own one");
    }
    offsets[q + 1] += offsets[q];
  }
  // Global ids: by part, then by the node's id.
  std::vector<NodeId> order(static_cast<std::size_t>(n));   // global id -> node
  std::vector<NodeId> global(static_cast<std::size_t>(n));  // node -> global id
  {
    std::vector<NodeId> next(offsets.begin(), offsets.end() - 1);
    for (NodeId v = 0; v < n; ++v) {
      const NodeId g = next[static_cast<std::size_t>(owner[static_cast<std::size_t>(v)])]++;
      order[static_cast<std::size_t>(g)] = v;
      global[static_cast<std::size_t>(v)] = g;
    }
  }

  // The numbers the whole graph gives each node's first attention entry (its in-edges with the
  // self-loop the models add, `masks::from_graph`) and first stored feature entry, so that a part
  // can draw the same dropout as the whole graph.
  std::vector<EdgeId> first_edge(static_cast<std::size_t>(n) + 1, 0);
  for (NodeId v = 0; v < n; ++v) {
    const auto sources = graph.in_neighbors(v);
    const bool looped = std::binary_search(sources.begin(), sources.end(), v);
    first_edge[static_cast<std::size_t>(v) + 1] = first_edge[static_cast<std::size_t>(v)] +
                                                  static_cast<EdgeId>(sources.size()) +
                                                  (looped ? 0 : 1);
  }
  const bool sparse = dataset.features.cols() > 0 && dataset.features.is_sparse();
  const DatasetFingerprint whole = fingerprint(dataset);

  PartitionStats stats;
  detail::StoreDirectory out(dir, overwrite, part_name(0) + "/" + std::string(kPartFile),
                             "MaskGAT partition");
  for (std::int32_t part = 0; part < parts; ++part) {
    const auto p = static_cast<std::size_t>(part);
    const NodeId first = offsets[p];
    const NodeId own = offsets[p + 1] - first;
    // The halo: the distinct remote sources of the part's in-edges.
    std::vector<NodeId> halo;
    EdgeId in_edges = 0;
    for (NodeId g = first; g < first + own; ++g) {
      const auto sources = graph.in_neighbors(order[static_cast<std::size_t>(g)]);
      in_edges += static_cast<EdgeId>(sources.size());
      for (const NodeId source : sources) {
        if (owner[static_cast<std::size_t>(source)] != part) halo.push_back(source);
      }
    }
    // One entry per remote in-edge until deduplicated: the part's share of the cut.
    stats.cut_edges += static_cast<EdgeId>(halo.size());
    std::sort(halo.begin(), halo.end());
    halo.erase(std::unique(halo.begin(), halo.end()), halo.end());
    stats.halo.push_back(static_cast<std::int64_t>(halo.size()));

    // The part's nodes, own and halo, in the dataset's order (its own nodes are in it already).
    std::vector<NodeId> nodes(static_cast<std::size_t>(own) + halo.size());  // local -> node
    std::merge(order.begin() + first, order.begin() + first + own, halo.begin(), halo.end(),
               nodes.begin());
    const auto local_of = [&](NodeId node) {
      return static_cast<NodeId>(std::lower_bound(nodes.begin(), nodes.end(), node) -
                                 nodes.begin());
    };
    // Own nodes' rows with their in-edges by local source, halo rows empty.
    const auto total = nodes.size();
    std::vector<EdgeId> in_offsets(total + 1, 0);
    std::vector<NodeId> in_sources;
    std::vector<float> weights;
    in_sources.reserve(static_cast<std::size_t>(in_edges));
    if (graph.has_weights()) weights.reserve(static_cast<std::size_t>(in_edges));
    std::vector<std::pair<NodeId, float>> row;
    for (std::size_t k = 0; k < total; ++k) {
      const NodeId v = nodes[k];
      if (owner[static_cast<std::size_t>(v)] == part) {
        const auto sources = graph.in_neighbors(v);
        const EdgeId begin = graph.in_offsets()[static_cast<std::size_t>(v)];
        row.clear();
        for (std::size_t e = 0; e < sources.size(); ++e) {
          row.emplace_back(
              local_of(sources[e]),
              graph.has_weights() ? graph.weights()[static_cast<std::size_t>(begin) + e] : 0.0F);
        }
        std::sort(row.begin(), row.end());
        for (const auto& [source, weight] : row) {
          in_sources.push_back(source);
          if (graph.has_weights()) weights.push_back(weight);
        }
      }
      in_offsets[k + 1] = static_cast<EdgeId>(in_sources.size());
    }
    Dataset data;
    data.name = dataset.name;
    data.graph = Graph(static_cast<std::int64_t>(total), std::move(in_offsets),
                       std::move(in_sources), std::move(weights));
    data.features = dataset.features.cols() == 0
                        ? FeatureMatrix(DenseFeatures(static_cast<Eigen::Index>(total), 0))
                        : dataset.features.select_rows(nodes);
    data.labels.assign(total, -1);
    data.split.assign(total, SplitPart::kNone);
    data.node_names.resize(total);
    std::int64_t train_nodes = 0;
    for (std::size_t k = 0; k < total; ++k) {
      const auto v = static_cast<std::size_t>(nodes[k]);
      if (owner[v] == part) {
        data.labels[k] = dataset.labels[v];
        data.split[k] = dataset.split[v];
        train_nodes += data.split[k] == SplitPart::kTrain ? 1 : 0;
      }
      data.node_names[k] = dataset.node_names[v];
    }
    data.missing_features = dataset.missing_features;
    data.feature_names = dataset.feature_names;
    data.class_names = dataset.class_names;
    data.notes = dataset.notes;
    data.preparation = dataset.preparation;
    const fs::path store = out.path() / part_name(part);
    write_store(data, store, false);

    PartRecord record;
    record.part = part;
    record.parts = parts;
    record.global_nodes = n;
    record.header = header_checksum(store, std::numeric_limits<std::int64_t>::max());
    record.offsets = offsets;
    for (const NodeId v : nodes) {
      record.globals.push_back(global[static_cast<std::size_t>(v)]);
      if (owner[static_cast<std::size_t>(v)] == part) {
        record.first_edges.push_back(first_edge[static_cast<std::size_t>(v)]);
      }
    }
    record.origins = std::move(nodes);
    record.whole = whole;
    if (sparse) {
      const auto outer = dataset.features.view().sparse().outerIndexPtr();
      for (const NodeId v : record.origins) record.first_entries.push_back(outer[v]);
    }
    write_part_record(store, record);
    stats.nodes.push_back(own);
    stats.in_edges.push_back(in_edges);
    stats.train_nodes.push_back(train_nodes);
  }
  out.publish();
  return stats;
}

GraphPart open_part(const fs::path& dir, const StoreOptions& options) {
  const std::int64_t max_bytes = options.limits.max_file_bytes;
  PartRecord record = read_part_record(dir, max_bytes);
  const fs::path path = dir / kPartFile;
  if (header_checksum(dir, max_bytes) != record.header) {
    fail(path, "belongs to another store: the checksum of " +
                   (dir / detail::kStoreHeaderFile).string() + " does not match");
  }
  GraphPart result;
  result.data = open_store(dir, options);
  check_part(path, record, result.data);
  result.part = record.part;
  result.parts = record.parts;
  result.global_nodes = record.global_nodes;
  result.offsets = std::move(record.offsets);
  result.globals = std::move(record.globals);
  result.origins = std::move(record.origins);
  result.first_edges = std::move(record.first_edges);
  result.first_entries = std::move(record.first_entries);
  result.whole = record.whole;
  return result;
}

}  // namespace maskgat
