// An RC queue pair (IBA Vol 1 ch. 9): its requester half (send queue, PSNs,
// acknowledgement and retransmission state) and its responder half (expected
// PSN, receive queue, READ responses, out-of-order placement). The protocol
// itself is run by the NIC (rdma_nic_requester.cpp, rdma_nic_responder.cpp);
// this is the state it keeps per QP, with the sequence bookkeeping.
//
// Contract:
//  1. A QP is created by its NIC and connected once, out of band (as the
//     RDMA connection manager would), to one remote QP.
//  2. Work requests complete in posting order (IBA §10.8.3).
//  3. Each work request owns a range of PSNs fixed when it is posted: a WRITE
//     or SEND of n packets n PSNs, a READ of n response packets n PSNs
//     (its request carries the first; IBA §9.7.1). Sequence numbers are 64-bit
//     inside, 24-bit on the wire; both halves start at PSN 0.
//  4. `una` is the oldest PSN not yet known to be done (ACKed, or a READ
//     response received); every PSN below it is done.
#pragma once

#include <algorithm>
#include <cstdint>

#include "models/nic/psn_bitmap.h"
#include "models/nic/reorder_buffer.h"
#include "models/nic/work_request.h"
#include "sim/ring.h"
#include "sim/units.h"

namespace rdmasim {

class CongestionControl;

// Packets a message of `bytes` occupies at path MTU `mtu` (at least one).
constexpr uint64_t packets_for(int64_t bytes, uint32_t mtu) {
  return bytes <= 0 ? 1 : static_cast<uint64_t>((bytes + mtu - 1) / mtu);
}

class QueuePair {
 public:
  QueuePair(uint32_t qpn, uint32_t host) : qpn_(qpn), host_(host) {}

  uint32_t qpn() const { return qpn_; }
  uint32_t host() const { return host_; }
  uint32_t remote_host() const { return remote_host_; }
  uint32_t remote_qpn() const { return remote_qpn_; }
  uint32_t flow_hash() const { return flow_hash_; }
  uint32_t port() const { return port_; }
  bool connected() const { return connected_; }

  // Joins this QP to its peer; `port` is the NIC port its packets leave by.
  void connect(uint32_t remote_host, uint32_t remote_qpn, uint32_t flow_hash, uint32_t port) {
    remote_host_ = remote_host;
    remote_qpn_ = remote_qpn;
    flow_hash_ = flow_hash;
    port_ = port;
    connected_ = true;
  }
  // Routes recomputed after a fault move the QP to another NIC port.
  void move_to_port(uint32_t port) { port_ = port; }

  // ---- requester ----
  struct Wqe {
    WorkRequest wr;
    uint64_t first_seq = 0;  // its PSN range [first_seq, end_seq)
    uint64_t end_seq = 0;
    int64_t first_byte = 0;  // payload bytes of the WQEs posted before it
    uint64_t message_id = 0;
    Time posted;
    Time first_tx;
    bool started = false;  // a first packet (or READ request) has been sent
  };
  Ring<Wqe>& wqes() { return wqes_; }
  const Ring<Wqe>& wqes() const { return wqes_; }

  void post(const WorkRequest& wr, uint64_t message_id, Time now, uint32_t mtu) {
    Wqe w;
    w.wr = wr;
    w.first_seq = post_seq_;
    w.end_seq = post_seq_ + packets_for(wr.bytes, mtu);
    w.message_id = message_id;
    w.posted = now;
    w.first_byte = post_bytes_;
    post_seq_ = w.end_seq;
    post_bytes_ += wr.bytes;
    wqes_.push_back(w);
  }
  // Payload bytes of the PSNs below una (while not in the error state: its
  // flushed WQEs are gone).
  int64_t bytes_below_una(uint32_t mtu) const {
    if (wqes_.empty()) return post_bytes_;
    const Wqe& w = wqes_.front();
    return w.first_byte +
           std::min<int64_t>(w.wr.bytes, static_cast<int64_t>(una - w.first_seq) * mtu);
  }
  // Index into wqes() of the WQE holding `seq` (wqes().size() if none).
  size_t find_wqe(uint64_t seq) const {
    for (size_t i = 0; i < wqes_.size(); ++i) {
      if (seq < wqes_[i].end_seq) return seq >= wqes_[i].first_seq ? i : wqes_.size();
    }
    return wqes_.size();
  }
  // Maps a 24-bit PSN into [una, limit]; returns false if it lies outside.
  bool map_psn(uint32_t psn24, uint64_t limit, uint64_t* seq) const {
    const uint64_t offset = (psn24 - static_cast<uint32_t>(una)) & 0xFFFFFF;
    if (una + offset > limit) return false;
    *seq = una + offset;
    return true;
  }

  uint64_t post_seq() const { return post_seq_; }       // end of the last posted WQE's range
  int64_t posted_bytes() const { return post_bytes_; }  // payload bytes of every WQE posted

