// Credit-based link flow control (IBA Vol 1 §7.9): the LinkFlowControl
// policy of InfiniBand ports.
//
// Each data VL of a receiving port has a buffer of `vl_buffer` bytes, counted
// in 64-byte blocks (credits). A data packet needs ib_credits(wire) blocks
// (models/proto/infiniband.h: LRH through ICRC, rounded up). The sender keeps
// per VL the total blocks it has sent (FCTBS) and the limit the receiver last
// granted (FCCL); it sends a packet only if FCTBS + its blocks <= FCCL, so no
// packet is ever dropped for lack of buffer.
//
// The receiver keeps ABR, the blocks it has received (adjusted), and grants
// FCCL = ABR + the free blocks of its buffer, at most 2048 beyond ABR (the
// 12-bit fields of the wire cannot express a wider window, §7.9.4; a VL
// buffer above 128 KiB therefore gains nothing). Every flow-control packet
// also carries its sender's FCTBS for that VL, and a receiver sets its ABR to
// it: a data packet lost to a bit error was counted by its sender and not by
// its receiver, so its blocks are missing from the grants only until the
// sender's next flow-control packet resynchronises ABR (with a finite
// `period`; without one a lost packet's blocks stay lost on that VL).
//
// It sends a 6-byte flow-control packet per VL when its grant grows (after
// `rx_delay`, gathering what changes within `coalesce`) and, if `period` is
// finite, every `period`. Flow-control packets are link control: ahead of
// all data, never blocked. Each received FCCL becomes usable `tx_delay`
// after its own arrival (grants in flight keep their order in a FIFO).
//
// Counts are absolute (64-bit), not the 12-bit modulo-4096 fields of the
// wire: the two agree, and the model needs no wrap-around arithmetic.
//
// Shared buffer: a port may also have `shared_buffer` bytes that its data
// VLs share beyond each one's own `vl_buffer` (static split when 0). A VL
// commits what it holds plus the credits its sender may still use (the
// largest FCCL it may act on, less ABR); its commitment beyond its own
// buffer is its claim on the pool, and a grant never lets the claims exceed
// the pool, so nothing is ever dropped. A VL claims pool space only while
// busy (it holds packets, or has received some since the last update looked
// at it or within `shared_idle`), at most the unclaimed pool and an equal
// share among the busy VLs.
//
// An idle VL's claim is taken back when another VL is busy, by a handshake
// (IBA leaves shared buffers to the implementation; this is the model's):
// the receiver sends a lowered FCCL (ABR + its own buffer) marked with a
// revocation number; the sender obeys on arrival (no older, larger grant
// may be used after it) and answers with a flow-control packet on that VL
// saying it obeyed. Until the answer arrives the receiver still counts the
// old grant as committed; the answer travels behind every packet sent
// under the old grant, so when it arrives they have all been counted in
// ABR and the claim is only what the lowered grant allows. While a
// revocation is unanswered every flow-control packet for the VL repeats
// it, so with a finite `period` a lost one is sent again. Busy includes
// having received a data packet within `shared_idle`: a receiver that frees
// packets at once finds a streaming VL between two arrivals at almost every
// update, and neither its share nor its claim should flicker with that.
//
// VL15 (management) is not flow-controlled (IBA C7-18): a lane at or above
// lanes() may always send and takes no credits. The links are initialized
// before the run: each sender starts with the receiver's whole VL buffer
// (within the 2048-block window), and none of the pool.
#pragma once

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <vector>

#include "models/flow_control/link_flow_control.h"
#include "models/proto/infiniband.h"
#include "sim/event.h"
#include "sim/packet.h"
#include "sim/partition.h"
#include "sim/ring.h"

namespace rdmasim {

// The widest credit window a flow-control packet can grant beyond ABR: its
// fields count modulo 4096 blocks, and the receiver never advertises more
// than half of that (IBA §7.9.4).
inline constexpr uint64_t kIbMaxCreditWindow = 2048;

// Builds a flow-control packet granting `fccl` blocks on `vl`, from a port
// that has sent `fctbs` blocks on it.
// `revoke` (nonzero) marks a lowered FCCL with its revocation number;
// `obeyed` is the last revocation on `vl` the sending port obeyed.
template <class Maker>
PacketHandle make_ib_flow_control(Maker& maker, uint8_t vl, uint64_t fccl, uint64_t fctbs,
                                  uint32_t revoke = 0, uint32_t obeyed = 0) {
  PacketHandle f = maker.make_packet();
  f->kind = PacketKind::kIbFlowControl;
  const HeaderSet h = InfinibandFormat::flow_control();
  f->headers = h.bits();
  f->wire_bytes = h.wire_bytes(0);
  f->fc_vl = vl;
  f->fc_fccl = fccl;
  f->fc_fctbs = fctbs;
  f->fc_revoke = revoke;
  f->fc_obeyed = obeyed;
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
    Bytes shared_buffer;               // shared by the data VLs beyond their vl_buffer
    Time shared_idle = Time::us(10);   // a VL idle this long may lose its pool claim
    // The port's data VLs (fabric.infiniband.op_vls): periodic packets go
    // for these alone, not for lanes a port has beyond them.
    uint8_t data_vls = kEthernetPriorities;
  };

