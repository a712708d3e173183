// EgressQueues: the priority queues (lanes) of one egress port, its queue of
// MAC control frames, and the scheduler that picks among the priorities:
// strict priority first (highest first), then deficit weighted round robin
// (Shreedhar & Varghese, SIGCOMM 1995) among the other priorities.
//
// Contract:
//  1. pop() considers only priorities in `allowed` (the caller removes those
//     paused by PFC); it returns nothing when none of them has a packet.
//     Control frames (PFC) are a separate FIFO the caller sends first; they
//     are never paused.
//  2. DWRR: a queue's turn adds weight x quantum to its deficit; it sends
//     while its head fits the deficit; an emptied queue's deficit is reset,
//     a paused one's is kept. With a quantum at least the largest frame every
//     turn sends at least one packet, so pop() is O(priorities).
//  3. Layout, because queued packets evict everything else from the caches:
//     what pop() decides with (non-empty mask, DWRR cursor, control queue,
//     the caller's cache of allowed priorities) is one cache line, and each
//     priority's ring header, byte count, deficit and per-packet counters are
//     one line of their own, so a push or a pop touches two lines of this
//     object. The lanes are allocated per port (8 on Ethernet; a count that
//     is not a power of two is rounded up, the extra lanes stay empty). Rings hold bare handles
//     (eight to a line); DWRR reads only the head packet's size, and a packet is prefetched when it
//     becomes the head (it is read when it leaves anyway).
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <memory>
#include <new>

#include "models/flow_control/link_flow_control.h"
#include "models/flow_control/vl_arbiter.h"
#include "models/proto/infiniband.h"
#include "models/switch/switch_config.h"
#include "sim/packet.h"
#include "sim/ring.h"
#include "sim/units.h"

namespace rdmasim {

class EgressQueues {
 public:
  explicit EgressQueues(uint8_t lanes = kEthernetPriorities) { set_lanes(lanes); }
  // Sizes the port's lanes; before the first packet.
  void set_lanes(uint8_t lanes) {
    const uint32_t cap = std::bit_ceil(uint32_t{lanes});
    lanes_ = std::make_unique<Lane[]>(cap);
    count_ = lanes;
    wrap_ = static_cast<uint8_t>(cap - 1);
  }
  uint8_t lanes() const { return count_; }

  // `now`: a queue that was empty has sent nothing since it filled, which
  // the watchdog and the deadlock detector time from here (last_sent).
  void push(uint8_t prio, PacketHandle p, Time now = Time::zero()) {
    Lane& l = lanes_[prio];
    if (l.size == 0) l.last_sent = now;
    const uint32_t size = p->wire_bytes;
    l.push(std::move(p));
    l.bytes += size;
    ++l.enqueued;
    l.peak_bytes = std::max(l.peak_bytes, l.bytes);
    nonempty_ |= static_cast<uint16_t>(1U << prio);
  }

  // `now` is recorded as the time the popped packet's queue last sent.
  PacketHandle pop(uint16_t allowed, const SwitchConfig& cfg, Time now = Time::zero()) {
    const uint16_t cand = nonempty_ & allowed;
    if (cand == 0) return {};
    const uint16_t strict = cand & cfg.strict_mask;
    if (strict != 0) {
      const auto p = static_cast<uint8_t>(31 - __builtin_clz(strict));
      lanes_[p].last_sent = now;
      return take_head(p);
    }
    if ((cand & (cand - 1)) == 0 && (stale_ & ~nonempty_) == 0) return pop_only(cand, cfg, now);
    for (;;) {
      const uint8_t p = rr_;
      if (((cand >> p) & 1) == 0) {
        // An empty queue's deficit is reset; only take() leaves one to reset.
        if ((stale_ >> p) & ~nonempty_ & 1) {
          lanes_[p].deficit = 0;
          stale_ &= static_cast<uint16_t>(~(1U << p));
        }
        advance();
        continue;
      }
      Lane& l = lanes_[p];
      if (!turn_started_) {
        l.deficit += static_cast<int64_t>(cfg.dwrr_weight[p]) * cfg.dwrr_quantum.count();
        turn_started_ = true;
      }
      const int64_t size = l.front()->wire_bytes;
      if (size <= l.deficit) return serve(p, size, now);
      advance();
    }
  }

