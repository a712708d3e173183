// RdmaNic: QPs, ports, the transmit scheduler, PFC (honoured and generated)
// and the receive buffer. The requester and responder halves of the RC
// transport are in rdma_nic_requester.cpp and rdma_nic_responder.cpp.
#include <algorithm>
#include <cassert>
#include <cmath>
#include <stdexcept>

#include "models/nic/ib_timers.h"
#include "models/nic/rdma_nic.h"
#include "sim/invariants.h"
#include "sim/link.h"

namespace rdmasim {

RdmaNic::RdmaNic(Simulation& sim, std::string name, uint32_t host, const NicConfig& cfg,
                 const TransportFormat& format)
    : Node(sim, std::move(name)),
      host_(host),
      cfg_(cfg),
      format_(format),
      ord_(std::min(cfg.max_rd_atomic, cfg.max_dest_rd_atomic)),
      base_timeout_(cfg.retransmit_timeout > Time::zero() ? cfg.retransmit_timeout
                                                          : ib_ack_timeout(cfg.timeout)) {}

uint32_t RdmaNic::create_qp(CompletionHandler* completions) {
  const auto qpn = static_cast<uint32_t>(kFirstQpn + qps_.size());
  qps_.push_back(std::make_unique<QpSlot>(this, qpn, host_, id()));
  qps_.back()->completions = completions;
  QueuePair& q = qps_.back()->qp;
  q.data_sl = cfg_.data_priority;
  q.ack_sl = cfg_.ack_priority;
  q.data_lane = cfg_.sl2vl[q.data_sl];
  q.ack_lane = cfg_.sl2vl[q.ack_sl];
  if (cfg_.loss_recovery == LossRecovery::kSelectiveRepeat) {
    q.sacked = PsnBitmap(cfg_.sr_window);
    q.sacked.reset(0);
    q.inflight_limit = cfg_.sr_window;
  }
  return qpn;
}

void RdmaNic::use_credits(uint32_t port, const Credits::Params& params, const IbQos* qos) {
  if (sim().phase() != Phase::kBuild)
    throw std::logic_error(name() + ": flow control is chosen before setup");
  if (credits_.size() <= port) credits_.resize(port + 1, nullptr);
  credits_[port] = &params;
  if (qos != nullptr) ib_qos_ = qos;
}

void RdmaNic::set_port_format(uint32_t port, const TransportFormat& format) {
  if (sim().phase() != Phase::kBuild)
    throw std::logic_error(name() + ": port formats are chosen before setup");
  if (formats_.size() <= port) formats_.resize(port + 1, nullptr);
  formats_[port] = &format;
}

void RdmaNic::setup() {
  checks_ = sim().checks();
  ports_.clear();
  formats_.resize(num_ports(), nullptr);
  for (uint32_t i = 0; i < num_ports(); ++i) {
    if (formats_[i] == nullptr) formats_[i] = &format_;
    const TransportFormat& fmt = *formats_[i];
    ports_.push_back(std::make_unique<PortState>(this, i, id(), kEthernetPriorities));
    // A WRITE-only with immediate carries the most headers (RETH and ImmDt).
    ports_.back()->max_data_wire = fmt.wire_bytes(RcOpcode::kWriteOnlyImm, cfg_.mtu);
    ports_.back()->link_flow_control = fmt.link_flow_control();
    // Without link-level flow control (NVLink) the GPU takes what arrives
    // at link rate: no receive buffer, so no PFC frame is ever generated.
    if (fmt.link_flow_control()) ports_.back()->rx.configure(cfg_.rx_drain_rate, cfg_.rx_buffer);
    const Link* l = port(i).link();
    Pfc::Params pfc;
    pfc.quanta = kPfcMaxQuanta;
    pfc.refresh = 0.5;  // a pause is refreshed at half its length
    pfc.response_delay = cfg_.pfc_response_delay;
    if (i < credits_.size() && credits_[i] != nullptr) {
      ports_.back()->fc.use_credits(*credits_[i]);
      if (ib_qos_ != nullptr) ports_.back()->arb = std::make_unique<VlArbiter>(ib_qos_->vlarb);
    }
    ports_.back()->fc.attach(ctx(), *this, i, id(), l != nullptr ? l->rate() : BitRate(), pfc);
    if (l != nullptr) {
      // The worst case of docs/switch.md "Headroom auto" (Cisco c11-542809),
      // as a switch port computes it: 2 L R / v + D_resp + the frame being
      // sent each way + the PFC frame + the frame that crossed rx_xoff.
      const double r = static_cast<double>(l->rate().in_bps());
      const double frame_bits = 8.0 * (max_frame_ + 20);
      const double bits = 2 * l->delay().in_seconds() * r +
                          l->to()->pfc_response_delay().in_seconds() * r + 3 * frame_bits +
                          8.0 * (64 + 20);
      ports_.back()->auto_headroom = Bytes(static_cast<int64_t>(std::ceil(bits / 8)));
      ports_.back()->pause_ignored_span = ports_.back()->auto_headroom / l->rate();
    }
    port(i).set_state_hint(ports_.back().get());
    // A cable failed from the start (topology.failed_links) is down already.
    if (ports_.back()->fc.credited() && l != nullptr && !l->up()) ports_.back()->link_down = true;
  }
  // Work posted before setup starts now.
  for (auto& s : qps_) activate(s->qp.qpn());
}

void RdmaNic::connect_qp(uint32_t qpn, uint32_t remote_host, uint32_t remote_qpn,
                         uint32_t flow_hash) {
  uint32_t port = 0;
  if (egress_ != nullptr && num_ports() > 1)
    port = egress_->egress_port(host_, remote_host, flow_hash);
  qp(qpn).connect(remote_host, remote_qpn, flow_hash, port);
}

void RdmaNic::set_egress_selector(const EgressSelector* s) {
  const bool repick = egress_ != nullptr && s != nullptr && num_ports() > 1 && !ports_.empty();
  egress_ = s;
  if (!repick) return;
  std::vector<uint32_t> moved;
  std::vector<bool> left(ports_.size(), false);  // ports some active QP left
  for (auto& sp : qps_) {
    QueuePair& q = sp->qp;
    // A destination no port reaches now: the QP stays where it is (its
    // retries go there, and the routes that come back find it).
    if (!q.connected() || !egress_->reachable(host_, q.remote_host())) continue;
    const uint32_t to = egress_->egress_port(host_, q.remote_host(), q.flow_hash());
    if (to == q.port()) continue;
    if (sp->active) {
      // Out of the old port's ring (below); packets it already queued there
      // (ACKs) stay and go, or are lost, with that port.
      ports_[q.port()]->drop_active(q.data_lane);
      left[q.port()] = true;
      sp->active = false;
    }
    q.move_to_port(to);
    moved.push_back(q.qpn());
  }
  const Time now = ctx().now();
  for (uint32_t i = 0; i < ports_.size(); ++i) {
    if (!left[i]) continue;
    PortState& old = *ports_[i];
    Ring<uint32_t> kept;
    while (!old.active.empty()) {
      const uint32_t n = old.active.pop_front();
      if (slot(n).qp.port() == i) kept.push_back(n);
    }
    old.active = std::move(kept);
    // Its lanes may wait for credits no longer (PortXmitWait).
    if (old.fc.credited()) note_credit_waits(old, now);
  }
  for (const uint32_t qpn : moved) activate(qpn);
}

void RdmaNic::post(uint32_t qpn, const WorkRequest& wr) {
  QueuePair& q = qp(qpn);
  if (!q.connected()) throw std::logic_error("post on an unconnected QP");
  q.post(wr, next_message_id_++, ctx().now(), cfg_.mtu);
  if (q.error) {
    // A QP in the error state flushes what is posted (IBA §10.8.3.3).
    complete_front(q, WcStatus::kFlushed);
    return;
  }
  activate(qpn);
}

void RdmaNic::post_receives(uint32_t qpn, int64_t n) { slot(qpn).extra_receives += n; }

int64_t RdmaNic::receives_available(uint32_t qpn) const {
  const QpSlot& s = *qps_[qpn - kFirstQpn];
  int64_t posted = cfg_.receive_queue_depth + s.extra_receives;
  if (cfg_.receive_replenish > Time::zero()) posted += ctx().now() / cfg_.receive_replenish;
  return posted - s.qp.receives_consumed;
}

void RdmaNic::activate(uint32_t qpn) {
  QpSlot& s = slot(qpn);
  if (s.active || ports_.empty()) return;
  if (s.qp.read_jobs.empty() && !can_send(s.qp)) return;
  s.active = true;
  PortState& ps = *ports_[s.qp.port()];
  ps.active.push_back(qpn);
  ps.add_active(s.qp.data_lane);
  port(s.qp.port()).wake();
}

// ---- the transmit side ----

PacketHandle RdmaNic::next_packet(uint32_t port_index) {
  PortState& ps = *ports_[port_index];
  const Time now = ctx().now();
  // PFC frames are MAC control frames: never paused, ahead of everything.
  // (Not on an InfiniBand cable that is down: nothing leaves then.)
  if (!ps.pfc_out.empty() && !ps.link_down) return ps.pfc_out.pop_front();
  if (ps.fc.credited()) [[unlikely]] {
    if (ps.link_down) return {};  // until on_link_up
    note_credit_waits(ps, now);
  }
  Time blocked_until = Time::infinite();
  // InfiniBand with frames on two or more VLs (data of QPs on several, or
  // ACKs on another VL than the data): the VL arbiter (IBA 7.6.9) picks
  // among every VL with a frame that may leave, ACKs and NAKs included, as
  // they are packets of their VL like any other; within the VL chosen its
  // control packets go first. (One VL: the arbiter has no choice to make.)
  int vl = -1;
  bool arbitrated = false;
  if (ps.arb != nullptr &&
      __builtin_popcount(ps.control_mask | (ps.active.empty() ? 0U : ps.data_lanes)) >= 2)
      [[unlikely]] {
    arbitrated = true;
    vl = choose_vl(ps, now, true);
    if (vl >= 0 && ((ps.control_mask >> vl) & 1) != 0) {
      Ring<PacketHandle>& ring = ps.control[vl];
      PacketHandle c = ring.pop_front();
      if (ring.empty()) ps.control_mask &= static_cast<uint16_t>(~(1U << vl));
      ps.fc.on_transmit(static_cast<uint8_t>(vl), *c);
      ps.arb->charge(ib_credit_bytes(c->wire_bytes));
      return c;
    }
  }
  // Control packets by priority, highest first (only the non-empty rings);
  // with arbitration, only to find when a blocked one may go (the arbiter
  // chose a data VL, or none was ready).
  for (uint32_t m = arbitrated && vl >= 0 ? 0U : ps.control_mask; m != 0;) {
    const auto prio = static_cast<uint8_t>(31 - __builtin_clz(m));
    m &= ~(1U << prio);
    Ring<PacketHandle>& ring = ps.control[prio];
    if (!ps.fc.may_send(prio, *ring.front(), now)) {
      blocked_until = std::min(blocked_until, ps.fc.blocked_until(prio, now));
      continue;
    }
    if (arbitrated) continue;  // none was ready when the arbiter chose (vl < 0)
    PacketHandle c = ring.pop_front();
    if (ring.empty()) ps.control_mask &= static_cast<uint16_t>(~(1U << prio));
    ps.fc.on_transmit(prio, *c);
    return c;
  }
  if (!ps.active.empty()) {
    // A data packet is built only when it may leave: with credits, enough
    // for the largest one (it is not known before it is built). With QPs on
    // one lane that is one test for all; with several (InfiniBand QPs on
    // several VLs), each QP's, and a QP whose VL may not send goes round
    // again, so no VL blocks another.
    const bool one_lane = (ps.data_lanes & (ps.data_lanes - 1)) == 0;
    const auto lane = static_cast<uint8_t>(__builtin_ctz(ps.data_lanes | 0x10000U));
    if (one_lane && !ps.fc.may_send_wire(lane, ps.max_data_wire, now)) {
      blocked_until = std::min(blocked_until, ps.fc.blocked_until(lane, now));
    } else {
      // With VL arbitration (InfiniBand, QPs on several VLs) the arbiter
      // first picks among the VLs that have a QP due with credits, whose
      // first such QP comes to the front; only that VL's QPs may send
      // this time.
      if (!arbitrated && !one_lane && ps.arb != nullptr) [[unlikely]]
        vl = choose_vl(ps, now, false);
      // Paced QPs not yet due go round again; if none could send, pull when
      // the first of them is due.
      size_t paced = 0;
      Time next_due = Time::infinite();
      while (!ps.active.empty() && paced < ps.active.size()) {
        const uint32_t qpn = ps.active.pop_front();
        QpSlot& s = slot(qpn);
        QueuePair& q = s.qp;
        if (q.next_send > now) {
          next_due = std::min(next_due, q.next_send);
          ps.active.push_back(qpn);
          ++paced;
          continue;
        }
        if (!one_lane) [[unlikely]] {
          const bool other_vl = vl >= 0 && q.data_lane != vl;
          if (other_vl || !ps.fc.may_send_wire(q.data_lane, ps.max_data_wire, now)) {
            // A QP of another VL may well send: pull again at once if
            // this VL sends nothing after all.
            blocked_until =
                std::min(blocked_until, other_vl ? now : ps.fc.blocked_until(q.data_lane, now));
            ps.active.push_back(qpn);
            ++paced;
            continue;
          }
        }
        PacketHandle p;
        // A QP that both answers READs and sends requests alternates.
        const bool responses = !q.read_jobs.empty();
        const bool requests = can_send(q);
        if (responses && (!requests || s.responses_turn)) {
          p = build_read_response(q);
        } else if (requests) {
          p = build_request(q);
        }
        s.responses_turn = !s.responses_turn;
        if (!p) {
          s.active = false;
          ps.drop_active(q.data_lane);
          continue;
        }
        if (q.pace.in_bps() > 0) {
          if (p->wire_bytes != q.pace_wire) {
            q.pace_wire = p->wire_bytes;
            q.pace_gap = Bytes(p->wire_bytes) / q.pace;
          }
          q.next_send = std::max(q.next_send, now) + q.pace_gap;
        }
        q.last_start = now;
        q.last_wire = p->wire_bytes;
        if (q.cc != nullptr && q.cc->needs(CongestionControl::Need(CongestionControl::kNeedSent |
                                                                   CongestionControl::kNeedAck)))
            [[unlikely]]
          cc_sent(s, *p);
        if (!q.read_jobs.empty() || can_send(q)) {
          ps.active.push_back(qpn);
        } else {
          s.active = false;
          ps.drop_active(q.data_lane);
        }
        ps.fc.on_transmit(p->priority, *p);
        if (vl >= 0) [[unlikely]]
          ps.arb->charge(ib_credit_bytes(p->wire_bytes));
        return p;
      }
      if (!next_due.is_infinite()) blocked_until = std::min(blocked_until, next_due);
    }
  }
  // Something waits for a pause to end: pull again then.
  if (!blocked_until.is_infinite()) port(port_index).wake_at(blocked_until);
  return {};
}

// The VL whose QPs send next on port `ps` (VL arbitration), or -1: none has
// a QP due whose VL has credits for the largest packet. The first such QP
// of that VL in the round-robin ring is moved to its front, the others
// keeping their order, so that the QPs of one VL take turns among
// themselves whatever the other VLs do.
int RdmaNic::choose_vl(PortState& ps, Time now, bool with_control) {
  uint16_t ready = 0;
  // VLs whose first control packet may leave (the caller sends it).
  for (uint32_t m = with_control ? ps.control_mask : 0U; m != 0; m &= m - 1) {
    const auto l = static_cast<uint8_t>(__builtin_ctz(m));
    if (ps.fc.may_send(l, *ps.control[l].front(), now)) ready |= static_cast<uint16_t>(1U << l);
  }
  const uint16_t control = ready;
  std::array<uint32_t, kMaxLanes> first{};
  for (size_t i = 0; i < ps.active.size(); ++i) {
    const QueuePair& q = slot(ps.active[i]).qp;
    const uint16_t bit = static_cast<uint16_t>(1U << q.data_lane);
    if ((ready & bit) == 0 && q.next_send <= now &&
        ps.fc.may_send_wire(q.data_lane, ps.max_data_wire, now)) {
      ready |= bit;
      first[q.data_lane] = static_cast<uint32_t>(i);
    }
  }
  const int vl = ps.arb->choose(ready);
  if (vl < 0 || ((control >> vl) & 1) != 0) return vl;
  const uint32_t qpn = ps.active[first[vl]];
  for (size_t i = first[vl]; i > 0; --i) ps.active[i] = ps.active[i - 1];
  ps.active[0] = qpn;
  return vl;
}

// PortXmitWait: whether each VL of a credited port waits for credits now,
// told when the port chooses a frame: the data VL when a QP has data but
// the credits do not cover the largest packet (a packet is built only
// then), a control packet's VL when its first one does not fit.
void RdmaNic::note_credit_waits(PortState& ps, Time now) {
  uint32_t waiting = 0;
  if (ps.link_down) {
    // Nothing waits for credits on a dead cable: the open waits close.
    for (uint32_t m = ps.fc.waiting_mask(); m != 0; m &= m - 1)
      ps.fc.note_waiting(static_cast<uint8_t>(__builtin_ctz(m)), false, now);
    return;
  }
  // The lanes of QPs with data to send (on one lane, that lane).
  uint32_t data = 0;
  if ((ps.data_lanes & (ps.data_lanes - 1)) == 0) {
    data = ps.active.empty() ? 0 : ps.data_lanes;
  } else {
    for (size_t i = 0; i < ps.active.size(); ++i) data |= 1U << slot(ps.active[i]).qp.data_lane;
  }
  for (uint32_t m = data; m != 0; m &= m - 1) {
    const auto lane = static_cast<uint8_t>(__builtin_ctz(m));
    if (!ps.fc.may_send_wire(lane, ps.max_data_wire, now)) waiting |= 1U << lane;
  }
  for (uint32_t m = ps.control_mask; m != 0; m &= m - 1) {
    const auto prio = static_cast<uint8_t>(__builtin_ctz(m));
    if (!ps.fc.may_send(prio, *ps.control[prio].front(), now)) waiting |= 1U << prio;
  }
  // Only a lane waiting now or noted waiting before can change.
  for (uint32_t m = waiting | ps.fc.waiting_mask(); m != 0; m &= m - 1) {
    const auto l = static_cast<uint8_t>(__builtin_ctz(m));
    ps.fc.note_waiting(l, ((waiting >> l) & 1) != 0, now);
  }
}

Time RdmaNic::next_pull(uint32_t port_index, Time frame_end) const {
  // Everything that makes next_packet() return a frame is in these rings;
  // whatever fills them wakes the port (activate(), emit_control(), PFC,
  // and update_pacing() when a QP becomes due earlier).
  const PortState& ps = *ports_[port_index];
  if (!ps.pfc_out.empty()) return frame_end;
  if (ps.control_mask != 0) return frame_end;
  if (ps.active.empty()) return Time::infinite();
  // Only paced QPs, none due by the frame's end: pull when the first is due
  // rather than at the end to find that out (one event per paced frame, not
  // two). A long list is not scanned: next_packet() does that.
  constexpr size_t kScan = 4;
  if (ps.active.size() > kScan) return frame_end;
  Time due = Time::infinite();
  for (size_t i = 0; i < ps.active.size(); ++i) {
    const Time t = qps_[ps.active[i] - kFirstQpn]->qp.next_send;
    if (t <= frame_end) return frame_end;
    due = std::min(due, t);
  }
  return due;
}

void RdmaNic::classify(Packet& p, PacketKind kind, const QueuePair& q) const {
  p.kind = kind;
  switch (kind) {
    case PacketKind::kData:
    case PacketKind::kReadRequest:
      p.priority = q.data_lane;
      p.sl = q.data_sl;
      p.dscp = cfg_.data_dscp;
      p.ecn = 2;  // ECT(0): RoCE v2 data is ECN-capable (DCQCN reaction point)
      break;
    case PacketKind::kAck:
    case PacketKind::kNak:
      p.priority = q.ack_lane;
      p.sl = q.ack_sl;
      p.dscp = cfg_.ack_dscp;
      break;
    case PacketKind::kCnp:
      p.priority = cfg_.cnp_priority;
      p.dscp = cfg_.cnp_dscp;
      break;
    case PacketKind::kPfc:
    case PacketKind::kIbFlowControl:
    case PacketKind::kRaw:
      break;
  }
  p.pcp = p.priority;
}

PacketHandle RdmaNic::make(PacketKind kind, RcOpcode op, uint32_t payload, const QueuePair& q) {
  PacketHandle p = ctx().make_packet();
  classify(*p, kind, q);
  p->opcode = static_cast<uint8_t>(op);
  const TransportFormat::Framing& f = formats_[q.port()]->framing(op);
  p->headers = f.headers.bits();
  p->payload_bytes = payload;
  p->wire_bytes = f.wire_bytes(payload);
  p->src = host_;
  p->dst = q.remote_host();
  p->flow_hash = q.flow_hash();
  p->src_qpn = q.qpn();
  p->dst_qpn = q.remote_qpn();
  if (checks_ && kind == PacketKind::kData) [[unlikely]]
    count_sent(q.qpn(), payload);
  return p;
}

void RdmaNic::count_sent(uint32_t qpn, uint32_t payload) { wire_payload_of(qpn).sent += payload; }

void RdmaNic::count_received(const Packet& p) {
  // Only QPs this NIC has (a packet for another is not a flow's).
  if (p.dst_qpn >= kFirstQpn && p.dst_qpn - kFirstQpn < qps_.size())
    wire_payload_of(p.dst_qpn).received += p.payload_bytes;
}

// ---- the receive side ----

void RdmaNic::receive(uint32_t port_index, PacketHandle p) {
  PortState& ps = *ports_[port_index];
  if (is_link_control(p->kind)) {
    ++counters_.pfc_frames_received;
    const Time recheck = ps.fc.on_control_frame(*p, ctx().now());
    if (!recheck.is_infinite()) port(port_index).wake_at(recheck);
    return;
  }
  assert(p->dst == host_);
  if (checks_ && p->kind == PacketKind::kData) [[unlikely]]
    count_received(*p);
  const uint8_t prio = p->priority;
  const uint32_t wire = p->wire_bytes;
  if (!ps.rx.enabled()) {
    ps.fc.on_passed(prio, wire);  // taken at once: credits free its blocks
    dispatch(std::move(p));
    return;
  }
  const Bytes bytes(HeaderSet(p->headers).frame_bytes(p->payload_bytes));
  if ((p->flags & kFlagPauseIgnored) != 0) [[unlikely]]
    ps.pause_ignored_at[prio] = ctx().now();
  if (!ps.rx.admit(p, bytes, ctx().now())) {
    ++counters_.rx_buffer_drops;
    ps.fc.on_passed(prio, wire);
    if (ps.fc.credited()) [[unlikely]] {
      // The load makes rx_buffer hold all that the credits can let in.
      if (checks_)
        throw InvariantViolation(
            "lossless_drop",
            name() + " port " + std::to_string(port_index) + " VL " + std::to_string(prio),
            ctx().now(),
            "a " + std::to_string(bytes.count()) +
                " B packet dropped at the receive buffer, which its credits let in (" +
                std::to_string(ps.rx.total().count()) + " B of " +
                std::to_string(cfg_.rx_buffer.count()) + " B held)");
    } else if (((lossless_mask_ >> prio) & 1) != 0) {
      lossless_drop(port_index, *p, bytes);
    }
    return;
  }
  ps.fc.on_arrival(prio, wire, [&] { return ps.rx.occupancy(prio) >= cfg_.rx_xoff; });
  if (!ps.drain.scheduled()) ctx().schedule(ps.drain, ps.rx.next_done());
}

void RdmaNic::lossless_drop(uint32_t port_index, const Packet& p, Bytes bytes) {
  PortState& ps = *ports_[port_index];
  const uint8_t prio = p.priority;
  const Time now = ctx().now();
  // The room this priority had above rx_xoff once the others' bytes are
  // counted: below the automatic headroom, the configuration allows a drop.
  const Bytes others = ps.rx.total() - ps.rx.occupancy(prio);
  const Bytes room = cfg_.rx_buffer - cfg_.rx_xoff - others;
  if (room < ps.auto_headroom) {
    ++counters_.lossless_drops_headroom_below_automatic;
    return;
  }
  const Time ignored = ps.pause_ignored_at[prio];
  if (!ignored.is_infinite() && now - ignored <= ps.pause_ignored_span) {
    ++counters_.lossless_drops_watchdog_forward;
    return;
  }
  if (!checks_) return;
  // A pause lost on its way (the cable down, or bit errors on it).
  const Link& out = *port(port_index).link();
  if (out.counters().lost_down > 0 || out.bit_error_rate() > 0) return;
  throw InvariantViolation(
      "lossless_drop",
      name() + " port " + std::to_string(port_index) + " priority " + std::to_string(prio), now,
      "a " + std::to_string(bytes.count()) + " B frame dropped at the receive buffer (" +
          std::to_string(ps.rx.occupancy(prio).count()) + " B of this priority, " +
          std::to_string(ps.rx.total().count()) + " B of " +
          std::to_string(cfg_.rx_buffer.count()) +
          " B in all), though rx_buffer - rx_xoff leaves it the automatic headroom " +
          std::to_string(ps.auto_headroom.count()) + " B");
}

void RdmaNic::on_drain(uint32_t port_index) {
  PortState& ps = *ports_[port_index];
  const Time now = ctx().now();
  while (!ps.rx.empty() && ps.rx.next_done() <= now) {
    uint8_t prio = 0;
    PacketHandle p = ps.rx.pop(&prio);
    ps.fc.on_departure(prio, p->wire_bytes, [&] { return ps.rx.occupancy(prio) <= cfg_.rx_xon; });
    dispatch(std::move(p));
  }
  if (!ps.rx.empty()) ctx().schedule(ps.drain, ps.rx.next_done());
}

void RdmaNic::dispatch(PacketHandle p) {
  switch (p->kind) {
    case PacketKind::kData:
      if (p->opcode >= static_cast<uint8_t>(RcOpcode::kReadResponseFirst) &&
          p->opcode <= static_cast<uint8_t>(RcOpcode::kReadResponseOnly)) {
        on_read_response(std::move(p));
      } else {
        on_request(std::move(p));
      }
      break;
    case PacketKind::kReadRequest:
      on_request(std::move(p));
      break;
    case PacketKind::kAck:
    case PacketKind::kNak:
      on_ack(std::move(p));
      break;
    case PacketKind::kCnp:
      on_cnp(std::move(p));
      break;
    default:
      break;
  }
}

// ---- PFC (the policy is models/flow_control/pfc.h) ----

void RdmaNic::emit_link_control(uint32_t port_index, PacketHandle frame) {
  frame->src = host_;
  ports_[port_index]->pfc_out.push_back(std::move(frame));
  ++counters_.pfc_frames_sent;
  port(port_index).wake();
}

void RdmaNic::on_link_down(uint32_t port_index) {
  PortState& ps = *ports_[port_index];
  if (!ps.fc.credited()) return;
  ps.link_down = true;
  note_credit_waits(ps, ctx().now());
}

void RdmaNic::on_link_up(uint32_t port_index) {
  PortState& ps = *ports_[port_index];
  ps.link_down = false;
  if (!ps.fc.credited()) return;
  // Flow-control packets made before the restart and not sent yet carry
  // the old counts: the new ones replace them.
  while (!ps.pfc_out.empty()) {
    ps.fc.discarded(*ps.pfc_out.pop_front());
    --counters_.pfc_frames_sent;
  }
  ps.fc.on_link_up();  // nothing may be sent until the switch's first grant
  note_credit_waits(ps, ctx().now());
}

void RdmaNic::start_pfc_storm(uint8_t priority, Time until) {
  for (auto& ps : ports_) {
    if (ps->link_flow_control) ps->fc.hold(priority, until);
  }
}

}  // namespace rdmasim
