// RdmaNic: a RoCE v2 RNIC with RC queue pairs, on one or more ports.
// docs/nic.md describes the model and every parameter.
//
// Contract:
//  1. The NIC builds a data packet only when its port's transmitter is free
//     (pull model, sim/node.h), so a packet's creation time is the start of
//     its transmission, and it holds no per-packet transmit queue for data.
//     Per port, next_packet() serves PFC frames first (never paused), then
//     ACK/NAK/CNP control packets by priority, then data (WRITE, SEND, READ
//     requests and READ responses) round robin over active QPs, one packet
//     per turn; an InfiniBand port with QPs on several VLs first picks the
//     VL by VL arbitration (IBA §7.6.9), then that VL's QPs take turns.
//     Nothing of a priority paused by a received PFC frame leaves.
//  2. Each QP is bound to one port when it is connected (by the
//     EgressSelector, if the NIC has several ports).
//  3. Verbs: WRITE, SEND (consumes a posted receive WQE at the responder; an
//     RNR NAK if none) and READ (ORD/IRD limited). Loss recovery is go-back-N
//     (IBA) or selective repeat (IRN), with the local ACK timeout, retry_cnt
//     and rnr_retry of IBA; a QP that runs out of retries enters the error
//     state and completes its work requests with an error status.
//  4. Completions go to the CompletionHandler of the QP they belong to (as
//     verbs bind a QP to its CQs; none: not reported): requester side when
//     the last packet is acknowledged (a READ: when its last response
//     arrives), responder side when an inbound SEND message is whole.
//  5. Timers are per QP (retransmission, RNR wait, congestion control) and
//     per port (PFC refresh, in the port's Pfc; receive-buffer drain); all
//     carry the NIC's id as their tag. A pause's end wakes the port through
//     Port::wake_at.
//  6. Congestion control: each QP has a slot for one CongestionControl
//     (models/cc/congestion_control.h), run in this NIC's events only. An
//     empty slot costs a null-pointer check per event it would raise. CNPs
//     are sent only by an algorithm; received ones are counted and handed to
//     the QP's algorithm; ECN-marked packets are counted either way.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/cc/congestion_control.h"
#include "models/flow_control/port_flow_control.h"
#include "models/flow_control/vl_arbiter.h"
#include "models/nic/indexed_event.h"
#include "models/nic/nic_config.h"
#include "models/nic/queue_pair.h"
#include "models/nic/rx_buffer.h"
#include "models/proto/transport_format.h"
#include "sim/node.h"
#include "sim/ring.h"

namespace rdmasim {

// Chooses the port a connection's packets leave by, for NICs with several
// ports (a GPU's NIC and NVLink, dual-plane NICs). Implemented by routing.
class EgressSelector {
 public:
  virtual ~EgressSelector() = default;
  virtual uint32_t egress_port(uint32_t src_host, uint32_t dst_host, uint64_t flow_hash) const = 0;
  // Whether any port leads to dst_host (egress_port() then picks among them).
  virtual bool reachable(uint32_t src_host, uint32_t dst_host) const {
    (void)src_host;
    (void)dst_host;
    return true;
  }
};

// A completion queue, in effect: where a QP's completions go (IBA §11.4).
class CompletionHandler {
 public:
  virtual ~CompletionHandler() = default;
  virtual void on_send_completion(uint32_t host, const Completion& c) = 0;
  virtual void on_receive_completion(uint32_t host, const Completion& c) = 0;
};

struct NicCounters {
  uint64_t data_packets_sent = 0;  // WRITE/SEND packets and READ responses, incl. retransmissions
  uint64_t read_requests_sent = 0;
  uint64_t acks_sent = 0;
  uint64_t naks_sent = 0;  // sequence-error NAKs
  uint64_t rnr_naks_sent = 0;
  uint64_t data_packets_received = 0;
  uint64_t out_of_sequence = 0;  // packets that arrived ahead of the expected PSN
  uint64_t duplicates = 0;       // packets that arrived behind it
  int64_t payload_bytes_delivered = 0;
  // Congestion notification: beside the per-packet counts above, on the
  // line a received packet writes anyway.
  uint64_t ecn_marked_received = 0;  // CE packets received: data, READ requests, READ responses
  uint64_t cnps_sent = 0;
  uint64_t cnps_received = 0;
  uint64_t messages_completed = 0;
  uint64_t retransmitted_packets = 0;
  uint64_t timeouts = 0;
  uint64_t qp_errors = 0;
  uint64_t pfc_frames_received = 0;
  uint64_t pfc_frames_sent = 0;
  uint64_t rx_buffer_drops = 0;
  // Of those, drops of a lossless priority (set_lossless) that are expected
  // (sim/invariants.h, lossless_drop): the room above rx_xoff, less what the
  // other priorities held, below the automatic headroom; or after the
  // neighbour's PFC watchdog (action forward) sent ignoring the pause.
  uint64_t lossless_drops_headroom_below_automatic = 0;
  uint64_t lossless_drops_watchdog_forward = 0;
  uint64_t ecn_echo_acks_sent = 0;  // ACKs and NAKs carrying an ECN echo
  uint64_t ecn_echo_acks_received = 0;
};

class RdmaNic : public Node, private ControlSink {
 public:
  // `host` is the NIC's address (host id); `format` frames its packets (RoCE
  // v2: models/proto/roce_v2.h) on every port not given another by
  // set_port_format(); `cfg` and the formats outlive the NIC.
  RdmaNic(Simulation& sim, std::string name, uint32_t host, const NicConfig& cfg,
          const TransportFormat& format);
  // Port `port` frames its packets with `format` (a GPU's NVLink:
  // models/proto/nvlink.h); before setup(). A format without link-level
  // flow control leaves the port without PFC or receive-buffer model.
  void set_port_format(uint32_t port, const TransportFormat& format);
  const TransportFormat& port_format(uint32_t port) const {
    return port < formats_.size() && formats_[port] != nullptr ? *formats_[port] : format_;
  }

