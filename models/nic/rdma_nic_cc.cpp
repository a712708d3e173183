// RdmaNic: the per-QP congestion-control slot (models/cc/congestion_control.h)
// and the CNP paths (RoCE v2, IBA Annex A17.9.3): attaching an algorithm,
// its context, pacing and window updates, and the events it is told of.
#include <algorithm>
#include <stdexcept>

#include "models/nic/rdma_nic.h"
#include "sim/link.h"

namespace rdmasim {

// ---- the algorithm's context: its one QP ----

RdmaNic::QpCc::QpCc(RdmaNic& nic, uint32_t qpn, std::unique_ptr<CongestionControl> algo)
    : nic_(nic),
      qpn_(qpn),
      algo_(std::move(algo)),
      timer_(&nic, qpn, EventClass::kTimer, nic.id()) {}

Time RdmaNic::QpCc::now() const { return nic_.ctx().now(); }

BitRate RdmaNic::QpCc::line_rate() const {
  const Link* l = nic_.port(nic_.qp(qpn_).port()).link();
  return l != nullptr ? l->rate() : BitRate();
}

uint32_t RdmaNic::QpCc::mtu() const { return nic_.cfg_.mtu; }

void RdmaNic::QpCc::set_rate(BitRate rate) {
  QpSlot& s = nic_.slot(qpn_);
  s.qp.cc_rate = rate;
  nic_.update_pacing(s);
}

void RdmaNic::QpCc::set_window(Bytes window) {
  QpSlot& s = nic_.slot(qpn_);
  s.qp.window = window;
  nic_.update_window(s);
}

void RdmaNic::QpCc::schedule_timer(Time at) {
  if (timer_.scheduled()) {
    // Re-arming at the same instant is common (DCQCN arms after every
    // event): leave the queue alone.
    if (timer_.when() != at) nic_.ctx().reschedule(timer_, at);
  } else {
    nic_.ctx().schedule(timer_, at);
  }
}

void RdmaNic::QpCc::cancel_timer() { nic_.ctx().cancel(timer_); }

void RdmaNic::QpCc::send_cnp() { nic_.send_cnp(nic_.qp(qpn_)); }

void RdmaNic::QpCc::echo_ecn() { echo_pending_ = true; }

// ---- attaching ----

void RdmaNic::set_congestion_control(uint32_t qpn, std::unique_ptr<CongestionControl> cc) {
  QpSlot& s = slot(qpn);
  if (!s.qp.connected()) throw std::logic_error("congestion control on an unconnected QP");
  if (s.cc) {
    // The old algorithm's outputs go with it.
    ctx().cancel(s.cc->timer_);
    s.qp.cc = nullptr;
    s.cc.reset();
    s.qp.cc_rate = BitRate();
    s.qp.window = Bytes(0);
    update_window(s);
    update_pacing(s);
  }
  if (!cc) return;
  s.cc = std::make_unique<QpCc>(*this, qpn, std::move(cc));
  s.qp.cc = s.cc->algo_.get();
  s.cc->algo_->on_start(*s.cc);
}

void RdmaNic::set_qp_sl(uint32_t qpn, uint8_t sl) {
  // Before its first post: an active QP is counted on its lane.
  if (slot(qpn).active) throw std::logic_error(name() + ": set_qp_sl on an active QP");
  QueuePair& q = slot(qpn).qp;
  q.data_sl = q.ack_sl = static_cast<uint8_t>(sl & 15);
  q.data_lane = q.ack_lane = cfg_.sl2vl[q.data_sl];
}

void RdmaNic::set_qp_rate(uint32_t qpn, BitRate rate) {
  QpSlot& s = slot(qpn);
  s.qp.rate = rate;
  update_pacing(s);
}

// ---- outputs ----

void RdmaNic::update_pacing(QpSlot& s) {
  QueuePair& q = s.qp;
  // The lower of the flow's cap and the algorithm's rate, 0 meaning none.
  BitRate pace = q.rate;
  if (q.cc_rate.in_bps() > 0 && (pace.in_bps() == 0 || q.cc_rate < pace)) pace = q.cc_rate;
  if (pace == q.pace) return;
  q.pace = pace;
  q.pace_wire = 0;
  // As ns-3's RDMA module on a rate change (RdmaHw::ChangeRate, then
  // UpdateNextAvail): the next packet may start one packet time, at the new
  // rate, after the last one started.
  const Time before = q.next_send;
  q.next_send = pace.in_bps() > 0 ? q.last_start + Bytes(q.last_wire) / pace : q.last_start;
  // Due earlier than the port was told: pull then (it re-checks the rest).
  if (s.active && q.next_send < before && !ports_.empty()) {
    port(q.port()).wake_at(std::max(q.next_send, ctx().now()));
  }
}

void RdmaNic::update_window(QpSlot& s) {
  QueuePair& q = s.qp;
  // Bytes in flight are counted in whole packets (PSNs times the MTU), so a
  // window of w bytes admits ceil(w / MTU) PSNs in [una, next_seq).
  uint64_t limit =
      cfg_.loss_recovery == LossRecovery::kSelectiveRepeat ? cfg_.sr_window : UINT64_MAX;
  if (q.window.count() > 0) {
    const auto w = static_cast<uint64_t>(q.window.count());
    limit = std::min<uint64_t>(limit, (w + cfg_.mtu - 1) / cfg_.mtu);
  }
  q.inflight_limit = limit;
  activate(q.qpn());  // a larger window may let it send now
}

// ---- CNPs ----

void RdmaNic::send_cnp(QueuePair& q) {
  if (ports_.empty()) return;
  // BTH DestQP is the peer's QPN: the QP whose packets were marked.
  PacketHandle c = make(PacketKind::kCnp, RcOpcode::kCnp, 0, q);
  ++counters_.cnps_sent;
  ++q.cnps_sent;
  queue_control(q.port(), std::move(c), true);
}

void RdmaNic::on_cnp(PacketHandle p) {
  ++counters_.cnps_received;
  if (p->dst_qpn < kFirstQpn || p->dst_qpn - kFirstQpn >= qps_.size()) return;
  QpSlot& s = slot(p->dst_qpn);
  ++s.qp.cnps_received;
  if (s.cc) s.qp.cc->on_cnp(*s.cc);
}

// ---- events ----

void RdmaNic::on_cc_timer(uint32_t qpn) {
  QpSlot& s = slot(qpn);
  if (s.cc) s.qp.cc->on_timer(*s.cc);
}

void RdmaNic::cc_sent(QpSlot& s, const Packet& p) {
  if (p.kind != PacketKind::kData) return;
  // The algorithm through the QP's own pointer: the context object is
  // touched only for RTT timing.
  CongestionControl& a = *s.qp.cc;
  QpCc& c = *s.cc;
  const QueuePair& q = s.qp;
  const bool retransmission = (p.flags & kFlagRetransmit) != 0;
  const bool read_response = p.opcode >= static_cast<uint8_t>(RcOpcode::kReadResponseFirst) &&
                             p.opcode <= static_cast<uint8_t>(RcOpcode::kReadResponseOnly);
  if (!read_response && a.needs(CongestionControl::kNeedAck)) {
    // One packet timed at a time; a retransmission spoils the sample (Karn).
    if (retransmission) {
      c.timing_ = false;
    } else if (!c.timing_) {
      c.timing_ = true;
      c.timed_seq_ = q.snd_max - 1;  // a new packet: the highest PSN sent
      c.timed_sent_ = ctx().now();
    }
  }
  if (a.needs(CongestionControl::kNeedSent)) {
    a.on_packet_sent(c,
                     CcSent{p.psn, p.wire_bytes, p.payload_bytes, retransmission, read_response});
  }
}

void RdmaNic::cc_ack(QpSlot& s, const Packet& p, uint64_t old_una, int64_t old_bytes) {
  QpCc& c = *s.cc;
  const QueuePair& q = s.qp;
  CcAck a;
  a.psn = p.psn;
  a.syndrome = p.aeth_syndrome;
  a.acked_packets = q.una - old_una;
  // (A QP that has just failed flushed its WQEs: nothing more was delivered.)
  a.acked_bytes = q.error ? 0 : q.bytes_below_una(cfg_.mtu) - old_bytes;
  a.in_flight = Bytes(static_cast<int64_t>((q.next_seq - q.una) * cfg_.mtu));
  a.ecn_echo = (p.flags & kFlagEcnEcho) != 0;
  a.ext = p.ext_used != 0 ? p.ext : nullptr;
  if (c.timing_ && q.una > c.timed_seq_) {
    a.rtt = ctx().now() - c.timed_sent_;
    c.timing_ = false;
  }
  c.algo_->on_ack(c, a);
}

void RdmaNic::on_ecn_marked(QpSlot& s, const Packet& p) {
  ++counters_.ecn_marked_received;
  ++s.qp.ecn_marked;
  if (s.cc) s.qp.cc->on_ecn_marked(*s.cc, CcMarked{p.psn, p.wire_bytes, p.opcode});
}

void RdmaNic::cc_ack_out(QueuePair& q, Packet& a) {
  QpCc& c = *slot(q.qpn()).cc;
  CcAckOut out(ctx(), a, c.echo_pending_);
  c.echo_pending_ = false;
  c.algo_->on_ack_out(c, out);
  if (out.ecn_echo) {
    a.flags |= kFlagEcnEcho;
    ++counters_.ecn_echo_acks_sent;
    ++q.ecn_echo_sent;
  }
}

}  // namespace rdmasim
