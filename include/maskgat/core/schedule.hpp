#pragma once
/// @file
/// How kernels split their work into oneTBB tasks.

#include <cstdint>

namespace maskgat {

/// Task sizes for the parallel kernels. They change speed only: every kernel computes each output
/// element in one task, in a fixed order, and every reduction over nodes uses fixed blocks, so
/// results are bitwise the same for every grain and every thread count.
///
/// The library never sets the number of threads; applications use `tbb::global_control` (the
/// `maskgat` CLI's `--threads`).
struct Schedule {
  /// Work per task for kernels over mask rows, in edges plus nodes: rows are grouped into
  /// consecutive ranges of about this much work, so a few high-degree nodes do not leave one
  /// task with most of the edges. Must be positive.
  std::int64_t grain = 8192;
};

}  // namespace maskgat
