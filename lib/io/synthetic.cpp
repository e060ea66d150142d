#include "maskgat/io/synthetic.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <limits>
#include <string>
#include <system_error>
#include <vector>

#include "core/detail/parallel.hpp"
#include "io/detail/text.hpp"
#include "maskgat/core/error.hpp"
#include "maskgat/core/random.hpp"

namespace maskgat {
namespace {

// Runs `fn(first, last)` over fixed blocks of nodes in parallel. Every value drawn for a node
// depends only on the seed and the node's id, so the blocks only split the work.
template <typename Fn>
void for_each_node(std::size_t count, Fn&& fn) {
  constexpr std::int64_t kNodeBlock = 4096;
  detail::for_each_block(static_cast<std::int64_t>(count), kNodeBlock,
                         [&](std::int64_t first, std::int64_t last) {
                           fn(static_cast<std::size_t>(first), static_cast<std::size_t>(last));
                         });
}

constexpr std::string_view kReader = "synthetic";
constexpr std::string_view kPrefix = "synthetic";

// Counter-hash streams: every random quantity is a pure function of (seed, stream, id), so the
// output does not depend on how TBB schedules the loops.
constexpr std::uint64_t kStreamClass = 1;
constexpr std::uint64_t kStreamWeight = 2;
constexpr std::uint64_t kStreamRounding = 3;
constexpr std::uint64_t kStreamEdges = 4;
constexpr std::uint64_t kStreamNoise = 5;
constexpr std::uint64_t kStreamMeans = 6;

// Pareto tail index of the degree weights: heavy-tailed (infinite variance of the product of two
// weights) but with a finite mean, like citation graphs.
constexpr double kParetoShape = 2.5;
// Class means have i.i.d. N(0, kMeanVariance / F) entries, so two class means are about
// sqrt(2 * kMeanVariance) = 2 noise standard deviations apart whatever F is: features alone
// separate the classes only partly and the graph carries the rest.
constexpr double kMeanVariance = 2.0;
// Sources drawn per in-edge slot before a row gives up on reaching its target degree (rows whose
// class is tiny cannot find enough distinct sources).
constexpr std::int64_t kDrawsPerSlot = 4;
constexpr std::int64_t kExtraDraws = 64;

[[noreturn]] void bad_value(std::string_view key, std::string_view expected,
                            std::string_view value) {
  throw InvalidArgument("synthetic: " + std::string(key) + " must be " + std::string(expected) +
                        ", got " + detail::quoted(value));
}

std::int64_t parse_count(std::string_view key, std::string_view value, std::int64_t max) {
  const auto parsed = detail::parse_integer(value);
  if (!parsed || *parsed <= 0) bad_value(key, "a positive integer", value);
  if (*parsed > max) bad_value(key, "at most " + std::to_string(max), value);
  return *parsed;
}

// [0, 1) with 53 random bits.
double unit(std::uint64_t bits) noexcept { return static_cast<double>(bits >> 11) * 0x1.0p-53; }

// (0, 1]: safe under log and negative powers.
double unit_open_zero(std::uint64_t bits) noexcept {
  return static_cast<double>((bits >> 11) + 1) * 0x1.0p-53;
}

std::string format_number(double value) {
  std::array<char, 32> buffer{};
  const auto result = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
  return {buffer.data(), result.ptr};
}

std::string canonical_spec(const SyntheticOptions& options) {
  return "synthetic:nodes=" + std::to_string(options.nodes) +
         ",degree=" + format_number(options.degree) +
         ",features=" + std::to_string(options.features) +
         ",classes=" + std::to_string(options.classes) + ",seed=" + std::to_string(options.seed) +
         ",homophily=" + format_number(options.homophily);
}

void validate(const SyntheticOptions& options, const Limits& limits, const std::string& name) {
  if (options.nodes < 1) {
    throw InvalidArgument("synthetic: nodes must be positive, got " +
                          std::to_string(options.nodes));
  }
  if (options.features < 1) {
    throw InvalidArgument("synthetic: features must be positive, got " +
                          std::to_string(options.features));
  }
  if (options.classes < 1) {
    throw InvalidArgument("synthetic: classes must be positive, got " +
                          std::to_string(options.classes));
  }
  if (options.classes > options.nodes) {
    throw InvalidArgument("synthetic: classes (" + std::to_string(options.classes) +
                          ") must not exceed nodes (" + std::to_string(options.nodes) + ")");
  }
  if (!(options.homophily >= 0.0 && options.homophily <= 1.0)) {
    throw InvalidArgument("synthetic: homophily must be in [0, 1], got " +
                          format_number(options.homophily));
  }
  if (!(options.degree >= 0.0) || !std::isfinite(options.degree)) {
    throw InvalidArgument("synthetic: degree must be a non-negative number, got " +
                          format_number(options.degree));
  }
  if (options.degree > static_cast<double>(options.nodes - 1)) {
    throw InvalidArgument("synthetic: degree " + format_number(options.degree) +
                          " is more than nodes - 1 = " + std::to_string(options.nodes - 1));
  }
  const std::int64_t max_nodes = std::min(limits.max_nodes, kMaxNodeCount);
  if (options.nodes > max_nodes) {
    throw LimitError(kReader, name, 0,
                     std::to_string(options.nodes) + " nodes: over the node limit of " +
                         std::to_string(max_nodes) + " (raise it with --max-nodes)");
  }
  if (options.classes > limits.max_classes) {
    throw LimitError(kReader, name, 0,
                     std::to_string(options.classes) + " classes: over the class limit of " +
                         std::to_string(limits.max_classes) + " (raise it with --max-classes)");
  }
  if (options.features > limits.max_features) {
    throw LimitError(kReader, name, 0,
                     std::to_string(options.features) + " features: over the feature limit of " +
                         std::to_string(limits.max_features) + " (raise it with --max-features)");
  }
  // nodes and features are both below 2^31 here, so the product fits.
  const std::int64_t values = options.nodes * options.features;
  if (values > limits.max_array_elements) {
    throw LimitError(kReader, name, 0,
                     std::to_string(values) + " feature values: over the array limit of " +
                         std::to_string(limits.max_array_elements) +
                         " (raise Limits::max_array_elements)");
  }
  if (static_cast<double>(options.nodes) * options.degree > static_cast<double>(limits.max_edges)) {
    throw LimitError(
        kReader, name, 0,
        "about " + format_number(std::ceil(static_cast<double>(options.nodes) * options.degree)) +
            " edges: over the edge limit of " + std::to_string(limits.max_edges) +
            " (raise it with --max-edges)");
  }
}

// One slot of Walker's alias table: keep `node` when the slot's coin falls below `threshold`,
// else take `alias`. Node ids are stored in the slot so a draw touches one cache line.
struct AliasSlot {
  double threshold;
  NodeId node;
  NodeId alias;
};

[[nodiscard]] NodeId draw_alias(const AliasSlot* slots, NodeId size, double u) noexcept {
  const double scaled = u * static_cast<double>(size);
  auto k = static_cast<NodeId>(scaled);
  if (k >= size) k = size - 1;
  const AliasSlot& slot = slots[k];
  return scaled - static_cast<double>(k) < slot.threshold ? slot.node : slot.alias;
}

// Fills `slots` (n entries) for `nodes` with positive `weights` (Vose's construction). Serial
// and in a fixed order, so the table is the same on every run.
void build_alias(const NodeId* nodes, const double* weights, std::size_t n, AliasSlot* slots,
                 std::vector<std::size_t>& small, std::vector<std::size_t>& large) {
  double total = 0.0;
  for (std::size_t k = 0; k < n; ++k) total += weights[static_cast<std::size_t>(nodes[k])];
  small.clear();
  large.clear();
  for (std::size_t k = 0; k < n; ++k) {
    const double share =
        weights[static_cast<std::size_t>(nodes[k])] * static_cast<double>(n) / total;
    slots[k] = {share, nodes[k], nodes[k]};
    (share < 1.0 ? small : large).push_back(k);
  }
  while (!small.empty() && !large.empty()) {
    const std::size_t low = small.back();
    small.pop_back();
    const std::size_t high = large.back();
    large.pop_back();
    slots[low].alias = slots[high].node;
    double& rest = slots[high].threshold;
    rest = (rest + slots[low].threshold) - 1.0;
    (rest < 1.0 ? small : large).push_back(high);
  }
  // Whatever is left is 1 up to rounding.
  for (const std::size_t k : small) slots[k].threshold = 1.0;
  for (const std::size_t k : large) slots[k].threshold = 1.0;
}

struct Structure {
  std::vector<std::int32_t> labels;
  std::vector<double> weights;
  std::vector<EdgeId> class_offsets;    // K + 1
  std::vector<AliasSlot> class_tables;  // one table per class, at class_offsets
  std::vector<AliasSlot> all_table;
};

Structure make_structure(const SyntheticOptions& options) {
  const auto n = static_cast<std::size_t>(options.nodes);
  const auto k = static_cast<std::size_t>(options.classes);
  Structure s;
  s.labels.resize(n);
  s.weights.resize(n);
  for_each_node(n, [&](std::size_t first, std::size_t last) {
    for (std::size_t i = first; i != last; ++i) {
      const double u = unit(counter_hash(options.seed, kStreamClass, i));
      s.labels[i] = std::min(static_cast<std::int32_t>(u * static_cast<double>(options.classes)),
                             options.classes - 1);
      const double v = unit_open_zero(counter_hash(options.seed, kStreamWeight, i));
      s.weights[i] = std::pow(v, -1.0 / kParetoShape);
    }
  });

  s.class_offsets.assign(k + 1, 0);
  for (const std::int32_t label : s.labels) ++s.class_offsets[static_cast<std::size_t>(label) + 1];
  for (std::size_t c = 0; c < k; ++c) s.class_offsets[c + 1] += s.class_offsets[c];
  std::vector<NodeId> grouped(n);
  {
    std::vector<EdgeId> next(s.class_offsets.begin(), s.class_offsets.end() - 1);
    for (std::size_t i = 0; i < n; ++i) {
      grouped[static_cast<std::size_t>(next[static_cast<std::size_t>(s.labels[i])]++)] =
          static_cast<NodeId>(i);
    }
  }

  std::vector<std::size_t> small;
  std::vector<std::size_t> large;
  s.class_tables.resize(n);
  for (std::size_t c = 0; c < k; ++c) {
    const auto begin = static_cast<std::size_t>(s.class_offsets[c]);
    const auto size = static_cast<std::size_t>(s.class_offsets[c + 1]) - begin;
    build_alias(grouped.data() + begin, s.weights.data(), size, s.class_tables.data() + begin,
                small, large);
  }
  // Reuse `grouped` as the identity list of all nodes.
  for (std::size_t i = 0; i < n; ++i) grouped[i] = static_cast<NodeId>(i);
  s.all_table.resize(n);
  build_alias(grouped.data(), s.weights.data(), n, s.all_table.data(), small, large);
  return s;
}

// Destination-major CSR: each node's in-degree target is its weight's share of N·D, rounded
// up or down at random so the expected total is exactly N·D; each row then draws its sources.
Graph make_graph(const SyntheticOptions& options, const Structure& s, const Limits& limits,
                 const std::string& name) {
  const auto n = static_cast<std::size_t>(options.nodes);
  double total_weight = 0.0;
  for (const double w : s.weights) total_weight += w;
  const double scale = static_cast<double>(options.nodes) * options.degree / total_weight;
  const auto max_in_degree = static_cast<EdgeId>(options.nodes - 1);

  std::vector<EdgeId> offsets(n + 1, 0);
  for_each_node(n, [&](std::size_t first, std::size_t last) {
    for (std::size_t i = first; i != last; ++i) {
      const double expected = s.weights[i] * scale;
      const double u = unit(counter_hash(options.seed, kStreamRounding, i));
      const auto target = static_cast<EdgeId>(std::floor(expected + u));
      offsets[i + 1] = std::min(target, max_in_degree);
    }
  });
  for (std::size_t i = 0; i < n; ++i) offsets[i + 1] += offsets[i];
  if (offsets[n] > limits.max_edges) {
    throw LimitError(kReader, name, 0,
                     std::to_string(offsets[n]) + " edges: over the edge limit of " +
                         std::to_string(limits.max_edges) + " (raise it with --max-edges)");
  }

  std::vector<NodeId> sources(static_cast<std::size_t>(offsets[n]));
  std::vector<EdgeId> kept(n, 0);
  const double homophily = options.homophily;
  const auto all_size = static_cast<NodeId>(options.nodes);
  const auto draw_rows = [&](std::size_t first, std::size_t last) {
    for (std::size_t i = first; i != last; ++i) {
      const EdgeId target = offsets[i + 1] - offsets[i];
      if (target == 0) continue;
      const auto node = static_cast<NodeId>(i);
      const auto label = static_cast<std::size_t>(s.labels[i]);
      const AliasSlot* own_class = s.class_tables.data() + s.class_offsets[label];
      const auto class_size =
          static_cast<NodeId>(s.class_offsets[label + 1] - s.class_offsets[label]);
      const std::uint64_t row_key = counter_hash(options.seed, kStreamEdges, i);
      NodeId* row = sources.data() + offsets[i];
      const std::int64_t max_draws = kDrawsPerSlot * target + kExtraDraws;
      std::int64_t draws = 0;
      EdgeId filled = 0;
      // Duplicates and self-loops are discarded and redrawn, so rows reach their target unless
      // the candidate pool is too small.
      while (filled < target && draws < max_draws) {
        while (filled < target && draws < max_draws) {
          // One uniform decides the class coin and, rescaled, the alias draw.
          const double x = unit(counter_hash(row_key, 0, static_cast<std::uint64_t>(draws++)));
          const NodeId source = x < homophily ? draw_alias(own_class, class_size, x / homophily)
                                              : draw_alias(s.all_table.data(), all_size,
                                                           (x - homophily) / (1.0 - homophily));
          if (source != node) row[filled++] = source;
        }
        std::sort(row, row + filled);
        filled = std::unique(row, row + filled) - row;
      }
      kept[i] = filled;
    }
  };
  for_each_node(n, draw_rows);

  // Rows only shrink, so compacting front to back never overwrites unread entries.
  EdgeId write = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const EdgeId read = offsets[i];
    if (read != write) {
      std::copy(sources.begin() + read, sources.begin() + read + kept[i], sources.begin() + write);
    }
    offsets[i] = write;
    write += kept[i];
  }
  offsets[n] = write;
  sources.resize(static_cast<std::size_t>(write));
  return Graph(options.nodes, std::move(offsets), std::move(sources));
}

// Standard normal deviates by the ziggurat method (Marsaglia & Tsang 2000) with 128 layers of
// equal area: about 99% of draws cost one 64-bit word and a comparison, which matters at 10^8
// feature values. Unlike the original, the layer index and the abscissa come from disjoint bits.
class Ziggurat {
 public:
  Ziggurat() {
    const auto density = [](double x) { return std::exp(-0.5 * x * x); };
    edge_[0] = kArea / density(kTail);
    edge_[1] = kTail;
    for (std::size_t i = 1; i + 1 < kLayers; ++i) {
      edge_[i + 1] = std::sqrt(-2.0 * std::log(density(edge_[i]) + kArea / edge_[i]));
    }
    edge_[kLayers] = 0.0;
    for (std::size_t i = 0; i <= kLayers; ++i) height_[i] = density(edge_[i]);
  }

