// Credit-based link flow control (IBA Vol 1 §7.9): the LinkFlowControl
// policy of InfiniBand ports.
//
// Each data VL of a receiving port has a buffer of `vl_buffer` bytes, counted
// in 64-byte blocks (credits). A data packet needs ib_credits(wire) blocks
// (models/proto/infiniband.h: LRH through ICRC, rounded up). The sender keeps
// per VL the total blocks it has sent (FCTBS) and the limit the receiver last
// granted (FCCL); it sends a packet only if FCTBS + its blocks <= FCCL, so no
// packet is ever dropped for lack of buffer. The receiver grants
// FCCL = blocks freed so far + its buffer: it sends a 6-byte flow-control
// packet per VL when blocks are freed (after `rx_delay`, gathering what is
// freed within `coalesce`) and, if `period` is finite, every `period`.
// Flow-control packets are link control: ahead of all data, never blocked.
// A received FCCL can be used `tx_delay` after the packet has arrived.
//
// Counts are absolute (64-bit), not the 12-bit modulo-4096 fields of the
// wire: with no loss of flow-control packets the two agree, and the model
// needs no wrap-around arithmetic.
//
// VL15 (management) is not flow-controlled (IBA C7-18): a lane at or above
// lanes() may always send and takes no credits. The links are initialized
// before the run: each sender starts with the receiver's whole buffer.
#pragma once

#include <cstdint>
#include <vector>

#include "models/flow_control/link_flow_control.h"
#include "models/proto/infiniband.h"
#include "sim/event.h"
#include "sim/packet.h"
#include "sim/partition.h"

namespace rdmasim {

// Builds a flow-control packet granting `fccl` blocks on `vl`.
template <class Maker>
PacketHandle make_ib_flow_control(Maker& maker, uint8_t vl, uint64_t fccl) {
  PacketHandle f = maker.make_packet();
  f->kind = PacketKind::kIbFlowControl;
  const HeaderSet h = InfinibandFormat::flow_control();
  f->headers = h.bits();
  f->wire_bytes = h.wire_bytes(0);
  f->fc_vl = vl;
  f->fc_fccl = fccl;
  return f;
}

class Credits final : public LinkFlowControl {
 public:
  struct Params {
    Bytes vl_buffer = Bytes::kib(64);  // receive buffer of each data VL
    Time rx_delay;                     // blocks freed -> flow-control packet queued
    Time tx_delay;                     // flow-control packet received -> credits usable
    Time coalesce;                     // gather freed blocks this long before sending
    Time period = Time::infinite();    // also send every VL's FCCL this often
  };

  explicit Credits(uint8_t lanes = kEthernetPriorities);
  Credits(const Credits&) = delete;
  Credits& operator=(const Credits&) = delete;
  void set_lanes(uint8_t lanes);

  // Binds the policy to port `port` of its holder (before the run); as
  // Pfc::attach.
  void attach(Partition& ctx, ControlSink& sink, uint32_t port, uint32_t tag, const Params& params);

  uint8_t lanes() const override { return static_cast<uint8_t>(lane_.size()); }
  uint64_t buffer_blocks() const { return buffer_blocks_; }

  // ---- transmit ----
  uint64_t limit(uint8_t lane, Time now) const {
    const Lane& l = lane_[lane];
    return now >= l.pending_from ? l.pending_limit : l.limit;
  }
  bool may_send(uint8_t lane, const Packet& p, Time now) const {
    if (lane >= lanes()) return true;  // VL15: not flow-controlled
    return lane_[lane].sent + ib_credits(p.wire_bytes) <= limit(lane, now);
  }
  // The lanes that have credits for at least one block at `now` (a packet
  // still needs may_send); `stable_until`: when a received grant takes
  // effect, else infinite.
  uint32_t sendable(Time now, Time& stable_until) const;
  Time blocked_until(uint8_t lane) const { return lane_[lane].pending_from; }
  // A packet left on `lane`: its blocks are spent.
  void on_transmit(uint8_t lane, const Packet& p) {
    if (lane < lanes()) lane_[lane].sent += ib_credits(p.wire_bytes);
  }
  // A flow-control packet arrived at `now`; returns when its credits can
  // be used (the holder re-checks then).
  Time on_control_frame(const Packet& f, Time now);
  uint64_t blocks_sent(uint8_t lane) const { return lane_[lane].sent; }
  BlockedBy blocked(uint8_t lane, Time now) const override {
    return lane < lanes() && lane_[lane].sent >= limit(lane, now) ? BlockedBy::kCredits
                                                                  : BlockedBy::kNone;
  }

  // ---- receive ----
  // A data packet of `wire` bytes entered the buffer on `lane` / left it.
  void on_arrival(uint8_t lane, uint32_t wire) {
    if (lane < lanes()) lane_[lane].occupied += ib_credits(wire);
  }
  void on_departure(uint8_t lane, uint32_t wire);
  // Blocks of `lane`'s buffer in use.
  uint64_t occupied(uint8_t lane) const { return lane_[lane].occupied; }
  // Buffer full: the neighbour has no credits left on `lane`.
  bool holding(uint8_t lane) const override { return lane_[lane].occupied >= buffer_blocks_; }
  uint64_t packets_sent() const { return packets_sent_; }

 private:
  struct Lane {
    // transmit
    uint64_t sent = 0;                     // FCTBS
    uint64_t limit = 0;                    // FCCL in effect
    uint64_t pending_limit = 0;            // a received FCCL ...
    Time pending_from = Time::infinite();  // ... usable from then
    // receive
    uint64_t occupied = 0;  // blocks in the buffer
    uint64_t freed = 0;     // blocks freed since the start (FCCL = freed + buffer)
    bool dirty = false;     // freed since the last flow-control packet
  };
  void send(uint8_t lane);
  void on_update();
  void on_period();

  std::vector<Lane> lane_;
  uint64_t buffer_blocks_ = 0;
  uint64_t packets_sent_ = 0;
  Partition* ctx_ = nullptr;
  ControlSink* sink_ = nullptr;
  uint32_t port_ = 0;
  Params params_;
  bool update_scheduled_ = false;
  MemberEvent<Credits, &Credits::on_update> update_;
  MemberEvent<Credits, &Credits::on_period> period_;
};

}  // namespace rdmasim
