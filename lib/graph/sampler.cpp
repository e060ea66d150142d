#include "maskgat/graph/sampler.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "core/detail/parallel.hpp"
#include "maskgat/core/error.hpp"
#include "maskgat/core/random.hpp"

namespace maskgat {
namespace {

// Destination rows per task of the parallel passes: a constant, so tasks do not depend on the
// thread count (each row's draw does not either).
constexpr std::int64_t kRowBlock = 512;

// GCC's and Clang's 128-bit integer, for the high half of a 64 x 64-bit product.
__extension__ using Wide = unsigned __int128;

// The counter-hash stream of layer `layer`'s draws at `epoch`: a tag of its own, so no other use
// of the run's seed draws the same numbers, and (epoch, layer) in distinct bits (layers <
// 2^11 > nn::kMaxLayers).
std::uint64_t draw_stream(std::uint64_t epoch, std::int64_t layer) {
  constexpr std::uint64_t kTag = 0x73616d706c65ULL << 20;  // "sample"
  return kTag ^ (epoch << 11) ^ static_cast<std::uint64_t>(layer);
}

// Node `node`'s in-edges as the sampler sees them: the row's sources and the position of its
// self-loop in them (-1 without one), which is never drawn.
struct Row {
  const NodeId* sources = nullptr;
  std::int64_t size = 0;
  std::int64_t self = -1;

  Row(const Graph& graph, NodeId node) {
    const std::span<const NodeId> row = graph.in_neighbors(node);
    sources = row.data();
    size = static_cast<std::int64_t>(row.size());
    const auto at = std::lower_bound(row.begin(), row.end(), node);
    if (at != row.end() && *at == node) self = at - row.begin();
  }

