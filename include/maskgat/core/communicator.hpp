#pragma once
/// @file
/// What distributed training needs from a message-passing layer (MPI or any other): point-to-point
/// exchanges between ranks and gathers to every rank, as raw bytes.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

#include "maskgat/core/error.hpp"

namespace maskgat {

/// A group of `size()` processes, each knowing its `rank()`, that exchange bytes. Every call is
/// collective: every rank makes the same calls in the same order. Implementations report failures
/// by throwing `Error` (naming the call and the rank); `maskgat` implements it over MPI.
class Communicator {
 public:
  virtual ~Communicator() = default;

  /// This process's rank.
  /// @return in [0, size())
  [[nodiscard]] virtual int rank() const = 0;
  /// The number of processes.
  /// @return at least 1
  [[nodiscard]] virtual int size() const = 0;

  /// Sends `send[q]` to every rank q and receives `receive[q]` from it, sizes agreed beforehand
  /// (empty spans send or receive nothing; this rank's own entries are not used). Returns when
  /// every buffer has arrived.
  /// @param send    size() buffers to send
  /// @param receive size() buffers to fill, each exactly as large as what its rank sends
  virtual void exchange(std::span<const std::span<const std::byte>> send,
                        std::span<const std::span<std::byte>> receive) = 0;

  /// Every rank's `mine`, in rank order: `all` is size() copies of `mine.size()` bytes.
  /// @param mine the same number of bytes on every rank
  /// @param all  size() x mine.size() bytes
  virtual void all_gather(std::span<const std::byte> mine, std::span<std::byte> all) = 0;

  /// Bytes this rank has sent so far: through `exchange`, and `mine` once to every other rank
  /// through `all_gather`.
  /// @return a running count
  [[nodiscard]] std::int64_t bytes_sent() const noexcept { return bytes_sent_; }
  /// Wall time this rank has spent inside `exchange` and `all_gather` so far: transfers, and
  /// waiting for the other ranks to reach the call.
  /// @return seconds
  [[nodiscard]] double seconds_communicating() const noexcept { return seconds_; }

 protected:
  /// Adds to `bytes_sent()` and `seconds_communicating()`; implementations call it once per
  /// call.
  /// @param bytes   the bytes the call sent
  /// @param seconds the call's wall time
  void count(std::int64_t bytes, double seconds) noexcept {
    bytes_sent_ += bytes;
    seconds_ += seconds;
  }

 private:
  std::int64_t bytes_sent_ = 0;
  double seconds_ = 0.0;
};

/// `exchange` of typed buffers: `send[q]` to rank q, `receive[q]` (resized to what q sends, which
/// is first exchanged as a count) from it.
/// @param comm    the group
/// @param send    size() vectors
/// @param receive resized to size() vectors
template <typename T>
void exchange(Communicator& comm, const std::vector<std::vector<T>>& send,
              std::vector<std::vector<T>>& receive) {
  static_assert(std::is_trivially_copyable_v<T>);
  const auto ranks = static_cast<std::size_t>(comm.size());
  if (send.size() != ranks) {
    throw InvalidArgument("exchange: " + std::to_string(send.size()) + " buffers for " +
                          std::to_string(ranks) + " ranks");
  }
  std::vector<std::int64_t> counts_out(ranks);
  std::vector<std::int64_t> counts_in(ranks, 0);
  std::vector<std::span<const std::byte>> out(ranks);
  std::vector<std::span<std::byte>> in(ranks);
  for (std::size_t q = 0; q < ranks; ++q) {
    counts_out[q] = static_cast<std::int64_t>(send[q].size());
    out[q] = std::as_bytes(std::span(&counts_out[q], 1));
    in[q] = std::as_writable_bytes(std::span(&counts_in[q], 1));
  }
  comm.exchange(out, in);
  receive.resize(ranks);
  for (std::size_t q = 0; q < ranks; ++q) {
    if (counts_in[q] < 0) {
      throw Error("exchange: rank " + std::to_string(q) + " announced " +
                  std::to_string(counts_in[q]) + " values");
    }
    receive[q].resize(static_cast<std::size_t>(counts_in[q]));
    out[q] = std::as_bytes(std::span(send[q]));
    in[q] = std::as_writable_bytes(std::span(receive[q]));
  }
  comm.exchange(out, in);
}

/// `all_gather` of typed values: every rank's `mine`, in rank order.
/// @param comm the group
/// @param mine the same number of values on every rank
/// @return size() x mine.size() values
template <typename T>
std::vector<T> all_gather(Communicator& comm, std::span<const T> mine) {
  static_assert(std::is_trivially_copyable_v<T>);
  std::vector<T> all(mine.size() * static_cast<std::size_t>(comm.size()));
  comm.all_gather(std::as_bytes(mine), std::as_writable_bytes(std::span(all)));
  return all;
}

/// The sum over ranks of `values`, added in rank order, so every rank gets the same bits: a
/// reduce-scatter (rank q adds every rank's q-th slice of about values.size() / size() values, in
/// rank order) and an all-gather of the sums. Each rank sends about 2 (size() - 1) / size() x
/// values.size() values, against size() - 1 times as many for gathering every rank's values.
/// @param comm   the group
/// @param values this rank's terms (the same count on every rank); overwritten with the sums
template <typename T>
void sum_in_rank_order(Communicator& comm, std::span<T> values) {
  static_assert(std::is_trivially_copyable_v<T>);
  const auto ranks = static_cast<std::size_t>(comm.size());
  const auto rank = static_cast<std::size_t>(comm.rank());
  const std::size_t count = values.size();
  const std::size_t slice = (count + ranks - 1) / ranks;  // rank q sums [q slice, (q + 1) slice)
  const auto slice_of = [&](std::size_t q) {
    const std::size_t begin = std::min(count, q * slice);
    return values.subspan(begin, std::min(count, begin + slice) - begin);
  };
  const std::span<T> own = slice_of(rank);
  std::vector<T> terms(ranks * own.size());  // every rank's terms of this rank's slice
  std::vector<std::span<const std::byte>> out(ranks);
  std::vector<std::span<std::byte>> in(ranks);
  for (std::size_t q = 0; q < ranks; ++q) {
    out[q] = std::as_bytes(slice_of(q));
    in[q] = std::as_writable_bytes(std::span(terms).subspan(q * own.size(), own.size()));
  }
  comm.exchange(out, in);
  std::copy(own.begin(), own.end(), terms.begin() + static_cast<std::ptrdiff_t>(rank * own.size()));
  std::vector<T> sums(slice);  // this rank's slice summed, padded to `slice` values
  for (std::size_t k = 0; k < own.size(); ++k) sums[k] = terms[k];
  for (std::size_t q = 1; q < ranks; ++q) {
    for (std::size_t k = 0; k < own.size(); ++k) sums[k] += terms[q * own.size() + k];
  }
  const std::vector<T> all = all_gather<T>(comm, sums);
  for (std::size_t q = 0; q < ranks; ++q) {
    const std::span<T> part = slice_of(q);
    std::copy_n(all.begin() + static_cast<std::ptrdiff_t>(q * slice), part.size(), part.begin());
  }
}

}  // namespace maskgat
