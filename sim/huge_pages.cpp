#include "sim/huge_pages.h"

#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <new>
#include <vector>

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25  // Linux 6.1 (uapi asm-generic/mman-common.h); glibc 2.36 lacks it
#endif

namespace rdmasim {

HugeBlock::HugeBlock(size_t bytes) {
  const size_t size = (bytes + kPage - 1) / kPage * kPage;
  if (size == 0) return;
  // Map one page more than asked, then unmap the unaligned head and tail:
  // mmap itself only aligns to 4 KiB.
  void* raw =
      ::mmap(nullptr, size + kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  const auto begin = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = (begin + kPage - 1) / kPage * kPage;
  if (aligned > begin) ::munmap(raw, aligned - begin);
  const uintptr_t end = begin + size + kPage;
  if (end > aligned + size) ::munmap(reinterpret_cast<void*>(aligned + size), end - aligned - size);
  data_ = reinterpret_cast<void*>(aligned);
  size_ = size;
  // Contract 2: a refusal (EINVAL on a kernel without THP) changes nothing.
  (void)::madvise(data_, size_, MADV_HUGEPAGE);
}

void HugeBlock::free() {
  if (data_ != nullptr) ::munmap(data_, size_);
  data_ = nullptr;
  size_ = 0;
}

namespace {

// MADV_COLLAPSE ignores the system's THP setting: ask only where the
// administrator allows huge pages and the process has not turned them off.
bool huge_pages_allowed() {
  std::FILE* f = std::fopen("/sys/kernel/mm/transparent_hugepage/enabled", "re");
  if (f == nullptr) return false;  // a kernel without THP
  char mode[128] = {};
  const bool read = std::fgets(mode, sizeof mode, f) != nullptr;
  std::fclose(f);
  if (!read || std::strstr(mode, "[never]") != nullptr) return false;
  return ::prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0) == 0;
}

}  // namespace

size_t HeapHugePages::advise() {
  if (!huge_pages_allowed()) return 0;
  // The heap is every mapping the kernel labels [heap] (one per brk growth
  // whose flags differ, as those advised here do).
  std::FILE* maps = std::fopen("/proc/self/maps", "re");
  if (maps == nullptr) return 0;
  uintptr_t begin = UINTPTR_MAX, end = 0;
  char line[512];
  while (std::fgets(line, sizeof line, maps) != nullptr) {
    if (std::strstr(line, "[heap]") == nullptr) continue;
    unsigned long b = 0, e = 0;
    if (std::sscanf(line, "%lx-%lx", &b, &e) != 2) continue;
    begin = std::min<uintptr_t>(begin, b);
    end = std::max<uintptr_t>(end, e);
  }
  std::fclose(maps);
  if (end == 0) return 0;
  // Whole huge pages only: the part below the first boundary and above the
  // last stays on small pages. A heap trimmed below what was advised grows
  // back without the advice.
  const uintptr_t last = end / HugeBlock::kPage * HugeBlock::kPage;
  done_ = std::min(done_, last);
  const uintptr_t first =
      (std::max(begin, done_) + HugeBlock::kPage - 1) / HugeBlock::kPage * HugeBlock::kPage;
  if (last <= first || last - first < kMinBytes) return 0;
  const size_t bytes = last - first;
  void* at = reinterpret_cast<void*>(first);
  (void)::madvise(at, bytes, MADV_HUGEPAGE);
  // Collapse a 2 MiB page only if at least half of it is in use: the
  // collapse fills the rest (it ignores khugepaged's max_ptes_none). One
  // call per page, so that the count is of the pages the kernel collapsed.
  const auto small = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t per_huge = HugeBlock::kPage / small;
  std::vector<unsigned char> in_core(bytes / small);
  if (::mincore(at, bytes, in_core.data()) == 0) {
    for (size_t h = 0; h < bytes / HugeBlock::kPage; ++h) {
      size_t used = 0;
      for (size_t i = h * per_huge; i < (h + 1) * per_huge; ++i) used += in_core[i] & 1;
      char* page = static_cast<char*>(at) + h * HugeBlock::kPage;
      if (2 * used >= per_huge && ::madvise(page, HugeBlock::kPage, MADV_COLLAPSE) == 0)
        collapsed_ += HugeBlock::kPage;
    }
  }
  done_ = last;
  advised_ += bytes;
  return bytes;
}

}  // namespace rdmasim
