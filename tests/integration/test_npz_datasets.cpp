// Shchur et al.'s npz graphs (`$MASKGAT_DATA_DIR/graphdata`, `gnn-benchmark`, `ppnp`), checked
// against PyTorch Geometric's `Amazon`, `Coauthor` and `read_npz` counts and datasets/README.md,
// and the heterophily benchmark's (`heterophily`), against the counts datasets/README.md gives.

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <tuple>

#include "maskgat/core/error.hpp"
#include "maskgat/graph/bgl.hpp"
#include "maskgat/io/dataset.hpp"
#include "maskgat/io/npz.hpp"
#include "support/paths.hpp"

namespace {

struct Expected {
  const char* name;
  std::int64_t nodes;
  std::int64_t edges;  // undirected both ways, no self-loops, as PyG
  std::int64_t features;
  std::int64_t nonzeros;
  std::int32_t classes;
};

void check(const maskgat::Dataset& data, const Expected& expected) {
  CAPTURE(expected.name);
  CHECK(data.graph.num_nodes() == expected.nodes);
  CHECK(data.graph.num_edges() == expected.edges);
  CHECK(data.graph.num_self_loops() == 0);
  CHECK(data.features.cols() == expected.features);
  REQUIRE(data.features.is_sparse());
  CHECK(data.features.sparse().nonZeros() == expected.nonzeros);
  CHECK(data.num_classes() == expected.classes);
  CHECK(data.node_names.front() == "0");
  CHECK(data.node_names.back() == std::to_string(expected.nodes - 1));
  for (const std::int32_t label : data.labels) REQUIRE((label >= 0 && label < expected.classes));
}

}  // namespace

TEST_SUITE("integration") {
  TEST_CASE("npz datasets: Amazon Computers, Amazon Photo and Coauthor CS (pickled layout)") {
    maskgat::DatasetOptions options;
    options.data_dir = maskgat::test::data_dir();
    const maskgat::Dataset computers = maskgat::load_dataset("amazon-computers", options);
    check(computers, {"amazon-computers", 13752, 491722, 767, 3675081, 10});
    CHECK(computers.class_names.front() == "Desktops");
    const maskgat::Dataset photo = maskgat::load_dataset("Amazon-Photo", options);
    check(photo, {"amazon-photo", 7650, 238162, 745, 1979909, 8});
    const maskgat::Dataset cs = maskgat::load_dataset("coauthor-cs", options);
    check(cs, {"coauthor-cs", 18333, 163788, 6805, 1092079, 15});
    CHECK(cs.name == "coauthor-cs");
  }

  TEST_CASE("npz datasets: Shchur et al.'s protocol, largest component and 20,30 per class") {
    maskgat::DatasetOptions options;
    options.data_dir = maskgat::test::data_dir();
    options.largest_component = true;
    options.split_sizes = maskgat::per_class_split(20, 30);
    for (const auto& [name, nodes, classes] :
         {std::tuple{"amazon-computers", 13381, 10}, std::tuple{"amazon-photo", 7487, 8},
          std::tuple{"coauthor-cs", 18333, 15}}) {
      CAPTURE(name);
      const maskgat::Dataset data = maskgat::load_dataset(name, options);
      CHECK(data.graph.num_nodes() == nodes);
      CHECK(maskgat::weak_components(data.graph) == 1);
      const auto count = [&](maskgat::SplitPart part) {
        return std::count(data.split.begin(), data.split.end(), part);
      };
      CHECK(count(maskgat::SplitPart::kTrain) == 20 * classes);
      CHECK(count(maskgat::SplitPart::kVal) == 30 * classes);
      CHECK(count(maskgat::SplitPart::kTest) == nodes - 50 * classes);
      CHECK(data.preparation.largest_component);
    }
  }

  TEST_CASE("npz datasets: the plain-array layout (gnn-benchmark Cora and CiteSeer, Cora-ML)") {
    const maskgat::DatasetOptions options;
    const auto dir = maskgat::test::data_dir();
    check(maskgat::read_npz(dir / "gnn-benchmark" / "cora.npz", "cora.npz", options),
          {"cora.npz", 2708, 10556, 1433, 49216, 7});
    check(maskgat::read_npz(dir / "gnn-benchmark" / "citeseer.npz", "citeseer.npz", options),
          {"citeseer.npz", 3312, 9072, 3703, 105165, 6});
    check(maskgat::read_npz(dir / "ppnp" / "cora_ml.npz", "cora_ml.npz", options),
          {"cora_ml.npz", 2995, 16316, 2879, 151171, 7});
  }

  TEST_CASE("npz datasets: the heterophily benchmark's graphs and their ten fixed splits") {
    struct Heterophily {
      const char* name;
      std::int64_t nodes;
      std::int64_t undirected_edges;
      std::int64_t features;
      std::int32_t classes;
      std::int64_t train, val, test;  // of split 0
    };
    maskgat::DatasetOptions options;
    options.data_dir = maskgat::test::data_dir();
    for (const Heterophily& expected :
         {Heterophily{"actor", 7600, 26659, 932, 5, 3648, 2432, 1520},
          Heterophily{"chameleon-filtered", 890, 8854, 2325, 5, 409, 287, 194},
          Heterophily{"squirrel-filtered", 2223, 46998, 2089, 5, 1053, 718, 452},
          Heterophily{"tolokers", 11758, 519000, 10, 2, 5879, 2939, 2940},
          Heterophily{"cornell", 183, 277, 1703, 5, 87, 59, 37},
          Heterophily{"texas", 183, 279, 1703, 5, 87, 59, 37},
          Heterophily{"wisconsin", 251, 450, 1703, 5, 120, 80, 51}}) {
      CAPTURE(expected.name);
      const maskgat::Dataset data = maskgat::load_dataset(expected.name, options);
      CHECK(data.graph.num_nodes() == expected.nodes);
      CHECK(data.graph.num_edges() == 2 * expected.undirected_edges);
      CHECK(data.graph.num_self_loops() == 0);
      CHECK(data.features.cols() == expected.features);
      CHECK(data.num_classes() == expected.classes);
      CHECK(data.fixed_splits.size() == 10);
      CHECK(data.preparation.fixed_split == 0);
      const auto count = [&](maskgat::SplitPart part) {
        return std::count(data.split.begin(), data.split.end(), part);
      };
      CHECK(count(maskgat::SplitPart::kTrain) == expected.train);
      CHECK(count(maskgat::SplitPart::kVal) == expected.val);
      CHECK(count(maskgat::SplitPart::kTest) == expected.test);
      CHECK(data.fixed_splits[9] != data.fixed_splits[0]);
    }
  }

  TEST_CASE("npz datasets: a missing file names the fetch command") {
    maskgat::DatasetOptions options;
    options.data_dir = maskgat::test::scratch_dir("npz_missing");
    CHECK_THROWS_WITH_AS(
        static_cast<void>(maskgat::load_dataset("amazon-photo", options)),
        ("npz: cannot open '" + (options.data_dir / "graphdata" / "amazon_photo.npz").string() +
         "': No such file or directory (fetch it with: datasets/fetch.sh --dest " +
         options.data_dir.string() + " amazon-photo (installed: maskgat-fetch))")
            .c_str(),
        maskgat::IoError);
  }
}
