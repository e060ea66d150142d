#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "maskgat/core/error.hpp"
#include "maskgat/graph/masks.hpp"
#include "maskgat/ops/attention.hpp"
#include "support/dense_attention.hpp"
#include "support/random_data.hpp"

using maskgat::DropoutKey;
using maskgat::Graph;
using maskgat::RowMatrix;
namespace ops = maskgat::ops;
namespace test = maskgat::test;

namespace {

constexpr std::int64_t kHeads = 3;
constexpr std::int64_t kChannels = 4;

// Owned gradient matrices of each score type, viewed as the ops' gradient structs.
struct AdditiveGrads {
  RowMatrix<double> src, dst;
  ops::AdditiveScoreGrad<double> view() { return {src, dst}; }
  bool operator==(const AdditiveGrads& other) const { return src == other.src && dst == other.dst; }
};
struct DotGrads {
  RowMatrix<double> query, key;
  ops::DotScoreGrad<double> view() { return {query, key}; }
  bool operator==(const DotGrads& other) const { return query == other.query && key == other.key; }
};
struct GatV2Grads {
  RowMatrix<double> src, dst, att;
  ops::GatV2ScoreGrad<double> view() { return {src, dst, att}; }
  bool operator==(const GatV2Grads& other) const {
    return src == other.src && dst == other.dst && att == other.att;
  }
};

// Additive-attention inputs on a random 40-node mask with self-loops (a test fixture, built in
// place: the score refers to the matrices).
struct AdditiveInputs {
  const Graph mask = test::random_graph(40, 6, 8, true);
  const std::int64_t n = mask.num_nodes();
  const RowMatrix<double> values = test::random_matrix<double>(n, (kHeads * kChannels), 2);
  const RowMatrix<double> src = test::random_matrix<double>(n, kHeads, 5);
  const RowMatrix<double> dst = test::random_matrix<double>(n, kHeads, 6);
  const ops::AdditiveScore<double> score{src, dst, 0.2};
};

// Fused forward == sddmm -> edge_softmax -> spmm, and fused backward == the unfused chain in
// reverse, exactly: both run the same row kernels in the same order. With `zero_every` > 0, every
// such row of grad_out is zero: the fused backward skips those rows' score gradients, which
// sddmm_backward computes in full.
template <typename Grads, typename Score>
void check_fused_equals_unfused(const Graph& mask, const Score& score,
                                const RowMatrix<double>& values, const DropoutKey& dropout,
                                std::int64_t zero_every = 0) {
  RowMatrix<double> alpha;
  RowMatrix<double> out;
  ops::attention(mask, score, values, dropout, alpha, out);

  RowMatrix<double> scores;
  RowMatrix<double> alpha_unfused;
  RowMatrix<double> out_unfused;
  ops::sddmm(mask, score, scores);
  ops::edge_softmax(mask, scores, alpha_unfused);
  ops::spmm(mask, alpha_unfused, values, dropout, out_unfused);
  CHECK(alpha == alpha_unfused);
  CHECK(out == out_unfused);

  RowMatrix<double> grad_out = test::random_matrix<double>(out.rows(), out.cols(), 77);
  for (std::int64_t i = 0; zero_every > 0 && i < grad_out.rows(); i += zero_every) {
    grad_out.row(i).setZero();
  }
  Grads fused;
  auto fused_view = fused.view();
  RowMatrix<double> grad_values;
  RowMatrix<double> workspace;
  ops::attention_backward(mask, score, values, alpha, dropout, grad_out, fused_view, grad_values,
                          workspace);

  RowMatrix<double> grad_alpha;
  RowMatrix<double> grad_values_unfused;
  RowMatrix<double> grad_scores;
  ops::spmm_backward(mask, alpha, values, dropout, grad_out, grad_alpha, grad_values_unfused);
  ops::edge_softmax_backward(mask, alpha, grad_alpha, grad_scores);
  Grads unfused;
  auto unfused_view = unfused.view();
  ops::sddmm_backward(mask, score, grad_scores, unfused_view);
  CHECK(grad_values == grad_values_unfused);
  CHECK(fused == unfused);
}

// spmm and its backward with one head of `channels` equal, bit for bit, each of two identical
// heads: a single head of at most a vector's channels is gathered a whole vector at a time (lanes
// past the row's end read the next rows, or a copy near the array's end), two heads take the
// plain per-channel loops.
template <typename T>
void check_single_head_gathers(std::int64_t channels) {
  CAPTURE(channels);
  const Graph mask = test::random_graph(40, 7, 11, true);
  const std::int64_t n = mask.num_nodes();
  const RowMatrix<T> values = test::random_matrix<T>(n, channels, 12);
  const RowMatrix<T> alpha = test::random_matrix<T>(mask.num_edges(), 1, 13);
  const RowMatrix<T> grad_out = test::random_matrix<T>(n, channels, 14);
  RowMatrix<T> twice_values(n, 2 * channels);
  twice_values << values, values;
  RowMatrix<T> twice_alpha(mask.num_edges(), 2);
  twice_alpha << alpha, alpha;
  RowMatrix<T> twice_grad_out(n, 2 * channels);
  twice_grad_out << grad_out, grad_out;

  RowMatrix<T> out;
  RowMatrix<T> twice_out;
  ops::spmm(mask, alpha, values, {}, out);
  ops::spmm(mask, twice_alpha, twice_values, {}, twice_out);
  RowMatrix<T> grad_alpha;
  RowMatrix<T> grad_values;
  RowMatrix<T> twice_grad_alpha;
  RowMatrix<T> twice_grad_values;
  ops::spmm_backward(mask, alpha, values, {}, grad_out, grad_alpha, grad_values);
  ops::spmm_backward(mask, twice_alpha, twice_values, {}, twice_grad_out, twice_grad_alpha,
                     twice_grad_values);
  for (std::int64_t h = 0; h < 2; ++h) {
    CHECK(out == twice_out.middleCols(h * channels, channels));
    CHECK(grad_alpha == twice_grad_alpha.col(h));
    CHECK(grad_values == twice_grad_values.middleCols(h * channels, channels));
  }
}

// Additive scores, their softmax and the fused attention with one head equal, bit for bit, each
// of two identical heads: one head takes scalar loops, two heads the loops over a row's heads.
template <typename T>
void check_single_head_scores() {
  const Graph mask = test::random_graph(40, 7, 11, true);
  const std::int64_t n = mask.num_nodes();
  const RowMatrix<T> src = test::random_matrix<T>(n, 1, 15);
  const RowMatrix<T> dst = test::random_matrix<T>(n, 1, 16);
  const RowMatrix<T> values = test::random_matrix<T>(n, 5, 17);
  RowMatrix<T> twice_src(n, 2);
  twice_src << src, src;
  RowMatrix<T> twice_dst(n, 2);
  twice_dst << dst, dst;
  RowMatrix<T> twice_values(n, 10);
  twice_values << values, values;
  const ops::AdditiveScore<T> score{src, dst, T(0.2)};
  const ops::AdditiveScore<T> twice_score{twice_src, twice_dst, T(0.2)};
  RowMatrix<T> scores;
  RowMatrix<T> twice_scores;
  ops::sddmm(mask, score, scores);
  ops::sddmm(mask, twice_score, twice_scores);
  REQUIRE((scores.array() < T(0)).any());  // both sides of the LeakyReLU
  REQUIRE((scores.array() > T(0)).any());
  RowMatrix<T> alpha;
  RowMatrix<T> twice_alpha;
  ops::edge_softmax(mask, scores, alpha);
  ops::edge_softmax(mask, twice_scores, twice_alpha);
  RowMatrix<T> fused_alpha;
  RowMatrix<T> out;
  RowMatrix<T> twice_fused_alpha;
  RowMatrix<T> twice_out;
  ops::attention(mask, score, values, {}, fused_alpha, out);
  ops::attention(mask, twice_score, twice_values, {}, twice_fused_alpha, twice_out);
  for (std::int64_t h = 0; h < 2; ++h) {
    CHECK(scores == twice_scores.col(h));
    CHECK(alpha == twice_alpha.col(h));
    CHECK(fused_alpha == twice_fused_alpha.col(h));
    CHECK(out == twice_out.middleCols(h * 5, 5));
  }
  CHECK(fused_alpha == alpha);
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("single-head additive scores equal each of two identical heads exactly") {
    check_single_head_scores<float>();
    check_single_head_scores<double>();
  }

  TEST_CASE("single-head gathers in vector registers equal the per-channel loops exactly") {
    for (const std::int64_t channels : {1, 3, 7, 8, 15, 16, 17}) {
      check_single_head_gathers<float>(channels);
      check_single_head_gathers<double>(channels);
    }
  }

  TEST_CASE("fused attention equals the unfused ops exactly - forward and backward") {
    const Graph mask = test::random_graph(30, 6, 1, true);
    const std::int64_t n = mask.num_nodes();
    const std::int64_t width = kHeads * kChannels;
    const RowMatrix<double> values = test::random_matrix<double>(n, width, 2);
    const RowMatrix<double> a = test::random_matrix<double>(n, width, 3);
    const RowMatrix<double> b = test::random_matrix<double>(n, width, 4);
    const RowMatrix<double> src = test::random_matrix<double>(n, kHeads, 5);
    const RowMatrix<double> dst = test::random_matrix<double>(n, kHeads, 6);
    const RowMatrix<double> att = test::random_matrix<double>(kHeads, kChannels, 7);
    for (const double p : {0.0, 0.5}) {
      for (const std::int64_t zero_every : {0, 3}) {
        CAPTURE(p);
        CAPTURE(zero_every);
        const DropoutKey dropout{p, 99, 3};
        check_fused_equals_unfused<AdditiveGrads>(mask, ops::AdditiveScore<double>{src, dst, 0.2},
                                                  values, dropout, zero_every);
        check_fused_equals_unfused<DotGrads>(mask, ops::DotScore<double>{a, b, kHeads, 0.5}, values,
                                             dropout, zero_every);
        check_fused_equals_unfused<GatV2Grads>(mask, ops::GatV2Score<double>{a, b, att, 0.2},
                                               values, dropout, zero_every);
      }
    }
  }

  TEST_CASE("spmm_backward with zero rows of grad_out equals the sums over every edge") {
    // The kernels skip the zero rows; the reference below adds every edge's term.
    const Graph mask = test::random_graph(30, 6, 1, true);
    const std::int64_t n = mask.num_nodes();
    const std::int64_t width = kHeads * kChannels;
    const RowMatrix<double> values = test::random_matrix<double>(n, width, 2);
    const RowMatrix<double> alpha = test::random_matrix<double>(mask.num_edges(), kHeads, 3);
    RowMatrix<double> grad_out = test::random_matrix<double>(n, width, 4);
    for (std::int64_t i = 0; i < n; i += 2) grad_out.row(i).setZero();
    RowMatrix<double> grad_alpha;
    RowMatrix<double> grad_values;
    ops::spmm_backward(mask, alpha, values, {}, grad_out, grad_alpha, grad_values);
    RowMatrix<double> expected_alpha = RowMatrix<double>::Zero(mask.num_edges(), kHeads);
    RowMatrix<double> expected_values = RowMatrix<double>::Zero(n, width);
    for (std::int64_t i = 0; i < n; ++i) {
      for (auto e = mask.in_offsets()[i]; e < mask.in_offsets()[i + 1]; ++e) {
        const std::int64_t j = mask.in_sources()[e];
        for (std::int64_t h = 0; h < kHeads; ++h) {
          const auto channels = Eigen::seqN(h * kChannels, kChannels);
          expected_alpha(e, h) = grad_out(i, channels).dot(values(j, channels));
          expected_values(j, channels) += alpha(e, h) * grad_out(i, channels);
        }
      }
    }
    CHECK((grad_alpha - expected_alpha).norm() <= 1e-13 * expected_alpha.norm());
    CHECK((grad_values - expected_values).norm() <= 1e-13 * expected_values.norm());
    // The coefficients into a zero row are exactly zero.
    for (auto e = mask.in_offsets()[0]; e < mask.in_offsets()[1]; ++e) {
      CHECK((grad_alpha.row(e).array() == 0.0).all());
    }
  }

  TEST_CASE_FIXTURE(AdditiveInputs,
                    "attention on some rows forms them exactly as on every row, and zeros the "
                    "others") {
    const DropoutKey dropout{0.5, 7, 1};
    RowMatrix<double> alpha;
    RowMatrix<double> out;
    ops::attention(mask, score, values, dropout, alpha, out);
    std::vector<std::uint8_t> rows(static_cast<std::size_t>(n), 0);
    for (std::int64_t i = 1; i < n; i += 3) rows[static_cast<std::size_t>(i)] = 1;
    RowMatrix<double> some_alpha;
    RowMatrix<double> some_out;
    ops::attention(mask, score, values, dropout, some_alpha, some_out, {}, rows);
    for (std::int64_t i = 0; i < n; ++i) {
      CAPTURE(i);
      if (rows[static_cast<std::size_t>(i)] == 0) {
        CHECK((some_out.row(i).array() == 0.0).all());
        continue;
      }
      CHECK(some_out.row(i) == out.row(i));
      const auto first = mask.in_offsets()[i];
      const auto degree = mask.in_offsets()[i + 1] - first;
      CHECK(some_alpha.middleRows(first, degree) == alpha.middleRows(first, degree));
    }
    rows.pop_back();
    CHECK_THROWS_WITH_AS(
        ops::attention(mask, score, values, dropout, some_alpha, some_out, {}, rows),
        "ops::attention: rows has 39 bytes, expected none or the mask's 40 nodes",
        maskgat::InvalidArgument);
  }

  TEST_CASE_FIXTURE(AdditiveInputs,
                    "attention dropout numbered by each row's first entry draws the numbered "
                    "mask") {
    RowMatrix<double> alpha, out, numbered_alpha, numbered_out;
    ops::attention(mask, score, values, DropoutKey{0.5, 7, 1}, alpha, out);
    // Each row numbered where it starts: the mask drawn by position.
    const auto offsets = mask.in_offsets();
    std::vector<std::int64_t> numbers(offsets.begin(), offsets.end() - 1);
    ops::attention(mask, score, values, DropoutKey{0.5, 7, 1, numbers}, numbered_alpha,
                   numbered_out);
    CHECK(numbered_out == out);
    // Numbered elsewhere: another mask.
    for (auto& number : numbers) number += 1000;
    ops::attention(mask, score, values, DropoutKey{0.5, 7, 1, numbers}, numbered_alpha,
                   numbered_out);
    CHECK(numbered_out != out);
    numbers.pop_back();
    CHECK_THROWS_WITH_AS(ops::attention(mask, score, values, DropoutKey{0.5, 7, 1, numbers},
                                        numbered_alpha, numbered_out),
                         "ops::attention: the dropout key numbers 39 elements, expected one per "
                         "row (40)",
                         maskgat::InvalidArgument);
  }

  TEST_CASE("values with no channels give empty outputs and still the scores' gradients") {
    const Graph mask = test::random_graph(30, 6, 1, true);
    const std::int64_t n = mask.num_nodes();
    const RowMatrix<double> values(n, 0);
    const RowMatrix<double> src = test::random_matrix<double>(n, kHeads, 5);
    const RowMatrix<double> dst = test::random_matrix<double>(n, kHeads, 6);
    const ops::AdditiveScore<double> score{src, dst, 0.2};
    const DropoutKey dropout{0.5, 99, 3};
    RowMatrix<double> alpha, out, grad_values, workspace;
    ops::attention(mask, score, values, dropout, alpha, out);
    CHECK(out.rows() == n);
    CHECK(out.cols() == 0);
    CHECK(alpha.rows() == mask.num_edges());
    AdditiveGrads grads;
    auto view = grads.view();
    ops::attention_backward(mask, score, values, alpha, dropout, RowMatrix<double>(n, 0), view,
                            grad_values, workspace);
    CHECK(grad_values.rows() == n);
    CHECK(grad_values.cols() == 0);
    // No output depends on the scores, so their gradients are zero.
    CHECK(grads.src.isZero(0.0));
    CHECK(grads.dst.isZero(0.0));
  }

  TEST_CASE("value gradients are refused in the matrix of the values or of grad_out") {
    // grad_values holds the values laid out channel-major while the destination pass runs.
    const Graph mask = test::random_graph(30, 6, 1, true);
    const std::int64_t n = mask.num_nodes();
    RowMatrix<double> values = test::random_matrix<double>(n, kHeads * 8, 4);
    const RowMatrix<double> src = test::random_matrix<double>(n, kHeads, 5);
    const RowMatrix<double> dst = test::random_matrix<double>(n, kHeads, 6);
    const ops::AdditiveScore<double> score{src, dst, 0.2};
    RowMatrix<double> alpha, out, workspace;
    ops::attention(mask, score, values, {}, alpha, out);
    RowMatrix<double> grad_out = test::random_matrix<double>(n, values.cols(), 7);
    AdditiveGrads grads;
    auto view = grads.view();
    CHECK_THROWS_WITH_AS(
        ops::attention_backward(mask, score, values, alpha, {}, grad_out, view, values, workspace),
        "ops::attention_backward: grad_values must not be the same matrix as "
        "values",
        maskgat::InvalidArgument);
    CHECK_THROWS_WITH_AS(ops::attention_backward(mask, score, values, alpha, {}, grad_out, view,
                                                 grad_out, workspace),
                         "ops::attention_backward: grad_values must not be the same matrix as "
                         "grad_out",
                         maskgat::InvalidArgument);
    RowMatrix<double> grad_alpha;
    CHECK_THROWS_WITH_AS(ops::spmm_backward(mask, alpha, values, {}, grad_out, grad_alpha, values),
                         "ops::spmm_backward: grad_values must not be the same matrix as values",
                         maskgat::InvalidArgument);
  }

  TEST_CASE("dot-product attention under masks::full is textbook softmax(Q K^T / sqrt(d)) V") {
    const std::int64_t n = 17;
    const std::int64_t d = 8;
    const RowMatrix<double> q = test::random_matrix<double>(n, d, 11, 2.0);
    const RowMatrix<double> k = test::random_matrix<double>(n, d, 12, 2.0);
    const RowMatrix<double> v = test::random_matrix<double>(n, d, 13);
    RowMatrix<double> weights = q * k.transpose() / std::sqrt(static_cast<double>(d));
    for (std::int64_t i = 0; i < n; ++i) {
      weights.row(i) = (weights.row(i).array() - weights.row(i).maxCoeff()).exp();
      weights.row(i) /= weights.row(i).sum();
    }
    const RowMatrix<double> expected = weights * v;

    RowMatrix<double> alpha;
    RowMatrix<double> out;
    ops::attention(maskgat::masks::full(n), ops::DotScore<double>{q, k, 1, 1.0 / std::sqrt(8.0)}, v,
                   {}, alpha, out);
    CHECK(test::relative_error(out, expected) <= 1e-12);
    const Eigen::Map<const RowMatrix<double>> dense_alpha(alpha.data(), n, n);
    CHECK(test::relative_error<double>(dense_alpha, weights) <= 1e-12);

    const RowMatrix<float> qf = q.cast<float>();
    const RowMatrix<float> kf = k.cast<float>();
    const RowMatrix<float> vf = v.cast<float>();
    RowMatrix<float> alpha_f;
    RowMatrix<float> out_f;
    ops::attention(maskgat::masks::full(n), ops::DotScore<float>{qf, kf, 1, 1.0F / std::sqrt(8.0F)},
                   vf, {}, alpha_f, out_f);
    CHECK(test::relative_error<float>(out_f, expected.cast<float>()) <= 1e-5);
  }

  TEST_CASE("edge_softmax - rows sum to one and extreme scores stay finite") {
    // Row 0 holds three edges, row 1 none, row 2 one.
    const Graph mask(3, {0, 3, 3, 4}, {0, 1, 2, 1});
    RowMatrix<double> scores(4, 2);
    scores << 1e4, -1e4, -1e4, 1e4, 1e4 - 1.0, 0.0, -1e4, 1e4;
    RowMatrix<double> alpha;
    ops::edge_softmax(mask, scores, alpha);
    REQUIRE(alpha.allFinite());
    const double e = std::exp(-1.0);
    CHECK(alpha(0, 0) == doctest::Approx(1.0 / (1.0 + e)).epsilon(1e-15));
    CHECK(alpha(1, 0) == 0.0);
    CHECK(alpha(2, 0) == doctest::Approx(e / (1.0 + e)).epsilon(1e-15));
    CHECK(alpha(1, 1) == doctest::Approx(1.0).epsilon(1e-15));
    CHECK(alpha(3, 0) == 1.0);
    CHECK(alpha(3, 1) == 1.0);
    for (std::int64_t h = 0; h < 2; ++h) {
      CHECK(alpha.col(h).head(3).sum() == doctest::Approx(1.0).epsilon(1e-15));
    }
    RowMatrix<double> grad_scores;
    ops::edge_softmax_backward<double>(mask, alpha, RowMatrix<double>::Ones(4, 2), grad_scores);
    CHECK(grad_scores.allFinite());
    CHECK(grad_scores.cwiseAbs().maxCoeff() <= 1e-15);  // softmax is shift-invariant
  }

  TEST_CASE("attention dropout keeps about 1 - p of the coefficients and scales them") {
    const Graph mask = maskgat::masks::full(200);
    const RowMatrix<double> alpha = RowMatrix<double>::Constant(mask.num_edges(), 2, 1.0);
    const RowMatrix<double> values = RowMatrix<double>::Ones(200, 2);
    RowMatrix<double> out;
    ops::spmm(mask, alpha, values, {0.25, 5, 0}, out);
    // Each output entry is (kept count) / 0.75 over 200 coefficients.
    const double kept = out.sum() * 0.75 / static_cast<double>(mask.num_edges() * 2);
    CHECK(kept == doctest::Approx(0.75).epsilon(0.01));
    RowMatrix<double> again;
    ops::spmm(mask, alpha, values, {0.25, 5, 0}, again);
    CHECK(again == out);
    RowMatrix<double> other_key;
    ops::spmm(mask, alpha, values, {0.25, 6, 0}, other_key);
    CHECK(other_key != out);
    CHECK_THROWS_WITH_AS(ops::spmm(mask, alpha, values, {1.0, 5, 0}, out),
                         "ops::spmm: dropout probability 1.000000 is outside [0, 1)",
                         maskgat::InvalidArgument);
  }

  TEST_CASE("ops reject mismatched shapes with the sizes in the message") {
    const Graph mask = maskgat::masks::window(5, 1);
    const RowMatrix<double> src = RowMatrix<double>::Zero(4, 2);
    const RowMatrix<double> dst = RowMatrix<double>::Zero(5, 2);
    RowMatrix<double> scores;
    CHECK_THROWS_WITH_AS(ops::sddmm(mask, ops::AdditiveScore<double>{src, dst, 0.2}, scores),
                         "ops::sddmm: score.src is 4 x 2, expected 5 x any (the mask's node count)",
                         maskgat::InvalidArgument);
    const RowMatrix<double> q = RowMatrix<double>::Zero(5, 6);
    CHECK_THROWS_WITH_AS(ops::sddmm(mask, ops::DotScore<double>{q, q, 4, 1.0}, scores),
                         "ops::sddmm: score.query has 6 columns, not a multiple of the 4 heads",
                         maskgat::InvalidArgument);
    CHECK_THROWS_WITH_AS(ops::sddmm(mask, ops::DotScore<double>{q, q, 0, 1.0}, scores),
                         "ops::sddmm: heads is 0, expected a positive count",
                         maskgat::InvalidArgument);
    RowMatrix<double> alpha;
    CHECK_THROWS_WITH_AS(
        ops::edge_softmax<double>(mask, RowMatrix<double>::Zero(12, 2), alpha),
        "ops::edge_softmax: scores is 12 x 2, expected 13 x any (the mask's edge count)",
        maskgat::InvalidArgument);
    RowMatrix<double> out;
    CHECK_THROWS_WITH_AS(ops::attention(mask, ops::DotScore<double>{q, q, 2, 1.0},
                                        RowMatrix<double>::Zero(5, 5), {}, alpha, out),
                         "ops::attention: values has 5 columns, not a multiple of the 2 heads",
                         maskgat::InvalidArgument);
    CHECK_THROWS_WITH_AS(
        ops::sddmm(mask, ops::AdditiveScore<double>{dst, dst, 0.2}, scores, maskgat::Schedule{0}),
        "ops::sddmm: schedule grain is 0, expected a positive count", maskgat::InvalidArgument);
    // GATv2's attention vector is read as one contiguous H x C block: a view of every other
    // column is refused, not read with the wrong stride.
    const RowMatrix<double> wide = RowMatrix<double>::Zero(2, 6);
    CHECK_THROWS_WITH_AS(
        ops::sddmm(mask, ops::GatV2Score<double>{q, q, wide.leftCols(3), 0.2}, scores),
        "ops::sddmm: score.att has rows 6 values apart, expected 3 (a contiguous H x C matrix)",
        maskgat::InvalidArgument);
    const RowMatrix<double> att = RowMatrix<double>::Zero(2, 3);
    ops::sddmm(mask, ops::GatV2Score<double>{q, q, att, 0.2}, scores);
    CHECK(scores.rows() == mask.num_edges());
  }
}
