// PortFlowControl: the link-level flow control a port holds, PFC (pfc.h) on
// Ethernet ports or per-VL credits (credits.h) on InfiniBand ports, chosen
// per port before the run (use_credits(); the fabric builder decides from
// the port's transport). NICs and switches call this one class; it passes
// each call to the port's policy, so neither holder tests the transport.
//
// Contract:
//  1. use_credits() comes before attach(); without it the port runs PFC.
//  2. The calls are those of LinkFlowControlPolicy (link_flow_control.h),
//     widened to what both policies need: a packet's bytes where credits
//     count them (on_arrival, on_departure, on_transmit), the head packet of
//     each lane where the holder asks which lanes may send (sendable).
//  3. On a PFC port the calls are Pfc's, unchanged (RoCE results do not
//     move); the credit branch is one well-predicted test of a pointer.
#pragma once

#include <cstdint>
#include <memory>

#include "models/flow_control/credits.h"
#include "models/flow_control/pfc.h"

namespace rdmasim {

class PortFlowControl {
 public:
  explicit PortFlowControl(uint8_t lanes = kEthernetPriorities) : pfc_(lanes) {}
  PortFlowControl(const PortFlowControl&) = delete;
  PortFlowControl& operator=(const PortFlowControl&) = delete;

  void set_lanes(uint8_t lanes) {
    pfc_.set_lanes(lanes);
    if (credits_) credits_->set_lanes(lanes);
  }
  // The port runs credits with `params` instead of PFC (contract 1).
  void use_credits(const Credits::Params& params) {
    credits_ = std::make_unique<Credits>(pfc_.lanes());
    credit_params_ = params;
  }
  bool credited() const { return credits_ != nullptr; }
  void attach(Partition& ctx, ControlSink& sink, uint32_t port, uint32_t tag, BitRate rate,
              const Pfc::Params& pfc) {
    if (credits_) {
      credits_->attach(ctx, sink, port, tag, credit_params_);
    } else {
      pfc_.attach(ctx, sink, port, tag, rate, pfc);
    }
  }
  // The policy, for observers.
  const LinkFlowControl& policy() const {
    if (credits_) return *credits_;
    return pfc_;
  }
  const Pfc& pfc() const { return pfc_; }
  const Credits* credits() const { return credits_.get(); }
  uint8_t lanes() const { return pfc_.lanes(); }

  // ---- transmit ----
  // May `lane` send `p` now?
  bool may_send(uint8_t lane, const Packet& p, Time now) const {
    if (credits_) [[unlikely]]
      return credits_->may_send(lane, p, now);
    return !pfc_.paused(lane, now);
  }
  // May `lane` send a packet of `wire` bytes now (a packet not built yet)?
  bool may_send_wire(uint8_t lane, uint32_t wire, Time now) const {
    if (credits_) [[unlikely]]
      return lane >= credits_->lanes() ||
             credits_->blocks_sent(lane) + ib_credits(wire) <= credits_->limit(lane, now);
    return !pfc_.paused(lane, now);
  }
  // Is `lane` stopped now (PFC: paused; credits: none left at all)?
  bool paused(uint8_t lane, Time now) const {
    if (credits_) [[unlikely]]
      return credits_->blocked(lane, now) != BlockedBy::kNone;
    return pfc_.paused(lane, now);
  }
  // The lanes that may send their head packet at `now` (`head(lane)`: the
  // lane's first packet, or null; only the lanes of `queued`, those with
  // one, are asked), and in `stable_until` until when that holds without a
  // new control frame. With credits the answer depends on the heads, which
  // the holder changes: stable only for `now` itself.
  template <class Head>
  uint32_t sendable(Time now, Time& stable_until, uint32_t queued, Head&& head) const {
    if (credits_) [[unlikely]] {
      uint32_t mask = 0;
      for (uint32_t m = queued & ((1U << credits_->lanes()) - 1); m != 0; m &= m - 1) {
        const auto l = static_cast<uint8_t>(__builtin_ctz(m));
        const Packet* p = head(l);
        if (p != nullptr && credits_->may_send(l, *p, now)) mask |= 1U << l;
      }
      stable_until = now;
      return mask;
    }
    return pfc_.sendable(now, stable_until);
  }
  // The earliest time after `now` at which what is stopped now may go on
  // without a new control frame (a pause ends, a received grant becomes
  // usable); infinite if none.
  Time stops_change_at(Time now) const {
    if (credits_) [[unlikely]]
      return credits_->next_grant(now);
    Time until;
    pfc_.paused_mask(now, until);
    return until;
  }
  // When what stops `lane` at `now` may next change without a new frame
  // (infinite: only a frame can change it).
  Time blocked_until(uint8_t lane, Time now) const {
    if (credits_) [[unlikely]]
      return credits_->next_grant(lane, now);
    return pfc_.blocked_until(lane);
  }
  // `p` leaves on `lane`: credits spend its blocks.
  void on_transmit(uint8_t lane, const Packet& p) {
    if (credits_) [[unlikely]]
      credits_->on_transmit(lane, p);
  }
  // A control frame from the neighbour arrived at `now`; returns when the
  // holder should re-check what it may send.
  Time on_control_frame(const Packet& f, Time now) {
    if (credits_) [[unlikely]]
      return f.kind == PacketKind::kIbFlowControl ? credits_->on_control_frame(f, now)
                                                  : Time::infinite();
    return f.kind == PacketKind::kPfc ? pfc_.on_control_frame(f, now) : Time::infinite();
  }