  // pop() on an InfiniBand port: VL arbitration (vl_arbiter.h) picks among
  // the lanes in `allowed` (those whose head packet has its credits) instead
  // of strict priority and DWRR. Arbitration counts a packet from the LRH
  // through the ICRC: its wire bytes less the 2-byte VCRC.
  PacketHandle pop_arbitrated(uint16_t allowed, VlArbiter& arb, Time now) {
    const uint16_t cand = nonempty_ & allowed;
    if (cand == 0) return {};
    const int vl = arb.pick(cand, [&](uint8_t v) -> uint64_t {
      return ib_credit_bytes(lanes_[v].front()->wire_bytes);
    });
    if (vl < 0) return {};
    lanes_[vl].last_sent = now;
    return take_head(static_cast<uint8_t>(vl));
  }

  // Starts fetching what push(prio) will write (a hint; changes nothing).
  void prefetch_push(uint8_t prio) const {
    __builtin_prefetch(this, 1);
    __builtin_prefetch(&lanes_[prio], 1);
  }

  // Takes the head of a queue regardless of the scheduler (watchdog drops).
  PacketHandle take(uint8_t prio) {
    PacketHandle p = take_head(prio);
    if (lanes_[prio].size == 0 && lanes_[prio].deficit != 0)
      stale_ |= static_cast<uint16_t>(1U << prio);
    return p;
  }

  // MAC control frames (PFC), sent before any queued packet.
  void push_control(PacketHandle f) { control_.push_back(std::move(f)); }
  bool has_control() const { return !control_.empty(); }
  PacketHandle pop_control() { return control_.pop_front(); }

  // The caller's cache of pop()'s `allowed` (which priorities PFC lets send),
  // valid while now < allowed_until(); kept here so one line decides.
  uint16_t cached_allowed() const { return allowed_; }
  Time allowed_until() const { return allowed_until_; }
  void cache_allowed(uint16_t allowed, Time until) {
    allowed_ = allowed;
    allowed_until_ = until;
  }

  // The ECN marker's floor for this port (EcnMarker::floor), kept in the
  // line an enqueue reads anyway: at or below it a packet is not marked.
  int64_t mark_floor() const { return mark_floor_; }
  void set_mark_floor(int64_t bytes) { mark_floor_ = bytes; }

  // When pop() last took a packet of `prio`.
  Time last_sent(uint8_t prio) const { return lanes_[prio].last_sent; }

  uint16_t nonempty_mask() const { return nonempty_; }
  bool empty(uint8_t prio) const { return lanes_[prio].size == 0; }
  size_t packets(uint8_t prio) const { return lanes_[prio].size; }
  int64_t bytes(uint8_t prio) const { return lanes_[prio].bytes; }
  // The n-th packet of a queue, from its head.
  const Packet& packet(uint8_t prio, size_t n) const { return *lanes_[prio].at(n); }
  uint64_t enqueued(uint8_t prio) const { return lanes_[prio].enqueued; }
  int64_t peak_bytes(uint8_t prio) const { return lanes_[prio].peak_bytes; }

 private:
  // One priority: a growable FIFO ring of handles (capacity a power of two,
  // allocated on first use, never shrinks) and its counters, in one line.
  struct alignas(64) Lane {
    std::unique_ptr<PacketHandle[]> buf;
    uint32_t head = 0;
    uint32_t size = 0;
    uint32_t cap = 0;
    int64_t bytes = 0;
    int64_t deficit = 0;
    uint64_t enqueued = 0;
    int64_t peak_bytes = 0;
    Time last_sent{};

