// CongestionControl: the per-QP congestion-control slot of the RoCE v2 NIC
// (models/nic/rdma_nic.h). An algorithm (DCQCN, HPCC, TIMELY, DCTCP, ...) is
// an object attached to one QP; the NIC tells it what happens to that QP and
// it answers with a sending rate and/or a window. docs/architecture.md
// ("Adding a congestion-control algorithm") says how to write one.
//
// Contract:
//  1. One algorithm object per QP, owned by the QP's NIC
//     (RdmaNic::set_congestion_control). A QP without one costs a null-pointer
//     check where an event would be raised: no virtual call, no allocation.
//  2. Every call runs inside an event of the QP's NIC, in the NIC's
//     partition. The algorithm acts only through the CcContext it is handed
//     (its own QP), which is valid for the duration of the call; it never
//     touches other nodes, other QPs or the simulation.
//  3. Both ends of a connection may carry one: a QP is the reaction point for
//     the data it sends (WRITE/SEND packets as requester, READ responses as
//     responder) and the notification point for the data it receives.
//  4. Outputs. set_rate(r): the QP paces its packets at r (0: no limit); the
//     pacing rate is the lower of r and the flow's own cap (QueuePair::rate),
//     recomputed when either changes, never per packet. set_window(w): the
//     requester sends a new packet only while its bytes in flight, the PSNs
//     in [una, next_seq) times the MTU, are below w (0: no limit); READ
//     responses are not windowed (the responder gets no ACKs for them).
//  5. Order within one NIC event: on_ecn_marked runs before the ACK that
//     the same packet triggers is built (on_ack_out), so an echo requested
//     there rides on that ACK; on_ack runs after the transport has acted on
//     the ACK (WQEs completed, the QP re-activated).
//  6. Timer: one per QP. schedule_timer replaces a pending wake-up. A timer
//     that keeps re-arming keeps a run from going idle (runs that stop when
//     their traffic completes are not affected).
//  7. Needs: an algorithm that does not listen to every packet sent, every
//     ACK received or every ACK sent says so (set_needs), and the NIC skips
//     those calls and the work that prepares them (RTT timing, CcAck). The
//     other calls always come.
//  8. Outputs (docs/congestion-control.md, "Outputs"): an algorithm may
//     report the state the trace samples (CcState: its rate, target rate,
//     alpha, window; what it lacks stays -1) on every change, through the
//     sink observe() attaches, and count its decreases (decreases()) and
//     the times it lifted its limit (releases()). Attaching
//     nothing costs nothing; a sink is called from the QP's NIC's events
//     (contract 2), so a recorder keeps per-QP state written only there.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

#include "sim/packet.h"
#include "sim/partition.h"
#include "sim/units.h"

namespace rdmasim {

// What an algorithm may read of, and do to, its QP.
class CcContext {
 public:
  virtual Time now() const = 0;
  // Line rate of the port the QP sends by.
  virtual BitRate line_rate() const = 0;
  // Path MTU: payload bytes per packet.
  virtual uint32_t mtu() const = 0;
  // The algorithm's sending rate; 0 lifts its limit (contract 4). If the QP
  // is waiting for its pacing time, that time becomes the last packet's start
  // plus its wire bytes at the new pacing rate.
  virtual void set_rate(BitRate rate) = 0;
  // The algorithm's window in bytes; 0 lifts it (contract 4).
  virtual void set_window(Bytes window) = 0;
  // Wakes the algorithm (on_timer) at `at` (not in the past), replacing a
  // pending wake-up; cancel_timer drops it.
  virtual void schedule_timer(Time at) = 0;
  virtual void cancel_timer() = 0;
  // Sends a CNP (RoCE v2, IBA Annex A17.9.3) to the peer QP, on the CNP
  // priority, behind PFC like an ACK.
  virtual void send_cnp() = 0;
  // The next ACK or NAK this QP sends carries an ECN echo (kFlagEcnEcho).
  virtual void echo_ecn() = 0;