  // ---- receive ----
  // A packet of `wire` bytes entered the holder's buffer on `lane`; PFC asks
  // the buffer `xoff_due()`.
  template <class Due>
  void on_arrival(uint8_t lane, uint32_t wire, Due&& xoff_due) {
    if (credits_) [[unlikely]] {
      credits_->on_arrival(lane, wire);
      return;
    }
    pfc_.on_arrival(lane, xoff_due);
  }
  // It left the buffer; PFC asks `xon_due()`. `in_pull`: it left in a pull
  // of another port of the holder, so credits may send the grant at once
  // (Credits::on_departure_in_pull).
  template <class Due>
  void on_departure(uint8_t lane, uint32_t wire, Due&& xon_due, bool in_pull = false) {
    if (credits_) [[unlikely]] {
      if (in_pull) {
        credits_->on_departure_in_pull(lane, wire);
      } else {
        credits_->on_departure(lane, wire);
      }
      return;
    }
    pfc_.on_departure(lane, xon_due);
  }
  // A packet arrived and was taken (or discarded) at once, never held: its
  // blocks are free again; PFC has nothing to do.
  void on_passed(uint8_t lane, uint32_t wire) {
    if (credits_) [[unlikely]] {
      credits_->on_arrival(lane, wire);
      credits_->on_departure(lane, wire);
    }
  }
  // PortXmitWait (credits only; Credits::note_waiting): whether `lane`'s
  // head packet waits for credits now, and the time it has so waited.
  // The lanes noted waiting (credits only).
  uint32_t waiting_mask() const { return credits_ ? credits_->waiting_mask() : 0; }
  // Credits only: received grants wait for tx_delay, so what a lane may
  // send can change with time alone.
  bool grants_pending() const { return credits_ && credits_->grants_pending(); }
  void note_waiting(uint8_t lane, bool waiting, Time now) {
    if (credits_) credits_->note_waiting(lane, waiting, now);
  }
  Time xmit_wait(uint8_t lane, Time now) const {
    return credits_ && lane < credits_->lanes() ? credits_->xmit_wait(lane, now) : Time::zero();
  }
  bool holding(uint8_t lane) const { return policy().holding(lane); }
  BlockedBy blocked(uint8_t lane, Time now) const { return policy().blocked(lane, now); }
  // The cable came back up after a failure. Credits start over as a link
  // initialisation does (Credits::restart_link); PFC keeps its state, a
  // pause simply running out as it would have.
  void on_link_up() {
    if (credits_) credits_->restart_link();
  }
  // A control frame this policy emitted was discarded unsent (credits: it
  // is not counted as sent).
  void discarded(const Packet& f) {
    if (credits_) credits_->discarded(f);
  }
  // PFC only: keep the neighbour paused until `until` (a storm fault).
  void hold(uint8_t lane, Time until) {
    if (!credits_) pfc_.hold(lane, until);
  }

 private:
  // First, beside Pfc's lane pointer: every call reads it.
  std::unique_ptr<Credits> credits_;
  Pfc pfc_;
  Credits::Params credit_params_;
};

}  // namespace rdmasim
