#include "maskgat/nn/readout.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "core/detail/parallel.hpp"
#include "maskgat/core/error.hpp"
#include "nn/detail/layer_common.hpp"
#include "ops/detail/buffer.hpp"

namespace maskgat::nn {

const char* readout_kind_name(ReadoutKind kind) noexcept {
  switch (kind) {
    case ReadoutKind::kSum:
      return "sum";
    case ReadoutKind::kMean:
      return "mean";
    case ReadoutKind::kMax:
      return "max";
    case ReadoutKind::kAttention:
      return "attention";
  }
  return "sum";
}

namespace {

// Graphs per task: a constant, so each graph's arithmetic is the same on any thread count.
constexpr std::int64_t kGraphBlock = 64;

// Runs `fn(g)` for every graph of a batch, in parallel over fixed blocks of graphs.
template <typename Fn>
void for_each_graph(std::int64_t graphs, Fn&& fn) {
  maskgat::detail::for_each_block(graphs, kGraphBlock, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t g = begin; g < end; ++g) fn(g);
  });
}

void check_offsets(std::span<const std::int64_t> offsets, std::int64_t rows) {
  const std::string where = "readout.forward: ";
  if (offsets.empty() || offsets.front() != 0 || offsets.back() != rows) {
    throw InvalidArgument(where + "the graph offsets must run from 0 to the " +
                          std::to_string(rows) + " rows of x" +
                          (offsets.empty() ? std::string(", got none")
                                           : ", got " + std::to_string(offsets.front()) + " to " +
                                                 std::to_string(offsets.back())));
  }
  const auto decrease = std::adjacent_find(offsets.begin(), offsets.end(), std::greater<>());
  if (decrease != offsets.end()) {
    throw InvalidArgument(where + "graph offset " + std::to_string(decrease - offsets.begin() + 1) +
                          " is " + std::to_string(*(decrease + 1)) + ", below the one before (" +
                          std::to_string(*decrease) + ")");
  }
}

}  // namespace

template <typename T>
BasicReadout<T>::BasicReadout(ParameterStore<T>& store, std::string_view name,
                              const ReadoutOptions& options, Rng& rng)
    : store_(&store), options_(options) {
  detail::check_positive("readout", "features", options.features);
  detail::check_positive("readout", "heads", options.heads);
  if (options.kind != ReadoutKind::kAttention && options.heads != 1) {
    throw InvalidArgument(std::string("readout: heads is ") + std::to_string(options.heads) +
                          ", but a " + readout_kind_name(options.kind) +
                          " readout has no gates (expected 1)");
  }
  if (options.features % options.heads != 0) {
    throw InvalidArgument("readout: heads is " + std::to_string(options.heads) +
                          ", which does not divide the " + std::to_string(options.features) +
                          " features");
  }
  if (options.kind == ReadoutKind::kAttention) {
    gate_ = detail::add_projection(store, std::string(name) + ".gate", options.features,
                                   options.heads, false, rng);
  }
}

template <typename T>
void BasicReadout<T>::forward(const RowMatrix<T>& x, std::span<const std::int64_t> offsets,
                              Cache& cache, RowMatrix<T>& out) const {
  detail::check_columns("readout.forward", x.cols(), options_.features);
  check_offsets(offsets, x.rows());
  const auto graphs = static_cast<std::int64_t>(offsets.size()) - 1;
  const std::int64_t width = options_.features;
  ops::detail::resize_buffer(out, graphs, width);
  out.setZero();
  const auto begin_of = [&](std::int64_t g) { return offsets[static_cast<std::size_t>(g)]; };
  const auto size_of = [&](std::int64_t g) { return begin_of(g + 1) - begin_of(g); };
  switch (options_.kind) {
    case ReadoutKind::kSum:
    case ReadoutKind::kMean:
      for_each_graph(graphs, [&](std::int64_t g) {
        if (size_of(g) == 0) return;
        out.row(g) = x.middleRows(begin_of(g), size_of(g)).colwise().sum();
        if (options_.kind == ReadoutKind::kMean) out.row(g) /= static_cast<T>(size_of(g));
      });
      break;
    case ReadoutKind::kMax:
      cache.argmax.assign(static_cast<std::size_t>(graphs * width), -1);
      for_each_graph(graphs, [&](std::int64_t g) {
        std::int64_t* argmax = cache.argmax.data() + g * width;
        for (std::int64_t i = begin_of(g); i < begin_of(g + 1); ++i) {
          for (std::int64_t c = 0; c < width; ++c) {
            // NaN propagates: a NaN row wins and stays, as torch's max does.
            const bool first = argmax[c] < 0;
            if (first || (!std::isnan(out(g, c)) && (x(i, c) > out(g, c) || std::isnan(x(i, c))))) {
              out(g, c) = x(i, c);
              argmax[c] = i;
            }
          }
        }
      });
      break;
    case ReadoutKind::kAttention: {
      detail::project(*store_, gate_, InputRef<T>(x), cache.alpha);  // the scores, N x H
      const std::int64_t heads = options_.heads;
      const std::int64_t block = width / heads;
      for_each_graph(graphs, [&](std::int64_t g) {
        if (size_of(g) == 0) return;
        auto alpha = cache.alpha.middleRows(begin_of(g), size_of(g));
        const auto top = alpha.colwise().maxCoeff().eval();
        alpha = (alpha.rowwise() - top).array().exp().matrix();
        const auto sums = alpha.colwise().sum().eval();
        for (std::int64_t h = 0; h < heads; ++h) alpha.col(h) /= sums(h);
        for (std::int64_t h = 0; h < heads; ++h) {
          out.row(g).segment(h * block, block) =
              alpha.col(h).transpose() * x.block(begin_of(g), h * block, size_of(g), block);
        }
      });
      break;
    }
  }
}

