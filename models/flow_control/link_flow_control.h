// LinkFlowControl: the link-level flow control of one port, shared by NICs
// and switches. PFC (IEEE 802.1Qbb, pfc.h) is one policy; InfiniBand's
// per-VL credits (IBA vol. 1, 7.9) will be another.
//
// A port has `lanes()` lanes (Ethernet: 8 priorities; InfiniBand: up to 16
// VLs). Per lane a policy answers for both directions of the cable:
//  - transmit: may this port send a frame on the lane now (the neighbour
//    has not paused it; it has the credits), and when can that change
//    without a new control frame; a control frame from the neighbour
//    arrived (on_control_frame);
//  - receive: a frame arrived at, or left, this port's buffer on the lane
//    (on_arrival / on_departure), and the buffer says whether the neighbour
//    should stop or may go on (PFC: XOFF/XON thresholds; credits: blocks
//    freed);
//  - control frames to emit, handed to the port's ControlSink, which sends
//    them ahead of all data (they are never blocked);
//  - for the deadlock detector: is this lane blocked now, and by whom.
//
// Contract:
//  1. Holders keep the concrete policy class (declared `final`) and call it
//     directly, so the per-packet calls inline; the virtual interface below
//     is for observers (the deadlock detector, samplers, tests). A policy
//     satisfies the LinkFlowControlPolicy concept.
//  2. Every call is made from an event of the holder's partition; control
//     frames are made from, and timers scheduled in, that partition.
//  3. A policy's timers carry the holder's tag (attach()), in
//     EventClass::kTimer; control frames it receives take effect in
//     the order they arrive.
#pragma once

#include <concepts>
#include <cstdint>

#include "sim/packet.h"
#include "sim/units.h"

namespace rdmasim {

// Ethernet ports carry the eight 802.1Q priorities (PCP 0..7).
inline constexpr uint8_t kEthernetPriorities = 8;
// The most lanes a port can have (InfiniBand: VL0..VL15).
inline constexpr uint8_t kMaxLanes = 16;

// Why a lane cannot send.
enum class BlockedBy : uint8_t {
  kNone,
  kPause,    // the neighbour at the cable's far end paused it (PFC)
  kCredits,  // the neighbour has not returned enough credits (InfiniBand)
};

// Where a policy puts the control frames it emits: the port's MAC control
// queue, served before any data and never blocked.
class ControlSink {
 public:
  virtual void emit_link_control(uint32_t port, PacketHandle frame) = 0;

 protected:
  ~ControlSink() = default;
};

class LinkFlowControl {
 public:
  virtual ~LinkFlowControl() = default;
  virtual uint8_t lanes() const = 0;
  // Why `lane` cannot send now (kNone: it can).
  virtual BlockedBy blocked(uint8_t lane, Time now) const = 0;
  // This port is holding its neighbour back on `lane` (PFC: it sent XOFF).
  virtual bool holding(uint8_t lane) const = 0;
};

// What a holder calls on a policy `P` per packet (statically).
template <class P>
concept LinkFlowControlPolicy = std::derived_from<P, LinkFlowControl> &&
    requires(P& p, const P& cp, uint8_t lane, const Packet& f, Time now, Time& until,
             bool (*due)()) {
  { cp.may_send(lane, f, now) } -> std::same_as<bool>;
  { cp.sendable(now, until) } -> std::same_as<uint32_t>;
  { cp.blocked_until(lane) } -> std::same_as<Time>;
  { p.on_control_frame(f, now) } -> std::same_as<Time>;
  p.on_arrival(lane, due);
  p.on_departure(lane, due);
};

}  // namespace rdmasim