  uint32_t host() const { return host_; }
  const NicConfig& config() const { return cfg_; }
  const NicCounters& counters() const { return counters_; }
  // The routes a multi-port NIC picks its QPs' ports by. A later call
  // (routes recomputed after a fault) moves each connected QP to the port
  // the new routes give it, as a bonded NIC moves traffic off a failed port.
  void set_egress_selector(const EgressSelector* s);
  // The priorities the fabric keeps lossless (bit p: priority p) and the
  // largest frame a neighbour sends: a receive-buffer drop of such a
  // priority is checked as a switch's is (lossless_drop). Before setup.
  void set_lossless(uint8_t mask, uint32_t max_frame) {
    lossless_mask_ = mask;
    max_frame_ = max_frame;
  }

  // Creates an unconnected QP and returns its QPN. Its completions, send and
  // receive, go to `completions` (none if null).
  uint32_t create_qp(CompletionHandler* completions = nullptr);
  // Routes QP `qpn`'s completions to `h` from now on.
  void set_completion_handler(uint32_t qpn, CompletionHandler* h) { slot(qpn).completions = h; }
  // Connects QP `qpn` to `remote_qpn` on host `remote_host`. `flow_hash` is
  // the connection's ECMP entropy (the RoCE v2 UDP source port).
  void connect_qp(uint32_t qpn, uint32_t remote_host, uint32_t remote_qpn, uint32_t flow_hash);
  QueuePair& qp(uint32_t qpn) { return qps_[qpn - kFirstQpn]->qp; }
  const QueuePair& qp(uint32_t qpn) const { return qps_[qpn - kFirstQpn]->qp; }
  size_t num_qps() const { return qps_.size(); }
  // With checks on (sim/invariants.h, flow_bytes): payload bytes of the data
  // packets (WRITE/SEND data, READ responses) QP `qpn` put on the wire, and
  // of those that arrived at this NIC for it (before its receive buffer).
  // Zero with checks off.
  struct WirePayload {
    int64_t sent = 0;
    int64_t received = 0;
  };
  WirePayload wire_payload(uint32_t qpn) const {
    const size_t i = qpn - kFirstQpn;
    return i < wire_payload_.size() ? wire_payload_[i] : WirePayload{};
  }
  // Posts a work request on a connected QP.
  void post(uint32_t qpn, const WorkRequest& wr);
  // Posts `n` receive WQEs on QP `qpn` (in addition to receive_queue_depth).
  void post_receives(uint32_t qpn, int64_t n);
  // Receive WQEs QP `qpn` has posted and not consumed, now.
  int64_t receives_available(uint32_t qpn) const;
  // The link-level flow control of a port (PFC or credits).
  const PortFlowControl& flow_control(uint32_t port) const { return ports_[port]->fc; }
  // Port `port` runs credit-based flow control with `params` instead of PFC
  // (an InfiniBand port); before setup().
  // With `qos` (kept by the caller), the port also arbitrates the VLs of its
  // QPs' data by `qos->vlarb` (models/flow_control/vl_arbiter.h).
  void use_credits(uint32_t port, const Credits::Params& params, const IbQos* qos = nullptr);
  // The receive buffer of a port.
  const RxBuffer& rx_buffer(uint32_t port) const { return ports_[port]->rx; }
  // Fault: from now until `until` the NIC keeps every port's peer paused on
  // `priority` (pause frames of 65535 quanta, refreshed every half pause),
  // as a NIC with a stalled receive pipeline does (a "PFC storm"); at
  // `until` it sends a resume unless its receive buffer still needs the pause.
  void start_pfc_storm(uint8_t priority, Time until);
  // Caps QP `qpn`'s rate at `rate` (0: line rate): each packet may start only
  // wire bytes / rate after the previous one. The traffic generator sets it
  // for a flow with a `rate`. A congestion-control algorithm's rate is kept
  // apart; the QP paces at the lower of the two.
  void set_qp_rate(uint32_t qpn, BitRate rate);
  // InfiniBand: QP `qpn`'s data and ACKs travel on service level `sl`
  // (0..15; its address vector's SL), instead of data_priority and
  // ack_priority.
  void set_qp_sl(uint32_t qpn, uint8_t sl);
  // Puts `cc` in QP `qpn`'s congestion-control slot (the QP connected, its
  // port cabled) and starts it (on_start); the algorithm it replaces, and
  // its rate and window, are dropped; nullptr empties the slot. Not from
  // inside the QP's own algorithm.
  void set_congestion_control(uint32_t qpn, std::unique_ptr<CongestionControl> cc);
  CongestionControl* congestion_control(uint32_t qpn) const { return qp(qpn).cc; }

