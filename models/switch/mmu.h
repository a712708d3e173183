// Mmu: a switch's shared-buffer memory management unit, after the
// Broadcom-style MMU modelled by the HPCC simulator (HPCC
// simulation/src/point-to-point/model/switch-mmu.cc).
//
// Accounting, in bytes charged at cell granularity:
//  - every packet is charged to its ingress queue (port, priority): first to
//    that queue's reserve, then to the shared pool, and, for a lossless
//    priority once its PFC threshold is passed, to the queue's headroom;
//  - the shared pool is the buffer less every reserve and every headroom;
//  - lossy packets are also checked at the egress queue: dropped when the
//    queue holds more than lossy_alpha x the free shared pool (Broadcom
//    dynamic threshold) or when the pool is full;
//  - lossless packets are dropped only when their headroom is exhausted.
// PFC decisions per ingress queue of a lossless priority:
//  - dynamic: threshold thr = (buffer - all headroom - all reserve - shared
//    in use) >> alpha_shift; pause when headroom is in use or the queue's
//    shared use reaches thr; resume when headroom is empty and shared use +
//    resume_offset <= thr (or the queue's shared use is 0);
//  - static: pause when the queue's occupancy (reserve + shared) reaches
//    xoff — packets arriving once it has go to headroom; resume when headroom
//    is empty and the occupancy has fallen to xon or below.
//  (Dynamic mode charges the packet that crosses the threshold to headroom,
//  as HPCC's UpdateIngressAdmission does; static mode, as a Broadcom PG
//  limit, admits it to shared and sends what follows to headroom.)
//
// Contract: admit() and release() are called once per packet with the same
// arguments; the caller's PFC policy (models/flow_control/pfc.h) asks
// xoff_due() while it is not pausing a queue and xon_due() while it is.
// With checks on (enable_checks; sim/invariants.h, buffer_accounting) every
// admit() and release() checks the counts it touched: none negative, a
// queue's headroom within its headroom, everything within the buffer and
// the shared pool; a violation throws InvariantViolation.
#pragma once

#include <cstdint>
#include <vector>

#include "models/flow_control/link_flow_control.h"
#include "models/switch/switch_config.h"
#include "sim/simulation.h"

namespace rdmasim {

enum class DropReason : uint8_t {
  kNone,
  kHeadroom,     // lossless: headroom exhausted (the headroom was too small)
  kBuffer,       // shared pool full
  kEgressLimit,  // lossy: egress queue over its dynamic threshold
  kNoRoute,
  kWatchdog,  // PFC watchdog dropping a stormed queue
  kPortDown,  // InfiniBand: routed to a port whose cable is down
  // InfiniBand: waited at the head of its queue for the head-of-queue
  // lifetime; counted as hoq_discards, not in the per-reason drop counts.
  kHeadOfQueueLifetime,
  kCount
};
const char* to_string(DropReason r);

class Mmu {
 public:
  // headroom[port] is the headroom of each lossless priority of that port;
  // every port has `lanes` ingress and egress queues.
  Mmu(const SwitchConfig& cfg, uint32_t ports, std::vector<Bytes> headroom,
      uint8_t lanes = kEthernetPriorities);
  Mmu(const Mmu&) = delete;
  Mmu& operator=(const Mmu&) = delete;

  // Bytes charged for a frame of `frame_bytes` (whole cells).
  uint32_t charge(uint32_t frame_bytes) const {
    const uint32_t c = cfg_.cell;
    return c <= 1 ? frame_bytes : (frame_bytes + c - 1) / c * c;
  }

  // Admits a packet, or says why it is dropped (nothing is charged then).
  // Inline, so that the check's branch sits in the caller (whose arguments
  // are live anyway): a call to audit() inside the out-of-line admit_()
  // made it keep its arguments in saved registers, six pushes and pops and
  // two spills per packet with checks off.
  DropReason admit(uint32_t in_port, uint8_t in_prio, uint32_t out_port, uint8_t out_prio,
                   uint32_t bytes) {
    const DropReason d = admit_(in_port, in_prio, out_port, out_prio, bytes);
    if (checks_ && d == DropReason::kNone) [[unlikely]]
      audit(in_port, in_prio, out_port, out_prio);
    return d;
  }
  void release(uint32_t in_port, uint8_t in_prio, uint32_t out_port, uint8_t out_prio,
               uint32_t bytes) {
    release_(in_port, in_prio, out_port, out_prio, bytes);
    if (checks_) [[unlikely]]
      audit(in_port, in_prio, out_port, out_prio);
  }

