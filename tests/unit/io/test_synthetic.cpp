#include <doctest/doctest.h>
#include <tbb/global_control.h>

#include <cmath>
#include <string>
#include <vector>

#include "maskgat/core/error.hpp"
#include "maskgat/io/synthetic.hpp"

namespace {

using maskgat::Dataset;
using maskgat::DatasetOptions;
using maskgat::make_synthetic;
using maskgat::NodeId;
using maskgat::parse_synthetic_spec;
using maskgat::SyntheticOptions;

SyntheticOptions small(std::uint64_t seed = 3) {
  SyntheticOptions options;
  options.nodes = 2000;
  options.degree = 8.0;
  options.features = 16;
  options.classes = 4;
  options.seed = seed;
  options.homophily = 0.8;
  return options;
}

template <typename T>
std::vector<T> to_vector(std::span<const T> values) {
  return {values.begin(), values.end()};
}

void check_identical(const Dataset& a, const Dataset& b) {
  CHECK(to_vector(a.graph.in_offsets()) == to_vector(b.graph.in_offsets()));
  CHECK(to_vector(a.graph.in_sources()) == to_vector(b.graph.in_sources()));
  CHECK(a.labels == b.labels);
  CHECK(a.split == b.split);
  REQUIRE(a.features.dense().size() == b.features.dense().size());
  // Bitwise: no tolerance.
  CHECK((a.features.dense().array() == b.features.dense().array()).all());
}

double same_class_fraction(const Dataset& data) {
  const auto destinations = data.graph.edge_destinations();
  const auto sources = data.graph.in_sources();
  std::int64_t same = 0;
  for (std::size_t e = 0; e < sources.size(); ++e) {
    same += data.labels[static_cast<std::size_t>(sources[e])] ==
            data.labels[static_cast<std::size_t>(destinations[e])];
  }
  return static_cast<double>(same) / static_cast<double>(sources.size());
}

std::string spec_error(const std::string& spec) {
  try {
    (void)parse_synthetic_spec(spec);
  } catch (const maskgat::InvalidArgument& error) {
    return error.what();
  }
  return "no error";
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("Synthetic spec: keys in any order - defaults for the rest") {
    const auto options = parse_synthetic_spec(
        "synthetic:homophily=0.5,seed=18446744073709551615,nodes=500,"
        "classes=4,features=16,degree=5.5");
    CHECK(options.nodes == 500);
    CHECK(options.degree == 5.5);
    CHECK(options.features == 16);
    CHECK(options.classes == 4);
    CHECK(options.seed == 18446744073709551615ULL);
    CHECK(options.homophily == 0.5);

    const SyntheticOptions defaults;
    const auto partial = parse_synthetic_spec("synthetic:nodes=77");
    CHECK(partial.nodes == 77);
    CHECK(partial.degree == defaults.degree);
    CHECK(partial.classes == defaults.classes);
    CHECK(parse_synthetic_spec("synthetic:").nodes == defaults.nodes);
    CHECK(parse_synthetic_spec("synthetic").nodes == defaults.nodes);
  }

  TEST_CASE("Synthetic spec: bad keys and values are rejected with pinned messages") {
    CHECK(spec_error("synthetic:foo=1") ==
          "synthetic: unknown key 'foo' in 'synthetic:foo=1': expected nodes, degree, features, "
          "classes, seed, homophily, communities or intra");
    CHECK(spec_error("synthetic:communities=0") ==
          "synthetic: communities must be a positive integer, got '0'");
    CHECK(spec_error("synthetic:intra=1.5") ==
          "synthetic: intra must be a number in [0, 1], got '1.5'");
    CHECK(spec_error("synthetic:nodes=abc") ==
          "synthetic: nodes must be a positive integer, got 'abc'");
    CHECK(spec_error("synthetic:nodes=0") ==
          "synthetic: nodes must be a positive integer, got '0'");
    CHECK(spec_error("synthetic:nodes=-5") ==
          "synthetic: nodes must be a positive integer, got '-5'");
    CHECK(spec_error("synthetic:nodes=3000000000") ==
          "synthetic: nodes must be at most 2147483647, got '3000000000'");
    CHECK(spec_error("synthetic:features=1.5") ==
          "synthetic: features must be a positive integer, got '1.5'");
    CHECK(spec_error("synthetic:classes=") ==
          "synthetic: classes must be a positive integer, got ''");
    CHECK(spec_error("synthetic:degree=-1") ==
          "synthetic: degree must be a non-negative number, got '-1'");
    CHECK(spec_error("synthetic:degree=inf") ==
          "synthetic: degree must be a non-negative number, got 'inf'");
    CHECK(spec_error("synthetic:homophily=1.5") ==
          "synthetic: homophily must be a number in [0, 1], got '1.5'");
    CHECK(spec_error("synthetic:seed=-1") ==
          "synthetic: seed must be a non-negative integer below 2^64, got '-1'");
    CHECK(spec_error("synthetic:nodes") ==
          "synthetic: expected key=value, got 'nodes' in 'synthetic:nodes'");
    CHECK(spec_error("synthetic:nodes=10,") ==
          "synthetic: expected key=value, got '' in 'synthetic:nodes=10,'");
    CHECK(spec_error("synthetic:nodes=10,nodes=20") ==
          "synthetic: key 'nodes' given twice in 'synthetic:nodes=10,nodes=20'");
    CHECK(spec_error("synthetics:nodes=10") ==
          "synthetic: spec 'synthetics:nodes=10' does not start with 'synthetic:'");
  }

  TEST_CASE("Synthetic graph: sizes - names and a simple graph without self-loops") {
    const auto options = small();
    const auto data = make_synthetic(options, DatasetOptions{});
    CHECK(data.name == "synthetic:nodes=2000,degree=8,features=16,classes=4,seed=3,homophily=0.8");
    CHECK(data.graph.num_nodes() == 2000);
    CHECK(data.graph.num_self_loops() == 0);
    CHECK(data.class_names == std::vector<std::string>{"0", "1", "2", "3"});
    REQUIRE(data.node_names.size() == 2000);
    CHECK(data.node_names[1234] == "1234");
    REQUIRE(data.labels.size() == 2000);
    std::vector<std::int64_t> counts(4, 0);
    for (const auto label : data.labels) {
      REQUIRE(label >= 0);
      REQUIRE(label < 4);
      ++counts[static_cast<std::size_t>(label)];
    }
    for (const auto count : counts) CHECK(count > 400);
    REQUIRE(!data.features.is_sparse());
    CHECK(data.features.rows() == 2000);
    CHECK(data.features.cols() == 16);
    CHECK(data.split.size() == 2000);

    // E is N·D up to the rounding of row targets and rows that cannot fill up.
    const double expected = 2000.0 * 8.0;
    CHECK(std::abs(static_cast<double>(data.graph.num_edges()) - expected) < 0.03 * expected);

    // Heavy tails: the busiest node has far more than the average in-degree.
    maskgat::EdgeId max_in = 0;
    for (maskgat::NodeId i = 0; i < data.graph.num_nodes(); ++i) {
      max_in = std::max(max_in, data.graph.in_degree(i));
    }
    CHECK(max_in > 5 * 8);
  }

  TEST_CASE("Synthetic graph: homophily above chance - features centred on class means") {
    const auto data = make_synthetic(small(), DatasetOptions{});
    // Expected about 0.8 + 0.2 / 4 = 0.85; chance is 1/4.
    CHECK(same_class_fraction(data) > 0.75);

    auto mixed = small();
    mixed.homophily = 0.0;
    const auto random_graph = make_synthetic(mixed, DatasetOptions{});
    CHECK(same_class_fraction(random_graph) < 0.35);

    // Within-class variance is the unit noise; class means are about 2 apart.
    const auto& x = data.features.dense();
    Eigen::MatrixXd sums = Eigen::MatrixXd::Zero(4, x.cols());
    std::vector<double> counts(4, 0.0);
    for (Eigen::Index i = 0; i < x.rows(); ++i) {
      const auto c = data.labels[static_cast<std::size_t>(i)];
      sums.row(c) += x.row(i).cast<double>();
      counts[static_cast<std::size_t>(c)] += 1.0;
    }
    for (Eigen::Index c = 0; c < 4; ++c) sums.row(c) /= counts[static_cast<std::size_t>(c)];
    double squares = 0.0;
    double beyond_one = 0.0;
    double beyond_two = 0.0;
    for (Eigen::Index i = 0; i < x.rows(); ++i) {
      const auto c = data.labels[static_cast<std::size_t>(i)];
      const Eigen::RowVectorXd noise = x.row(i).cast<double>() - sums.row(c);
      squares += noise.squaredNorm();
      beyond_one += static_cast<double>((noise.array().abs() > 1.0).count());
      beyond_two += static_cast<double>((noise.array().abs() > 2.0).count());
    }
    const auto values = static_cast<double>(x.rows() * x.cols());
    CHECK(squares / values == doctest::Approx(1.0).epsilon(0.05));
    // Gaussian tails: P(|z| > 1) = 0.3173, P(|z| > 2) = 0.0455 (32000 values).
    CHECK(beyond_one / values == doctest::Approx(0.3173).epsilon(0.03));
    CHECK(beyond_two / values == doctest::Approx(0.0455).epsilon(0.12));
    CHECK((sums.row(0) - sums.row(1)).norm() > 1.0);
  }

  TEST_CASE("Synthetic graph: communities hold the stated share of the edges") {
    auto options = small();
    options.communities = 10;
    options.intra = 0.9;
    CHECK(parse_synthetic_spec("synthetic:communities=10,intra=0.9").communities == 10);
    CHECK(parse_synthetic_spec("synthetic:communities=10,intra=0.9").intra == 0.9);
    const auto data = make_synthetic(options, DatasetOptions{});
    CHECK(data.name ==
          "synthetic:nodes=2000,degree=8,features=16,classes=4,seed=3,homophily=0.8,"
          "communities=10,intra=0.9");
    const std::vector<std::int64_t> community = maskgat::synthetic_communities(options);
    REQUIRE(community.size() == 2000);
    std::vector<std::int64_t> sizes(10, 0);
    for (const std::int64_t c : community) ++sizes[static_cast<std::size_t>(c)];
    for (const std::int64_t size : sizes) CHECK(size > 120);
    // intra + (1 - intra) / C = 0.91 of the edges inside a community; homophily as before.
    const auto inside = [&](const Dataset& graph) {
      std::int64_t same = 0;
      for (NodeId v = 0; v < graph.graph.num_nodes(); ++v) {
        for (const NodeId u : graph.graph.in_neighbors(v)) {
          same += community[static_cast<std::size_t>(u)] == community[static_cast<std::size_t>(v)];
        }
      }
      return static_cast<double>(same) / static_cast<double>(graph.graph.num_edges());
    };
    CHECK(inside(data) == doctest::Approx(0.91).epsilon(0.02));
    CHECK(same_class_fraction(data) > 0.75);
    const double expected = 2000.0 * 8.0;
    CHECK(std::abs(static_cast<double>(data.graph.num_edges()) - expected) < 0.03 * expected);
    // One community is the graph without them, bitwise; without the locality about 1/C stay.
    options.communities = 1;
    check_identical(make_synthetic(options, DatasetOptions{}),
                    make_synthetic(small(), DatasetOptions{}));
    options.communities = 10;
    options.intra = 0.0;
    CHECK(inside(make_synthetic(options, DatasetOptions{})) < 0.15);
    options.communities = 2001;
    CHECK_THROWS_WITH_AS(make_synthetic(options, DatasetOptions{}),
                         "synthetic: communities must be in [1, nodes = 2000], got 2001",
                         maskgat::InvalidArgument);
  }

  TEST_CASE("Synthetic graph: a seed determines everything") {
    const auto a = make_synthetic(small(11), DatasetOptions{});
    const auto b = make_synthetic(small(11), DatasetOptions{});
    check_identical(a, b);

    const auto c = make_synthetic(small(12), DatasetOptions{});
    CHECK(to_vector(a.graph.in_sources()) != to_vector(c.graph.in_sources()));
    CHECK(a.labels != c.labels);
    CHECK(!(a.features.dense().array() == c.features.dense().array()).all());
  }

  TEST_CASE("Synthetic graph: bitwise identical with one thread and with all threads") {
    auto options = small(5);
    options.nodes = 20000;
    options.features = 33;  // odd: the last Box-Muller pair is cut in half
    for (const std::int64_t communities : {1, 7}) {
      options.communities = communities;
      const auto parallel = make_synthetic(options, DatasetOptions{});
      Dataset serial;
      {
        const tbb::global_control one(tbb::global_control::max_allowed_parallelism, 1);
        serial = make_synthetic(options, DatasetOptions{});
      }
      check_identical(parallel, serial);
    }
  }

  TEST_CASE("Synthetic graph: sizes are checked against the limits and each other") {
    SyntheticOptions options;
    DatasetOptions load;
    load.read.limits.max_nodes = 100;
    CHECK_THROWS_WITH_AS(make_synthetic(options, load),
                         "synthetic: synthetic:nodes=1000,degree=10,features=128,classes=10,"
                         "seed=0,homophily=0.8: 1000 nodes: over the node limit of 100 (raise it "
                         "with --max-nodes)",
                         maskgat::LimitError);

    load = DatasetOptions{};
    load.read.limits.max_features = 64;
    CHECK_THROWS_AS(make_synthetic(options, load), maskgat::LimitError);

    load = DatasetOptions{};
    load.read.limits.max_edges = 5000;
    CHECK_THROWS_AS(make_synthetic(options, load), maskgat::LimitError);

    load = DatasetOptions{};
    load.read.limits.max_array_elements = 1000;
    CHECK_THROWS_AS(make_synthetic(options, load), maskgat::LimitError);

    options.nodes = 5;
    CHECK_THROWS_WITH_AS(make_synthetic(options, DatasetOptions{}),
                         "synthetic: classes (10) must not exceed nodes (5)",
                         maskgat::InvalidArgument);
    options.classes = 2;
    CHECK_THROWS_WITH_AS(make_synthetic(options, DatasetOptions{}),
                         "synthetic: degree 10 is more than nodes - 1 = 4",
                         maskgat::InvalidArgument);
    options.nodes = 0;
    CHECK_THROWS_WITH_AS(make_synthetic(options, DatasetOptions{}),
                         "synthetic: nodes must be positive, got 0", maskgat::InvalidArgument);
  }

  TEST_CASE("Synthetic graph: an edgeless graph is allowed") {
    auto options = small();
    options.degree = 0.0;
    const auto data = make_synthetic(options, DatasetOptions{});
    CHECK(data.graph.num_edges() == 0);
    CHECK(data.graph.num_nodes() == 2000);
  }
}