 protected:
  ~CcContext() = default;
};

// A data packet the QP started to send (a WRITE/SEND packet, or a READ
// response), at ctx.now().
struct CcSent {
  uint32_t psn = 0;
  uint32_t wire_bytes = 0;
  uint32_t payload_bytes = 0;
  bool retransmission = false;
  bool read_response = false;
};

// An ACK or NAK the requester received, after the NIC processed it.
struct CcAck {
  uint32_t psn = 0;  // the AETH's PSN: last acknowledged (ACK) or expected (NAK)
  uint8_t syndrome = 0;
  uint64_t acked_packets = 0;  // PSNs newly known done (una's advance)
  int64_t acked_bytes = 0;     // payload bytes of those PSNs
  Bytes in_flight;             // PSNs in [una, next_seq) times the MTU, now
  bool ecn_echo = false;
  const PacketExt* ext = nullptr;  // the ACK's extension area, if the responder wrote one
  // From a packet sent when none was being timed to this ACK, if it
  // acknowledged that packet and nothing was retransmitted meanwhile (Karn).
  std::optional<Time> rtt;
};

// A packet with ECN CE (ecn == 3) the QP received: data (WRITE/SEND), a READ
// request, or a READ response (at the requester).
struct CcMarked {
  uint32_t psn = 0;
  uint32_t wire_bytes = 0;
  uint8_t opcode = 0;  // BTH opcode
};

// An ACK or NAK the responder is about to send.
class CcAckOut {
 public:
  CcAckOut(Partition& part, Packet& ack, bool echo) : ecn_echo(echo), part_(part), ack_(ack) {}
  uint8_t syndrome() const { return ack_.aeth_syndrome; }
  uint32_t psn() const { return ack_.psn; }
  // Whether it carries an ECN echo: echo_ecn() since the last one sets it.
  bool ecn_echo;
  // Its extension area (sim/packet.h), for the requester's algorithm.
  PacketExt& ext() { return part_.packet_ext(ack_); }

 private:
  Partition& part_;
  Packet& ack_;
};

// The state of a QP's algorithm as the outputs sample it (the trace's
// /cc_samples): each algorithm fills the fields it has and leaves the others
// at -1. DCQCN: rate_bps RC, target_bps RT, alpha; HPCC would add its
// window, TIMELY its rate.
struct CcState {
  Time time;               // when it changed
  double rate_bps = -1;    // the sending rate the algorithm sets (DCQCN: RC)
  double target_bps = -1;  // a target rate (DCQCN: RT)
  double alpha = -1;       // DCQCN's alpha (congestion estimate, 0..1)
  int64_t window = -1;     // a window, bytes (0: no limit)
};
using CcStateSink = std::function<void(const CcState&)>;

class CongestionControl {
 public:
  // The per-packet calls an algorithm listens to (contract 7).
  enum Need : uint8_t {
    kNeedSent = 1,    // on_packet_sent
    kNeedAck = 2,     // on_ack, and the RTT samples it carries
    kNeedAckOut = 4,  // on_ack_out, and echo_ecn() riding on the ACK
    kNeedAll = 7,
  };
  virtual ~CongestionControl() = default;
  bool needs(Need n) const { return (needs_ & n) != 0; }
  // ---- outputs (contract 8) ----
  // Calls `sink` with the state after each change, from the QP's NIC's
  // events; false (and `sink` dropped) if the algorithm has no such state.
  virtual bool observe(CcStateSink sink) {
    (void)sink;
    return false;
  }
  // Decreases of its rate or window so far (DCQCN: rate cuts).
  virtual uint64_t decreases() const { return 0; }
  // Times it lifted its limit altogether so far (DCQCN: rate limiter
  // releases, models/cc/dcqcn.h contract 5).
  virtual uint64_t releases() const { return 0; }

  // Attached to a connected QP: set an initial rate or window here.
  virtual void on_start(CcContext& ctx) { (void)ctx; }
  virtual void on_packet_sent(CcContext& ctx, const CcSent& sent) {
    (void)ctx;
    (void)sent;
  }
  virtual void on_ack(CcContext& ctx, const CcAck& ack) {
    (void)ctx;
    (void)ack;
  }
  virtual void on_cnp(CcContext& ctx) { (void)ctx; }
  // Decides whether a CNP follows (send_cnp, with the algorithm's own rate
  // limit, e.g. DCQCN's min_time_between_cnps) or an echo (echo_ecn).
  virtual void on_ecn_marked(CcContext& ctx, const CcMarked& marked) {
    (void)ctx;
    (void)marked;
  }
  virtual void on_ack_out(CcContext& ctx, CcAckOut& ack) {
    (void)ctx;
    (void)ack;
  }
  virtual void on_timer(CcContext& ctx) { (void)ctx; }

 protected:
  void set_needs(uint8_t needs) { needs_ = needs; }

 private:
  uint8_t needs_ = kNeedAll;
};

}  // namespace rdmasim