  void setup() override;
  void receive(uint32_t port, PacketHandle p) override;
  PacketHandle next_packet(uint32_t port) override;
  Time next_pull(uint32_t port, Time frame_end) const override;
  Time pfc_response_delay() const override { return cfg_.pfc_response_delay; }
  void on_link_up(uint32_t port) override;
  // InfiniBand: a port whose cable is down sends nothing (IBA §7.2: no data
  // packets while the link is down) and waits for no credits (PortXmitWait);
  // what it has waits for the cable. Ethernet ports send into the dead
  // cable, where frames are lost.
  void on_link_down(uint32_t port) override;

  // QPNs 0 and 1 are reserved (IBA §10.2.4: QP0/QP1 special QPs).
  static constexpr uint32_t kFirstQpn = 2;

 private:
  // ---- ports, PFC, receive buffer (rdma_nic.cpp) ----
  void on_drain(uint32_t port);
  // ControlSink: a PFC frame the port's policy sends.
  void emit_link_control(uint32_t port, PacketHandle frame) override;
  void dispatch(PacketHandle p);
  void activate(uint32_t qpn);
  // Queues an ACK/NAK/CNP on the control ring of its priority (behind PFC).
  void queue_control(uint32_t port, PacketHandle&& c, bool wake);
  // Sets the class fields every packet of `kind` carries.
  void classify(Packet& p, PacketKind kind, const QueuePair& q) const;
  PacketHandle make(PacketKind kind, RcOpcode op, uint32_t payload, const QueuePair& q);

  // ---- requester (rdma_nic_requester.cpp) ----
  bool can_send(const QueuePair& q) const;
  PacketHandle build_request(QueuePair& q);
  PacketHandle build_segment(QueuePair& q, size_t wqe_index, uint64_t seq, uint64_t end);
  void on_ack(PacketHandle p);
  void process_ack(QueuePair& q, const Packet& p);
  void on_read_response(PacketHandle p);
  void acknowledge_to(QueuePair& q, uint64_t target, bool* clamped);
  void advance_una(QueuePair& q, uint64_t new_una);
  void skip_sacked(QueuePair& q);
  void normalize_retx(QueuePair& q);
  void after_progress(QueuePair& q, uint64_t old_una);
  void rewind(QueuePair& q, uint64_t seq);
  void start_recovery(QueuePair& q, uint64_t from, uint64_t high);
  void apply_sack(QueuePair& q, uint64_t base, uint64_t bits);
  bool retry_or_fail(QueuePair& q, WcStatus status);
  void arm_timer(QueuePair& q);
  void on_retransmit_timer(uint32_t qpn);
  void on_rnr_timer(uint32_t qpn);
  void fail_qp(QueuePair& q, WcStatus status);
  void complete_front(QueuePair& q, WcStatus status);
  Time retransmit_timeout(int attempt) const;

