// HugeBlock: memory for the large arrays a run keeps touching at random (the
// packet pool), in blocks aligned to 2 MiB and advised for transparent huge
// pages (madvise(MADV_HUGEPAGE); Linux admin-guide/mm/transhuge). One TLB
// entry then covers 2 MiB instead of 4 KiB: with hundreds of MiB of packets
// in flight (8,192 hosts), a page walk per packet touched is a large share of
// a hop's cost.
//
// Contract:
//  1. The block is zero-filled, its size rounded up to a whole number of
//     2 MiB pages, its address 2 MiB-aligned; it is returned to the system
//     when the block dies.
//  2. Huge pages are a request: a kernel set to "never", or without memory
//     for them, gives ordinary pages. Nothing but the speed depends on it.
//  3. Allocation failure throws std::bad_alloc, as `new` would.
#pragma once

#include <cstddef>
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

}  // namespace rdmasim
