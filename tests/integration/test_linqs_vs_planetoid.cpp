// The LINQS originals (`linqs/<name>/<name>.{content,cites}`) against the Planetoid files
// (`planetoid/ind.<name>.*`) they were derived from. Planetoid drops paper ids, so papers are
// matched through their binary word vectors: each LINQS paper goes to the Planetoid node with
// the same set of word columns (hashed); the few word sets shared by several papers are told
// apart by the citation graph, fixing at each pass every paper whose matched neighbours leave a
// single candidate. What remains are twins (same words, same neighbours), paired by label.
// Whatever the choices, the checks below then verify the final mapping as a whole.
//
// What matches:
// - Cora: 2681 papers match by word set alone, the others through citations or as twins; the
//   mapping is a bijection of all 2708 papers; the symmetrised citation graphs are equal under
//   it (10556 directed edges) and LINQS class names map one to one onto Planetoid class ids
//   (Theory=0, Reinforcement_Learning=1, Genetic_Algorithms=2, Neural_Networks=3,
//   Probabilistic_Methods=4, Case_Based=5, Rule_Learning=6).
// - CiteSeer: Planetoid has 3327 nodes, LINQS 3312 papers. Every LINQS paper maps to its own
//   Planetoid node with an identical word vector; the 15 Planetoid nodes left over are exactly
//   the test-range ids without a `tx` row (zero features, unlabelled). Those 15 stand for papers
//   cited in `citeseer.cites` but absent from `citeseer.content`, which LINQS drops: Planetoid's
//   extra edges (32 directed) all touch them, and among the matched nodes the edge sets are
//   equal (9072 directed edges); labels agree under a one-to-one class map.

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <unordered_map>
#include <vector>

#include "maskgat/core/error.hpp"
#include "maskgat/io/linqs.hpp"
#include "maskgat/io/planetoid.hpp"
#include "support/paths.hpp"

namespace {

using maskgat::Dataset;
using maskgat::DatasetOptions;
using maskgat::EdgeId;
using maskgat::Graph;
using maskgat::NodeId;
using maskgat::SparseFeatures;

using ColumnSet = std::vector<int>;

struct ColumnSetHash {
  std::size_t operator()(const ColumnSet& columns) const noexcept {
    std::uint64_t hash = 0xCBF29CE484222325ULL;
    for (const int column : columns) {
      hash = (hash ^ static_cast<std::uint32_t>(column)) * 0x100000001B3ULL;
    }
    return static_cast<std::size_t>(hash);
  }
};

// The word columns of every row; every stored value must be 1 (binary features).
std::vector<ColumnSet> column_sets(const Dataset& data) {
  REQUIRE(data.features.is_sparse());
  const SparseFeatures& x = data.features.sparse();
  std::vector<ColumnSet> rows(static_cast<std::size_t>(x.rows()));
  for (Eigen::Index r = 0; r < x.outerSize(); ++r) {
    for (SparseFeatures::InnerIterator it(x, r); it; ++it) {
      if (it.value() == 0.0F) continue;
      REQUIRE(it.value() == 1.0F);
      rows[static_cast<std::size_t>(r)].push_back(static_cast<int>(it.col()));
    }
  }
  return rows;
}

bool has_edge(const Graph& graph, NodeId source, NodeId destination) {
  const auto sources = graph.in_neighbors(destination);
  return std::binary_search(sources.begin(), sources.end(), source);
}

struct Matching {
  std::vector<NodeId> to_planetoid;  // per LINQS node, -1 when unmatched
  std::vector<NodeId> to_linqs;      // per Planetoid node, -1 when unmatched
  std::int64_t unique_by_features = 0;
  std::int64_t resolved_by_edges = 0;
  std::int64_t twins_paired = 0;
  std::int64_t without_candidate = 0;
};

class Matcher {
 public:
  Matcher(const Dataset& linqs, const Dataset& planetoid) : linqs_(linqs), planetoid_(planetoid) {}

