// DelayLine: a FIFO that hands each packet back to its owner at a due time,
// with one pending event for the whole line. Links use it for
// propagation; switches for their pipeline latency.
//
// Contract:
//  1. Due times never decrease (push() uses now + a constant delay; push_at()
//     asserts it), so packets leave in the order they entered.
//  2. At most one event is pending: the departure of the oldest packet.
//  3. A zero delay still goes through the queue (at the same picosecond, in
//     the line's event class), which keeps event order identical whether or
//     not a delay is configured; owners that want a direct call skip the line.
#pragma once

#include <cassert>
#include <cstdint>

#include "sim/event.h"
#include "sim/packet.h"
#include "sim/ring.h"
#include "sim/simulation.h"

namespace rdmasim {

// No per-line fields for the owner.
struct NoExtra {};

// Layout: two cache lines. The first is the event (what the queue reads);
// the second what a push and a delivery read: the ring, the partition, the
// owner, the delay and `Extra`, up to 16 bytes of the owner's own that its
// delivery reads (a link's receiver and port), so that a frame's two ends
// touch three lines of the line's state.
template <class Owner, void (Owner::*Deliver)(PacketHandle), class Extra = NoExtra>
class alignas(64) DelayLine {
 public:
  // The owner is a Component: the line runs in its partition (bind() when
  // the owner moves to another before the run).
  DelayLine(Owner* owner, Time delay, EventClass cls, uint32_t tag)
      : event_(this, cls, tag), part_(&owner->ctx()), owner_(owner), delay_(delay) {}

  void bind(Partition& part) { part_ = &part; }
  Time delay() const { return delay_; }
  size_t size() const { return ring_.size(); }
  Extra& extra() { return extra_; }
  const Extra& extra() const { return extra_; }
  // Calls f(const Packet&) for every packet in the line, oldest first.
  template <class F>
  void for_each(F f) const {
    for (size_t i = 0; i < ring_.size(); ++i) f(*ring_[i].packet);
  }
  // Drops everything in the line (e.g. the frames on a cable that breaks).
  size_t clear() {
    const size_t n = ring_.size();
    while (!ring_.empty()) ring_.pop_front();
    part_->cancel(event_);
    return n;
  }

  void push(PacketHandle p) { push_at(part_->now() + delay_, std::move(p)); }
  void push_at(Time due, PacketHandle p) {
    assert(part_ == &owner_->ctx() && "DelayLine not bound to its owner's partition");
#ifndef NDEBUG
    assert(ring_.empty() || due >= last_due_);
    last_due_ = due;
#endif
    const bool was_empty = ring_.empty();
    const auto front = was_empty ? uintptr_t{0} : reinterpret_cast<uintptr_t>(&ring_.front());
    ring_.push_back(Entry{due, std::move(p)});
    // Only when the front moved (the ring was empty, or grew): the event's
    // line stays untouched by a push behind others.
    if (reinterpret_cast<uintptr_t>(&ring_.front()) != front)
      event_.set_prefetch_hint(&ring_.front());
    if (was_empty) part_->schedule(event_, due);
  }

 private:
  struct Entry {
    Time due;
    PacketHandle packet;
  };
  void on_due() {
    PacketHandle p = std::move(ring_.front().packet);
    ring_.pop_front();
    if (!ring_.empty()) {
      event_.set_prefetch_hint(&ring_.front());
      part_->schedule(event_, ring_.front().due);
      // The next packet is due a frame time (or less) from now; by then a
      // line read now has a fair chance to still be cached (measured: W1
      // faster).
      __builtin_prefetch(ring_.front().packet.get());
    }
    (owner_->*Deliver)(std::move(p));
  }

  MemberEvent<DelayLine, &DelayLine::on_due> event_;
  alignas(64) Ring<Entry> ring_;
  Partition* part_;
  Owner* owner_;
  Time delay_;
  [[no_unique_address]] Extra extra_;
#ifndef NDEBUG
  Time last_due_;
#endif
};

}  // namespace rdmasim