  double operator()(Rng& rng) const {
    while (true) {
      const std::uint64_t bits = rng.next_u64();
      const std::size_t layer = bits & (kLayers - 1);
      const double x = (static_cast<double>(bits >> 11) * 0x1.0p-52 - 1.0) * edge_[layer];
      const double magnitude = std::abs(x);
      if (magnitude < edge_[layer + 1]) return x;
      if (layer == 0) return x < 0.0 ? -tail(rng) : tail(rng);
      // The wedge between the layer's rectangle and the curve.
      const double y = height_[layer] + rng.uniform() * (height_[layer + 1] - height_[layer]);
      if (y < std::exp(-0.5 * x * x)) return x;
    }
  }

 private:
  static constexpr std::size_t kLayers = 128;
  static constexpr double kTail = 3.442619855899;       // where the tail starts
  static constexpr double kArea = 9.91256303526217e-3;  // area of every layer

  // Marsaglia's tail method for x > kTail.
  static double tail(Rng& rng) {
    while (true) {
      const double x = -std::log(1.0 - rng.uniform()) / kTail;
      const double y = -std::log(1.0 - rng.uniform());
      if (2.0 * y >= x * x) return kTail + x;
    }
  }

  std::array<double, kLayers + 1> edge_{};
  std::array<double, kLayers + 1> height_{};
};

DenseFeatures make_features(const SyntheticOptions& options, const Structure& s) {
  const auto f = static_cast<std::size_t>(options.features);
  const auto k = static_cast<std::size_t>(options.classes);
  std::vector<float> means(k * f);
  Rng mean_rng(counter_hash(options.seed, kStreamMeans, 0));
  const double spread = std::sqrt(kMeanVariance / static_cast<double>(options.features));
  for (float& mean : means) mean = static_cast<float>(spread * mean_rng.normal());

  const Ziggurat normal;
  DenseFeatures x(options.nodes, options.features);
  for_each_node(static_cast<std::size_t>(options.nodes), [&](std::size_t first, std::size_t last) {
    for (std::size_t i = first; i != last; ++i) {
      // A generator per row, seeded by the row id: the row's values do not depend on which
      // thread runs it.
      Rng rng(counter_hash(options.seed, kStreamNoise, i));
      const float* mean = means.data() + static_cast<std::size_t>(s.labels[i]) * f;
      float* row = x.data() + i * f;
      for (std::size_t col = 0; col < f; ++col) {
        row[col] = mean[col] + static_cast<float>(normal(rng));
      }
    }
  });
  return x;
}

}  // namespace