  Matching run() {
    const auto linqs_rows = column_sets(linqs_);
    const auto planetoid_rows = column_sets(planetoid_);
    std::unordered_map<ColumnSet, std::vector<NodeId>, ColumnSetHash> by_columns;
    for (std::size_t v = 0; v < planetoid_rows.size(); ++v) {
      by_columns[planetoid_rows[v]].push_back(static_cast<NodeId>(v));
    }
    match_.to_planetoid.assign(linqs_rows.size(), -1);
    match_.to_linqs.assign(planetoid_rows.size(), -1);
    candidates_.resize(linqs_rows.size());
    for (std::size_t u = 0; u < linqs_rows.size(); ++u) {
      const auto found = by_columns.find(linqs_rows[u]);
      if (found == by_columns.end()) {
        ++match_.without_candidate;
        continue;
      }
      candidates_[u] = found->second;
      if (candidates_[u].size() == 1) {
        assign(u, candidates_[u].front());
        ++match_.unique_by_features;
      }
    }
    refine();

    // What is left are twins: papers with the same word set whose matched neighbours are the
    // same, so features and edges cannot tell them apart (swapping them is an automorphism).
    // They are paired by label under the class map of the matched papers; a wrong pick would
    // still show up in the edge comparison, which checks the final mapping as a whole.
    const auto class_map = partial_class_map();
    for (std::size_t u = 0; u < candidates_.size(); ++u) {
      if (match_.to_planetoid[u] >= 0 || candidates_[u].empty()) continue;
      const auto alive = alive_candidates(u);
      if (alive.empty()) continue;
      NodeId pick = alive.front();
      const std::int32_t wanted = class_map[static_cast<std::size_t>(linqs_.labels[u])];
      for (const NodeId v : alive) {
        if (planetoid_.labels[static_cast<std::size_t>(v)] == wanted) {
          pick = v;
          break;
        }
      }
      assign(u, pick);
      ++match_.twins_paired;
      refine();
    }
    return match_;
  }

 private:
  void assign(std::size_t u, NodeId v) {
    REQUIRE_MESSAGE(match_.to_linqs[static_cast<std::size_t>(v)] < 0,
                    "two LINQS papers claim Planetoid node " << v);
    match_.to_planetoid[u] = v;
    match_.to_linqs[static_cast<std::size_t>(v)] = static_cast<NodeId>(u);
  }

  // Free candidates adjacent to the image of every matched neighbour of `u`.
  std::vector<NodeId> alive_candidates(std::size_t u) const {
    std::vector<NodeId> alive;
    for (const NodeId v : candidates_[u]) {
      if (match_.to_linqs[static_cast<std::size_t>(v)] >= 0) continue;
      bool consistent = true;
      for (const NodeId w : linqs_.graph.in_neighbors(static_cast<NodeId>(u))) {
        const NodeId image = match_.to_planetoid[static_cast<std::size_t>(w)];
        if (image >= 0 && !has_edge(planetoid_.graph, image, v)) consistent = false;
      }
      if (consistent) alive.push_back(v);
    }
    return alive;
  }

  void refine() {
    bool progress = true;
    while (progress) {
      progress = false;
      for (std::size_t u = 0; u < candidates_.size(); ++u) {
        if (match_.to_planetoid[u] >= 0 || candidates_[u].empty()) continue;
        candidates_[u] = alive_candidates(u);
        if (candidates_[u].size() == 1) {
          assign(u, candidates_[u].front());
          ++match_.resolved_by_edges;
          progress = true;
        }
      }
    }
  }

  std::vector<std::int32_t> partial_class_map() const {
    std::vector<std::int32_t> class_map(static_cast<std::size_t>(linqs_.num_classes()), -1);
    for (std::size_t u = 0; u < match_.to_planetoid.size(); ++u) {
      const NodeId v = match_.to_planetoid[u];
      auto& mapped = class_map[static_cast<std::size_t>(linqs_.labels[u])];
      if (v >= 0 && mapped < 0) mapped = planetoid_.labels[static_cast<std::size_t>(v)];
    }
    return class_map;
  }

