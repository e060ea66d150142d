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
#include "io/detail/normalization.hpp"
#include "io/detail/store_files.hpp"
#include "io/detail/text.hpp"
#include "maskgat/core/error.hpp"
#include "maskgat/core/random.hpp"
#include "maskgat/io/store.hpp"

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
constexpr std::uint64_t kStreamCommunity = 7;

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
         ",homophily=" + format_number(options.homophily) +
         (options.communities > 1 ? ",communities=" + std::to_string(options.communities) +
                                        ",intra=" + format_number(options.intra)
                                  : std::string());
}

// Throws unless the community count is in [1, nodes].
void check_communities(const SyntheticOptions& options) {
  if (options.communities < 1 || options.communities > options.nodes) {
    throw InvalidArgument(
        "synthetic: communities must be in [1, nodes = " + std::to_string(options.nodes) +
        "], got " + std::to_string(options.communities));
  }
}

// Checks the options and the limits; `in_memory`: the features are built as one array, which
// the array limit bounds (a store is written a block at a time).
void validate(const SyntheticOptions& options, const Limits& limits, const std::string& name,
              bool in_memory) {
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
  check_communities(options);
  if (!(options.intra >= 0.0 && options.intra <= 1.0)) {
    throw InvalidArgument("synthetic: intra must be in [0, 1], got " +
                          format_number(options.intra));
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
  if (in_memory && values > limits.max_array_elements) {
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

// Node i's community: uniform over [0, communities), independent of its class.
std::int64_t community_of(const SyntheticOptions& options, std::size_t i) {
  const double u = unit(counter_hash(options.seed, kStreamCommunity, i));
  return std::min(static_cast<std::int64_t>(u * static_cast<double>(options.communities)),
                  options.communities - 1);
}

// Alias tables of the nodes grouped by a key in [0, groups): group g's nodes, ascending, have
// their table at [offsets[g], offsets[g + 1]) of `slots`.
struct GroupedTables {
  std::vector<EdgeId> offsets;
  std::vector<AliasSlot> slots;

  [[nodiscard]] NodeId size(std::size_t group) const noexcept {
    return static_cast<NodeId>(offsets[group + 1] - offsets[group]);
  }
  [[nodiscard]] NodeId draw(std::size_t group, double u) const noexcept {
    return draw_alias(slots.data() + offsets[group], size(group), u);
  }
};

template <typename Key>
GroupedTables group_tables(const std::vector<double>& weights, std::size_t groups, Key&& key) {
  const std::size_t n = weights.size();
  GroupedTables t;
  t.offsets.assign(groups + 1, 0);
  for (std::size_t i = 0; i < n; ++i) ++t.offsets[key(i) + 1];
  for (std::size_t g = 0; g < groups; ++g) t.offsets[g + 1] += t.offsets[g];
  std::vector<NodeId> grouped(n);
  std::vector<EdgeId> next(t.offsets.begin(), t.offsets.end() - 1);
  for (std::size_t i = 0; i < n; ++i) {
    grouped[static_cast<std::size_t>(next[key(i)]++)] = static_cast<NodeId>(i);
  }
  std::vector<std::size_t> small;
  std::vector<std::size_t> large;
  t.slots.resize(n);
  for (std::size_t g = 0; g < groups; ++g) {
    const auto begin = static_cast<std::size_t>(t.offsets[g]);
    build_alias(grouped.data() + begin, weights.data(), static_cast<std::size_t>(t.size(g)),
                t.slots.data() + begin, small, large);
  }
  return t;
}

struct Structure {
  std::vector<std::int32_t> labels;
  std::vector<std::int64_t> communities;  // empty with one community
  std::vector<double> weights;
  GroupedTables classes;  // by class
  GroupedTables all;      // every node, one group
  // With several communities: by community, and by (community, class) at community * K + class.
  GroupedTables by_community;
  GroupedTables by_community_class;
};

Structure make_structure(const SyntheticOptions& options) {
  const auto n = static_cast<std::size_t>(options.nodes);
  const auto k = static_cast<std::size_t>(options.classes);
  const auto c = static_cast<std::size_t>(options.communities);
  Structure s;
  s.labels.resize(n);
  s.weights.resize(n);
  if (c > 1) s.communities.resize(n);
  for_each_node(n, [&](std::size_t first, std::size_t last) {
    for (std::size_t i = first; i != last; ++i) {
      const double u = unit(counter_hash(options.seed, kStreamClass, i));
      s.labels[i] = std::min(static_cast<std::int32_t>(u * static_cast<double>(options.classes)),
                             options.classes - 1);
      const double v = unit_open_zero(counter_hash(options.seed, kStreamWeight, i));
      s.weights[i] = std::pow(v, -1.0 / kParetoShape);
      if (c > 1) s.communities[i] = community_of(options, i);
    }
  });
  const auto label = [&](std::size_t i) { return static_cast<std::size_t>(s.labels[i]); };
  s.classes = group_tables(s.weights, k, label);
  s.all = group_tables(s.weights, 1, [](std::size_t) { return std::size_t{0}; });
  if (c > 1) {
    const auto community = [&](std::size_t i) {
      return static_cast<std::size_t>(s.communities[i]);
    };
    s.by_community = group_tables(s.weights, c, community);
    s.by_community_class =
        group_tables(s.weights, c * k, [&](std::size_t i) { return community(i) * k + label(i); });
  }
  return s;
}

// Each node's in-degree target is its weight's share of N·D, rounded up or down at random so the
// expected total is exactly N·D, capped at N - 1.
class DegreeTargets {
 public:
  DegreeTargets(const SyntheticOptions& options, const Structure& s) : options_(&options), s_(&s) {
    double total_weight = 0.0;
    for (const double w : s.weights) total_weight += w;
    scale_ = static_cast<double>(options.nodes) * options.degree / total_weight;
  }

  [[nodiscard]] EdgeId operator()(std::size_t i) const {
    const double expected = s_->weights[i] * scale_;
    const double u = unit(counter_hash(options_->seed, kStreamRounding, i));
    const auto target = static_cast<EdgeId>(std::floor(expected + u));
    return std::min(target, static_cast<EdgeId>(options_->nodes - 1));
  }

 private:
  const SyntheticOptions* options_;
  const Structure* s_;
  double scale_ = 0.0;
};

// Throws LimitError when the rows' targets add up to more than `limits.max_edges`.
void check_edge_targets(const SyntheticOptions& options, const DegreeTargets& targets,
                        const Limits& limits, const std::string& name) {
  EdgeId total = 0;
  for (std::size_t i = 0; i < static_cast<std::size_t>(options.nodes); ++i) total += targets(i);
  if (total > limits.max_edges) {
    throw LimitError(kReader, name, 0,
                     std::to_string(total) + " edges: over the edge limit of " +
                         std::to_string(limits.max_edges) + " (raise it with --max-edges)");
  }
}

// The in-edges of nodes [first, last): each row draws its sources, ascending, into `sources`
// (the rows one after another) and its count into `counts[i - first]`. Rows fall short of their
// target only when the candidate pool is too small. Parallel over nodes.
void draw_rows(const SyntheticOptions& options, const Structure& s, const DegreeTargets& targets,
               std::size_t first, std::size_t last, std::vector<EdgeId>& counts,
               std::vector<NodeId>& sources) {
  const std::size_t rows = last - first;
  std::vector<EdgeId> offsets(rows + 1, 0);
  for_each_node(rows, [&](std::size_t begin, std::size_t end) {
    for (std::size_t r = begin; r != end; ++r) offsets[r + 1] = targets(first + r);
  });
  for (std::size_t r = 0; r < rows; ++r) offsets[r + 1] += offsets[r];
  sources.resize(static_cast<std::size_t>(offsets[rows]));
  counts.assign(rows, 0);
  const double homophily = options.homophily;
  const double intra = options.communities > 1 ? options.intra : 0.0;
  const auto k = static_cast<std::size_t>(options.classes);
  // One uniform `x` decides the coins and, rescaled, the alias draw: below `intra` the source is
  // from the node's community (its class there with probability `homophily`), else from the
  // whole graph (its class there with probability `homophily`).
  const auto draw_source = [&](std::size_t i, double x) {
    const auto label = static_cast<std::size_t>(s.labels[i]);
    if (x < intra) {
      const double y = x / intra;
      const auto community = static_cast<std::size_t>(s.communities[i]);
      const std::size_t group = community * k + label;
      if (y < homophily && s.by_community_class.size(group) > 0) {
        return s.by_community_class.draw(group, y / homophily);
      }
      return s.by_community.draw(
          community, y < homophily ? y / homophily : (y - homophily) / (1.0 - homophily));
    }
    const double z = (x - intra) / (1.0 - intra);
    return z < homophily ? s.classes.draw(label, z / homophily)
                         : s.all.draw(0, (z - homophily) / (1.0 - homophily));
  };
  for_each_node(rows, [&](std::size_t begin, std::size_t end) {
    for (std::size_t r = begin; r != end; ++r) {
      const std::size_t i = first + r;
      const EdgeId target = offsets[r + 1] - offsets[r];
      if (target == 0) continue;
      const auto node = static_cast<NodeId>(i);
      const std::uint64_t row_key = counter_hash(options.seed, kStreamEdges, i);
      NodeId* row = sources.data() + offsets[r];
      const std::int64_t max_draws = kDrawsPerSlot * target + kExtraDraws;
      std::int64_t draws = 0;
      EdgeId filled = 0;
      // Duplicates and self-loops are discarded and redrawn, so rows reach their target unless
      // the candidate pool is too small.
      while (filled < target && draws < max_draws) {
        while (filled < target && draws < max_draws) {
          const NodeId source =
              draw_source(i, unit(counter_hash(row_key, 0, static_cast<std::uint64_t>(draws++))));
          if (source != node) row[filled++] = source;
        }
        std::sort(row, row + filled);
        filled = std::unique(row, row + filled) - row;
      }
      counts[r] = filled;
    }
  });
  // Rows only shrink, so compacting front to back never overwrites unread entries.
  EdgeId write = 0;
  for (std::size_t r = 0; r < rows; ++r) {
    const EdgeId read = offsets[r];
    if (read != write) {
      std::copy(sources.begin() + read, sources.begin() + read + counts[r],
                sources.begin() + write);
    }
    write += counts[r];
  }
  sources.resize(static_cast<std::size_t>(write));
}

// Destination-major CSR of every node's drawn in-edges.
Graph make_graph(const SyntheticOptions& options, const Structure& s, const Limits& limits,
                 const std::string& name) {
  const DegreeTargets targets(options, s);
  check_edge_targets(options, targets, limits, name);
  const auto n = static_cast<std::size_t>(options.nodes);
  std::vector<EdgeId> counts;
  std::vector<NodeId> sources;
  draw_rows(options, s, targets, 0, n, counts, sources);
  std::vector<EdgeId> offsets(n + 1, 0);
  for (std::size_t i = 0; i < n; ++i) offsets[i + 1] = offsets[i] + counts[i];
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

// The class means of the features: i.i.d. N(0, kMeanVariance / F) entries, K x F.
std::vector<float> class_means(const SyntheticOptions& options) {
  std::vector<float> means(static_cast<std::size_t>(options.classes) *
                           static_cast<std::size_t>(options.features));
  Rng mean_rng(counter_hash(options.seed, kStreamMeans, 0));
  const double spread = std::sqrt(kMeanVariance / static_cast<double>(options.features));
  for (float& mean : means) mean = static_cast<float>(spread * mean_rng.normal());
  return means;
}

// The feature rows of nodes [first, last) into `rows` (row-major, F each): the class mean plus
// unit Gaussian noise. Parallel over nodes.
void fill_features(const SyntheticOptions& options, const Structure& s,
                   const std::vector<float>& means, std::size_t first, std::size_t last,
                   float* rows) {
  const auto f = static_cast<std::size_t>(options.features);
  const Ziggurat normal;
  for_each_node(last - first, [&](std::size_t begin, std::size_t end) {
    for (std::size_t r = begin; r != end; ++r) {
      const std::size_t i = first + r;
      // A generator per row, seeded by the row id: the row's values do not depend on which
      // thread runs it.
      Rng rng(counter_hash(options.seed, kStreamNoise, i));
      const float* mean = means.data() + static_cast<std::size_t>(s.labels[i]) * f;
      float* row = rows + r * f;
      for (std::size_t col = 0; col < f; ++col) {
        row[col] = mean[col] + static_cast<float>(normal(rng));
      }
    }
  });
}

DenseFeatures make_features(const SyntheticOptions& options, const Structure& s) {
  DenseFeatures x(options.nodes, options.features);
  fill_features(options, s, class_means(options), 0, static_cast<std::size_t>(options.nodes),
                x.data());
  return x;
}

// Bytes of feature rows the store writer generates at a time.
constexpr std::size_t kStoreBlockBytes = std::size_t{128} << 20;
// Memory for each pass of the transpose the store writer builds.
constexpr std::int64_t kTransposeBudget = std::int64_t{512} << 20;

// The class names `0`..`K-1`.
std::vector<std::string> class_names(std::int32_t classes) {
  std::vector<std::string> names;
  names.reserve(static_cast<std::size_t>(classes));
  for (std::int32_t c = 0; c < classes; ++c) names.push_back(std::to_string(c));
  return names;
}

}  // namespace

SyntheticOptions parse_synthetic_spec(std::string_view spec) {
  if (!spec.starts_with(kPrefix) || (spec.size() > kPrefix.size() && spec[kPrefix.size()] != ':')) {
    throw InvalidArgument("synthetic: spec " + detail::quoted(spec) +
                          " does not start with 'synthetic:'");
  }
  std::string_view rest = spec.substr(std::min(spec.size(), kPrefix.size() + 1));
  SyntheticOptions options;
  constexpr std::array<std::string_view, 8> kKeys{"nodes", "degree",    "features",    "classes",
                                                  "seed",  "homophily", "communities", "intra"};
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
                            ": expected nodes, degree, features, classes, seed, homophily, "
                            "communities or intra");
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
    } else if (key == "communities") {
      options.communities = parse_count(key, value, kMaxNodeCount);
    } else if (key == "homophily" || key == "intra") {
      const auto parsed = detail::parse_number(value);
      if (!parsed || !(*parsed >= 0.0 && *parsed <= 1.0)) {
        bad_value(key, "a number in [0, 1]", value);
      }
      (key == "intra" ? options.intra : options.homophily) = *parsed;
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

std::vector<std::int64_t> synthetic_communities(const SyntheticOptions& options) {
  check_communities(options);
  std::vector<std::int64_t> communities(static_cast<std::size_t>(options.nodes), 0);
  if (options.communities == 1) return communities;
  for_each_node(communities.size(), [&](std::size_t first, std::size_t last) {
    for (std::size_t i = first; i != last; ++i) communities[i] = community_of(options, i);
  });
  return communities;
}

Dataset make_synthetic(const SyntheticOptions& options, const DatasetOptions& load) {
  const std::string name = canonical_spec(options);
  validate(options, load.read.limits, name, /*in_memory=*/true);

  const Structure structure = make_structure(options);
  Dataset dataset;
  dataset.name = name;
  dataset.graph = make_graph(options, structure, load.read.limits, name);
  dataset.features = FeatureMatrix(make_features(options, structure));
  normalize_features(dataset, load.normalize_features);
  dataset.labels = structure.labels;
  dataset.class_names = class_names(options.classes);
  dataset.node_names.reserve(static_cast<std::size_t>(options.nodes));
  for (std::int64_t i = 0; i < options.nodes; ++i) dataset.node_names.push_back(std::to_string(i));
  draw_split(dataset, load.split_sizes, options.seed);
  return dataset;
}

EdgeId write_synthetic_store(const SyntheticOptions& options, const DatasetOptions& load,
                             const std::filesystem::path& dir, bool overwrite) {
  const std::string name = canonical_spec(options);
  validate(options, load.read.limits, name, /*in_memory=*/false);
  const Structure structure = make_structure(options);
  const DegreeTargets targets(options, structure);
  check_edge_targets(options, targets, load.read.limits, name);
  detail::StoreDirectory out(dir, overwrite);
  const std::filesystem::path& path = out.path();
  const auto n = static_cast<std::size_t>(options.nodes);
  const auto f = static_cast<std::size_t>(options.features);
  const std::size_t block =
      std::clamp<std::size_t>(kStoreBlockBytes / (f * sizeof(float)), 1024, std::size_t{1} << 17);

  // The rows, a block of nodes at a time.
  std::vector<EdgeId> in_offsets(n + 1, 0);
  detail::ArrayWriter sources_out(path, "in_sources", sizeof(NodeId));
  std::vector<EdgeId> counts;
  std::vector<NodeId> sources;
  for (std::size_t first = 0; first < n; first += block) {
    const std::size_t last = std::min(n, first + block);
    draw_rows(options, structure, targets, first, last, counts, sources);
    for (std::size_t r = 0; r < last - first; ++r) {
      in_offsets[first + r + 1] = in_offsets[first + r] + counts[r];
    }
    sources_out.append<NodeId>(sources);
  }
  std::vector<detail::ArrayRecord> graph;
  graph.push_back(detail::write_array<EdgeId>(path, "in_offsets", in_offsets));
  graph.push_back(sources_out.finish());
  {
    const detail::MappedFile written(path / "in_sources.bin", graph[1].count * sizeof(NodeId));
    detail::write_transpose(path, in_offsets, written.as<NodeId>(), kTransposeBudget, graph);
  }

  // The features, a block of rows at a time, row-normalised as `normalize_features` would: the
  // rule's answer for the automatic rule is known only once every row is seen, so rows are
  // written as stored and, should none be negative, written again normalised.
  Dataset meta;
  const auto write_features = [&](bool normalize) {
    std::filesystem::remove(path / "features.bin");
    detail::ArrayWriter features_out(path, "features", sizeof(float));
    const std::vector<float> means = class_means(options);
    DenseFeatures rows;
    bool negative = false;
    for (std::size_t first = 0; first < n; first += block) {
      const std::size_t last = std::min(n, first + block);
      rows.resize(static_cast<Eigen::Index>(last - first), options.features);
      fill_features(options, structure, means, first, last, rows.data());
      negative = negative || (rows.array() < 0.0F).any();
      if (normalize) detail::normalize_dense_rows(rows, static_cast<std::int64_t>(first));
      features_out.append<float>(std::span<const float>(rows.data(), rows.size()));
    }
    return std::make_pair(features_out.finish(), negative);
  };
  const FeatureNormalization rule = load.normalize_features;
  auto [features, negative] = write_features(rule == FeatureNormalization::kRows);
  meta.preparation.rows_normalized = detail::normalizes_rows(rule, negative, meta.notes);
  if (meta.preparation.rows_normalized && rule == FeatureNormalization::kAuto) {
    features = write_features(true).first;
  }

  // Labels and the split, drawn as `make_synthetic` draws it.
  meta.labels = structure.labels;
  meta.class_names = class_names(options.classes);
  draw_split(meta, load.split_sizes, options.seed);
  std::vector<std::uint8_t> split(n);
  for (std::size_t i = 0; i < n; ++i) split[i] = static_cast<std::uint8_t>(meta.split[i]);

  detail::StoreHeader header;
  header.name = name;
  header.nodes = options.nodes;
  header.edges = in_offsets.back();
  header.features = options.features;
  header.layout = detail::FeatureLayout::kDense;
  header.feature_entries = options.nodes * options.features;
  header.class_names = meta.class_names;
  header.numeric_node_names = true;
  header.notes = meta.notes;
  header.preparation = meta.preparation;
  header.arrays = std::move(graph);
  header.arrays.push_back(detail::write_array<std::int32_t>(path, "labels", meta.labels));
  header.arrays.push_back(detail::write_array<std::uint8_t>(path, "split", split));
  header.arrays.push_back(features);
  detail::write_store_header(path, header);
  out.publish();
  return header.edges;
}

}  // namespace maskgat
