// The requester half of the RC transport (IBA Vol 1 §9.7, §9.9): building
// WRITE/SEND packets and READ requests, acknowledgements, READ responses,
// go-back-N and selective-repeat (IRN) recovery, the local ACK timeout with
// exponential backoff, RNR waits, and the error state.
#include <algorithm>
#include <bit>
#include <cassert>

#include "models/nic/ib_timers.h"
#include "models/nic/rdma_nic.h"

namespace rdmasim {
namespace {

RcOpcode data_opcode(Verb verb, bool first, bool last) {
  if (verb == Verb::kWrite) {
    if (first && last) return RcOpcode::kWriteOnly;
    if (first) return RcOpcode::kWriteFirst;
    return last ? RcOpcode::kWriteLast : RcOpcode::kWriteMiddle;
  }
  if (verb == Verb::kWriteImm) {
    // Only the last packet differs from a WRITE's: it carries ImmDt.
    if (first && last) return RcOpcode::kWriteOnlyImm;
    if (first) return RcOpcode::kWriteFirst;
    return last ? RcOpcode::kWriteLastImm : RcOpcode::kWriteMiddle;
  }
  if (first && last) return RcOpcode::kSendOnly;
  if (first) return RcOpcode::kSendFirst;
  return last ? RcOpcode::kSendLast : RcOpcode::kSendMiddle;
}

bool is_sr(const NicConfig& c) { return c.loss_recovery == LossRecovery::kSelectiveRepeat; }

}  // namespace

Time RdmaNic::retransmit_timeout(int attempt) const {
  if (base_timeout_.is_infinite()) return base_timeout_;
  const int shift = std::clamp(attempt, 0, 16);
  // Backed off beyond Time's range (a timeout of hours, doubled 16 times):
  // it never fires.
  if (base_timeout_.in_ps() > (Time::infinite().in_ps() >> shift)) return Time::infinite();
  return base_timeout_ * (int64_t{1} << shift);
}

bool RdmaNic::can_send(const QueuePair& q) const {
  if (q.error || q.rnr_wait) return false;
  if (q.in_recovery && q.retx_ptr < std::min(q.recovery_high, q.snd_max)) return true;
  if (!q.has_new_data()) return false;
  const QueuePair::Wqe& w = q.wqes()[q.send_index];
  if (w.wr.verb == Verb::kRead && !w.started && q.reads_outstanding >= ord_) return false;
  // Selective repeat's window and the congestion-control window, in PSNs.
  return q.next_seq - q.una < q.inflight_limit;
}

PacketHandle RdmaNic::build_request(QueuePair& q) {
  if (q.in_recovery && q.retx_ptr < std::min(q.recovery_high, q.snd_max)) {
    // Selective repeat: the next PSN below the highest SACKed one that the
    // responder does not have. For a READ, one request re-asks for the whole
    // run of missing responses.
    const uint64_t s = q.retx_ptr;
    const size_t i = q.find_wqe(s);
    assert(i < q.wqes().size());
    const QueuePair::Wqe& w = q.wqes()[i];
    uint64_t end = s + 1;
    if (w.wr.verb == Verb::kRead) {
      while (end < w.end_seq && !q.sacked.test(end - q.una)) ++end;
    }
    PacketHandle p = build_segment(q, i, s, end);
    q.retx_ptr = end;
    normalize_retx(q);
    return p;
  }
  const uint64_t s = q.next_seq;
  const size_t i = q.send_index;
  const QueuePair::Wqe& w = q.wqes()[i];
  const uint64_t end = w.wr.verb == Verb::kRead ? w.end_seq : s + 1;
  PacketHandle p = build_segment(q, i, s, end);
  q.next_seq = end;
  if (end >= w.end_seq) q.send_index = i + 1;
  return p;
}

// One packet of WQE `wqe_index` for PSNs [seq, end): a data packet (end ==
// seq + 1) or a READ request for the responses [seq, end).
PacketHandle RdmaNic::build_segment(QueuePair& q, size_t wqe_index, uint64_t seq, uint64_t end) {
  QueuePair::Wqe& w = q.wqes()[wqe_index];
  const Time now = ctx().now();
  const int64_t offset = static_cast<int64_t>(seq - w.first_seq) * cfg_.mtu;
  PacketHandle p;
  if (w.wr.verb == Verb::kRead) {
    const int64_t stop =
        std::min<int64_t>(w.wr.bytes, static_cast<int64_t>(end - w.first_seq) * cfg_.mtu);
    p = make(PacketKind::kReadRequest, RcOpcode::kReadRequest, 0, q);
    p->read_length = static_cast<uint32_t>(std::max<int64_t>(stop - offset, 0));
    p->flags = kFlagAckReq;
    ++counters_.read_requests_sent;
    if (!w.started) {
      ++q.reads_outstanding;
      q.max_reads_outstanding = std::max(q.max_reads_outstanding, q.reads_outstanding);
    }
  } else {
    const int64_t left = w.wr.bytes - offset;
    const auto payload = static_cast<uint32_t>(std::clamp<int64_t>(left, 0, cfg_.mtu));
    const bool first = seq == w.first_seq;
    const bool last = seq + 1 == w.end_seq;
    p = make(PacketKind::kData, data_opcode(w.wr.verb, first, last), payload, q);
    p->flags = (first ? kFlagFirst : 0) | (last ? kFlagLast | kFlagAckReq : 0);
    if (last && w.wr.verb == Verb::kWriteImm) p->imm_data = w.wr.imm;
    ++counters_.data_packets_sent;
  }
  p->psn = static_cast<uint32_t>(seq) & kPsnMask;
  p->message_id = w.message_id;
  if (!w.started) {
    w.started = true;
    w.first_tx = now;
  }
  // Send counts: PSNs sent before are retransmissions.
  if (seq < q.snd_max) {
    uint8_t& count = q.send_count[seq - q.una];
    p->flags |= kFlagRetransmit;
    p->retransmissions = count;
    ++q.retransmitted;
    ++counters_.retransmitted_packets;
    for (uint64_t k = seq; k < std::min(end, q.snd_max); ++k) {
      uint8_t& c = q.send_count[k - q.una];
      if (c < 255) ++c;
    }
  }
  for (uint64_t k = std::max(seq, q.snd_max); k < end; ++k) q.send_count.push_back(1);
  q.snd_max = std::max(q.snd_max, end);
  arm_timer(q);
  return p;
}

// ---- acknowledgements ----

void RdmaNic::advance_una(QueuePair& q, uint64_t new_una) {
  assert(new_una <= q.snd_max);
  for (uint64_t k = q.una; k < new_una; ++k) q.send_count.pop_front();
  if (q.sacked.allocated()) q.sacked.advance_to(new_una);
  q.una = new_una;
}

// PSNs at una that are already known done (SACKed, or READ responses
// received out of order) need no acknowledgement of their own.
void RdmaNic::skip_sacked(QueuePair& q) {
  if (!q.sacked.allocated()) return;
  while (q.una < q.snd_max && q.sacked.test(0)) advance_una(q, q.una + 1);
}

// Everything below `target` is acknowledged, except the responses of a READ
// not yet received: an ACK beyond an incomplete READ is an implied NAK for it
// (IBA §9.9.2.1), reported through `clamped`.
void RdmaNic::acknowledge_to(QueuePair& q, uint64_t target, bool* clamped) {
  *clamped = false;
  size_t i = 0;
  while (q.una < target && i < q.wqes().size()) {
    const QueuePair::Wqe& w = q.wqes()[i];
    if (q.una >= w.end_seq) {
      ++i;
      continue;
    }
    if (w.wr.verb == Verb::kRead) {
      if (q.sacked.allocated() && q.sacked.test(0)) {
        skip_sacked(q);
        continue;
      }
      *clamped = true;
      return;
    }
    advance_una(q, std::min(target, w.end_seq));
    skip_sacked(q);
  }
}

void RdmaNic::normalize_retx(QueuePair& q) {
  if (!q.in_recovery) return;
  q.retx_ptr = std::max(q.retx_ptr, q.una);
  const uint64_t limit = std::min(q.recovery_high, q.snd_max);
  while (q.retx_ptr < limit && q.sacked.test(q.retx_ptr - q.una)) ++q.retx_ptr;
}

void RdmaNic::start_recovery(QueuePair& q, uint64_t from, uint64_t high) {
  q.in_recovery = true;
  q.retx_ptr = from;
  q.recovery_high = high;
  normalize_retx(q);
}

// SACK bitmap from the responder: bit i = PSN base + i is there.
void RdmaNic::apply_sack(QueuePair& q, uint64_t base, uint64_t bits) {
  if (!q.sacked.allocated()) return;
  while (bits != 0) {
    const int i = std::countr_zero(bits);
    bits &= bits - 1;
    const uint64_t seq = base + static_cast<uint64_t>(i);
    if (seq >= q.una && seq < q.snd_max) q.sacked.set(seq - q.una);
  }
  skip_sacked(q);
}

void RdmaNic::after_progress(QueuePair& q, uint64_t old_una) {
  if (q.una == old_una) return;
  q.retries = 0;
  q.rnr_retries = 0;
  while (!q.wqes().empty() && q.wqes().front().end_seq <= q.una) {
    complete_front(q, WcStatus::kSuccess);
  }
  if (q.next_seq < q.una) {
    // Go-back-N: the responder was further than the requester rewound to.
    q.next_seq = q.una;
    q.send_index = 0;
  }
  if (q.in_recovery) {
    if (q.una >= q.recovery_high) q.in_recovery = false;
    normalize_retx(q);
  }
  if (q.outstanding()) {
    q.timer_armed = false;
    arm_timer(q);
  } else {
    q.timer_armed = false;
  }
}

void RdmaNic::rewind(QueuePair& q, uint64_t seq) {
  q.next_seq = seq;
  q.send_index = q.find_wqe(seq);
}

void RdmaNic::on_ack(PacketHandle p) {
  QpSlot& s = slot(p->dst_qpn);
  QueuePair& q = s.qp;
  if ((p->flags & kFlagEcnEcho) != 0) [[unlikely]] {
    ++counters_.ecn_echo_acks_received;
    ++q.ecn_echo_received;
  }
  if (q.cc == nullptr || !q.cc->needs(CongestionControl::kNeedAck)) [[likely]] {
    process_ack(q, *p);
    return;
  }
  // The algorithm sees the ACK after the transport has acted on it.
  const uint64_t old_una = q.una;
  const int64_t old_bytes = q.bytes_below_una(cfg_.mtu);
  process_ack(q, *p);
  cc_ack(s, *p, old_una, old_bytes);
}

void RdmaNic::process_ack(QueuePair& q, const Packet& ack) {
  if (q.error || !q.outstanding()) return;
  const uint8_t syndrome = ack.aeth_syndrome;
  const uint64_t old_una = q.una;
  const bool sr = is_sr(cfg_);
  bool clamped = false;
  uint64_t seq = 0;
  if ((syndrome & 0x60) == 0) {
    // ACK of every PSN up to and including ack.psn.
    if (!q.map_psn(ack.psn, q.snd_max - 1, &seq)) return;  // stale
    const uint64_t target = seq + 1;
    acknowledge_to(q, target, &clamped);
    if (sr) apply_sack(q, target, ack.aux);
    after_progress(q, old_una);
    if (q.error) return;
    if (clamped) {
      // READ responses before `target` are missing.
      if (sr) {
        for (uint64_t k = q.una; k < target; ++k) {
          const size_t i = q.find_wqe(k);
          if (i < q.wqes().size() && q.wqes()[i].wr.verb != Verb::kRead) q.sacked.set(k - q.una);
        }
        if (!q.in_recovery || q.una >= q.recovery_high) start_recovery(q, q.una, target);
      } else if (q.read_gap_at != q.una) {
        q.read_gap_at = q.una;
        if (!retry_or_fail(q, WcStatus::kRetryExceeded)) return;
        rewind(q, q.una);
      }
    }
  } else if ((syndrome & 0x60) == kAethRnrNak) {
    // RNR NAK: PSNs below ack.psn are acknowledged; wait the RNR timer, then
    // resend from ack.psn.
    if (!q.map_psn(ack.psn, q.snd_max - 1, &seq)) return;
    acknowledge_to(q, seq, &clamped);
    if (sr) apply_sack(q, seq, ack.aux);
    after_progress(q, old_una);
    if (q.error) return;
    if (cfg_.rnr_retry != kRnrRetryInfinite && q.rnr_retries >= cfg_.rnr_retry) {
      fail_qp(q, WcStatus::kRnrRetryExceeded);
      return;
    }
    ++q.rnr_retries;
    q.rnr_wait = true;
    q.timer_armed = false;
    if (sr) {
      start_recovery(q, q.una, q.snd_max);
    } else {
      rewind(q, q.una);
    }
    QpSlot& s = slot(q.qpn());
    const Time until = ctx().now() + rnr_timer(syndrome & 0x1F);
    if (s.rnr.scheduled()) {
      ctx().reschedule(s.rnr, until);
    } else {
      ctx().schedule(s.rnr, until);
    }
    return;
  } else {
    // NAK (sequence error): PSNs below ack.psn are acknowledged; ack.psn is missing.
    if (!q.map_psn(ack.psn, q.snd_max, &seq)) return;
    acknowledge_to(q, seq, &clamped);
    if (sr) {
      apply_sack(q, seq, ack.aux);
      uint64_t high =
          ack.aux == 0 ? seq + 1 : seq + 64 - static_cast<uint64_t>(std::countl_zero(ack.aux));
      after_progress(q, old_una);
      if (q.error) return;
      if (!q.in_recovery || q.una >= q.recovery_high) {
        if (q.una == old_una && !retry_or_fail(q, WcStatus::kRetryExceeded)) return;
        // The NAK that opens an episode was sent by the first packet to
        // arrive past the gap (IRN's NACK names it): everything between the
        // gap and it is lost, also beyond the bitmap's 64 PSNs. Later NAKs'
        // packets came after packets the bitmap may not reach: only their
        // bitmaps count, or what arrived would be resent.
        uint64_t trigger = 0;
        if (q.map_psn(ack.nak_trigger, q.snd_max, &trigger) && trigger > high) high = trigger;
        start_recovery(q, q.una, std::max(high, q.una + 1));
      } else {
        q.recovery_high = std::max(q.recovery_high, high);
        normalize_retx(q);
      }
    } else {
      after_progress(q, old_una);
      if (q.error) return;
      if (!retry_or_fail(q, WcStatus::kRetryExceeded)) return;
      rewind(q, q.una);
    }
  }
  if (!q.error) activate(q.qpn());
}

void RdmaNic::on_read_response(PacketHandle p) {
  QpSlot& qs = slot(p->dst_qpn);
  QueuePair& q = qs.qp;
  ++counters_.data_packets_received;
  if (p->ecn == 3) [[unlikely]]
    on_ecn_marked(qs, *p);
  uint64_t s = 0;
  if (q.error || !q.outstanding() || !q.map_psn(p->psn, q.snd_max - 1, &s)) {
    ++counters_.duplicates;
    return;
  }
  const size_t i = q.find_wqe(s);
  if (i == q.wqes().size() || q.wqes()[i].wr.verb != Verb::kRead) {
    ++counters_.duplicates;
    return;
  }
  const uint64_t first_seq = q.wqes()[i].first_seq;
  const uint64_t old_una = q.una;
  bool clamped = false;
  // A response acknowledges every request PSN before its READ (IBA §9.7.5.1.1).
  if (s > q.una) acknowledge_to(q, std::min(s, first_seq), &clamped);
  if (s == q.una) {
    counters_.payload_bytes_delivered += p->payload_bytes;
    advance_una(q, s + 1);
    skip_sacked(q);
  } else if (!is_sr(cfg_)) {
    // Go-back-N: a gap in the responses; ask again from the first missing
    // one, once per gap.
    ++counters_.out_of_sequence;
    after_progress(q, old_una);
    if (q.read_gap_at != q.una) {
      q.read_gap_at = q.una;
      if (!retry_or_fail(q, WcStatus::kRetryExceeded)) return;
      rewind(q, q.una);
      activate(q.qpn());
    }
    return;
  } else if (s > q.una) {
    ++counters_.out_of_sequence;
    if (q.sacked.test(s - q.una)) {
      ++counters_.duplicates;
    } else if (q.sacked.set(s - q.una)) {
      counters_.payload_bytes_delivered += p->payload_bytes;
      // Re-request the responses missing before this one.
      if (!q.in_recovery || q.una >= q.recovery_high) {
        start_recovery(q, q.una, s + 1);
      } else {
        q.recovery_high = std::max(q.recovery_high, s + 1);
        normalize_retx(q);
      }
    }
  }
  after_progress(q, old_una);
  if (!q.error) activate(q.qpn());
}

// ---- timers and the error state ----

bool RdmaNic::retry_or_fail(QueuePair& q, WcStatus status) {
  if (q.retries >= cfg_.retry_cnt) {
    fail_qp(q, status);
    return false;
  }
  ++q.retries;
  return true;
}

void RdmaNic::arm_timer(QueuePair& q) {
  // An RNR wait stops the timer; the resend after it starts it again.
  if (q.timer_armed || q.rnr_wait || !q.outstanding() || base_timeout_.is_infinite()) return;
  const Time timeout = retransmit_timeout(q.retries);
  // A deadline beyond Time's range never comes: the run ends without it.
  if (timeout.in_ps() > Time::infinite().in_ps() - ctx().now().in_ps()) return;
  q.timer_armed = true;
  q.deadline = ctx().now() + timeout;
  QpSlot& s = slot(q.qpn());
  if (!s.retransmit.scheduled()) {
    ctx().schedule(s.retransmit, q.deadline);
  } else if (s.retransmit.when() > q.deadline) {
    ctx().reschedule(s.retransmit, q.deadline);
  }
}

void RdmaNic::on_retransmit_timer(uint32_t qpn) {
  QpSlot& s = slot(qpn);
  QueuePair& q = s.qp;
  if (!q.timer_armed || q.error) return;
  if (q.rnr_wait) {
    q.timer_armed = false;
    return;
  }
  const Time now = ctx().now();
  if (now < q.deadline) {
    // Progress moved the deadline on since this was scheduled.
    ctx().schedule(s.retransmit, q.deadline);
    return;
  }
  q.timer_armed = false;
  if (!q.outstanding()) return;
  ++q.timeouts;
  ++counters_.timeouts;
  if (!retry_or_fail(q, WcStatus::kRetryExceeded)) return;
  // Resend everything not known to have arrived, and back off.
  if (is_sr(cfg_)) {
    start_recovery(q, q.una, q.snd_max);
  } else {
    rewind(q, q.una);
  }
  arm_timer(q);
  activate(qpn);
}

void RdmaNic::on_rnr_timer(uint32_t qpn) {
  QueuePair& q = slot(qpn).qp;
  if (q.error || !q.rnr_wait) return;
  q.rnr_wait = false;
  activate(qpn);
}

void RdmaNic::complete_front(QueuePair& q, WcStatus status) {
  QueuePair::Wqe w = q.wqes().pop_front();
  if (q.send_index > 0) --q.send_index;
  if (w.wr.verb == Verb::kRead && w.started && q.reads_outstanding > 0) --q.reads_outstanding;
  CompletionHandler* h = slot(q.qpn()).completions;
  if (h == nullptr) return;
  Completion c;
  c.wr_id = w.wr.wr_id;
  c.message_id = w.message_id;
  c.qpn = q.qpn();
  c.peer = q.remote_host();
  c.verb = w.wr.verb;
  c.status = status;
  c.bytes = w.wr.bytes;
  c.posted = w.posted;
  c.started = w.started;
  c.first_tx = w.first_tx;
  c.completed = ctx().now();
  h->on_send_completion(host_, c);
}

// retry_cnt or rnr_retry ran out: the QP enters the error state (IBA
// §10.3.1); the failing work request completes with `status`, the rest are
// flushed.
void RdmaNic::fail_qp(QueuePair& q, WcStatus status) {
  q.error = true;
  q.timer_armed = false;
  q.rnr_wait = false;
  q.in_recovery = false;
  ++counters_.qp_errors;
  bool first = true;
  while (!q.wqes().empty()) {
    complete_front(q, first ? status : WcStatus::kFlushed);
    first = false;
  }
}

}  // namespace rdmasim
