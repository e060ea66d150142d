#pragma once
// Counts the heap bytes the process holds through operator new (which every standard container
// uses), and the most it held: the memory tests measure what a reader allocates per input byte.
// Only the memory test binary links allocation_counter.cpp, which replaces operator new/delete.

#include <cstddef>

namespace maskgat::test {

// Bytes allocated through operator new and not yet freed.
std::size_t allocated_bytes() noexcept;

// Starts a new peak: the peak becomes the current allocation.
void reset_peak() noexcept;

// The most bytes held at once since the last `reset_peak`.
std::size_t peak_bytes() noexcept;

}  // namespace maskgat::test
