// A growable FIFO ring buffer of movable values.
//
// Contract:
//  1. push_back/pop_front are O(1); capacity doubles when full and never
//     shrinks, so a FIFO in steady state does not allocate.
//  2. Elements are moved in and out; indices count from the front.
#pragma once

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <utility>

namespace rdmasim {

template <class T>
class Ring {
 public:
  Ring() = default;
  Ring(const Ring&) = delete;
  Ring& operator=(const Ring&) = delete;
  Ring(Ring&&) noexcept = default;
  Ring& operator=(Ring&&) noexcept = default;

  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }

  void push_back(T v) {
    if (size_ == cap_) grow();
    buf_[(head_ + size_) & (cap_ - 1)] = std::move(v);
    ++size_;
  }
  T pop_front() {
    assert(size_ > 0);
    T v = std::move(buf_[head_]);
    head_ = (head_ + 1) & (cap_ - 1);
    --size_;
    return v;
  }
  T& front() { return buf_[head_]; }
  const T& front() const { return buf_[head_]; }
  T& operator[](size_t i) { return buf_[(head_ + i) & (cap_ - 1)]; }
  const T& operator[](size_t i) const { return buf_[(head_ + i) & (cap_ - 1)]; }

 private:
  void grow() {
    if (cap_ >= (uint32_t{1} << 31)) throw std::length_error("ring over 2^31 entries");
    const uint32_t cap = cap_ == 0 ? 16 : cap_ * 2;
    auto buf = std::make_unique<T[]>(cap);
    for (uint32_t i = 0; i < size_; ++i) buf[i] = std::move((*this)[i]);
    buf_ = std::move(buf);
    cap_ = cap;
    head_ = 0;
  }

  // 32-bit counts: a ring is 24 bytes, so the owner's other per-packet
  // fields share its cache line (DelayLine).
  std::unique_ptr<T[]> buf_;
  uint32_t cap_ = 0;
  uint32_t head_ = 0;
  uint32_t size_ = 0;
};

}  // namespace rdmasim
