#include "sim/huge_pages.h"

#include <sys/mman.h>

#include <cstdint>
#include <new>

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

}  // namespace rdmasim
