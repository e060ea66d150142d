#pragma once
// How the apps set up glibc's allocator.

#include <malloc.h>

namespace maskgat::app {

// Mini-batch training and layer-wise inference resize large buffers from batch to batch; glibc
// serves blocks above its mmap threshold (at most 32 MiB) with fresh mappings, so every such
// buffer would be faulted in and zeroed by the kernel again at every batch (a fifth of a
// 10^6-node epoch, measured). Keeping every block in the heap, and freed memory in the process,
// lets the next batch reuse it. A process-wide setting, so the apps make it, not the library.
inline void keep_freed_memory() {
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
}

}  // namespace maskgat::app
