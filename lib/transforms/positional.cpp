#include "maskgat/transforms/positional.hpp"

#include <Spectra/SymEigsSolver.h>

#include <Eigen/Core>
#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "core/detail/parallel.hpp"
#include "io/detail/text.hpp"
#include "maskgat/core/error.hpp"
#include "maskgat/core/random.hpp"
#include "maskgat/graph/bgl.hpp"

namespace maskgat::transforms {
namespace {

// Walks propagated together: a row of the N x kWalks distributions is a few vector registers.
constexpr std::int64_t kWalks = 64;

// Components up to this size are solved densely: below it a full eigendecomposition costs less
// than setting up Lanczos, and it has no convergence to fail.
constexpr std::int64_t kDenseNodes = 256;
// Lanczos basis size when 2k + 1 is smaller: a wider basis restarts less often on the
// clustered small eigenvalues of sparse graphs, for little memory.
constexpr std::int64_t kMinLanczosBasis = 40;
// Relative accuracy Spectra stops at; eigenvectors are rounded to float afterwards, so this
// leaves residuals far below float precision.
constexpr double kLanczosTolerance = 1e-10;
// Only a bound that turns a stall into an error: the citation graphs need far fewer.
constexpr std::int64_t kLanczosRestarts = 10000;
// An eigenvalue of 2I - L that a later Lanczos round finds this far above the k-th found so far
// was missed; closer ones are ties (or rounding), either of which is as good. Far above the
// eigenvalues' error, which the tolerance bounds by about 1e-10.
constexpr double kMissedEigenvalueGap = 1e-8;
// Lanczos start vectors are drawn from a fixed seed, so every run gives the same bits.
constexpr std::uint64_t kStartVectorSeed = 0x4c61706c61636521ULL;
// Entries within this relative distance of a column's largest magnitude count as ties for the
// sign convention, so exact ties of a symmetric eigenvector are not broken by rounding noise.
constexpr double kSignTieTolerance = 1e-6;

// The undirected simple adjacency in CSR form: in- and out-neighbours merged, self-loops dropped.
struct Adjacency {
  std::vector<EdgeId> offsets;
  std::vector<NodeId> neighbors;
};

Adjacency undirected_adjacency(const Graph& graph) {
  const NodeId n = graph.num_nodes();
  Adjacency adjacency;
  adjacency.offsets.assign(static_cast<std::size_t>(n) + 1, 0);
  adjacency.neighbors.reserve(2 * static_cast<std::size_t>(graph.num_edges()));
  for (NodeId i = 0; i < n; ++i) {
    // Both lists are sorted, so their union is a merge that also drops edges stored both ways.
    const auto in = graph.in_neighbors(i);
    const auto out = graph.out_neighbors(i);
    std::size_t a = 0;
    std::size_t b = 0;
    while (a < in.size() || b < out.size()) {
      NodeId j = 0;
      if (b == out.size() || (a < in.size() && in[a] < out[b])) {
        j = in[a++];
      } else if (a == in.size() || out[b] < in[a]) {
        j = out[b++];
      } else {
        j = in[a++];
        ++b;
      }
      if (j != i) adjacency.neighbors.push_back(j);
    }
    adjacency.offsets[static_cast<std::size_t>(i) + 1] =
        static_cast<EdgeId>(adjacency.neighbors.size());
  }
  return adjacency;
}

// One connected component with local ids 0 .. n_c - 1 (its nodes in ascending global order).
struct Component {
  std::span<const NodeId> nodes;
  std::vector<EdgeId> offsets;
  std::vector<std::int32_t> neighbors;  // local ids
  Eigen::VectorXd inv_sqrt_degree;
};

Component local_component(const Adjacency& adjacency, std::span<const NodeId> nodes,
                          const std::vector<std::int32_t>& local_id) {
  Component component;
  component.nodes = nodes;
  const auto size = static_cast<std::int64_t>(nodes.size());
  component.offsets.resize(nodes.size() + 1);
  component.offsets[0] = 0;
  component.inv_sqrt_degree.resize(size);
  for (std::int64_t r = 0; r < size; ++r) {
    const auto i = static_cast<std::size_t>(nodes[static_cast<std::size_t>(r)]);
    const EdgeId degree = adjacency.offsets[i + 1] - adjacency.offsets[i];
    component.offsets[static_cast<std::size_t>(r) + 1] =
        component.offsets[static_cast<std::size_t>(r)] + degree;
    component.inv_sqrt_degree[r] = 1.0 / std::sqrt(static_cast<double>(degree));
  }
  component.neighbors.reserve(static_cast<std::size_t>(component.offsets.back()));
  for (const NodeId i : nodes) {
    const auto row = static_cast<std::size_t>(i);
    for (EdgeId e = adjacency.offsets[row]; e < adjacency.offsets[row + 1]; ++e) {
      component.neighbors.push_back(
          local_id[static_cast<std::size_t>(adjacency.neighbors[static_cast<std::size_t>(e)])]);
    }
  }
  return component;
}

// y = (I + D^-1/2 A D^-1/2) x = (2I - L) x over a component.
void shifted_adjacency_product(const Component& component, const double* x, double* y) {
  const Eigen::VectorXd& s = component.inv_sqrt_degree;
  for (Eigen::Index r = 0; r < s.size(); ++r) {
    double sum = 0.0;
    for (auto e = component.offsets[static_cast<std::size_t>(r)];
         e < component.offsets[static_cast<std::size_t>(r) + 1]; ++e) {
      const std::int32_t c = component.neighbors[static_cast<std::size_t>(e)];
      sum += s[c] * x[c];
    }
    y[r] = x[r] + s[r] * sum;
  }
}

// P (2I - L) P with P = I - Q Q^T for orthonormal locked columns Q, in Spectra's operator
// interface. The locked vectors get the eigenvalue 0, at or below all of 2I - L's (which lie in
// [0, 2]), and every eigenpair orthogonal to them is unchanged, so Lanczos on it finds the
// largest eigenvalues among the rest.
class DeflatedProduct {
 public:
  using Scalar = double;