  // In-neighbours other than the node itself.
  [[nodiscard]] std::int64_t degree() const { return size - (self >= 0 ? 1 : 0); }
  // The source at position `p` of the row without its self-loop.
  [[nodiscard]] NodeId at(std::int64_t p) const {
    return sources[p + (self >= 0 && p >= self ? 1 : 0)];
  }
};

std::int64_t sample_count(const Row& row, std::int64_t fanout) {
  const std::int64_t degree = row.degree();
  return fanout < 0 ? degree : std::min(fanout, degree);
}

// Writes `count` distinct sources of `row`, ascending, to `out`: all of them when `count` is its
// degree, else those at `count` positions drawn by Floyd's algorithm. `chosen` is scratch of at
// least `2 * count` slots, a set of positions by open addressing (position + 1; 0 is empty).
// Position k's draw is uniform on [0, k] by a multiply-shift of a 64-bit hash: biased by at most
// (k + 1) / 2^64.
void draw_row(const Row& row, std::int64_t count, const CounterStream& stream, NodeId node,
              std::vector<std::uint64_t>& chosen, NodeId* out) {
  const std::int64_t degree = row.degree();
  if (count == degree) {
    for (std::int64_t p = 0; p < degree; ++p) out[p] = row.at(p);
    return;
  }
  std::uint64_t capacity = 1;
  while (capacity < 2 * static_cast<std::uint64_t>(count)) capacity <<= 1;
  chosen.assign(capacity, 0);
  const std::uint64_t slots = capacity - 1;
  // Inserts position `p` unless present; returns whether it was inserted.
  const auto insert = [&](std::uint64_t p) {
    std::uint64_t slot = (p * 0x9e3779b97f4a7c15ULL) >> 32 & slots;
    while (chosen[slot] != 0) {
      if (chosen[slot] == p + 1) return false;
      slot = (slot + 1) & slots;
    }
    chosen[slot] = p + 1;
    return true;
  };
  std::int64_t written = 0;
  const std::uint64_t base = static_cast<std::uint64_t>(static_cast<std::uint32_t>(node)) << 32;
  for (std::int64_t k = degree - count; k < degree; ++k) {
    const std::uint64_t bits = stream(base | static_cast<std::uint64_t>(k - (degree - count)));
    const auto t = static_cast<std::uint64_t>(
        (static_cast<Wide>(bits) * static_cast<std::uint64_t>(k + 1)) >> 64);
    const std::uint64_t p = insert(t) ? t : static_cast<std::uint64_t>(k);
    if (p == static_cast<std::uint64_t>(k)) insert(p);
    out[written++] = static_cast<NodeId>(p);  // a position for now
  }
  std::sort(out, out + count);
  for (std::int64_t q = 0; q < count; ++q) out[q] = row.at(out[q]);
}

void check_node(const char* where, NodeId node, NodeId num_nodes) {
  if (node < 0 || node >= num_nodes) {
    throw InvalidArgument(std::string(where) + ": node " + std::to_string(node) +
                          " is outside [0, " + std::to_string(num_nodes) + ")");
  }
}

}  // namespace

NeighborSampler::NeighborSampler(const Graph& graph, std::vector<std::int64_t> fanouts,
                                 std::uint64_t seed)
    : graph_(&graph), fanouts_(std::move(fanouts)), seed_(seed) {
  if (fanouts_.empty()) throw InvalidArgument("sampler: no fanouts, expected one per layer");
  for (std::size_t l = 0; l < fanouts_.size(); ++l) {
    if (fanouts_[l] < -1) {
      throw InvalidArgument("sampler: fanout " + std::to_string(fanouts_[l]) + " of layer " +
                            std::to_string(l + 1) + ", expected -1 (all) or a count >= 0");
    }
  }
}

std::vector<NodeId> NeighborSampler::sample_row(NodeId node, std::int64_t layer,
                                                std::uint64_t epoch) const {
  check_node("sampler.sample_row", node, graph_->num_nodes());
  if (layer < 0 || layer >= static_cast<std::int64_t>(fanouts_.size())) {
    throw InvalidArgument("sampler.sample_row: layer " + std::to_string(layer) +
                          " is outside [0, " + std::to_string(fanouts_.size()) + ")");
  }
  const Row row(*graph_, node);
  std::vector<NodeId> sources(
      static_cast<std::size_t>(sample_count(row, fanouts_[static_cast<std::size_t>(layer)])));
  std::vector<std::uint64_t> chosen;
  draw_row(row, static_cast<std::int64_t>(sources.size()),
           CounterStream(seed_, draw_stream(epoch, layer)), node, chosen, sources.data());
  return sources;
}

MiniBatch NeighborSampler::sample(std::span<const NodeId> outputs, std::uint64_t epoch) {
  const Graph& graph = *graph_;
  for (const NodeId node : outputs) check_node("sampler.sample", node, graph.num_nodes());
  if (stamps_.empty()) {
    stamps_.assign(static_cast<std::size_t>(graph.num_nodes()), 0);
    local_.assign(static_cast<std::size_t>(graph.num_nodes()), 0);
  }
  if (++batch_ == 0) {  // the stamps wrapped around: forget every earlier batch
    std::fill(stamps_.begin(), stamps_.end(), 0);
    batch_ = 1;
  }
  MiniBatch batch;
  const auto number = [&](NodeId node) {
    const auto v = static_cast<std::size_t>(node);
    if (stamps_[v] != batch_) {
      stamps_[v] = batch_;
      local_[v] = static_cast<NodeId>(batch.nodes.size());
      batch.nodes.push_back(node);
    }
    return local_[v];
  };
  for (const NodeId node : outputs) batch.outputs.push_back(number(node));

  const auto layers = static_cast<std::int64_t>(fanouts_.size());
  batch.destinations.assign(static_cast<std::size_t>(layers), 0);
  // Per layer, the CSR of its destination rows in local ids (the self-loop included).
  std::vector<std::vector<EdgeId>> row_offsets(static_cast<std::size_t>(layers));
  std::vector<std::vector<NodeId>> row_sources(static_cast<std::size_t>(layers));
  std::vector<EdgeId> drawn_offsets;
  std::vector<NodeId> drawn;
  for (std::int64_t layer = layers - 1; layer >= 0; --layer) {
    const auto l = static_cast<std::size_t>(layer);
    const std::int64_t fanout = fanouts_[l];
    const auto rows = static_cast<std::int64_t>(batch.nodes.size());
    batch.destinations[l] = rows;
    // Each destination's draw, in parallel: the counts, their prefix sums, then the sources.
    drawn_offsets.assign(static_cast<std::size_t>(rows) + 1, 0);
    detail::for_each_block(rows, kRowBlock, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t r = begin; r < end; ++r) {
        const Row row(graph, batch.nodes[static_cast<std::size_t>(r)]);
        drawn_offsets[static_cast<std::size_t>(r) + 1] = sample_count(row, fanout);
      }
    });
    for (std::size_t r = 0; r < static_cast<std::size_t>(rows); ++r) {
      drawn_offsets[r + 1] += drawn_offsets[r];
    }
    drawn.resize(static_cast<std::size_t>(drawn_offsets.back()));
    const CounterStream stream(seed_, draw_stream(epoch, layer));
    detail::for_each_block(rows, kRowBlock, [&](std::int64_t begin, std::int64_t end) {
      std::vector<std::uint64_t> chosen;
      for (std::int64_t r = begin; r < end; ++r) {
        const auto at = static_cast<std::size_t>(r);
        const NodeId node = batch.nodes[at];
        draw_row(Row(graph, node), drawn_offsets[at + 1] - drawn_offsets[at], stream, node, chosen,
                 drawn.data() + drawn_offsets[at]);
      }
    });
    // Local ids in one serial pass, destinations in order, each row's sources ascending by
    // original id; then each row sorted by local id with its self-loop.
    std::vector<EdgeId>& offsets = row_offsets[l];
    std::vector<NodeId>& sources = row_sources[l];
    offsets.assign(1, 0);
    sources.reserve(drawn.size() + static_cast<std::size_t>(rows));
    for (std::int64_t r = 0; r < rows; ++r) {
      const auto first = static_cast<std::ptrdiff_t>(sources.size());
      sources.push_back(static_cast<NodeId>(r));
      for (EdgeId e = drawn_offsets[static_cast<std::size_t>(r)];
           e < drawn_offsets[static_cast<std::size_t>(r) + 1]; ++e) {
        sources.push_back(number(drawn[static_cast<std::size_t>(e)]));
      }
      std::sort(sources.begin() + first, sources.end());
      offsets.push_back(static_cast<EdgeId>(sources.size()));
    }
  }
  // Each mask on the nodes its layer reads, the first `destinations[l - 1]` (every node for the
  // input layer): the rows beyond its own destinations hold their self-loop alone.
  for (std::int64_t layer = 0; layer < layers; ++layer) {
    const auto l = static_cast<std::size_t>(layer);
    const std::int64_t nodes =
        layer == 0 ? static_cast<std::int64_t>(batch.nodes.size()) : batch.destinations[l - 1];
    std::vector<EdgeId> offsets = std::move(row_offsets[l]);
    std::vector<NodeId> sources = std::move(row_sources[l]);
    offsets.reserve(static_cast<std::size_t>(nodes) + 1);
    sources.reserve(sources.size() + static_cast<std::size_t>(nodes - batch.destinations[l]));
    for (std::int64_t r = batch.destinations[l]; r < nodes; ++r) {
      sources.push_back(static_cast<NodeId>(r));
      offsets.push_back(static_cast<EdgeId>(sources.size()));
    }
    batch.masks.emplace_back(nodes, std::move(offsets), std::move(sources));
  }
  return batch;
}

}  // namespace maskgat
