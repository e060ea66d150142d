#include "ops/detail/buffer.hpp"

#include <sys/mman.h>
#include <unistd.h>

namespace maskgat::ops::detail {

void advise_huge_pages(void* data, std::size_t bytes) {
#ifdef MADV_HUGEPAGE
  constexpr std::size_t kMinBytes = std::size_t{8} << 20;
  if (bytes < kMinBytes) return;
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto start = reinterpret_cast<std::uintptr_t>(data);
  const std::uintptr_t begin = (start + page - 1) / page * page;
  const std::uintptr_t end = (start + bytes) / page * page;
  // NOLINTNEXTLINE(performance-no-int-to-ptr): madvise takes the page range as a pointer
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)data;
  (void)bytes;
#endif
}

}  // namespace maskgat::ops::detail