  DeflatedProduct(const Component& component, const Eigen::MatrixXd& locked)
      : component_(component),
        locked_(locked),
        projected_(locked.rows()),
        coefficients_(locked.cols()) {}

  [[nodiscard]] Eigen::Index rows() const { return locked_.rows(); }
  [[nodiscard]] Eigen::Index cols() const { return rows(); }

  void perform_op(const double* x, double* y) const {
    const Eigen::Map<const Eigen::VectorXd> in(x, rows());
    Eigen::Map<Eigen::VectorXd> out(y, rows());
    coefficients_.noalias() = locked_.transpose() * in;
    projected_ = in;
    projected_.noalias() -= locked_ * coefficients_;
    shifted_adjacency_product(component_, projected_.data(), y);
    coefficients_.noalias() = locked_.transpose() * out;
    out.noalias() -= locked_ * coefficients_;
  }

 private:
  const Component& component_;
  const Eigen::MatrixXd& locked_;
  // Scratch, so a product allocates nothing; Spectra's interface makes perform_op const.
  mutable Eigen::VectorXd projected_;
  mutable Eigen::VectorXd coefficients_;
};

// The eigenvectors of L's non-trivial eigenvalues 1 .. min(k, n_c - 1), ascending, by a full
// eigendecomposition of the dense L.
Eigen::MatrixXd dense_eigenvectors(const Component& component, std::int64_t k) {
  const Eigen::Index size = component.inv_sqrt_degree.size();
  const Eigen::VectorXd& s = component.inv_sqrt_degree;
  Eigen::MatrixXd laplacian = Eigen::MatrixXd::Identity(size, size);
  for (Eigen::Index r = 0; r < size; ++r) {
    for (auto e = component.offsets[static_cast<std::size_t>(r)];
         e < component.offsets[static_cast<std::size_t>(r) + 1]; ++e) {
      const std::int32_t c = component.neighbors[static_cast<std::size_t>(e)];
      laplacian(r, c) = -s[r] * s[c];
    }
  }
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> solver(laplacian);
  // Eigenvalues come ascending; column 0 is the null vector D^1/2 1 (0 is simple on a
  // connected component).
  return solver.eigenvectors().middleCols(1, std::min<Eigen::Index>(k, size - 1));
}

// A fixed pseudo-random start vector per Lanczos round, entries uniform in [-1, 1).
Eigen::VectorXd start_vector(Eigen::Index size, std::int64_t round) {
  const CounterStream stream(kStartVectorSeed, static_cast<std::uint64_t>(round));
  Eigen::VectorXd start(size);
  for (Eigen::Index r = 0; r < size; ++r) {
    start[r] =
        2.0 * std::ldexp(static_cast<double>(stream(static_cast<std::uint64_t>(r)) >> 11), -53) -
        1.0;
  }
  return start;
}

// The same by Lanczos on 2I - L, whose largest eigenvalues are L's smallest. The null vector
// D^1/2 1 is known, so it is locked (projected out) from the start. Single-vector Lanczos sees
// only one direction of an eigenspace its start vector has one component in, so with a repeated
// eigenvalue (any graph symmetry, e.g. a cycle's pairs) it can return a smaller eigenvalue in
// place of the repeat. Hence rounds: each locks what has been found so far and runs Lanczos from
// a new start vector; an eigenvalue above the k-th found one is a missed one, merged in by
// Rayleigh-Ritz, and the rounds stop when one finds none.
Eigen::MatrixXd lanczos_eigenvectors(const Component& component, std::int64_t k,
                                     std::int64_t component_id) {
  const Eigen::Index size = component.inv_sqrt_degree.size();
  const Eigen::Index basis =
      std::min<Eigen::Index>(size, std::max<Eigen::Index>(2 * k + 1, kMinLanczosBasis));
  const auto fail = [&](const std::string& why) {
    return Error("laplacian_encoding: Lanczos did not converge on component " +
                 std::to_string(component_id) + " (" + std::to_string(size) + " nodes, k " +
                 std::to_string(k) + "): " + why);
  };
  Eigen::VectorXd null_vector = component.inv_sqrt_degree.cwiseInverse();
  null_vector.normalize();
  // The top k eigenpairs of 2I - L found so far, descending, orthonormal.
  Eigen::MatrixXd found(size, 0);
  Eigen::VectorXd values;
  Eigen::MatrixXd locked(size, 1);
  locked.col(0) = null_vector;
  // A round that changes `found` adds at least one of the k wanted eigenvectors.
  for (std::int64_t round = 0; round <= k; ++round) {
    DeflatedProduct product(component, locked);
    Spectra::SymEigsSolver<DeflatedProduct> solver(product, k, basis);
    Eigen::VectorXd start = start_vector(size, round);
    start -= locked * (locked.transpose() * start);
    solver.init(start.data());
    solver.compute(Spectra::SortRule::LargestAlge, kLanczosRestarts, kLanczosTolerance,
                   Spectra::SortRule::LargestAlge);
    if (solver.info() != Spectra::CompInfo::Successful) {
      throw fail("no convergence within " + std::to_string(kLanczosRestarts) + " restarts");
    }
    const Eigen::VectorXd new_values = solver.eigenvalues();
    const double floor = found.cols() == k ? values[k - 1] + kMissedEigenvalueGap
                                           : -std::numeric_limits<double>::infinity();
    Eigen::Index missed = 0;
    while (missed < k && new_values[missed] > floor) ++missed;
    if (missed == 0) return found;

    // Rayleigh-Ritz on the found and the missed vectors: an orthonormal basis B of both, and the
    // top k eigenpairs of B^T (2I - L) B.
    Eigen::MatrixXd candidates(size, found.cols() + missed);
    candidates << found, solver.eigenvectors().leftCols(missed);
    const Eigen::HouseholderQR<Eigen::MatrixXd> qr(candidates);
    const Eigen::MatrixXd orthonormal =
        qr.householderQ() * Eigen::MatrixXd::Identity(size, candidates.cols());
    Eigen::MatrixXd applied(size, orthonormal.cols());
    for (Eigen::Index c = 0; c < orthonormal.cols(); ++c) {
      shifted_adjacency_product(component, orthonormal.col(c).data(), applied.col(c).data());
    }
    Eigen::MatrixXd projected = orthonormal.transpose() * applied;
    projected = 0.5 * (projected + projected.transpose()).eval();
    const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> ritz(projected);
    found = orthonormal * ritz.eigenvectors().rightCols(k).rowwise().reverse();
    values = ritz.eigenvalues().tail(k).reverse();
    locked.resize(size, 1 + k);
    locked << null_vector, found;
  }
  throw fail("still finding missed repeated eigenvalues after " + std::to_string(k + 1) +
             " rounds");
}

// Makes each column positive at its first entry whose magnitude ties with the column's largest.
void fix_signs(Eigen::MatrixXd& vectors) {
  for (Eigen::Index c = 0; c < vectors.cols(); ++c) {
    auto column = vectors.col(c);
    const double threshold = (1.0 - kSignTieTolerance) * column.cwiseAbs().maxCoeff();
    Eigen::Index first = 0;
    while (std::abs(column[first]) < threshold) ++first;
    if (column[first] < 0.0) column = -column;
  }
}

struct KindName {
  EncodingKind kind;
  const char* prefix;
};
constexpr KindName kKindNames[] = {{EncodingKind::kLaplacian, "lap"},
                                   {EncodingKind::kRandomWalk, "rw"}};

// The spelling of a kind that takes a width ("lap", "rw"); null for kNone and unknown values.
const char* kind_name(EncodingKind kind) {
  for (const auto& [known, name] : kKindNames) {
    if (kind == known) return name;
  }
  return nullptr;
}

// Tags the sign flips' draws, so that (seed, step) never reuses the numbers another use of the
// same seed draws from small stream ids (such as the synthetic generator's).
constexpr std::uint64_t kSignFlipStream = 0x5349474e464c4950ULL;  // "SIGNFLIP"

}  // namespace

RowMatrix<float> sinusoidal_encoding(std::int64_t positions, std::int64_t dims, double base) {
  if (positions < 0) {
    throw InvalidArgument("sinusoidal_encoding: positions " + std::to_string(positions) +
                          " is negative");
  }
  if (dims <= 0) {
    throw InvalidArgument("sinusoidal_encoding: dims " + std::to_string(dims) +
                          ", expected a positive width");
  }
  if (!(base > 1.0) || !std::isfinite(base)) {
    throw InvalidArgument("sinusoidal_encoding: base " + std::to_string(base) +
                          ", expected a finite number greater than 1");
  }
  RowMatrix<float> out(positions, dims);
  detail::for_each_block(positions, detail::kRowBlock, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t p = begin; p < end; ++p) {
      for (std::int64_t c = 0; c < dims; ++c) {
        const double angle =
            static_cast<double>(p) /
            std::pow(base, static_cast<double>(c - c % 2) / static_cast<double>(dims));
        out(p, c) = static_cast<float>(c % 2 == 0 ? std::sin(angle) : std::cos(angle));
      }
    }
  });
  return out;
}