  // ---- responder (rdma_nic_responder.cpp) ----
  void on_request(PacketHandle p);
  void deliver(QueuePair& q, const ReorderBuffer::Slot& s, uint32_t src);
  void send_control(QueuePair& q, uint8_t syndrome);
  // `wake` is false from inside next_packet(), whose port pulls again anyway.
  void emit_control(QueuePair& q, uint8_t syndrome, bool wake);
  PacketHandle build_read_response(QueuePair& q);
  bool take_receive(QueuePair& q);

  // ---- congestion control and CNPs (rdma_nic_cc.cpp) ----
  struct QpSlot;
  void on_cc_timer(uint32_t qpn);
  void update_pacing(QpSlot& s);
  void update_window(QpSlot& s);
  void send_cnp(QueuePair& q);
  void on_cnp(PacketHandle p);
  void on_ecn_marked(QpSlot& s, const Packet& p);
  void cc_sent(QpSlot& s, const Packet& p);
  void cc_ack(QpSlot& s, const Packet& p, uint64_t old_una, int64_t old_bytes);
  void cc_ack_out(QueuePair& q, Packet& a);

  // A QP's congestion-control slot, when filled: the algorithm, and the
  // context it acts through.
  class QpCc final : public CcContext {
   public:
    QpCc(RdmaNic& nic, uint32_t qpn, std::unique_ptr<CongestionControl> algo);
    Time now() const override;
    BitRate line_rate() const override;
    uint32_t mtu() const override;
    void set_rate(BitRate rate) override;
    void set_window(Bytes window) override;
    void schedule_timer(Time at) override;
    void cancel_timer() override;
    void send_cnp() override;
    void echo_ecn() override;

   private:
    friend class RdmaNic;
    RdmaNic& nic_;
    uint32_t qpn_;
    std::unique_ptr<CongestionControl> algo_;
    IndexedEvent<RdmaNic, &RdmaNic::on_cc_timer> timer_;
    bool echo_pending_ = false;  // the next ACK/NAK carries an ECN echo
    // The packet being timed for an RTT sample (CcAck::rtt).
    bool timing_ = false;
    uint64_t timed_seq_ = 0;
    Time timed_sent_;
  };

  struct QpSlot {
    QpSlot(RdmaNic* nic, uint32_t qpn, uint32_t host, uint32_t tag)
        : qp(qpn, host),
          retransmit(nic, qpn, EventClass::kTimer, tag),
          rnr(nic, qpn, EventClass::kTimer, tag) {}
    QueuePair qp;
    bool active = false;          // in its port's round-robin ring
    bool responses_turn = false;  // alternates READ responses with requests
    int64_t extra_receives = 0;
    CompletionHandler* completions = nullptr;  // the QP's CQ, in effect
    std::unique_ptr<QpCc> cc;                  // congestion-control slot (qp.cc: its algorithm)
    IndexedEvent<RdmaNic, &RdmaNic::on_retransmit_timer> retransmit;
    IndexedEvent<RdmaNic, &RdmaNic::on_rnr_timer> rnr;
  };
  struct PortState {
    PortState(RdmaNic* nic, uint32_t index, uint32_t tag, uint8_t lanes)
        : control(lanes), fc(lanes), drain(nic, index, EventClass::kDelivery, tag) {
      rx.set_lanes(lanes);
    }
    Ring<uint32_t> active;  // QPNs with something to send, in round-robin order
    // Lanes the port's active QPs send data on (a bit per lane; more than
    // one only on InfiniBand, with QPs on several VLs), and how many per lane.
    uint16_t data_lanes = 0;
    std::array<uint16_t, kMaxLanes> active_on_lane{};
    void add_active(uint8_t lane) {
      if (active_on_lane[lane]++ == 0) data_lanes |= static_cast<uint16_t>(1U << lane);
    }
    void drop_active(uint8_t lane) {
      if (--active_on_lane[lane] == 0) data_lanes &= static_cast<uint16_t>(~(1U << lane));
    }
    // InfiniBand: VL arbitration among the VLs of its QPs' data (null: QPs
    // in turn).
    std::unique_ptr<VlArbiter> arb;
    std::vector<Ring<PacketHandle>> control;  // ACK/NAK/CNP by priority (lane)
    uint16_t control_mask = 0;                // bit p: control[p] is not empty
    Ring<PacketHandle> pfc_out;               // link control frames to send (PFC or credits)
    bool link_down = false;                   // InfiniBand: the cable is down (on_link_down)
    PortFlowControl fc;                       // PFC or credits on this port's cable, both ways
    // The largest data packet of the port's format: what credits must cover
    // before one is built (a WRITE-only with immediate carries the most).
    uint32_t max_data_wire = 0;
    bool link_flow_control = true;  // the port's format runs PFC or credits (not NVLink)
    RxBuffer rx;
    IndexedEvent<RdmaNic, &RdmaNic::on_drain> drain;
    // lossless_drop: the automatic headroom of the port (the bytes that may
    // still come once a pause is sent), how long it takes to fill at line
    // rate, and per priority when a frame sent ignoring a pause last came in
    // (a storm forwarded on one priority excuses no drop on another).
    Bytes auto_headroom;
    Time pause_ignored_span;
    std::array<Time, kEthernetPriorities> pause_ignored_at = infinite_times();
    static std::array<Time, kEthernetPriorities> infinite_times() {
      std::array<Time, kEthernetPriorities> a;
      a.fill(Time::infinite());
      return a;
    }
  };
  // A frame of a lossless priority the receive buffer dropped: counted if
  // expected, else (with checks on) an InvariantViolation.
  [[gnu::cold]] void lossless_drop(uint32_t port_index, const Packet& p, Bytes bytes);

