#include "support/dense_attention.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace maskgat::test {
namespace {

template <typename T>
RowMatrix<T> parameter(const nn::ParameterStore<T>& store, const std::string& name) {
  const auto found = store.find(name);
  if (!found) throw std::runtime_error("reference: no parameter " + name);
  return store.value(*found);
}

template <typename T>
bool has_parameter(const nn::ParameterStore<T>& store, const std::string& name) {
  return store.find(name).has_value();
}

// x W (+ b when `name.bias` exists).
template <typename T>
RowMatrix<T> linear(const RowMatrix<T>& x, const nn::ParameterStore<T>& store,
                    const std::string& name) {
  RowMatrix<T> out = x * parameter(store, name + ".weight");
  if (has_parameter(store, name + ".bias")) {
    out.rowwise() += parameter(store, name + ".bias").row(0);
  }
  return out;
}

template <typename T>
T leaky(T z, double slope) {
  return z > T(0) ? z : static_cast<T>(slope) * z;
}

template <typename T>
RowMatrix<T> merge(const RowMatrix<T>& heads_out, std::int64_t heads, bool concat) {
  if (concat) return heads_out;
  const std::int64_t channels = heads_out.cols() / heads;
  RowMatrix<T> out = RowMatrix<T>::Zero(heads_out.rows(), channels);
  for (std::int64_t h = 0; h < heads; ++h) out += heads_out.middleCols(h * channels, channels);
  return out / static_cast<T>(heads);
}

}  // namespace

DenseMask dense_mask(const Graph& graph, bool self_loops) {
  DenseMask allowed = DenseMask::Constant(graph.num_nodes(), graph.num_nodes(), false);
  for (NodeId i = 0; i < graph.num_nodes(); ++i) {
    for (const NodeId j : graph.in_neighbors(i)) allowed(i, j) = true;
    if (self_loops) allowed(i, i) = true;
  }
  return allowed;
}

template <typename T>
RowMatrix<T> dense_attention(
    const DenseMask& allowed,
    const std::function<T(std::int64_t, std::int64_t, std::int64_t)>& score,
    const RowMatrix<T>& values, std::int64_t heads) {
  const std::int64_t n = allowed.rows();
  const std::int64_t channels = values.cols() / heads;
  RowMatrix<T> out = RowMatrix<T>::Zero(n, values.cols());
  for (std::int64_t h = 0; h < heads; ++h) {
    RowMatrix<T> weights(n, n);
    for (std::int64_t i = 0; i < n; ++i) {
      for (std::int64_t j = 0; j < n; ++j) {
        weights(i, j) = allowed(i, j) ? score(i, j, h) : -std::numeric_limits<T>::infinity();
      }
      const T max = weights.row(i).maxCoeff();
      if (max == -std::numeric_limits<T>::infinity()) {
        weights.row(i).setZero();
        continue;
      }
      weights.row(i) = (weights.row(i).array() - max).exp();
      weights.row(i) /= weights.row(i).sum();
    }
    out.middleCols(h * channels, channels) = weights * values.middleCols(h * channels, channels);
  }
  return out;
}

// The edge features of the pair j -> i, projected by `name.lin_edge.weight` (1 x H*C): the
// edge's own row, or for a self-loop the graph lacks the mean of i's in-edges' rows (zero
// without any). Zero when the layer has no edge features.
template <typename T>
RowMatrix<T> projected_edge(const Graph& graph, const RowMatrix<T>* features,
                            const nn::ParameterStore<T>& store, const std::string& name,
                            std::int64_t width, std::int64_t i, std::int64_t j) {
  if (features == nullptr) return RowMatrix<T>::Zero(1, width);
  const auto offsets = graph.in_offsets();
  const auto sources = graph.in_sources();
  RowMatrix<T> row = RowMatrix<T>::Zero(1, features->cols());
  std::int64_t count = 0;
  for (auto e = offsets[static_cast<std::size_t>(i)]; e < offsets[static_cast<std::size_t>(i) + 1];
       ++e) {
    if (sources[static_cast<std::size_t>(e)] == j) {
      row = features->row(e);
      count = 1;
      break;
    }
    row += features->row(e);
    ++count;
  }
  if (count > 1) row /= static_cast<T>(count);
  return row * parameter(store, name + ".lin_edge.weight");
}