  // Sequence state, driven by the NIC.
  uint64_t una = 0;  // oldest PSN not known to be done
  // Rate limiter: `rate` is the flow's own cap (RdmaNic::set_qp_rate),
  // `cc_rate` the congestion-control algorithm's; `pace`, the lower of the
  // two that are set (0: line rate), paces the QP and is recomputed when
  // either changes. The QP may start its next packet at `next_send`;
  // `last_start` and `last_wire` are the last packet's start and size, from
  // which a new pace recomputes next_send.
  BitRate rate;
  BitRate cc_rate;
  BitRate pace;
  Time next_send;
  Time last_start;
  uint32_t last_wire = 0;
  // The gap `pace_wire` wire bytes take at `pace` (0: not computed for this
  // pace): packets are mostly one size, and the exact division is 128-bit.
  uint32_t pace_wire = 0;
  Time pace_gap;
  // New packets may be sent while the PSNs in [una, next_seq) are fewer than
  // this: sr_window under selective repeat, and the algorithm's `window`
  // (bytes, 0: none) in whole MTUs.
  uint64_t inflight_limit = UINT64_MAX;
  Bytes window;
  // The algorithm in the QP's congestion-control slot (owned by the NIC), or
  // null: every congestion-control event is behind this one test.
  CongestionControl* cc = nullptr;
  uint64_t next_seq = 0;      // next PSN to send (go-back-N rewinds it)
  uint64_t snd_max = 0;       // one past the highest PSN ever sent
  size_t send_index = 0;      // index of the WQE holding next_seq
  int reads_outstanding = 0;  // READs issued and not complete (ORD)
  // Times each PSN in [una, snd_max) has been sent (saturating): the value a
  // retransmitted packet carries in Packet::retransmissions.
  Ring<uint8_t> send_count;
  // Retransmission timer (local ACK timeout): lazy, re-armed at `deadline`.
  bool timer_armed = false;
  Time deadline;
  int retries = 0;      // timeouts and NAK retries since the last progress
  int rnr_retries = 0;  // RNR NAKs since the last progress
  bool rnr_wait = false;
  bool error = false;
  // Go-back-N: the una at which a READ-response gap was last answered, so
  // that one gap causes one rewind.
  uint64_t read_gap_at = UINT64_MAX;
  // Selective repeat: PSNs past una known done (SACKed, or READ responses).
  PsnBitmap sacked;
  bool in_recovery = false;
  uint64_t retx_ptr = 0;       // next PSN to consider for retransmission
  uint64_t recovery_high = 0;  // retransmit unsacked PSNs below this
  // Counters.
  uint64_t retransmitted = 0;  // packets this QP sent again (requests, data, READ responses)
  uint64_t timeouts = 0;
  int max_reads_outstanding = 0;

  bool has_new_data() const { return next_seq < post_seq_; }
  bool outstanding() const { return una < snd_max; }

  // ---- responder ----
  struct ReadJob {
    uint64_t seq = 0;      // PSN of the next response packet
    uint64_t packets = 0;  // response packets left
    int64_t bytes = 0;     // payload bytes left
    uint64_t message_id = 0;
    bool started = false;  // its first response packet has been sent
  };
  // One past the highest READ response PSN sent: a response below it is
  // sent again (a duplicate request re-executes from its PSN, IBA
  // §9.7.5.1.6, and may ask for responses never sent before: those count
  // as first sends).
  uint64_t read_sent_high = 0;
  uint64_t epsn = 0;        // expected PSN (64-bit; the wire carries its low 24 bits)
  uint64_t ecn_marked = 0;  // CE-marked packets it received (beside what each one reads)
  uint32_t msn = 0;
  int unacked = 0;
  bool nak_sent = false;  // one NAK (sequence error or RNR) per gap
  // Selective repeat: the PSN of the last out-of-order packet, which a NAK
  // names (IRN): what lies below it and is not SACKed is lost.
  uint32_t last_out_of_order = 0;
  int64_t rx_message_bytes = 0;
  int64_t rx_bytes = 0;  // payload delivered in order, every message
  Time rx_message_start;
  int64_t receives_consumed = 0;
  Ring<ReadJob> read_jobs;
  int max_read_jobs = 0;
  // Control to send once the pending READ responses are out (0: none):
  // responses and acknowledgements leave a responder in PSN order.
  uint8_t deferred_syndrome = 0;
  bool deferred = false;
  // The priorities (RoCE) or SLs (InfiniBand) of its data and of its ACKs,
  // and the lanes they leave the NIC on (on IB the SL's VL, NicConfig::sl2vl;
  // on RoCE the priority itself). Set by the NIC (create_qp, set_qp_sl).
  uint8_t data_sl = 0;
  uint8_t ack_sl = 0;
  uint8_t data_lane = 0;
  uint8_t ack_lane = 0;
  ReorderBuffer reorder;

  // Congestion notification, per QP (the NIC's NicCounters sum them): CNPs
  // it sent and received, ACKs and NAKs with an ECN echo it sent and
  // received (and ecn_marked, above). Counted whether or not the QP has an
  // algorithm; all off the per-packet path.
  uint64_t cnps_sent = 0;
  uint64_t cnps_received = 0;
  uint64_t ecn_echo_sent = 0;
  uint64_t ecn_echo_received = 0;

 private:
  uint32_t qpn_;
  uint32_t host_;
  uint32_t remote_host_ = 0;
  uint32_t remote_qpn_ = 0;
  uint32_t flow_hash_ = 0;
  uint32_t port_ = 0;
  bool connected_ = false;

  Ring<Wqe> wqes_;
  uint64_t post_seq_ = 0;
  int64_t post_bytes_ = 0;  // payload bytes of every WQE posted
};

}  // namespace rdmasim