  // Turns the buffer_accounting checks on; `owner` names the switch and
  // gives the time in a report.
  void enable_checks(const Component& owner) {
    owner_ = &owner;
    checks_ = true;
  }
  // The check itself (also for tests): throws InvariantViolation if a count
  // of (in_port, in_prio), (out_port, out_prio) or the totals is out of
  // bounds.
  // Cold: off the admit/release fast path, which only tests checks_.
  [[gnu::cold]] void audit(uint32_t in_port, uint8_t in_prio, uint32_t out_port,
                           uint8_t out_prio) const;

  // Starts fetching the counters of (port, prio) (a hint; changes nothing).
  void prefetch(uint32_t port, uint8_t prio) const { __builtin_prefetch(&q(port, prio), 1); }

  // Should ingress queue (port, prio) pause its upstream neighbour (XOFF)?
  // Only for lossless priorities.
  bool xoff_due(uint32_t port, uint8_t prio) const;
  // May a paused ingress queue let it go on (XON)?
  bool xon_due(uint32_t port, uint8_t prio) const;

  // The dynamic PFC threshold now, in bytes of a queue's shared use.
  int64_t pfc_threshold() const;
  // Occupancy of an ingress queue beyond its reserve: shared + headroom
  // (what the thresholds compare).
  int64_t ingress_occupancy(uint32_t port, uint8_t prio) const;
  int64_t ingress_bytes(uint32_t port, uint8_t prio) const {
    return q(port, prio).bytes + q(port, prio).headroom_used;
  }
  int64_t headroom_used(uint32_t port, uint8_t prio) const { return q(port, prio).headroom_used; }
  // The most headroom (port, prio) has ever held.
  int64_t peak_headroom_used(uint32_t port, uint8_t prio) const {
    return peak_headroom_[index(port, prio)];
  }
  int64_t egress_bytes(uint32_t port, uint8_t prio) const { return q(port, prio).egress; }
  Bytes headroom(uint32_t port) const { return headroom_[port]; }

  // Everything charged now, and the most ever charged.
  int64_t used() const { return used_; }
  int64_t peak_used() const { return peak_used_; }
  int64_t shared_pool() const { return pool_; }
  int64_t shared_used() const { return shared_used_; }

 private:
  DropReason admit_(uint32_t in_port, uint8_t in_prio, uint32_t out_port, uint8_t out_prio,
                    uint32_t bytes);
  void release_(uint32_t in_port, uint8_t in_prio, uint32_t out_port, uint8_t out_prio,
                uint32_t bytes);
  // One (port, priority): its ingress accounting and its egress count side
  // by side, two to a cache line, so admit() and release() touch one line
  // per side.
  struct alignas(32) Queue {
    int64_t bytes = 0;          // ingress: charged to reserve + shared
    int64_t headroom_used = 0;  // ingress: charged to headroom
    int64_t egress = 0;         // egress: charged to packets queued to leave here
  };
  // Queues are laid out port by port, a power of two apart (8 on Ethernet).
  size_t index(uint32_t port, uint8_t prio) const { return (size_t{port} << lane_shift_) + prio; }
  Queue& q(uint32_t port, uint8_t prio) { return q_[index(port, prio)]; }
  const Queue& q(uint32_t port, uint8_t prio) const { return q_[index(port, prio)]; }
  int64_t shared_of(const Queue& x) const { return x.bytes > reserve_ ? x.bytes - reserve_ : 0; }

  // ---- what every admit() and release() reads and writes: one cache line ----
  alignas(64) const SwitchConfig& cfg_;
  Queue* q_;  // queues_.data()
  int64_t reserve_;
  int64_t pool_;  // the shared pool: buffer - all reserve - all headroom
  int64_t shared_used_ = 0;
  int64_t used_ = 0;
  int64_t peak_used_ = 0;
  uint8_t lane_shift_;   // log2 of the queues a port takes in q_
  bool checks_ = false;  // enable_checks()
  // ---- the rest ----
  const Component* owner_ = nullptr;
  std::vector<Queue> queues_;
  std::vector<Bytes> headroom_;
  // Per (port, priority), apart from Queue (written only when headroom is
  // charged, which is rare, so it stays off admit()'s cache line).
  std::vector<int64_t> peak_headroom_;
};

}  // namespace rdmasim
