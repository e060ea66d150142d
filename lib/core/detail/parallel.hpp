#pragma once
// Parallel shells over serial kernels. Every shell hands each task a fixed, contiguous range that
// depends only on the input and the grain, never on the number of threads, and every task owns
// its outputs: no atomics, no locks, bitwise-reproducible results.

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>
#include <tbb/task_group.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "maskgat/core/types.hpp"

// ThreadSanitizer cannot see the synchronisation inside Debian's oneTBB (an uninstrumented
// library), so it would take every handover of data between a caller and its tasks for a race.
// Under TSan, `run_tasks` and `BackgroundTask` state those edges themselves: everything before a
// task starts happens before it, and the task before everything after the wait for it.
#if defined(__SANITIZE_THREAD__)
#define MASKGAT_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define MASKGAT_TSAN 1
#endif
#endif
#ifdef MASKGAT_TSAN
extern "C" void __tsan_acquire(void* address);
extern "C" void __tsan_release(void* address);
#endif

namespace maskgat::detail {

// Rows per task of the row-wise passes (products, dropout, activations, bias): a constant, never
// derived from the thread count, so each element's arithmetic is fixed.
inline constexpr std::int64_t kRowBlock = 256;

// Calls `task(k)` for k in [0, count), in parallel, one oneTBB task per k.
template <typename Task>
void run_tasks(std::int64_t count, Task&& task) {
#ifdef MASKGAT_TSAN
  char before = 0;
  char after = 0;
  __tsan_release(&before);
#endif
  tbb::parallel_for(
      tbb::blocked_range<std::int64_t>(0, count, 1),
      [&](const tbb::blocked_range<std::int64_t>& tasks) {
#ifdef MASKGAT_TSAN
        __tsan_acquire(&before);
#endif
        for (std::int64_t k = tasks.begin(); k != tasks.end(); ++k) task(k);
#ifdef MASKGAT_TSAN
        __tsan_release(&after);
#endif
      },
      tbb::simple_partitioner());
#ifdef MASKGAT_TSAN
  __tsan_acquire(&after);
#endif
}

// One task at a time beside the caller: `run(fn)` starts `fn` in a oneTBB task, `wait()` returns
// when it has finished (rethrowing what it threw). Leaving scope without `wait()` (when the caller
// throws) cancels and waits for the task.
class BackgroundTask {
 public:
  template <typename Fn>
  void run(Fn&& fn) {
#ifdef MASKGAT_TSAN
    __tsan_release(&before_);
#endif
    group_.run([this, fn = std::forward<Fn>(fn)] {
#ifdef MASKGAT_TSAN
      __tsan_acquire(&before_);
#endif
      fn();
#ifdef MASKGAT_TSAN
      __tsan_release(&after_);
#endif
    });
  }

  void wait() {
    group_.wait();
#ifdef MASKGAT_TSAN
    __tsan_acquire(&after_);
#endif
  }

 private:
  tbb::task_group group_;
#ifdef MASKGAT_TSAN
  char before_ = 0;
  char after_ = 0;
#endif
};

// A row-range pass of at least kMinTasks * kMinTaskWork units of work is split into at least
// kMinTasks tasks whatever the grain: a citation graph's pass (some 10^4 units) would otherwise be
// one or two tasks, and leave a thread idle.
inline constexpr std::int64_t kMinTasks = 8;
inline constexpr std::int64_t kMinTaskWork = 512;

// Calls `fn(begin, end)` on consecutive node ranges covering [0, offsets.size() - 1), each holding
// about `grain` units of work (less in small passes, see kMinTasks), where a node weighs 1 plus
// its row length in `offsets` (a CSR indptr). Ranges are found by binary search on the prefix
// `offsets[i] + i`, so a task costs no allocation.
template <typename Fn>
void for_each_row_range(std::span<const EdgeId> offsets, std::int64_t grain, Fn&& fn) {
  const auto num_rows = static_cast<std::int64_t>(offsets.size()) - 1;
  const std::int64_t total = offsets.back() + num_rows;
  if (total == 0) return;
  grain = std::max<std::int64_t>(grain, 1);
  const std::int64_t num_tasks =
      std::max((total + grain - 1) / grain, std::min(kMinTasks, total / kMinTaskWork));
  if (num_tasks <= 1) {
    fn(NodeId{0}, static_cast<NodeId>(num_rows));
    return;
  }
  // The first row whose prefix work reaches `target`.
  const auto boundary = [&](std::int64_t task) -> NodeId {
    if (task >= num_tasks) return static_cast<NodeId>(num_rows);
    const std::int64_t target = (total + num_tasks - 1) / num_tasks * task;
    std::int64_t lo = 0;
    std::int64_t hi = num_rows;
    while (lo < hi) {
      const std::int64_t mid = lo + (hi - lo) / 2;
      if (offsets[static_cast<std::size_t>(mid)] + mid < target) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return static_cast<NodeId>(lo);
  };
  run_tasks(num_tasks, [&](std::int64_t task) {
    const NodeId begin = boundary(task);
    const NodeId end = boundary(task + 1);
    if (begin < end) fn(begin, end);
  });
}

// Calls `fn(begin, end)` on the blocks [k * block, min((k + 1) * block, count)).
template <typename Fn>
void for_each_block(std::int64_t count, std::int64_t block, Fn&& fn) {
  if (count <= 0) return;
  const std::int64_t num_blocks = (count + block - 1) / block;
  if (num_blocks == 1) {
    fn(std::int64_t{0}, count);
    return;
  }
  run_tasks(num_blocks, [&](std::int64_t k) { fn(k * block, std::min(count, (k + 1) * block)); });
}

// Runs `check(begin, end)` on the blocks of `for_each_block(count, block, ...)` in parallel; each
// returns its block's first problem (a message) or nothing. Returns the first block's problem, so
// the answer does not depend on the thread count.
template <typename Check>
std::optional<std::string> first_problem(std::int64_t count, std::int64_t block, Check&& check) {
  std::vector<std::optional<std::string>> problems(
      static_cast<std::size_t>(std::max<std::int64_t>((count + block - 1) / block, 0)));
  for_each_block(count, block, [&](std::int64_t begin, std::int64_t end) {
    problems[static_cast<std::size_t>(begin / block)] = check(begin, end);
  });
  for (auto& problem : problems) {
    if (problem) return std::move(problem);
  }
  return std::nullopt;
}

}  // namespace maskgat::detail
