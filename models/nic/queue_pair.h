// An RC queue pair (IBA Vol 1 ch. 9): the requester half segments posted
// work requests into packets with consecutive PSNs and retires them when
// they are acknowledged; the responder half checks that packets arrive in
// PSN order and decides when to acknowledge.
//
// Contract:
//  1. A QP is created by its NIC and connected once, out of band (as the
//     RDMA connection manager would), to one remote QP.
//  2. Work requests complete in posting order (IBA §10.8.3: RC completions
//     are in order).
//  3. PSNs on the wire are 24-bit; the requester keeps 64-bit sequence
//     numbers internally and maps each ACK onto the outstanding window.
#pragma once

#include <cstdint>

#include "sim/ring.h"
#include "sim/units.h"

namespace rdmasim {

enum class Verb : uint8_t { kWrite, kSend };

struct WorkRequest {
  uint64_t wr_id = 0;  // the poster's tag, returned in the completion
  Verb verb = Verb::kWrite;
  int64_t bytes = 0;
};

struct Completion {
  uint64_t wr_id = 0;       // requester side: the work request's tag
  uint64_t message_id = 0;  // the sending NIC's message number
  uint32_t qpn = 0;         // the local QP
  uint32_t peer = 0;        // the remote host
  Verb verb = Verb::kWrite;
  int64_t bytes = 0;
  Time posted;     // when the work request was posted
  Time first_tx;   // start of transmission of its first packet
  Time completed;  // requester: ACK of the last packet arrived; responder: last packet arrived
};

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

  // ---- requester ----
  struct Wqe {
    WorkRequest wr;
    int64_t sent = 0;        // payload bytes segmented so far
    uint64_t first_seq = 0;  // sequence number of its first packet
    uint64_t last_seq = 0;   // ... and of its last, once segmented
    uint64_t message_id = 0;
    Time posted;
    Time first_tx;
  };
  Ring<Wqe>& wqes() { return wqes_; }
  // Index into wqes() of the next WQE with bytes left to send.
  size_t send_index() const { return send_index_; }
  bool has_data() const { return send_index_ < wqes_.size(); }
  uint64_t next_seq() const { return next_seq_; }
  uint64_t unacked_seq() const { return una_; }

  void post(const WorkRequest& wr, uint64_t message_id, Time now) {
    wqes_.push_back(Wqe{wr, 0, 0, 0, message_id, now, Time::zero()});
  }

  // What the next data packet carries: its message, opcode position, PSN and
  // payload. Advances the segmentation state.
  struct Segment {
    Wqe* wqe;
    uint64_t seq;
    uint32_t payload;
    bool first;
    bool last;
  };
  Segment next_segment(uint32_t mtu, Time now) {
    Wqe& w = wqes_[send_index_];
    Segment s{&w, next_seq_++, 0, w.sent == 0, false};
    const int64_t left = w.wr.bytes - w.sent;
    s.payload = static_cast<uint32_t>(left < mtu ? left : mtu);
    if (s.first) {
      w.first_seq = s.seq;
      w.first_tx = now;
    }
    w.sent += s.payload;
    if (w.sent == w.wr.bytes) {
      s.last = true;
      w.last_seq = s.seq;
      ++send_index_;
    }
    return s;
  }

  // Maps a 24-bit acknowledged PSN onto the window [una, next) and returns the
  // number of sequence numbers it newly acknowledges (0 for a stale ACK).
  uint64_t acknowledge(uint32_t psn24) {
    const uint64_t outstanding = next_seq_ - una_;
    const uint64_t offset = (psn24 - static_cast<uint32_t>(una_)) & 0xFFFFFF;
    if (offset >= outstanding) return 0;  // older than una, or not yet sent
    const uint64_t newly = offset + 1;
    una_ += newly;
    return newly;
  }
  // Pops the oldest WQE if all its packets are acknowledged.
  bool front_complete() const {
    return !wqes_.empty() && send_index_ > 0 && wqes_.front().last_seq < una_;
  }
  Wqe pop_front() {
    --send_index_;
    return wqes_.pop_front();
  }

  // ---- responder ----
  uint32_t expected_psn() const { return epsn_; }
  uint32_t msn() const { return msn_; }
  // Accepts the in-order packet: advances ePSN (and MSN at a message's end).
  // Returns true if an ACK is due now, with `ack_interval` packets coalesced.
  bool accept(bool last_of_message, bool ack_req, int ack_interval) {
    epsn_ = (epsn_ + 1) & 0xFFFFFF;
    if (last_of_message) msn_ = (msn_ + 1) & 0xFFFFFF;
    if (last_of_message || ack_req || ++unacked_ >= ack_interval) {
      unacked_ = 0;
      return true;
    }
    return false;
  }
  // Receive-side progress of the current inbound message.
  int64_t& rx_message_bytes() { return rx_message_bytes_; }
  Time& rx_message_start() { return rx_message_start_; }

 private:
  uint32_t qpn_;
  uint32_t host_;
  uint32_t remote_host_ = 0;
  uint32_t remote_qpn_ = 0;
  uint32_t flow_hash_ = 0;
  uint32_t port_ = 0;
  bool connected_ = false;

  Ring<Wqe> wqes_;
  size_t send_index_ = 0;
  uint64_t next_seq_ = 0;
  uint64_t una_ = 0;

  uint32_t epsn_ = 0;
  uint32_t msn_ = 0;
  int unacked_ = 0;
  int64_t rx_message_bytes_ = 0;
  Time rx_message_start_;
};

}  // namespace rdmasim