  QpSlot& slot(uint32_t qpn) { return *qps_[qpn - kFirstQpn]; }

  uint32_t host_;
  const NicConfig& cfg_;
  const TransportFormat& format_;
  int ord_;  // effective ORD: min(max_rd_atomic, max_dest_rd_atomic)
  Time base_timeout_;
  std::vector<std::unique_ptr<QpSlot>> qps_;
  std::vector<std::unique_ptr<PortState>> ports_;
  // PortXmitWait (credited ports): tells each VL whether it waits for credits now.
  [[gnu::cold]] void note_credit_waits(PortState& ps, Time now);
  int choose_vl(PortState& ps, Time now, bool with_control);
  NicCounters counters_;
  bool checks_ = false;        // sim().checks(), read at setup
  uint8_t lossless_mask_ = 0;  // set_lossless()
  uint32_t max_frame_ = 0;
  std::vector<WirePayload> wire_payload_;  // by QPN - kFirstQpn, with checks on
  WirePayload& wire_payload_of(uint32_t qpn) {
    const size_t i = qpn - kFirstQpn;
    if (i >= wire_payload_.size()) wire_payload_.resize(i + 1);
    return wire_payload_[i];
  }
  // The counts above, out of line and cold: with checks off the packet
  // paths only test checks_.
  [[gnu::cold]] void count_sent(uint32_t qpn, uint32_t payload);
  [[gnu::cold]] void count_received(const Packet& p);
  const EgressSelector* egress_ = nullptr;
  uint64_t next_message_id_ = 0;
  std::vector<const Credits::Params*> credits_;  // per port: null = PFC (use_credits)
  const IbQos* ib_qos_ = nullptr;                // InfiniBand ports' VL arbitration
  // Per port, the framing of its packets (set_port_format; from setup() one
  // entry per port): make() reads the QP's port's.
  std::vector<const TransportFormat*> formats_;
};

// Inline: every ACK and NAK goes through it.
inline void RdmaNic::queue_control(uint32_t port_index, PacketHandle&& c, bool wake) {
  const uint8_t prio = c->priority;
  PortState& ps = *ports_[port_index];
  ps.control[prio].push_back(std::move(c));
  ps.control_mask |= static_cast<uint16_t>(1U << prio);
  if (!wake) return;
  // Behind a pause (ACKs may share the data priority) a pull now would find
  // nothing: pull when the pause ends, or earlier if a resume frame comes.
  if (const Time now = ctx().now(); ps.fc.paused(prio, now)) {
    const Time until = ps.fc.blocked_until(prio, now);
    if (!until.is_infinite()) port(port_index).wake_at(until);
  } else {
    port(port_index).wake();
  }
}

}  // namespace rdmasim
