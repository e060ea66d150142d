#include "memory/allocation_counter.hpp"

#include <malloc.h>

#include <atomic>
#include <cstdlib>
#include <new>

namespace maskgat::test {
namespace {

std::atomic<std::size_t> current{0};
std::atomic<std::size_t> peak{0};

void* counted(std::size_t size) {
  void* pointer = std::malloc(size == 0 ? 1 : size);
  if (pointer == nullptr) throw std::bad_alloc();
  const std::size_t now =
      current.fetch_add(malloc_usable_size(pointer)) + malloc_usable_size(pointer);
  std::size_t seen = peak.load();
  while (now > seen && !peak.compare_exchange_weak(seen, now)) {
  }
  return pointer;
}

void uncounted(void* pointer) noexcept {
  if (pointer == nullptr) return;
  current.fetch_sub(malloc_usable_size(pointer));
  std::free(pointer);
}

}  // namespace

std::size_t allocated_bytes() noexcept { return current.load(); }
void reset_peak() noexcept { peak.store(current.load()); }
std::size_t peak_bytes() noexcept { return peak.load(); }

}  // namespace maskgat::test

void* operator new(std::size_t size) { return maskgat::test::counted(size); }
void* operator new[](std::size_t size) { return maskgat::test::counted(size); }
void operator delete(void* pointer) noexcept { maskgat::test::uncounted(pointer); }
void operator delete[](void* pointer) noexcept { maskgat::test::uncounted(pointer); }
void operator delete(void* pointer, std::size_t) noexcept { maskgat::test::uncounted(pointer); }
void operator delete[](void* pointer, std::size_t) noexcept { maskgat::test::uncounted(pointer); }