template <typename T>
RowMatrix<T> reference_gat(const Graph& graph, const RowMatrix<T>& x,
                           const nn::ParameterStore<T>& store, const std::string& name,
                           const nn::GatConvOptions& options, const RowMatrix<T>* edge_features) {
  const std::int64_t heads = options.heads;
  const std::int64_t channels = options.out_features;
  const RowMatrix<T> h = x * parameter(store, name + ".weight");
  const RowMatrix<T> att_src = parameter(store, name + ".att_src");
  const RowMatrix<T> att_dst = parameter(store, name + ".att_dst");
  const RowMatrix<T> att_edge = edge_features != nullptr ? parameter(store, name + ".att_edge")
                                                         : RowMatrix<T>::Zero(heads, channels);
  const auto score = [&](std::int64_t i, std::int64_t j, std::int64_t k) {
    const T src = h.row(j).segment(k * channels, channels).dot(att_src.row(k));
    const T dst = h.row(i).segment(k * channels, channels).dot(att_dst.row(k));
    const T edge = projected_edge(graph, edge_features, store, name, heads * channels, i, j)
                       .row(0)
                       .segment(k * channels, channels)
                       .dot(att_edge.row(k));
    return leaky(src + dst + edge, options.negative_slope);
  };
  RowMatrix<T> out =
      merge<T>(dense_attention<T>(dense_mask(graph, options.add_self_loops), score, h, heads),
               heads, options.concat);
  if (options.residual) out += linear(x, store, name + ".res");
  if (options.bias) out.rowwise() += parameter(store, name + ".bias").row(0);
  return out;
}

template <typename T>
RowMatrix<T> reference_gatv2(const Graph& graph, const RowMatrix<T>& x,
                             const nn::ParameterStore<T>& store, const std::string& name,
                             const nn::GatV2ConvOptions& options,
                             const RowMatrix<T>* edge_features) {
  const std::int64_t heads = options.heads;
  const std::int64_t channels = options.out_features;
  const RowMatrix<T> src = linear(x, store, name + ".lin_l");
  const RowMatrix<T> dst = options.share_weights ? src : linear(x, store, name + ".lin_r");
  const RowMatrix<T> att = parameter(store, name + ".att");
  const auto score = [&](std::int64_t i, std::int64_t j, std::int64_t k) {
    const RowMatrix<T> edge =
        projected_edge(graph, edge_features, store, name, heads * channels, i, j);
    T sum = T(0);
    for (std::int64_t c = 0; c < channels; ++c) {
      const std::int64_t column = k * channels + c;
      sum += att(k, c) *
             leaky(src(j, column) + dst(i, column) + edge(0, column), options.negative_slope);
    }
    return sum;
  };
  RowMatrix<T> out =
      merge<T>(dense_attention<T>(dense_mask(graph, options.add_self_loops), score, src, heads),
               heads, options.concat);
  if (options.residual) out += linear(x, store, name + ".res");
  if (options.bias) out.rowwise() += parameter(store, name + ".bias").row(0);
  return out;
}

template <typename T>
RowMatrix<T> reference_dot(const Graph& graph, const RowMatrix<T>& x,
                           const nn::ParameterStore<T>& store, const std::string& name,
                           const nn::DotAttentionConvOptions& options) {
  const std::int64_t heads = options.heads;
  const std::int64_t channels = options.out_features;
  const RowMatrix<T> query = linear(x, store, name + ".query");
  const RowMatrix<T> key = linear(x, store, name + ".key");
  const RowMatrix<T> value = linear(x, store, name + ".value");
  const T scale = T(1) / std::sqrt(static_cast<T>(channels));
  const auto score = [&](std::int64_t i, std::int64_t j, std::int64_t k) {
    return scale * query.row(i)
                       .segment(k * channels, channels)
                       .dot(key.row(j).segment(k * channels, channels));
  };
  RowMatrix<T> out = merge<T>(dense_attention<T>(dense_mask(graph, false), score, value, heads),
                              heads, options.concat);
  if (options.root_weight) out += linear(x, store, name + ".skip");
  return out;
}

template <typename T>
double relative_error(const RowMatrix<T>& a, const RowMatrix<T>& b) {
  if (a.rows() != b.rows() || a.cols() != b.cols()) {
    throw std::runtime_error("relative_error: shapes differ");
  }
  const double difference = static_cast<double>((a - b).norm());
  const double reference = static_cast<double>(b.norm());
  if (reference == 0.0) return difference;
  return difference / reference;
}

#define MASKGAT_INSTANTIATE_REFERENCE(T)                                                      \
  template RowMatrix<T> dense_attention<T>(                                                   \
      const DenseMask&, const std::function<T(std::int64_t, std::int64_t, std::int64_t)>&,    \
      const RowMatrix<T>&, std::int64_t);                                                     \
  template RowMatrix<T> reference_gat<T>(const Graph&, const RowMatrix<T>&,                   \
                                         const nn::ParameterStore<T>&, const std::string&,    \
                                         const nn::GatConvOptions&, const RowMatrix<T>*);     \
  template RowMatrix<T> reference_gatv2<T>(const Graph&, const RowMatrix<T>&,                 \
                                           const nn::ParameterStore<T>&, const std::string&,  \
                                           const nn::GatV2ConvOptions&, const RowMatrix<T>*); \
  template RowMatrix<T> reference_dot<T>(const Graph&, const RowMatrix<T>&,                   \
                                         const nn::ParameterStore<T>&, const std::string&,    \
                                         const nn::DotAttentionConvOptions&);                 \
  template double relative_error<T>(const RowMatrix<T>&, const RowMatrix<T>&);
MASKGAT_INSTANTIATE_REFERENCE(float)
MASKGAT_INSTANTIATE_REFERENCE(double)
#undef MASKGAT_INSTANTIATE_REFERENCE

}  // namespace maskgat::test
