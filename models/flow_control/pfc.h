// Priority-based flow control (IEEE 802.1Qbb; frame format IEEE 802.3 Annex
// 31D).
//
// A PFC frame is a 64-byte MAC control frame (opcode 0x0101) with a
// class-enable vector and eight pause times in quanta of 512 bit times at the
// link's rate. A receiving MAC stops the enabled priorities for the time
// given, counted from when it acts on the frame (the frame's full arrival plus
// its response delay); a pause time of zero resumes at once. PFC frames are
// MAC control frames: they bypass the data queues and are never paused.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>

#include "models/proto/roce_v2.h"
#include "sim/packet.h"
#include "sim/simulation.h"

namespace rdmasim {

inline constexpr int kNumPriorities = 8;
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
  for (int p = 0; p < kNumPriorities; ++p)
    f->pfc_quanta[p] = ((class_enable >> p) & 1) ? quanta : 0;
  return f;
}

// The transmit side of one port: which priorities a received PFC frame has
// paused, and until when.
class PauseState {
 public:
  // A PFC frame was fully received at `now`. It takes effect after
  // `response`; each enabled priority is paused for its quanta from then.
  // Returns the time the port should re-check what it may send (the end of
  // the nearest pause, or the moment a resume takes effect).
  Time on_frame(const Packet& f, Time now, Time response, BitRate rate) {
    const Time effective = now + response;
    Time recheck = Time::infinite();
    for (int p = 0; p < kNumPriorities; ++p) {
      if (((f.pfc_class_enable >> p) & 1) == 0) continue;
      if (f.pfc_quanta[p] == 0) {
        // Resume: the pause ends when the frame takes effect (or stands, if
        // it has already ended).
        if (until_[p] > effective) until_[p] = effective;
        if (from_[p] > until_[p]) from_[p] = until_[p];
        recheck = std::min(recheck, effective);
      } else {
        // A refresh while paused extends the pause; otherwise it starts anew.
        if (!(from_[p] <= effective && effective < until_[p])) from_[p] = effective;
        until_[p] = effective + pfc_pause_time(f.pfc_quanta[p], rate);
        ++pauses_received_;
        recheck = std::min(recheck, until_[p]);
      }
    }
    return recheck;
  }

  bool paused(int priority, Time now) const {
    return from_[priority] <= now && now < until_[priority];
  }
  // The priorities paused at `now` (bit p = priority p), and in `stable_until`
  // the earliest later time at which that can change without a new frame.
  uint8_t paused_mask(Time now, Time& stable_until) const {
    uint8_t mask = 0;
    Time next = Time::infinite();
    for (int p = 0; p < kNumPriorities; ++p) {
      if (from_[p] > now) {
        next = std::min(next, from_[p]);
      } else if (now < until_[p]) {
        mask |= static_cast<uint8_t>(1U << p);
        next = std::min(next, until_[p]);
      }
    }
    stable_until = next;
    return mask;
  }
  // Paused at `now` or about to be (a frame received, response pending).
  Time paused_until(int priority) const { return until_[priority]; }
  uint64_t pauses_received() const { return pauses_received_; }

 private:
  std::array<Time, kNumPriorities> from_{};
  std::array<Time, kNumPriorities> until_{};
  uint64_t pauses_received_ = 0;
};

}  // namespace rdmasim
