// PsnBitmap: which PSNs of a window [base, base + capacity) are marked, as a
// circular bitset whose base slides forward. Selective repeat uses it on both
// sides: the responder marks the PSNs it has placed out of order, the
// requester the PSNs the responder has selectively acknowledged (or, for a
// READ, whose responses it has received).
//
// Contract:
//  1. Capacity is a power of two fixed at construction; nothing allocates
//     afterwards.
//  2. Offsets are relative to the base; set/test beyond the capacity are
//     refused (set returns false, test returns false).
//  3. advance(n) slides the base by n, clearing the bits that leave.
#pragma once

#include <bit>
#include <cassert>
#include <cstdint>
#include <vector>

namespace rdmasim {

class PsnBitmap {
 public:
  PsnBitmap() = default;
  explicit PsnBitmap(uint32_t capacity) : words_(capacity / 64 + (capacity % 64 != 0)) {
    assert(std::has_single_bit(capacity) && capacity >= 64);
    mask_ = capacity - 1;
  }

  bool allocated() const { return !words_.empty(); }
  uint32_t capacity() const { return mask_ + 1; }
  uint64_t base() const { return base_; }
  // Marked bits at or beyond the base.
  uint32_t count() const { return count_; }

  void reset(uint64_t base) {
    for (uint64_t& w : words_) w = 0;
    base_ = base;
    count_ = 0;
  }

  bool test(uint64_t offset) const {
    if (offset > mask_) return false;
    const uint32_t i = index(offset);
    return ((words_[i >> 6] >> (i & 63)) & 1) != 0;
  }
  // Marks base + offset; false if it lies beyond the window.
  bool set(uint64_t offset) {
    if (offset > mask_) return false;
    const uint32_t i = index(offset);
    uint64_t& w = words_[i >> 6];
    const uint64_t bit = uint64_t{1} << (i & 63);
    if ((w & bit) == 0) {
      w |= bit;
      ++count_;
    }
    return true;
  }
  // Slides the base forward by n.
  void advance(uint64_t n) { advance_to(base_ + n); }
  // Slides the base to `new_base` (>= base).
  void advance_to(uint64_t new_base) {
    assert(new_base >= base_);
    uint64_t n = new_base - base_;
    while (n > 0 && count_ > 0) {
      clear_front_and_step();
      --n;
    }
    base_ += n;
    head_ = static_cast<uint32_t>((head_ + n) & mask_);
  }
  // Number of consecutive marked bits from the base.
  uint64_t run_at_base() const {
    uint64_t n = 0;
    while (n <= mask_ && test(n)) ++n;
    return n;
  }
  // Offset of the first unmarked bit at or after `from` (capacity if none).
  uint64_t next_clear(uint64_t from) const {
    while (from <= mask_ && test(from)) ++from;
    return from;
  }
  // Offset of the first marked bit at or after `from` (capacity if none).
  uint64_t next_set(uint64_t from) const {
    if (count_ == 0) return uint64_t{mask_} + 1;
    while (from <= mask_ && !test(from)) ++from;
    return from;
  }
  // Bits [from, from + 64) as a word: bit i = offset from + i.
  uint64_t word(uint64_t from) const {
    if (count_ == 0) return 0;
    uint64_t w = 0;
    for (uint32_t i = 0; i < 64; ++i) {
      if (test(from + i)) w |= uint64_t{1} << i;
    }
    return w;
  }

 private:
  uint32_t index(uint64_t offset) const { return static_cast<uint32_t>((head_ + offset) & mask_); }
  void clear_front_and_step() {
    uint64_t& w = words_[head_ >> 6];
    const uint64_t bit = uint64_t{1} << (head_ & 63);
    if ((w & bit) != 0) {
      w &= ~bit;
      --count_;
    }
    head_ = (head_ + 1) & mask_;
    ++base_;
  }

  std::vector<uint64_t> words_;
  uint32_t mask_ = 0;
  uint32_t head_ = 0;
  uint64_t base_ = 0;
  uint32_t count_ = 0;
};

}  // namespace rdmasim