RowMatrix<float> random_walk_encoding(const Graph& graph, std::int64_t steps) {
  if (steps <= 0) {
    throw InvalidArgument("random_walk_encoding: steps " + std::to_string(steps) +
                          ", expected a positive count");
  }
  const NodeId n = graph.num_nodes();
  RowMatrix<float> out(n, steps);
  using Walks = Eigen::Matrix<double, Eigen::Dynamic, kWalks, Eigen::RowMajor>;
  detail::for_each_block(n, kWalks, [&](std::int64_t first, std::int64_t last) {
    // Column c is the distribution of the walk started at node first + c; moving one step,
    // node i collects from each in-neighbour j its probability divided by j's out-degree.
    Walks now = Walks::Zero(n, kWalks);
    Walks next(n, kWalks);
    for (std::int64_t c = 0; c < last - first; ++c) now(first + c, c) = 1.0;
    for (std::int64_t t = 0; t < steps; ++t) {
      for (NodeId i = 0; i < n; ++i) {
        auto row = next.row(i);
        row.setZero();
        for (const NodeId j : graph.in_neighbors(i)) {
          row += now.row(j) / static_cast<double>(graph.out_degree(j));
        }
      }
      now.swap(next);
      for (std::int64_t c = 0; c < last - first; ++c) {
        out(first + c, t) = static_cast<float>(now(first + c, c));
      }
    }
  });
  return out;
}