  const Dataset& linqs_;
  const Dataset& planetoid_;
  Matching match_;
  std::vector<std::vector<NodeId>> candidates_;
};

// Edges of `from` whose ends are both matched and whose image is missing from `to`.
EdgeId edges_missing_from(const Graph& from, const Graph& to, const std::vector<NodeId>& image,
                          EdgeId& matched_edges) {
  EdgeId missing = 0;
  matched_edges = 0;
  for (NodeId d = 0; d < from.num_nodes(); ++d) {
    const NodeId image_d = image[static_cast<std::size_t>(d)];
    if (image_d < 0) continue;
    for (const NodeId s : from.in_neighbors(d)) {
      const NodeId image_s = image[static_cast<std::size_t>(s)];
      if (image_s < 0) continue;
      ++matched_edges;
      if (!has_edge(to, image_s, image_d)) ++missing;
    }
  }
  return missing;
}

// The class-id map LINQS -> Planetoid taken from the first matched labelled node of each class;
// returns how many matched nodes disagree with it (-1 marks a class never seen).
std::int64_t label_disagreements(const Dataset& linqs, const Dataset& planetoid,
                                 const Matching& match, std::vector<std::int32_t>& class_map) {
  class_map.assign(static_cast<std::size_t>(linqs.num_classes()), -1);
  std::int64_t disagreements = 0;
  for (std::size_t u = 0; u < match.to_planetoid.size(); ++u) {
    const NodeId v = match.to_planetoid[u];
    if (v < 0) continue;
    const std::int32_t theirs = planetoid.labels[static_cast<std::size_t>(v)];
    auto& mapped = class_map[static_cast<std::size_t>(linqs.labels[u])];
    if (mapped < 0) mapped = theirs;
    if (mapped != theirs) ++disagreements;
  }
  return disagreements;
}

std::string describe(const std::vector<std::string>& names,
                     const std::vector<std::int32_t>& class_map) {
  std::string text;
  for (std::size_t c = 0; c < names.size(); ++c) {
    text += (c == 0 ? "" : ", ") + names[c] + "=" + std::to_string(class_map[c]);
  }
  return text;
}

// Whether the data directory holds `name`'s LINQS and Planetoid files. Without them a test says
// so and checks nothing, unless the data must be there (MASKGAT_REQUIRE_DATA=1, as in CI): then
// the missing files fail it.
bool have_files(const std::filesystem::path& data, const std::string& name) {
  const bool present = std::filesystem::exists(data / "linqs" / name / (name + ".content")) &&
                       std::filesystem::exists(data / "planetoid" / ("ind." + name + ".graph"));
  const char* required = std::getenv("MASKGAT_REQUIRE_DATA");
  if (!present && required != nullptr && std::string(required) == "1") {
    FAIL("the LINQS or Planetoid files of " << name << " are not under " << data
                                            << " (MASKGAT_REQUIRE_DATA=1)");
  }
  return present;
}

struct Pair {
  Dataset linqs;
  Dataset planetoid;
};

Pair load_pair(const std::string& name) {
  const auto data = maskgat::test::data_dir();
  DatasetOptions options;
  options.normalize_features = maskgat::FeatureNormalization::kNone;  // the files' values
  return {maskgat::read_linqs(data / "linqs" / name, name, options),
          maskgat::read_planetoid(data / "planetoid", name, options)};
}

}  // namespace

