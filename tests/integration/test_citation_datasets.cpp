// Cora, CiteSeer and PubMed from the published Planetoid files (`$MASKGAT_DATA_DIR/planetoid`),
// checked against the figures in datasets/README.md and PyG's `Planetoid`.
//
// The checksums are FNV-1a 64-bit over little-endian bytes: for features the CSR outer index
// (N + 1 int32), inner index (nnz int32) and float32 bit patterns, in that order; for labels
// N int32 (-1 unlabelled). They were confirmed independently by tests/support/planetoid_checksums.py,
// which reads the pickles with Python's own unpickler and assembles rows as PyG does.

#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "maskgat/io/planetoid.hpp"
#include "support/paths.hpp"

namespace {

using maskgat::Dataset;
using maskgat::DatasetOptions;
using maskgat::SplitPart;

class Fnv1a {
 public:
  template <typename T>
  void add(std::span<const T> values) {
    for (const T value : values) {
      const auto bits = std::bit_cast<std::uint32_t>(value);
      for (unsigned shift = 0; shift < 32; shift += 8) {
        hash_ = (hash_ ^ ((bits >> shift) & 0xFFU)) * 0x100000001B3ULL;
      }
    }
  }
  [[nodiscard]] std::uint64_t value() const noexcept { return hash_; }

 private:
  std::uint64_t hash_ = 0xCBF29CE484222325ULL;
};

std::uint64_t feature_checksum(const Dataset& dataset) {
  const auto& x = dataset.features.sparse();
  REQUIRE(x.isCompressed());
  Fnv1a hash;
  hash.add(std::span<const int>(x.outerIndexPtr(), static_cast<std::size_t>(x.rows() + 1)));
  hash.add(std::span<const int>(x.innerIndexPtr(), static_cast<std::size_t>(x.nonZeros())));
  hash.add(std::span<const float>(x.valuePtr(), static_cast<std::size_t>(x.nonZeros())));
  return hash.value();
}

std::uint64_t label_checksum(const Dataset& dataset) {
  Fnv1a hash;
  hash.add(std::span<const std::int32_t>(dataset.labels));
  return hash.value();
}

Dataset load(const char* name, bool require_features = true) {
  DatasetOptions options;
  options.require_features = require_features;
  options.normalize_features = maskgat::FeatureNormalization::kNone;  // the files' values
  return maskgat::read_planetoid(maskgat::test::data_dir() / "planetoid", name, options);
}

std::int64_t count_part(const Dataset& dataset, SplitPart part) {
  return std::count(dataset.split.begin(), dataset.split.end(), part);
}

void check_split(const Dataset& dataset, std::int64_t train) {
  CHECK(count_part(dataset, SplitPart::kTrain) == train);
  CHECK(count_part(dataset, SplitPart::kVal) == 500);
  CHECK(count_part(dataset, SplitPart::kTest) == 1000);
  for (std::int64_t i = 0; i < train + 500; ++i) {
    REQUIRE(dataset.split[static_cast<std::size_t>(i)] ==
            (i < train ? SplitPart::kTrain : SplitPart::kVal));
  }
}

// Every edge has its reverse, and none is a self-loop.
void check_undirected(const maskgat::Graph& graph) {
  CHECK(graph.num_self_loops() == 0);
  for (maskgat::NodeId node = 0; node < graph.num_nodes(); ++node) {
    const auto in = graph.in_neighbors(node);
    const auto out = graph.out_neighbors(node);
    REQUIRE(std::equal(in.begin(), in.end(), out.begin(), out.end()));
  }
}

}  // namespace