RowMatrix<float> laplacian_encoding(const Graph& graph, std::int64_t k) {
  if (k <= 0) {
    throw InvalidArgument("laplacian_encoding: k " + std::to_string(k) +
                          ", expected a positive number of eigenvectors");
  }
  const NodeId n = graph.num_nodes();
  const Adjacency adjacency = undirected_adjacency(graph);
  std::vector<std::int32_t> component_of;
  const std::int64_t num_components = weak_components(graph, &component_of);

  // Nodes grouped by component (a counting sort, so ascending within each) and each node's
  // position in its group, its local id.
  std::vector<std::int64_t> starts(static_cast<std::size_t>(num_components) + 1, 0);
  for (const std::int32_t c : component_of) ++starts[static_cast<std::size_t>(c) + 1];
  for (std::size_t c = 0; c < static_cast<std::size_t>(num_components); ++c) {
    starts[c + 1] += starts[c];
  }
  std::vector<NodeId> grouped(static_cast<std::size_t>(n));
  std::vector<std::int32_t> local_id(static_cast<std::size_t>(n));
  {
    std::vector<std::int64_t> fill(starts.begin(), starts.end() - 1);
    for (NodeId i = 0; i < n; ++i) {
      const auto c = static_cast<std::size_t>(component_of[static_cast<std::size_t>(i)]);
      local_id[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(fill[c] - starts[c]);
      grouped[static_cast<std::size_t>(fill[c]++)] = i;
    }
  }

  RowMatrix<float> out = RowMatrix<float>::Zero(n, k);
  // Each task owns its component's rows of `out`, and solves it alone, serially.
  detail::run_tasks(num_components, [&](std::int64_t c) {
    const auto first = static_cast<std::size_t>(starts[static_cast<std::size_t>(c)]);
    const auto size = static_cast<std::size_t>(starts[static_cast<std::size_t>(c) + 1]) - first;
    // An isolated node has no non-trivial eigenvector: its row stays zero.
    if (size == 1) return;
    const Component component =
        local_component(adjacency, std::span<const NodeId>(grouped).subspan(first, size), local_id);
    const auto n_c = static_cast<std::int64_t>(size);
    Eigen::MatrixXd vectors = n_c <= kDenseNodes || n_c < 2 * k + 1
                                  ? dense_eigenvectors(component, k)
                                  : lanczos_eigenvectors(component, k, c);
    fix_signs(vectors);
    for (std::int64_t r = 0; r < n_c; ++r) {
      out.row(component.nodes[static_cast<std::size_t>(r)]).head(vectors.cols()) =
          vectors.row(r).cast<float>();
    }
  });
  return out;
}

void flip_signs(RowMatrix<float>& encoding, std::uint64_t seed, std::uint64_t step) {
  const CounterStream stream(counter_hash(seed, kSignFlipStream, step), 0);
  Eigen::RowVectorXf signs(encoding.cols());
  for (Eigen::Index c = 0; c < encoding.cols(); ++c) {
    signs[c] = (stream(static_cast<std::uint64_t>(c)) >> 63) != 0 ? -1.0F : 1.0F;
  }
  detail::for_each_block(
      encoding.rows(), detail::kRowBlock, [&](std::int64_t begin, std::int64_t end) {
        encoding.middleRows(begin, end - begin).array().rowwise() *= signs.array();
      });
}

PositionalEncoding parse_positional_encoding(std::string_view spec) {
  if (spec == "none") return {};
  const auto colon = spec.find(':');
  const std::string_view prefix = spec.substr(0, colon);
  for (const auto& [kind, name] : kKindNames) {
    if (colon == std::string_view::npos || prefix != name) continue;
    const auto dims = detail::parse_integer(spec.substr(colon + 1));
    if (!dims || *dims <= 0 || *dims > kMaxEncodingDims) {
      throw InvalidArgument("positional encoding " + detail::quoted(spec) + ": the width after '" +
                            name + ":' must be an integer from 1 to " +
                            std::to_string(kMaxEncodingDims));
    }
    return {kind, *dims};
  }
  throw InvalidArgument("positional encoding " + detail::quoted(spec) +
                        ": expected none, lap:K (Laplacian eigenvectors) or rw:K (random-walk "
                        "return probabilities)");
}

void check_positional_encoding(const PositionalEncoding& encoding) {
  const bool none = encoding.kind == EncodingKind::kNone;
  const bool fits =
      none ? encoding.dims == 0 : encoding.dims >= 1 && encoding.dims <= kMaxEncodingDims;
  if (fits) return;
  const char* name = kind_name(encoding.kind);
  const std::string kind = none ? "none" : name != nullptr ? name : "of unknown kind";
  throw InvalidArgument("positional encoding " + kind + " has width " +
                        std::to_string(encoding.dims) + ", expected " +
                        (none ? std::string("0") : "1 to " + std::to_string(kMaxEncodingDims)));
}

std::string positional_encoding_name(const PositionalEncoding& encoding) {
  const char* name = kind_name(encoding.kind);
  return name == nullptr ? "none" : std::string(name) + ":" + std::to_string(encoding.dims);
}

RowMatrix<float> positional_encoding(const Graph& graph, const PositionalEncoding& encoding) {
  switch (encoding.kind) {
    case EncodingKind::kLaplacian:
      return laplacian_encoding(graph, encoding.dims);
    case EncodingKind::kRandomWalk:
      return random_walk_encoding(graph, encoding.dims);
    case EncodingKind::kNone:
      break;
  }
  throw InvalidArgument("positional_encoding: the encoding is none, expected lap:K or rw:K");
}

FeatureMatrix append_columns(const FeatureMatrix& features, const RowMatrix<float>& block) {
  const std::int64_t n = features.rows();
  if (block.rows() != n) {
    throw InvalidArgument("append_columns: the block has " + std::to_string(block.rows()) +
                          " rows, the features " + std::to_string(n));
  }
  const std::int64_t width = features.cols();
  const std::int64_t dims = block.cols();
  if (!features.is_sparse()) {
    DenseFeatures out(n, width + dims);
    out << features.view().dense(), block;
    return FeatureMatrix(std::move(out));
  }
  const auto sparse = features.view().sparse();
  // Eigen indexes a sparse matrix's entries and columns with its StorageIndex (int).
  constexpr auto kMaxIndex = std::numeric_limits<SparseFeatures::StorageIndex>::max();
  if (width + dims > kMaxIndex || sparse.nonZeros() + n * dims > kMaxIndex) {
    throw InvalidArgument("append_columns: " + std::to_string(sparse.nonZeros()) +
                          " stored entries plus " + std::to_string(n) + " rows x " +
                          std::to_string(dims) + " columns exceed a sparse matrix's " +
                          std::to_string(kMaxIndex) + " entries");
  }
  SparseFeatures out(n, width + dims);
  std::vector<std::int32_t> row_sizes(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    std::int64_t stored = dims;
    for (decltype(sparse)::InnerIterator it(sparse, i); it; ++it) ++stored;
    row_sizes[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(stored);
  }
  out.reserve(row_sizes);
  for (std::int64_t i = 0; i < n; ++i) {
    for (decltype(sparse)::InnerIterator it(sparse, i); it; ++it)
      out.insert(i, it.col()) = it.value();
    for (std::int64_t c = 0; c < dims; ++c) out.insert(i, width + c) = block(i, c);
  }
  out.makeCompressed();
  return FeatureMatrix(std::move(out));
}

}  // namespace maskgat::transforms