SyntheticOptions parse_synthetic_spec(std::string_view spec) {
  if (!spec.starts_with(kPrefix) || (spec.size() > kPrefix.size() && spec[kPrefix.size()] != ':')) {
    throw InvalidArgument("synthetic: spec " + detail::quoted(spec) +
                          " does not start with 'synthetic:'");
  }
  std::string_view rest = spec.substr(std::min(spec.size(), kPrefix.size() + 1));
  SyntheticOptions options;
  constexpr std::array<std::string_view, 6> kKeys{"nodes",   "degree", "features",
                                                  "classes", "seed",   "homophily"};
  std::array<bool, kKeys.size()> seen{};
  bool more = !rest.empty();
  while (more) {
    const std::size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    more = comma != std::string_view::npos;
    if (more) rest.remove_prefix(comma + 1);
    const std::size_t equals = item.find('=');
    if (equals == std::string_view::npos) {
      throw InvalidArgument("synthetic: expected key=value, got " + detail::quoted(item) + " in " +
                            detail::quoted(spec));
    }
    const std::string_view key = item.substr(0, equals);
    const std::string_view value = item.substr(equals + 1);
    const auto found = std::find(kKeys.begin(), kKeys.end(), key);
    if (found == kKeys.end()) {
      throw InvalidArgument("synthetic: unknown key " + detail::quoted(key) + " in " +
                            detail::quoted(spec) +
                            ": expected nodes, degree, features, classes, seed or homophily");
    }
    auto& was_seen = seen[static_cast<std::size_t>(found - kKeys.begin())];
    if (was_seen) {
      throw InvalidArgument("synthetic: key " + detail::quoted(key) + " given twice in " +
                            detail::quoted(spec));
    }
    was_seen = true;
    if (key == "nodes") {
      options.nodes = parse_count(key, value, kMaxNodeCount);
    } else if (key == "features") {
      options.features = parse_count(key, value, std::numeric_limits<std::int32_t>::max());
    } else if (key == "classes") {
      options.classes = static_cast<std::int32_t>(
          parse_count(key, value, std::numeric_limits<std::int32_t>::max()));
    } else if (key == "degree") {
      const auto parsed = detail::parse_number(value);
      if (!parsed || !std::isfinite(*parsed) || *parsed < 0.0) {
        bad_value(key, "a non-negative number", value);
      }
      options.degree = *parsed;
    } else if (key == "homophily") {
      const auto parsed = detail::parse_number(value);
      if (!parsed || !(*parsed >= 0.0 && *parsed <= 1.0)) {
        bad_value(key, "a number in [0, 1]", value);
      }
      options.homophily = *parsed;
    } else {
      std::uint64_t seed = 0;
      const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), seed);
      if (value.empty() || error != std::errc() || end != value.data() + value.size()) {
        bad_value(key, "a non-negative integer below 2^64", value);
      }
      options.seed = seed;
    }
  }
  return options;
}

Dataset make_synthetic(const SyntheticOptions& options, const DatasetOptions& load) {
  const std::string name = canonical_spec(options);
  validate(options, load.read.limits, name);

  const Structure structure = make_structure(options);
  Dataset dataset;
  dataset.name = name;
  dataset.graph = make_graph(options, structure, load.read.limits, name);
  dataset.features = FeatureMatrix(make_features(options, structure));
  normalize_features(dataset, load.normalize_features);
  dataset.labels = structure.labels;
  dataset.class_names.reserve(static_cast<std::size_t>(options.classes));
  for (std::int32_t c = 0; c < options.classes; ++c)
    dataset.class_names.push_back(std::to_string(c));
  dataset.node_names.reserve(static_cast<std::size_t>(options.nodes));
  for (std::int64_t i = 0; i < options.nodes; ++i) dataset.node_names.push_back(std::to_string(i));
  draw_split(dataset, load.split_sizes, options.seed);
  return dataset;
}

}  // namespace maskgat