  explicit Credits(uint8_t lanes = kEthernetPriorities);
  Credits(const Credits&) = delete;
  Credits& operator=(const Credits&) = delete;
  void set_lanes(uint8_t lanes);

  // Binds the policy to port `port` of its holder (before the run); as
  // Pfc::attach.
  void attach(Partition& ctx, ControlSink& sink, uint32_t port, uint32_t tag, const Params& params);

  // Kept beside the lanes, not computed from the vector: a Lane's size is
  // not a power of two, and every credit check asks.
  uint8_t lanes() const override { return lanes_; }
  uint64_t buffer_blocks() const { return buffer_blocks_; }

  // ---- transmit ----
  // FCCL in effect at `now`: the last grant received at least tx_delay ago.
  uint64_t limit(uint8_t lane, Time now) const {
    const Lane& l = lane_[lane];
    uint64_t limit = l.limit;
    for (size_t i = 0; i < l.pending.size() && l.pending[i].usable_at <= now; ++i)
      limit = l.pending[i].fccl;
    return limit;
  }
  bool may_send(uint8_t lane, const Packet& p, Time now) const {
    if (lane >= lanes()) return true;  // VL15: not flow-controlled
    return lane_[lane].sent + ib_credits(p.wire_bytes) <= limit(lane, now);
  }
  // When a received grant of any lane next takes effect after `now`
  // (infinite: none waiting).
  Time next_grant(Time now) const {
    if (pending_grants_ == 0) return Time::infinite();  // tx_delay 0: always
    Time next = Time::infinite();
    for (uint32_t i = 0; i < lane_.size(); ++i)
      next = std::min(next, next_grant(static_cast<uint8_t>(i), now));
    return next;
  }
  // When the next received grant of `lane` takes effect (infinite: none
  // waiting); after `now`, in next_grant.
  Time blocked_until(uint8_t lane) const {
    const Lane& l = lane_[lane];
    return l.pending.empty() ? Time::infinite() : l.pending.front().usable_at;
  }
  Time next_grant(uint8_t lane, Time now) const {
    const Lane& l = lane_[lane];
    for (size_t i = 0; i < l.pending.size(); ++i) {
      if (l.pending[i].usable_at > now) return l.pending[i].usable_at;
    }
    return Time::infinite();
  }
  // A packet left on `lane`: its blocks are spent.
  void on_transmit(uint8_t lane, const Packet& p) {
    if (lane < lanes()) lane_[lane].sent += ib_credits(p.wire_bytes);
  }
  // A flow-control packet arrived at `now`; returns when its credits can
  // be used (the holder re-checks then).
  Time on_control_frame(const Packet& f, Time now);
  uint64_t blocks_sent(uint8_t lane) const { return lane_[lane].sent; }
  // PortXmitWait per VL (IBA ch. 16, PortXmitWait / PortVLXmitWait): the
  // time `lane` had a packet to send that it could not send for lack of
  // credits. The holder says, whenever it chooses a frame and when a packet
  // reaches an empty lane, whether the lane's head waits for credits now.
  void note_waiting(uint8_t lane, bool waiting, Time now) {
    if (lane >= lanes()) return;
    Lane& l = lane_[lane];
    if (waiting == !l.wait_since.is_infinite()) return;
    if (waiting) {
      l.wait_since = now;
      waiting_ |= 1U << lane;
    } else {
      l.xmit_wait += now - l.wait_since;
      l.wait_since = Time::infinite();
      waiting_ &= ~(1U << lane);
    }
  }
  // The lanes whose head waits for credits (as last noted).
  uint32_t waiting_mask() const { return waiting_; }
  // Received grants wait for tx_delay: what may be sent changes with time.
  bool grants_pending() const { return pending_grants_ != 0; }
  // The time `lane` has waited for credits up to `now`.
  Time xmit_wait(uint8_t lane, Time now) const {
    const Lane& l = lane_[lane];
    return l.wait_since.is_infinite() ? l.xmit_wait : l.xmit_wait + (now - l.wait_since);
  }
  BlockedBy blocked(uint8_t lane, Time now) const override {
    return lane < lanes() && lane_[lane].sent >= limit(lane, now) ? BlockedBy::kCredits
                                                                  : BlockedBy::kNone;
  }