TEST_SUITE("integration") {
  TEST_CASE("LINQS: Cora and CiteSeer have the counts of datasets/README.md") {
    const auto data = maskgat::test::data_dir();
    if (!have_files(data, "cora") || !have_files(data, "citeseer")) {
      MESSAGE("skipped: LINQS files not under " << data);
      return;
    }
    const auto cora = maskgat::read_linqs(data / "linqs" / "cora", "cora", DatasetOptions{});
    CHECK(cora.graph.num_nodes() == 2708);
    CHECK(cora.graph.num_edges() == 10556);
    CHECK(cora.features.cols() == 1433);
    CHECK(cora.features.nonzeros() == 49216);
    CHECK(cora.class_names == std::vector<std::string>{"Case_Based", "Genetic_Algorithms",
                                                       "Neural_Networks", "Probabilistic_Methods",
                                                       "Reinforcement_Learning", "Rule_Learning",
                                                       "Theory"});
    CHECK(std::count(cora.labels.begin(), cora.labels.end(), 2) == 818);

    const auto dir = data / "linqs" / "citeseer";
    const auto citeseer = maskgat::read_linqs(dir, "citeseer", DatasetOptions{});
    CHECK(citeseer.graph.num_nodes() == 3312);
    CHECK(citeseer.graph.num_edges() == 9072);
    CHECK(citeseer.graph.num_self_loops() == 0);
    CHECK(citeseer.features.cols() == 3703);
    CHECK(citeseer.features.nonzeros() == 105165);
    CHECK(citeseer.class_names ==
          std::vector<std::string>{"AI", "Agents", "DB", "HCI", "IR", "ML"});
    CHECK(citeseer.node_names[0] == "100157");
    const std::string cites = (dir / "citeseer.cites").string();
    REQUIRE(citeseer.notes.size() >= 2);
    CHECK(citeseer.notes[0] ==
          "linqs: " + cites + ": 17 citation(s) of papers not in citeseer.content dropped");
    CHECK(citeseer.notes[1] == "linqs: " + cites + ": 124 self-loop(s) removed");

    DatasetOptions strict;
    strict.read.strict = true;
    CHECK_THROWS_AS((void)maskgat::read_linqs(dir, "citeseer", strict), maskgat::ParseError);
  }

  TEST_CASE("LINQS vs Planetoid: Cora is the same graph - features and labels") {
    if (!have_files(maskgat::test::data_dir(), "cora")) {
      MESSAGE("skipped: Cora files not under " << maskgat::test::data_dir());
      return;
    }
    const auto [linqs, planetoid] = load_pair("cora");
    REQUIRE(linqs.graph.num_nodes() == 2708);
    REQUIRE(planetoid.graph.num_nodes() == 2708);

    const Matching match = Matcher(linqs, planetoid).run();
    MESSAGE("Cora: " << match.unique_by_features << " papers matched by word set alone, "
                     << match.resolved_by_edges << " through citations, " << match.twins_paired
                     << " twins paired");
    CHECK(match.without_candidate == 0);
    CHECK(std::count(match.to_planetoid.begin(), match.to_planetoid.end(), -1) == 0);
    CHECK(std::count(match.to_linqs.begin(), match.to_linqs.end(), -1) == 0);

    CHECK(linqs.graph.num_edges() == 10556);
    CHECK(planetoid.graph.num_edges() == 10556);
    EdgeId matched = 0;
    CHECK(edges_missing_from(linqs.graph, planetoid.graph, match.to_planetoid, matched) == 0);
    CHECK(matched == 10556);

    std::vector<std::int32_t> class_map;
    CHECK(label_disagreements(linqs, planetoid, match, class_map) == 0);
    std::vector<std::int32_t> sorted_map = class_map;
    std::sort(sorted_map.begin(), sorted_map.end());
    CHECK(sorted_map == std::vector<std::int32_t>{0, 1, 2, 3, 4, 5, 6});
    MESSAGE("Cora classes as Planetoid ids: " << describe(linqs.class_names, class_map));
  }

  TEST_CASE("LINQS vs Planetoid: CiteSeer papers match Planetoid nodes but for 15 missing ones") {
    if (!have_files(maskgat::test::data_dir(), "citeseer")) {
      MESSAGE("skipped: CiteSeer files not under " << maskgat::test::data_dir());
      return;
    }
    const auto [linqs, planetoid] = load_pair("citeseer");
    REQUIRE(linqs.graph.num_nodes() == 3312);
    REQUIRE(planetoid.graph.num_nodes() == 3327);

    const Matching match = Matcher(linqs, planetoid).run();
    MESSAGE("CiteSeer: " << match.unique_by_features << " papers matched by word set alone, "
                         << match.resolved_by_edges << " through citations, " << match.twins_paired
                         << " twins paired");
    // Every LINQS paper has a Planetoid node with an identical word vector, and is matched.
    CHECK(match.without_candidate == 0);
    CHECK(std::count(match.to_planetoid.begin(), match.to_planetoid.end(), -1) == 0);

    // The Planetoid nodes left over are exactly the 15 featureless, unlabelled test ids.
    const std::vector<NodeId> missing_test_ids{2407, 2489, 2553, 2682, 2781, 2953, 3042, 3063,
                                               3212, 3214, 3250, 3292, 3305, 3306, 3309};
    std::vector<NodeId> unmatched;
    for (std::size_t v = 0; v < match.to_linqs.size(); ++v) {
      if (match.to_linqs[v] < 0) unmatched.push_back(static_cast<NodeId>(v));
    }
    CHECK(unmatched == missing_test_ids);
    for (const NodeId v : unmatched) {
      CHECK(planetoid.labels[static_cast<std::size_t>(v)] == -1);
      CHECK(planetoid.features.sparse().row(v).nonZeros() == 0);
    }

    // Among matched nodes the graphs are equal; Planetoid's other edges all touch the 15.
    CHECK(linqs.graph.num_edges() == 9072);
    CHECK(planetoid.graph.num_edges() == 9104);
    EdgeId matched_linqs = 0;
    EdgeId matched_planetoid = 0;
    CHECK(edges_missing_from(linqs.graph, planetoid.graph, match.to_planetoid, matched_linqs) == 0);
    CHECK(edges_missing_from(planetoid.graph, linqs.graph, match.to_linqs, matched_planetoid) == 0);
    CHECK(matched_linqs == 9072);
    CHECK(matched_planetoid == 9072);

    std::vector<std::int32_t> class_map;
    CHECK(label_disagreements(linqs, planetoid, match, class_map) == 0);
    std::vector<std::int32_t> sorted_map = class_map;
    std::sort(sorted_map.begin(), sorted_map.end());
    CHECK(sorted_map == std::vector<std::int32_t>{0, 1, 2, 3, 4, 5});
    MESSAGE("CiteSeer classes as Planetoid ids: " << describe(linqs.class_names, class_map));
  }
}
