// EgressHook: an algorithm that reads a switch's egress queue and annotates
// or marks the packets passing through it: an INT record per hop (HPCC, Li
// et al. SIGCOMM 2019, §4.1), FECN (InfiniBand congestion control, IBTA
// vol. 1 annex A10), a queue average. (The switch's own RED/ECN marking,
// models/switch/ecn_marker.h, is called directly, not as a hook.)
//
// Contract:
//  1. A hook is registered on a switch before setup() for a set of ports and
//     priorities (Switch::add_egress_hook) and runs for every packet of
//     those egress queues at the points it names: on_enqueue when the packet
//     joins the queue (after the pipeline latency, before it is queued), and
//     on_dequeue when it leaves it (the scheduler has picked it and it is
//     about to start transmission; its buffer is not yet released). PFC
//     frames are not queued and pass no hook; packets the PFC watchdog drops
//     from a queue pass no on_dequeue.
//  2. At each point the hooks of a queue run in registration order, after
//     the switch's ECN marker (if enabled), so a hook sees the ECN field as
//     marked.
//  3. A hook runs in the switch's event, in its partition: it may change the
//     packet's fields and its extension area (EgressView::ext), and its own
//     state; it touches no other node. One hook object may serve several
//     switches, which in a partitioned run call it from several threads.
//  4. The view is valid during the call only. What it reports excludes the
//     packet itself (see each accessor), and is computed when asked for, so
//     a hook pays only for what it reads.
//  5. Cost: a switch with no hooks pays one predictable branch per point
//     (shared with its ECN marker's); with hooks, one index into a
//     per-(port, priority) table and a virtual call per hook and packet;
//     nothing allocates.
#pragma once

#include <cstddef>
#include <cstdint>

#include "models/switch/egress_queues.h"
#include "models/switch/mmu.h"
#include "sim/link.h"
#include "sim/node.h"
#include "sim/packet.h"
#include "sim/partition.h"
#include "sim/units.h"

namespace rdmasim {

// One egress queue (port, priority) of a switch, as a hook sees it.
class EgressView {
 public:
  EgressView(const Node& sw, const Mmu& mmu, const EgressQueues& queues, uint32_t port,
             uint8_t priority, uint32_t accounted)
      : sw_(sw),
        mmu_(mmu),
        queues_(queues),
        port_(port),
        priority_(priority),
        accounted_(accounted) {}

  // The switch (a Switch, models/switch/switch.h).
  const Node& node() const { return sw_; }
  uint32_t port() const { return port_; }
  uint8_t priority() const { return priority_; }
  Time now() const { return sw_.ctx().now(); }
  // The port's link rate (what HPCC's INT record calls B).
  BitRate rate() const { return link().rate(); }
  // Bytes of this queue as the MMU counts them (whole cells of the frame,
  // without preamble and inter-frame gap), this packet excluded; packets
  // still in the pipeline towards the queue count. What RED compares.
  int64_t queue_bytes() const { return mmu_.egress_bytes(port_, priority_) - accounted_; }
  // Packets waiting in the queue, this packet excluded.
  size_t queue_packets() const { return queues_.packets(priority_); }
  // Wire bytes (preamble and inter-frame gap included) of every frame the
  // port has started to send, PFC frames included: at on_dequeue, everything
  // sent before this packet (HPCC's txBytes).
  int64_t tx_bytes() const { return link().counters().wire_bytes; }
  // The port's eight queues (another priority's length; the port's total).
  const EgressQueues& queues() const { return queues_; }
  const Mmu& mmu() const { return mmu_; }
  // The packet's extension area (sim/packet.h contract 4), from the
  // switch's partition.
  PacketExt& ext(Packet& p) const { return sw_.ctx().packet_ext(p); }

 private:
  const Link& link() const { return *sw_.port(port_).link(); }

  const Node& sw_;
  const Mmu& mmu_;
  const EgressQueues& queues_;
  uint32_t port_;
  uint8_t priority_;
  uint32_t accounted_;  // the packet's own MMU charge
};

class EgressHook {
 public:
  // The points a hook runs at (a mask).
  enum Points : uint8_t { kAtEnqueue = 1, kAtDequeue = 2 };

  explicit EgressHook(uint8_t points) : points_(points) {}
  EgressHook(const EgressHook&) = delete;
  EgressHook& operator=(const EgressHook&) = delete;
  virtual ~EgressHook() = default;

  uint8_t points() const { return points_; }
  virtual void on_enqueue(const EgressView& q, Packet& p) {
    (void)q;
    (void)p;
  }
  virtual void on_dequeue(const EgressView& q, Packet& p) {
    (void)q;
    (void)p;
  }
  // A hook at kAtDequeue is also told of a queued packet taken out unsent
  // (the PFC watchdog's drop, an InfiniBand head-of-queue discard or dead
  // port), after it left: `q` shows the queue without it.
  virtual void on_discard(const EgressView& q, Packet& p) {
    (void)q;
    (void)p;
  }

 private:
  uint8_t points_;
};

}  // namespace rdmasim
