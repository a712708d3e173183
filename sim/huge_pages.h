// HugeBlock: memory for the large arrays a run keeps touching at random (the
// packet pool), in blocks aligned to 2 MiB and advised for transparent huge
// pages (madvise(MADV_HUGEPAGE); Linux admin-guide/mm/transhuge). One TLB
// entry then covers 2 MiB instead of 4 KiB: with hundreds of MiB of packets
// in flight (8,192 hosts), a page walk per packet touched is a large share of
// a hop's cost.
//
// HeapHugePages does the same for the process's heap (the brk area), where
// the main thread's allocations below malloc's mmap threshold go (the
// network's components, rings and queues): 230 of the 350 MiB of a run at
// 8,192 hosts, which with 4 KiB pages is some 60,000 pages touched at random.
//
// Contract:
//  1. The block is zero-filled, its size rounded up to a whole number of
//     2 MiB pages, its address 2 MiB-aligned; it is returned to the system
//     when the block dies.
//  2. Huge pages are a request: a kernel set to "never", or without memory
//     for them, gives ordinary pages. Nothing but the speed depends on it.
//  3. Allocation failure throws std::bad_alloc, as `new` would.
//  4. HeapHugePages::advise() advises the part of the heap it has not yet
//     seen (MADV_HUGEPAGE), so that new pages there come as huge pages, and
//     collapses its 2 MiB pages that are at least half in use (MADV_COLLAPSE,
//     Linux 6.1 and later; it copies, about a millisecond per MiB). Below
//     kMinBytes of new heap it waits: a small heap costs the TLB nothing.
//     It does nothing where THP is "never" or the process has turned THP
//     off (prctl PR_SET_THP_DISABLE), which MADV_COLLAPSE alone would
//     ignore. As contract 2, a kernel that refuses changes only the speed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>

namespace rdmasim {

class HugeBlock {
 public:
  static constexpr size_t kPage = size_t{2} << 20;

  HugeBlock() = default;
  explicit HugeBlock(size_t bytes);
  HugeBlock(HugeBlock&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}
  HugeBlock& operator=(HugeBlock&& o) noexcept {
    if (this != &o) {
      free();
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
    }
    return *this;
  }
  HugeBlock(const HugeBlock&) = delete;
  HugeBlock& operator=(const HugeBlock&) = delete;
  ~HugeBlock() { free(); }

  void* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  void free();
  void* data_ = nullptr;
  size_t size_ = 0;
};

// Call advise() once the network is built and then now and again during the
// run (the heap grows as queues and rings fill); one per run, owned by it.
class HeapHugePages {
 public:
  static constexpr size_t kMinBytes = size_t{16} << 20;
  // Returns the bytes newly advised (0 if the heap grew by less than
  // kMinBytes since the last call, or the process has no heap to read).
  size_t advise();
  // The bytes advised so far, and of those the bytes the kernel collapsed
  // into huge pages when advised (pages that become huge later, as new
  // ones in an advised range do, are not counted).
  size_t advised() const { return advised_; }
  size_t collapsed() const { return collapsed_; }

 private:
  uintptr_t done_ = 0;  // the heap below this address has been advised
  size_t advised_ = 0;
  size_t collapsed_ = 0;
};

}  // namespace rdmasim
