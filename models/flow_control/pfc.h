// Priority-based flow control (IEEE 802.1Qbb; frame format IEEE 802.3 Annex
// 31D): the LinkFlowControl policy of Ethernet ports, NICs' and switches'.
//
// A PFC frame is a 64-byte MAC control frame (opcode 0x0101) with a
// class-enable vector and eight pause times in quanta of 512 bit times at the
// link's rate. A receiving MAC stops the enabled priorities for the time
// given, counted from when it acts on the frame (the frame's full arrival plus
// its response delay); a pause time of zero resumes at once. PFC frames are
// MAC control frames: they bypass the data queues and are never paused.
//
// Per port, Pfc keeps both directions of its cable:
//  - transmit: which lanes the neighbour's frames have paused, and until when;
//  - receive: which lanes this port is pausing (XOFF sent, on the holder's
//    buffer verdict: on_arrival / on_departure), refreshing each pause after
//    `refresh` of its length while it stands, and pauses held regardless of
//    the buffer until a time (hold(): a NIC's PFC storm, a fault).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "models/flow_control/link_flow_control.h"
#include "models/proto/roce_v2.h"
#include "sim/event.h"
#include "sim/packet.h"
#include "sim/partition.h"

namespace rdmasim {

inline constexpr uint16_t kPfcMaxQuanta = 0xFFFF;

// Duration of `quanta` pause quanta (512 bit times each) at `rate`.
inline Time pfc_pause_time(uint32_t quanta, BitRate rate) {
  return Bytes(static_cast<int64_t>(quanta) * 64) / rate;
}

// Builds a PFC frame that pauses (quanta > 0) or resumes (quanta == 0) the
// priorities in `class_enable` (bit p = priority p). `maker` is the
// Partition (or, in tests, the Simulation) that owns the new packet.
template <class Maker>
PacketHandle make_pfc_frame(Maker& maker, uint16_t class_enable, uint16_t quanta) {
  PacketHandle f = maker.make_packet();
  f->kind = PacketKind::kPfc;
  const HeaderSet h = RoceV2Format::pfc();
  f->headers = h.bits();
  f->wire_bytes = h.wire_bytes(0);
  f->pfc_class_enable = class_enable;
  for (int p = 0; p < kEthernetPriorities; ++p)
    f->pfc_quanta[p] = ((class_enable >> p) & 1) ? quanta : 0;
  return f;
}

class Pfc final : public LinkFlowControl {
 public:
  struct Params {
    uint16_t quanta = kPfcMaxQuanta;  // pause time of every XOFF frame sent
    double refresh = 0.5;             // re-send XOFF after this fraction of its pause
    Time response_delay;              // this MAC acts on a received frame after this
  };

  explicit Pfc(uint8_t lanes = kEthernetPriorities);
  Pfc(const Pfc&) = delete;
  Pfc& operator=(const Pfc&) = delete;
  // Sizes the port's lanes (at most 8: a PFC frame carries eight); before attach().
  void set_lanes(uint8_t lanes);

  // Binds the policy to port `port` of its holder (before the run): frames
  // are made and the refresh timer (tag `tag`) scheduled in `ctx`; frames
  // to send go to `sink`; pause times are counted at the port's `rate`.
  void attach(Partition& ctx, ControlSink& sink, uint32_t port, uint32_t tag, BitRate rate,
              const Params& params);

  uint8_t lanes() const override { return static_cast<uint8_t>(lane_.size()); }

  // ---- transmit: what the neighbour's frames allow ----
  bool paused(uint8_t lane, Time now) const {
    const Lane& l = lane_[lane];
    return l.from <= now && now < l.until;
  }
  bool may_send(uint8_t lane, const Packet& p, Time now) const {
    (void)p;
    return !paused(lane, now);
  }
  // The lanes paused at `now` (bit l = lane l), and in `stable_until` the
  // earliest later time at which that can change without a new frame.
  uint32_t paused_mask(Time now, Time& stable_until) const {
    uint32_t mask = 0;
    Time next = Time::infinite();
    for (uint32_t i = 0; i < lane_.size(); ++i) {
      const Lane& l = lane_[i];
      if (l.from > now) {
        next = std::min(next, l.from);
      } else if (now < l.until) {
        mask |= 1U << i;
        next = std::min(next, l.until);
      }
    }
    stable_until = next;
    return mask;
  }
  // The lanes that may send at `now`; `stable_until` as for paused_mask().
  uint32_t sendable(Time now, Time& stable_until) const {
    return ~paused_mask(now, stable_until) & ((1U << lanes()) - 1);
  }
  // When a pause of `lane` (standing, or received and pending) ends.
  Time blocked_until(uint8_t lane) const { return lane_[lane].until; }
  // A PFC frame was fully received at `now`. It takes effect after the
  // response delay; each enabled priority is paused for its quanta from
  // then. Returns when the holder should re-check what it may send (the end
  // of the nearest pause, or the moment a resume takes effect).
  Time on_control_frame(const Packet& f, Time now);
  uint64_t pauses_received() const { return pauses_received_; }
  BlockedBy blocked(uint8_t lane, Time now) const override {
    return paused(lane, now) ? BlockedBy::kPause : BlockedBy::kNone;
  }

  // ---- receive: what this port asks of its neighbour ----
  bool holding(uint8_t lane) const override { return lane_[lane].pausing; }
  // A frame entered the holder's buffer on `lane`: XOFF if the buffer says
  // so (`xoff_due()`, asked only while the lane is not paused).
  template <class Due>
  void on_arrival(uint8_t lane, Due&& xoff_due) {
    if (!lane_[lane].pausing && xoff_due()) xoff(lane);
  }
  // A frame left it: XON if the buffer says so (asked only while pausing).
  template <class Due>
  void on_departure(uint8_t lane, Due&& xon_due) {
    if (lane_[lane].pausing && xon_due()) xon(lane);
  }
  void xoff(uint8_t lane);
  void xon(uint8_t lane);
  // Keeps the neighbour paused on `lane` until `until` whatever the buffer
  // says (frames of the full pause time, refreshed); then resumes it unless
  // the buffer still needs the pause.
  void hold(uint8_t lane, Time until);

 private:
  struct Lane {
    Time from;                           // transmit: paused from ...
    Time until;                          // ... until (a received frame)
    Time refresh_at = Time::infinite();  // receive: re-send XOFF then
    Time hold_until;                     // a hold (storm) in progress until
    bool pausing = false;                // receive: XOFF sent on the buffer's verdict
  };
  void send(uint8_t lane, uint16_t quanta);
  void on_refresh();

  std::vector<Lane> lane_;
  uint64_t pauses_received_ = 0;
  Partition* ctx_ = nullptr;
  ControlSink* sink_ = nullptr;
  uint32_t port_ = 0;
  BitRate rate_;
  Params params_;
  MemberEvent<Pfc, &Pfc::on_refresh> refresh_;
};
static_assert(LinkFlowControlPolicy<Pfc>);

}  // namespace rdmasim