TEST_SUITE("integration") {
  TEST_CASE("citation datasets: Planetoid Cora") {
    const Dataset cora = load("cora");
    CHECK(cora.graph.num_nodes() == 2708);
    CHECK(cora.graph.num_edges() == 10556);
    check_undirected(cora.graph);
    CHECK(cora.features.cols() == 1433);
    CHECK(cora.features.rows() == 2708);
    CHECK(cora.features.sparse().nonZeros() == 49216);  // allx 31261 + tx 17955
    CHECK(cora.num_classes() == 7);
    check_split(cora, 140);
    CHECK(cora.notes ==
          std::vector<std::string>{"planetoid: ind.cora.graph: 302 duplicate edge(s) merged"});

    // LINQS class sizes; Planetoid renumbers the classes, so compare the multiset.
    std::vector<std::int64_t> counts(7, 0);
    for (const std::int32_t label : cora.labels) {
      REQUIRE(label >= 0);
      ++counts[static_cast<std::size_t>(label)];
    }
    std::sort(counts.begin(), counts.end(), std::greater<>());
    CHECK(counts == std::vector<std::int64_t>{818, 426, 418, 351, 298, 217, 180});

    CHECK(feature_checksum(cora) == 0x9e9fb75e34311433ULL);
    CHECK(label_checksum(cora) == 0xe278a6cd268bc8b4ULL);
  }

  TEST_CASE("citation datasets: Planetoid CiteSeer and its 15 test ids without rows") {
    const Dataset citeseer = load("citeseer");
    CHECK(citeseer.graph.num_nodes() == 3327);
    CHECK(citeseer.graph.num_edges() == 9104);
    check_undirected(citeseer.graph);
    CHECK(citeseer.features.cols() == 3703);
    CHECK(citeseer.features.sparse().nonZeros() == 105165);  // allx 73173 + tx 31992
    CHECK(citeseer.num_classes() == 6);
    check_split(citeseer, 120);
    CHECK(citeseer.notes ==
          std::vector<std::string>{"planetoid: ind.citeseer.graph: 236 duplicate edge(s) merged",
                                   "planetoid: ind.citeseer.graph: 124 self-loop(s) removed"});

    const std::vector<maskgat::NodeId> missing = {2407, 2489, 2553, 2682, 2781, 2953, 3042, 3063,
                                                  3212, 3214, 3250, 3292, 3305, 3306, 3309};
    std::vector<maskgat::NodeId> unlabelled;
    for (std::size_t i = 0; i < citeseer.labels.size(); ++i) {
      if (citeseer.labels[i] < 0) unlabelled.push_back(static_cast<maskgat::NodeId>(i));
    }
    CHECK(unlabelled == missing);
    const auto& x = citeseer.features.sparse();
    for (const maskgat::NodeId node : missing) {
      CHECK(x.row(node).nonZeros() == 0);
      CHECK(citeseer.split[static_cast<std::size_t>(node)] == SplitPart::kNone);
    }

    CHECK(feature_checksum(citeseer) == 0x8e2f1c5912e9f0b2ULL);
    CHECK(label_checksum(citeseer) == 0x9d4d0925892f0cbaULL);
  }

  TEST_CASE("citation datasets: Planetoid PubMed without its unmirrored allx") {
    const Dataset pubmed = load("pubmed", false);
    CHECK(pubmed.graph.num_nodes() == 19717);
    CHECK(pubmed.graph.num_edges() == 88648);
    check_undirected(pubmed.graph);
    CHECK(pubmed.num_classes() == 3);
    check_split(pubmed, 60);
    CHECK(pubmed.notes ==
          std::vector<std::string>{"planetoid: ind.pubmed.graph: 25 duplicate edge(s) merged",
                                   "planetoid: ind.pubmed.graph: 3 self-loop(s) removed"});
    CHECK(std::none_of(pubmed.labels.begin(), pubmed.labels.end(),
                       [](std::int32_t label) { return label < 0; }));
    CHECK(label_checksum(pubmed) == 0xfbd4601f1cd87506ULL);
    if (!pubmed.missing_features.empty()) {
      CHECK(pubmed.features.rows() == 19717);
      CHECK(pubmed.features.cols() == 0);
      CHECK(pubmed.missing_features.find("PubMed's ind.pubmed.allx is not in the local mirror") !=
            std::string::npos);
    } else {
      CHECK(pubmed.features.cols() == 500);
    }
  }
}