    PacketHandle& front() { return buf[head]; }
    const PacketHandle& at(size_t n) const { return buf[(head + n) & (cap - 1)]; }
    void push(PacketHandle p) {
      if (size == cap) grow();
      // The slot holds an empty handle: construct over it rather than assign,
      // which would read the slot (a cache miss) to free what it held.
      new (&buf[(head + size) & (cap - 1)]) PacketHandle(std::move(p));
      ++size;
      // The slots a line ahead were last used a whole ring ago: fetch them.
      __builtin_prefetch(&buf[(head + size + 8) & (cap - 1)], 1);
    }
    void pop() {
      head = (head + 1) & (cap - 1);
      --size;
      // Handles are read in order: fetch the line after the head's.
      __builtin_prefetch(&buf[(head + 8) & (cap - 1)]);
    }
    void grow() {
      const uint32_t n = cap == 0 ? 16 : cap * 2;
      auto b = std::make_unique<PacketHandle[]>(n);
      for (uint32_t i = 0; i < size; ++i) b[i] = std::move(buf[(head + i) & (cap - 1)]);
      buf = std::move(b);
      cap = n;
      head = 0;
    }
  };
  static_assert(sizeof(Lane) == 64, "one priority's queue state is one cache line");

  PacketHandle take_head(uint8_t prio) {
    Lane& l = lanes_[prio];
    PacketHandle p = std::move(l.front());
    l.bytes -= p->wire_bytes;
    l.pop();
    if (l.size == 0) {
      nonempty_ &= static_cast<uint16_t>(~(1U << prio));
    } else {
      // The next head is read when this one has been sent: start fetching it
      // now (queued packets are usually out of cache by then).
      __builtin_prefetch(l.front().get());
    }
    return p;
  }

  // pop() when one priority is the only candidate and no deficit awaits a
  // reset: what the round-robin loop does, without walking the empty lanes.
  // The cursor comes to `p` (starting a turn if it moves); every further lap
  // would add one more turn's worth before the head fits.
  PacketHandle pop_only(uint16_t cand, const SwitchConfig& cfg, Time now) {
    const auto p = static_cast<uint8_t>(__builtin_ctz(cand));
    Lane& l = lanes_[p];
    if (rr_ != p) {
      rr_ = p;
      turn_started_ = false;
    }
    const int64_t turn = static_cast<int64_t>(cfg.dwrr_weight[p]) * cfg.dwrr_quantum.count();
    if (!turn_started_) {
      l.deficit += turn;
      turn_started_ = true;
    }
    const int64_t size = l.front()->wire_bytes;
    if (size > l.deficit) l.deficit += (size - l.deficit + turn - 1) / turn * turn;
    return serve(p, size, now);
  }

  // Sends the head of `p`, whose deficit covers its `size`; an emptied queue
  // ends its turn with no deficit.
  PacketHandle serve(uint8_t p, int64_t size, Time now) {
    Lane& l = lanes_[p];
    l.deficit -= size;
    l.last_sent = now;
    PacketHandle out = take_head(p);
    if (l.size == 0) {
      l.deficit = 0;
      advance();
    }
    return out;
  }

  void advance() {
    rr_ = static_cast<uint8_t>((rr_ + 1) & wrap_);
    turn_started_ = false;
  }

  // ---- the line pop() decides with ----
  alignas(64) uint16_t nonempty_ = 0;
  uint8_t rr_ = 0;
  bool turn_started_ = false;
  uint16_t allowed_ = 0;
  // Queues take() emptied with a deficit left (reset when DWRR next passes them empty).
  uint16_t stale_ = 0;
  uint8_t count_ = 0;                  // lanes
  uint8_t wrap_ = 0;                   // lanes allocated - 1 (a power of two - 1)
  Time allowed_until_ = Time::zero();  // the cache starts invalid
  Ring<PacketHandle> control_;
  int64_t mark_floor_ = 0;
  // ---- one line per priority, allocated per port ----
  std::unique_ptr<Lane[]> lanes_;
};
static_assert(sizeof(EgressQueues) == 64, "the decision line; the lanes have a line each");

}  // namespace rdmasim
