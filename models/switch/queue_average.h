// QueueAverage: an egress hook (egress_hook.h) that integrates the length of
// every egress queue of one switch over a time window exactly, from the
// packets joining and leaving it: the time-average of what /queues samples
// (wire bytes queued, not counting the frame being sent), over [start, end),
// and its peak over (start, end].
//
// Contract:
//  1. One object per switch, registered on every port and priority at both
//     points (Switch::add_egress_hook) before setup; it runs in the switch's
//     events and only reads the queue (egress_hook.h contract 3).
//  2. The length changes at each enqueue (by the packet's wire bytes) and
//     dequeue; between them it is constant, so the integral is a sum of
//     length x duration, exact in byte-picoseconds.
//  3. Packets taken out unsent (the PFC watchdog's drops, InfiniBand's
//     head-of-queue and dead-port discards) leave as a dequeue does
//     (EgressHook::on_discard).
//  4. The peak is the largest length the queue has at any instant of
//     (start, end], including one it has only momentarily (a packet
//     joining and another leaving at one picosecond).
//  5. Cost: two virtual calls and a few integer operations per packet and
//     switch hop, only on runs that ask for the averages.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "models/switch/egress_hook.h"
#include "sim/units.h"

namespace rdmasim {

class QueueAverage : public EgressHook {
 public:
  // For a switch of `ports` ports of `lanes` priorities each.
  QueueAverage(uint32_t ports, Time start, Time end, uint8_t lanes = kEthernetPriorities)
      : EgressHook(kAtEnqueue | kAtDequeue),
        start_(start),
        end_(end),
        stride_(lanes),
        lanes_(size_t{ports} * lanes) {}

  void on_enqueue(const EgressView& q, Packet& p) override {
    step(q.port(), q.priority(), q.now(), q.queues().bytes(q.priority()) + p.wire_bytes);
  }
  void on_dequeue(const EgressView& q, Packet& p) override {
    (void)p;
    step(q.port(), q.priority(), q.now(), q.queues().bytes(q.priority()));  // p already left
  }
  void on_discard(const EgressView& q, Packet& p) override { on_dequeue(q, p); }

  // The time-average length (bytes) of queue (port, priority) over
  // [start, min(end, until)), `until` being the end of the run; 0 if that
  // is empty.
  double mean_bytes(uint32_t port, uint8_t priority, Time until) const {
    const Lane& l = lanes_[size_t{port} * stride_ + priority];
    const Time stop = std::min(end_, until);
    if (stop <= start_) return 0.0;
    const __int128 area = l.area + static_cast<__int128>(l.level) * overlap(l.since, stop).in_ps();
    return static_cast<double>(area) / static_cast<double>((stop - start_).in_ps());
  }
  // The peak length (bytes) of queue (port, priority) over
  // (start, min(end, until)]; 0 if that is empty.
  int64_t peak_bytes(uint32_t port, uint8_t priority, Time until) const {
    const Lane& l = lanes_[size_t{port} * stride_ + priority];
    const Time stop = std::min(end_, until);
    if (stop <= start_) return 0;
    // The level now has held since `since`, up to the end of the run.
    return l.since <= stop ? std::max(l.peak, l.level) : l.peak;
  }

 private:
  struct Lane {
    int64_t level = 0;  // wire bytes queued since `since`
    Time since;
    __int128 area = 0;  // byte-picoseconds within the window before `since`
    int64_t peak = 0;   // the largest level held in the window before `since`
  };
  // The part of [a, b) inside the window.
  Time overlap(Time a, Time b) const {
    const Time lo = std::max(a, start_), hi = std::min(b, end_);
    return hi > lo ? hi - lo : Time::zero();
  }
  void step(uint32_t port, uint8_t priority, Time now, int64_t level) {
    Lane& l = lanes_[size_t{port} * stride_ + priority];
    l.area += static_cast<__int128>(l.level) * overlap(l.since, now).in_ps();
    // The level held over [since, now) (or at the instant `since` if equal)
    // meets (start, end] iff since <= end and now > start.
    if (l.since <= end_ && now > start_) l.peak = std::max(l.peak, l.level);
    l.since = now;
    l.level = level;
  }

  Time start_, end_;
  uint8_t stride_;
  std::vector<Lane> lanes_;
};

}  // namespace rdmasim