  // ---- receive ----
  // A data packet of `wire` bytes entered the buffer on `lane` / left it.
  void on_arrival(uint8_t lane, uint32_t wire) {
    if (lane >= lanes()) return;
    const uint64_t blocks = ib_credits(wire);
    lane_[lane].occupied += blocks;
    lane_[lane].abr += blocks;
    if (shared_blocks_ != 0) [[unlikely]] {
      lane_[lane].last_arrival = ctx_->now();
      lane_[lane].arrived = true;
      if (lane_[lane].occupied > buffer_blocks_) note_pool_use();
    } else if (lane_[lane].occupied > buffer_blocks_) [[unlikely]] {
      ++overfull_;  // a static split: beyond its own buffer is beyond the port's
    }
  }
  // Arrivals that found the port's buffer full (a VL beyond its own buffer
  // while the pool was used up, or, in a static split, beyond its own
  // buffer): zero whatever the traffic, since grants never promise more
  // than there is; tests check it.
  uint64_t overfull() const { return overfull_; }
  // The most blocks of the pool that packets held at once.
  uint64_t peak_pool_use() const { return peak_pool_use_; }
  void on_departure(uint8_t lane, uint32_t wire);
  // on_departure() from within the holder's transmit decision (a pull) on
  // another port: with no delay before the update (rx_delay and coalesce
  // 0), no pool and no update pending, the flow-control packet that the
  // update would send right after this event is sent now instead, saving
  // the event (nothing this port's update reads changes in between).
  void on_departure_in_pull(uint8_t lane, uint32_t wire) {
    if (!emit_in_pull_ || update_scheduled_ || lane >= lanes()) {
      on_departure(lane, wire);
      return;
    }
    release(lane, wire);
    if (grant(lane) > lane_[lane].granted) send(lane);
  }
  // Blocks of `lane`'s buffer in use.
  uint64_t occupied(uint8_t lane) const { return lane_[lane].occupied; }

  // ---- both directions ----
  // The cable came back up and the link was initialised again (a link
  // brought up goes Initialize, flow-control packets exchanged, Arm,
  // Active): FCTBS and ABR start again from zero, the sender may send
  // nothing until the receiver's first flow-control packet grants its free
  // blocks, and this port sends that packet for each data VL now. What was
  // on the cable when it failed, and what was sent into it while it was
  // down, is lost: without this the blocks of those packets, and the grants
  // lost with them, would stay missing from the VLs for good. Packets still
  // in this port's buffer keep their blocks until they leave.
  void restart_link();
  // A flow-control packet this port emitted was discarded before it was
  // sent (its holder's restart): not counted among those sent.
  void discarded(const Packet& f) {
    --packets_sent_;
    if (f.fc_vl < lanes()) --lane_[f.fc_vl].fc_sent;
  }
  // Blocks received on `lane` (ABR, resynchronised to the neighbour's FCTBS).
  uint64_t blocks_received(uint8_t lane) const { return lane_[lane].abr; }
  // The FCCL this port grants on `lane` now (never below the last granted,
  // which only a revocation lowers).
  uint64_t grant(uint8_t lane) const {
    const Lane& l = lane_[lane];
    return std::max(l.granted, l.abr + std::min(room(lane), kIbMaxCreditWindow));
  }
  // No more credit can be granted on `lane` now (its buffer, and its share
  // of any pool, are committed).
  bool holding(uint8_t lane) const override { return room(lane) == 0; }
  // Blocks of the shared pool the VLs have claimed.
  uint64_t shared_claimed() const;
  // Revocations of `lane`'s claim this port has sent, and whether the last
  // is still unanswered.
  uint64_t revocations(uint8_t lane) const { return lane_[lane].revocations; }
  bool revoking(uint8_t lane) const { return lane_[lane].revoking; }
  // The last revocation on `lane` this port, as sender, obeyed.
  uint32_t obeyed(uint8_t lane) const { return lane_[lane].obeyed; }
  uint64_t packets_sent() const { return packets_sent_; }
  // Flow-control packets this port sent for `lane`.
  uint64_t packets_sent(uint8_t lane) const { return lane_[lane].fc_sent; }

