// EgressQueues: the eight priority queues of one egress port and the
// scheduler that picks among them: strict priority first (highest first),
// then deficit weighted round robin (Shreedhar & Varghese, SIGCOMM 1995)
// among the other priorities.
//
// Contract:
//  1. pop() considers only priorities in `allowed` (the caller removes those
//     paused by PFC); it returns nothing when none of them has a packet.
//  2. DWRR: a queue's turn adds weight x quantum to its deficit; it sends
//     while its head fits the deficit; an emptied queue's deficit is reset,
//     a paused one's is kept. With a quantum at least the largest frame every
//     turn sends at least one packet, so pop() is O(priorities).
#pragma once

#include <array>
#include <cstdint>

#include "models/switch/switch_config.h"
#include "sim/packet.h"
#include "sim/ring.h"

namespace rdmasim {

class EgressQueues {
 public:
  void push(uint8_t prio, PacketHandle p) {
    bytes_[prio] += p->wire_bytes;
    sizes_[prio].push_back(p->wire_bytes);
    q_[prio].push_back(std::move(p));
    nonempty_ |= static_cast<uint8_t>(1U << prio);
  }

  PacketHandle pop(uint8_t allowed, const SwitchConfig& cfg) {
    const uint8_t cand = nonempty_ & allowed;
    if (cand == 0) return {};
    const uint8_t strict = cand & cfg.strict_mask;
    if (strict != 0) return take(static_cast<uint8_t>(31 - __builtin_clz(strict)));
    for (;;) {
      const uint8_t p = rr_;
      if (((cand >> p) & 1) == 0) {
        if (q_[p].empty()) deficit_[p] = 0;
        advance();
        continue;
      }
      if (!turn_started_) {
        deficit_[p] += static_cast<int64_t>(cfg.dwrr_weight[p]) * cfg.dwrr_quantum.count();
        turn_started_ = true;
      }
      const int64_t size = sizes_[p].front();
      if (size <= deficit_[p]) {
        deficit_[p] -= size;
        PacketHandle out = take(p);
        if (q_[p].empty()) {
          deficit_[p] = 0;
          advance();
        }
        return out;
      }
      advance();
    }
  }

  uint8_t nonempty_mask() const { return nonempty_; }
  bool empty(uint8_t prio) const { return q_[prio].empty(); }
  size_t packets(uint8_t prio) const { return q_[prio].size(); }
  int64_t bytes(uint8_t prio) const { return bytes_[prio]; }
  const Ring<PacketHandle>& queue(uint8_t prio) const { return q_[prio]; }
  Ring<PacketHandle>& queue(uint8_t prio) { return q_[prio]; }
  // Takes the head of a queue regardless of the scheduler (watchdog drops).
  PacketHandle take(uint8_t prio) {
    PacketHandle p = q_[prio].pop_front();
    bytes_[prio] -= sizes_[prio].pop_front();
    if (q_[prio].empty()) {
      nonempty_ &= static_cast<uint8_t>(~(1U << prio));
    } else {
      // The next head is read when this one has been sent: start fetching it
      // now (queued packets are usually out of cache by then).
      __builtin_prefetch(q_[prio].front().get());
    }
    return p;
  }

 private:
  void advance() {
    rr_ = static_cast<uint8_t>((rr_ + 1) & 7);
    turn_started_ = false;
  }

  std::array<Ring<PacketHandle>, 8> q_;
  std::array<Ring<uint32_t>, 8>
      sizes_;  // wire bytes of each queued packet, to schedule without touching it
  std::array<int64_t, 8> bytes_{};
  std::array<int64_t, 8> deficit_{};
  uint8_t nonempty_ = 0;
  uint8_t rr_ = 0;
  bool turn_started_ = false;
};

}  // namespace rdmasim
