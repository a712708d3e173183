// The responder half of the RC transport (IBA Vol 1 §9.7.5): PSN checking,
// acknowledgement (with coalescing), sequence-error and RNR NAKs, receive
// WQEs for SEND, READ execution (responses segmented at the path MTU, one
// PSN each), and selective repeat's out-of-order placement with SACK.
#include <algorithm>

#include "models/nic/rdma_nic.h"

namespace rdmasim {
namespace {

bool is_sr(const NicConfig& c) { return c.loss_recovery == LossRecovery::kSelectiveRepeat; }

bool is_send(uint8_t opcode) { return opcode <= static_cast<uint8_t>(RcOpcode::kSendOnly); }

// WRITE Last/Only with Immediate: the packet that carries ImmDt (IBA §9.3.4).
bool carries_imm(uint8_t opcode) {
  return opcode == static_cast<uint8_t>(RcOpcode::kWriteLastImm) ||
         opcode == static_cast<uint8_t>(RcOpcode::kWriteOnlyImm);
}

}  // namespace

bool RdmaNic::take_receive(QueuePair& q) {
  if (receives_available(q.qpn()) <= 0) return false;
  ++q.receives_consumed;
  return true;
}

void RdmaNic::on_request(PacketHandle p) {
  QpSlot& qs = slot(p->dst_qpn);
  QueuePair& q = qs.qp;
  ++counters_.data_packets_received;
  // Congestion experienced on the way here: the algorithm decides whether a
  // CNP or an ECN echo follows (before this packet's ACK is built).
  if (p->ecn == 3) [[unlikely]]
    on_ecn_marked(qs, *p);
  const bool sr = is_sr(cfg_);
  const bool is_read = p->kind == PacketKind::kReadRequest;
  const bool first = (p->flags & kFlagFirst) != 0;
  const bool last = (p->flags & kFlagLast) != 0;
  const bool ack_req = (p->flags & kFlagAckReq) != 0;
  // A SEND consumes a receive WQE with its first packet, a WRITE with
  // immediate with the packet carrying ImmDt (IBA §9.7.5.2.8 RNR NAK for
  // either when there is none); a plain WRITE consumes none.
  const bool needs_receive = !is_read && ((first && is_send(p->opcode)) || carries_imm(p->opcode));
  const int32_t d = psn_diff(static_cast<uint32_t>(q.epsn) & kPsnMask, p->psn);

  if (d < 0) {
    // A duplicate: the requester resent what we have. A READ is executed
    // again (IBA §9.7.5.1.6); anything else is acknowledged again, so the
    // requester learns how far we are.
    ++counters_.duplicates;
    if (is_read) {
      const uint64_t seq = q.epsn - static_cast<uint64_t>(-static_cast<int64_t>(d));
      if (!sr) {
        // Go-back-N resends every request from here on: responses at or
        // after this PSN that are still queued are superseded.
        const size_t n = q.read_jobs.size();
        for (size_t k = 0; k < n; ++k) {
          QueuePair::ReadJob j = q.read_jobs.pop_front();
          if (j.seq < seq) q.read_jobs.push_back(j);
        }
      }
      QueuePair::ReadJob j;
      j.seq = seq;
      j.packets = packets_for(p->read_length, cfg_.mtu);
      j.bytes = p->read_length;
      j.message_id = p->message_id;
      q.read_jobs.push_back(j);
      activate(q.qpn());
      return;
    }
    if (last || ack_req || ++q.unacked >= cfg_.ack_interval) {
      q.unacked = 0;
      send_control(q, kAethAckUnlimited);
    }
    return;
  }

  if (d > 0) {
    ++counters_.out_of_sequence;
    if (!sr) {
      // Go-back-N: drop it; NAK the first out-of-sequence packet of a gap.
      if (!q.nak_sent) {
        q.nak_sent = true;
        send_control(q, kAethNakSequenceError);
      }
      return;
    }
    // Selective repeat: place it and NAK with the SACK bitmap. READ requests
    // are executed in PSN order only: one out of order is NAKed but not
    // placed, so the requester resends it as a hole.
    if (static_cast<uint32_t>(d) >= cfg_.sr_window) return;
    if (!q.reorder.allocated()) q.reorder.allocate(cfg_.sr_window, q.epsn);
    if (!is_read) {
      if (q.reorder.has(static_cast<uint64_t>(d))) {
        ++counters_.duplicates;
      } else {
        if (needs_receive && !take_receive(q)) return;
        q.reorder.place(static_cast<uint64_t>(d),
                        ReorderBuffer::Slot{p->message_id, p->created, p->payload_bytes,
                                            p->imm_data, p->opcode, p->flags});
      }
    }
    // A packet only a little ahead of the gap is more likely reordered (by
    // spraying or adaptive routing) than the gap lost: acknowledge with the
    // SACK bitmap, and NAK only once the gap is `sr_reorder_threshold`
    // packets old (as TCP's duplicate-ACK threshold, RFC 5681).
    q.last_out_of_order = p->psn;
    send_control(q, static_cast<uint32_t>(d) >= cfg_.sr_reorder_threshold ? kAethNakSequenceError
                                                                          : kAethAckUnlimited);
    return;
  }

  // In sequence.
  if (needs_receive && !take_receive(q)) {
    // Receiver not ready (IBA §9.7.5.2.8): an RNR NAK carrying our RNR timer;
    // the packets behind it are dropped silently.
    q.nak_sent = true;
    send_control(q, static_cast<uint8_t>(kAethRnrNak | (cfg_.min_rnr_timer & 0x1F)));
    return;
  }
  q.nak_sent = false;
  if (is_read) {
    QueuePair::ReadJob j;
    j.seq = q.epsn;
    j.packets = packets_for(p->read_length, cfg_.mtu);
    j.bytes = p->read_length;
    j.message_id = p->message_id;
    q.read_jobs.push_back(j);
    q.max_read_jobs = std::max(q.max_read_jobs, static_cast<int>(q.read_jobs.size()));
    q.epsn += j.packets;
    q.msn = (q.msn + 1) & kPsnMask;
    q.reorder.advance(j.packets);
    activate(q.qpn());
  } else {
    deliver(q,
            ReorderBuffer::Slot{p->message_id, p->created, p->payload_bytes, p->imm_data, p->opcode,
                                p->flags},
            p->src);
    q.epsn += 1;
    q.reorder.advance(1);
  }
  // Packets placed out of order behind this one are now in sequence.
  bool drained = false;
  while (q.reorder.has(0)) {
    const ReorderBuffer::Slot s = q.reorder.at(0);
    deliver(q, s, p->src);
    q.epsn += 1;
    q.reorder.advance(1);
    drained = true;
  }
  if (is_read && !drained) return;  // the responses acknowledge a READ
  if (drained || last || ack_req || ++q.unacked >= cfg_.ack_interval) {
    q.unacked = 0;
    send_control(q, kAethAckUnlimited);
  }
}

void RdmaNic::deliver(QueuePair& q, const ReorderBuffer::Slot& s, uint32_t src) {
  if ((s.flags & kFlagFirst) != 0) {
    q.rx_message_bytes = 0;
    q.rx_message_start = s.created;
  }
  q.rx_message_bytes += s.payload;
  q.rx_bytes += s.payload;
  counters_.payload_bytes_delivered += s.payload;
  if ((s.flags & kFlagLast) == 0) return;
  q.msn = (q.msn + 1) & kPsnMask;
  ++counters_.messages_completed;
  // Only what consumed a receive WQE completes at the responder: a SEND or a
  // WRITE with immediate; a plain WRITE is invisible to the responder's
  // application (IBA §9.7.5, §11.4.2).
  const bool imm = carries_imm(s.opcode);
  if (!imm && !is_send(s.opcode)) return;
  CompletionHandler* h = slot(q.qpn()).completions;
  if (h == nullptr) return;
  Completion c;
  c.message_id = s.message_id;
  c.qpn = q.qpn();
  c.peer = src;
  c.verb = imm ? Verb::kWriteImm : Verb::kSend;
  if (imm) c.imm = s.imm;
  c.bytes = q.rx_message_bytes;
  c.started = true;
  c.first_tx = q.rx_message_start;
  c.completed = ctx().now();
  h->on_receive_completion(host_, c);
}

// A responder answers in PSN order: while READ responses are queued, an
// ACK/NAK waits behind them (only the latest one is kept: it is cumulative).
void RdmaNic::send_control(QueuePair& q, uint8_t syndrome) {
  if (!q.read_jobs.empty()) {
    q.deferred = true;
    q.deferred_syndrome = syndrome;
    return;
  }
  emit_control(q, syndrome, true);
}

void RdmaNic::emit_control(QueuePair& q, uint8_t syndrome, bool wake) {
  const bool ack = (syndrome & 0x60) == 0;
  PacketHandle a = make(ack ? PacketKind::kAck : PacketKind::kNak, RcOpcode::kAcknowledge, 0, q);
  const auto epsn = static_cast<uint32_t>(q.epsn) & kPsnMask;
  // An ACK names the last PSN received in sequence; a NAK the one expected.
  a->psn = ack ? psn_add(epsn, kPsnMask) : epsn;
  a->msn = q.msn;
  a->aeth_syndrome = syndrome;
  // Selective repeat: bit i = PSN epsn + i has been placed; a NAK also
  // names the packet that sent it, so that a gap wider than the bitmap is
  // resent whole.
  a->aux = q.reorder.sack();
  a->nak_trigger = q.last_out_of_order;
  if (ack) {
    ++counters_.acks_sent;
  } else if ((syndrome & 0x60) == kAethRnrNak) {
    ++counters_.rnr_naks_sent;
  } else {
    ++counters_.naks_sent;
  }
  if (q.cc != nullptr && q.cc->needs(CongestionControl::kNeedAckOut)) [[unlikely]]
    cc_ack_out(q, *a);
  queue_control(q.port(), std::move(a), wake);
}

PacketHandle RdmaNic::build_read_response(QueuePair& q) {
  QueuePair::ReadJob& j = q.read_jobs.front();
  const auto payload = static_cast<uint32_t>(std::min<int64_t>(j.bytes, cfg_.mtu));
  const bool first = !j.started;
  const bool last = j.packets == 1;
  RcOpcode op = RcOpcode::kReadResponseMiddle;
  if (first && last) {
    op = RcOpcode::kReadResponseOnly;
  } else if (first) {
    op = RcOpcode::kReadResponseFirst;
  } else if (last) {
    op = RcOpcode::kReadResponseLast;
  }
  PacketHandle p = make(PacketKind::kData, op, payload, q);
  p->psn = static_cast<uint32_t>(j.seq) & kPsnMask;
  p->message_id = j.message_id;
  p->flags = (first ? kFlagFirst : 0) | (last ? kFlagLast : 0);
  if (op != RcOpcode::kReadResponseMiddle) {
    p->aeth_syndrome = kAethAckUnlimited;
    p->msn = q.msn;
  }
  if (j.seq < q.read_sent_high) {
    p->flags |= kFlagRetransmit;
    p->retransmissions = 1;
    ++q.retransmitted;
    ++counters_.retransmitted_packets;
  } else {
    q.read_sent_high = j.seq + 1;
  }
  ++counters_.data_packets_sent;
  j.started = true;
  ++j.seq;
  --j.packets;
  j.bytes -= payload;
  if (j.packets == 0) {
    q.read_jobs.pop_front();
    if (q.read_jobs.empty() && q.deferred) {
      q.deferred = false;
      emit_control(q, q.deferred_syndrome, false);
    }
  }
  return p;
}

}  // namespace rdmasim