 private:
  struct Grant {
    uint64_t fccl = 0;  // a received FCCL ...
    Time usable_at;     // ... usable from then
  };
  struct Lane {
    // transmit
    uint64_t sent = 0;                   // FCTBS
    uint64_t limit = 0;                  // FCCL in effect (before `pending`)
    Ring<Grant> pending;                 // received grants not yet usable, oldest first
    Time wait_since = Time::infinite();  // its head has waited for credits since then
    Time xmit_wait;                      // time waited for credits before wait_since
    uint32_t obeyed = 0;                 // the last revocation number obeyed (0: none)
    // receive
    uint64_t occupied = 0;     // blocks in the buffer
    uint64_t abr = 0;          // blocks received (adjusted to the sender's FCTBS)
    uint64_t granted = 0;      // FCCL of the last flow-control packet sent
    uint64_t promised = 0;     // the largest FCCL the sender may still use (>= granted)
    uint64_t fc_sent = 0;      // flow-control packets sent for this VL
    uint64_t abr_granted = 0;  // ABR when an update last looked at this lane
    // Revocation numbers run 1, 2, ..., wrapping past 0 (which means none):
    // an answer matches only the last one sent, and one is answered before
    // the next is sent, so a number is never confused with an older one.
    uint32_t revoked = 0;      // revocation number of the last lowered FCCL sent
    bool revoking = false;     // ... and its sender has not answered yet
    uint64_t revocations = 0;  // lowered FCCLs sent
    Time last_arrival;         // of a data packet (kept only with a pool) ...
    bool arrived = false;      // ... if there was one
  };
  // Blocks `lane` may still be granted beyond what it holds: its own buffer
  // and, while it is busy, its share of the pool (pool_share).
  uint64_t room(uint8_t lane) const {
    const Lane& l = lane_[lane];
    uint64_t cap = buffer_blocks_;
    if (shared_blocks_ > 0 && busy(l)) [[unlikely]]
      cap += pool_share(lane);
    return cap > l.occupied ? cap - l.occupied : 0;
  }
  // Holds packets, or has received some since an update last looked at it,
  // or within shared_idle (a streaming VL whose packets a receiver frees at
  // once is often found between two arrivals; kept only with a pool).
  bool busy(const Lane& l) const {
    return l.occupied > 0 || l.abr > l.abr_granted ||
           (l.arrived && ctx_->now() - l.last_arrival < params_.shared_idle);
  }
  // The pool `lane` may claim: what the other VLs have not claimed, and at
  // most an equal share among the busy VLs (so a VL that claimed the pool
  // first gives it up to the others as its own packets leave).
  uint64_t pool_share(uint8_t lane) const;
  // Blocks held by `lane` or that its sender may still send.
  uint64_t committed(const Lane& l) const {
    return l.occupied + (l.promised > l.abr ? l.promised - l.abr : 0);
  }
  uint64_t claimed_except(uint8_t lane) const;
  void note_pool_use();
  void request_update();
  // A packet of `wire` bytes left `lane`'s buffer: its blocks are free.
  void release(uint8_t lane, uint32_t wire) {
    Lane& l = lane_[lane];
    assert(l.occupied >= ib_credits(wire));
    l.occupied -= ib_credits(wire);
  }
  void send(uint8_t lane);
  void emit(uint8_t lane);
  void revoke(uint8_t lane);
  void on_update();
  void on_period();

  // What a credit check, a flow-control packet and a departure read first,
  // the rest after (the object's third line was read on every check).
  std::vector<Lane> lane_;
  uint8_t lanes_ = 0;  // lane_.size()
  bool update_scheduled_ = false;
  bool emit_in_pull_ = false;    // on_departure_in_pull may send at once
  uint32_t waiting_ = 0;         // lanes noted waiting (wait_since finite)
  uint32_t pending_grants_ = 0;  // received grants not yet usable, all lanes
  uint32_t changed_ = 0;  // lanes that freed blocks or resynchronised ABR since the last update
  uint32_t answer_ = 0;   // lanes whose revocation this port obeyed and must answer
  uint32_t port_ = 0;
  uint64_t buffer_blocks_ = 0;
  uint64_t shared_blocks_ = 0;
  uint64_t packets_sent_ = 0;
  Partition* ctx_ = nullptr;
  ControlSink* sink_ = nullptr;
  uint64_t overfull_ = 0;
  uint64_t peak_pool_use_ = 0;
  Params params_;
  MemberEvent<Credits, &Credits::on_update> update_;
  MemberEvent<Credits, &Credits::on_period> period_;
};

}  // namespace rdmasim