template <typename T>
void BasicReadout<T>::backward(const RowMatrix<T>& x, std::span<const std::int64_t> offsets,
                               Cache& cache, const RowMatrix<T>& grad_out,
                               RowMatrix<T>* grad_x) const {
  const auto graphs = static_cast<std::int64_t>(offsets.size()) - 1;
  const std::int64_t width = options_.features;
  detail::check_shape("readout.backward", "grad_out", grad_out, graphs, width,
                      "the number of graphs");
  const auto begin_of = [&](std::int64_t g) { return offsets[static_cast<std::size_t>(g)]; };
  const auto size_of = [&](std::int64_t g) { return begin_of(g + 1) - begin_of(g); };
  if (options_.kind != ReadoutKind::kAttention) {
    if (grad_x == nullptr) return;
    ops::detail::resize_buffer(*grad_x, x.rows(), width);
    grad_x->setZero();
    for_each_graph(graphs, [&](std::int64_t g) {
      if (size_of(g) == 0) return;
      if (options_.kind == ReadoutKind::kMax) {
        const std::int64_t* argmax = cache.argmax.data() + g * width;
        for (std::int64_t c = 0; c < width; ++c) (*grad_x)(argmax[c], c) += grad_out(g, c);
        return;
      }
      const T scale = options_.kind == ReadoutKind::kMean ? T(1) / static_cast<T>(size_of(g)) : 1;
      grad_x->middleRows(begin_of(g), size_of(g)).rowwise() = grad_out.row(g) * scale;
    });
    return;
  }
  // out_g[block h] = sum_i alpha_ih x_i[block h]: dL/dalpha_ih = grad_g[block h] . x_i[block h],
  // and through the softmax dL/ds_ih = alpha_ih (dL/dalpha_ih - sum_j alpha_jh dL/dalpha_jh).
  const std::int64_t heads = options_.heads;
  const std::int64_t block = width / heads;
  RowMatrix<T>& scores_grad = cache.scores_grad;
  ops::detail::resize_buffer(scores_grad, x.rows(), heads);
  if (grad_x != nullptr) {
    ops::detail::resize_buffer(*grad_x, x.rows(), width);
    grad_x->setZero();
  }
  for_each_graph(graphs, [&](std::int64_t g) {
    if (size_of(g) == 0) return;
    const auto alpha = cache.alpha.middleRows(begin_of(g), size_of(g));
    auto grad_scores = scores_grad.middleRows(begin_of(g), size_of(g));
    for (std::int64_t h = 0; h < heads; ++h) {
      const auto rows = x.block(begin_of(g), h * block, size_of(g), block);
      const auto upstream = grad_out.row(g).segment(h * block, block);
      grad_scores.col(h) = rows * upstream.transpose();  // dL/dalpha
      const T mean = alpha.col(h).dot(grad_scores.col(h));
      grad_scores.col(h) = (alpha.col(h).array() * (grad_scores.col(h).array() - mean)).matrix();
      if (grad_x != nullptr) {
        grad_x->block(begin_of(g), h * block, size_of(g), block) =
            alpha.col(h) * upstream;  // the weighted sum's own path
      }
    }
  });
  detail::project_backward(*store_, gate_, InputRef<T>(x), scores_grad, grad_x);
}

template class BasicReadout<float>;
template class BasicReadout<double>;

}  // namespace maskgat::nn
