#include "models/switch/switch.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <stdexcept>

#include "models/proto/wire_format.h"
#include "sim/invariants.h"
#include "sim/link.h"

namespace rdmasim {

Switch::Switch(Simulation& sim, std::string name, const SwitchConfig& cfg, uint8_t lanes)
    : Node(sim, std::move(name)),
      cfg_(cfg),
      lanes_(lanes),
      rng_(sim.rng_stream(this->name())),
      pipeline_(this, cfg.latency, EventClass::kDelivery, id()),
      watchdog_(this, EventClass::kTimer, id()),
      hoq_timer_(this, EventClass::kTimer, id()) {
  hot_.ecmp_seed = ecmp_seed(sim.seed(), this->name(), cfg);
  hot_.cfg = &cfg_;
  if (cfg.ecn.enabled) ecn_ = std::make_unique<EcnMarker>(cfg_, rng_, ecn_probe);
}

void Switch::use_credits(uint32_t port, const Credits::Params& params, Time hoq_lifetime,
                         const IbQos* qos) {
  if (sim().phase() != Phase::kBuild)
    throw std::logic_error(name() + ": flow control is chosen before setup");
  if (credits_.size() <= port) {
    credits_.resize(port + 1, nullptr);
    hoq_lifetime_.resize(port + 1, Time::infinite());
  }
  credits_[port] = &params;
  hoq_lifetime_[port] = hoq_lifetime;
  if (qos != nullptr) {
    if (ib_qos_ != nullptr && !(*ib_qos_ == *qos))
      throw std::logic_error(name() +
                             ": every InfiniBand port of a switch has the same QoS tables");
    ib_qos_ = qos;
  }
}

void Switch::add_egress_hook(EgressHook& hook, uint8_t priorities, std::vector<uint32_t> ports) {
  if (sim().phase() != Phase::kBuild)
    throw std::logic_error(name() + ": egress hooks are added before setup");
  hook_regs_.push_back({&hook, priorities, std::move(ports)});
}

uint64_t ecmp_seed(uint64_t sim_seed, const std::string& name, const SwitchConfig& cfg) {
  return RngStream(sim_seed, cfg.per_switch_hash_seed ? name + ".ecmp" : "ecmp").next_u64();
}

Bytes pfc_headroom(const SwitchConfig& cfg, BitRate rate, Time cable_delay, Time neighbour_response,
                   BitRate slowest_in) {
  if (cfg.pfc.headroom.count() > 0) return cfg.pfc.headroom;
  return auto_pfc_headroom(cfg, rate, cable_delay, neighbour_response, slowest_in);
}

double small_frame_occupancy(uint32_t cell) {
  // A frame of F >= 64 bytes takes ceil(F/c) c bytes of buffer for F + 20
  // bytes of wire time. Within ((k-1) c, k c] the ratio falls with F, so the
  // candidates are F = 64 and the first frame past 64's cell, k c + 1;
  // past that, (k+1) c / (k c + 21) falls with k for c > 21 (is 1 at c =
  // 21), and for c <= 20 every ratio is below 1 (the wire count already
  // covers it).
  if (cell <= 1) return 1.0;
  const double c = cell;
  const double m = std::ceil(64.0 / c);
  const double at_64 = m * c / 84.0;
  const double past = (m + 1) * c / (m * c + 21.0);
  return std::max({1.0, at_64, past});
}

namespace {

Bytes auto_pfc_headroom_at(const SwitchConfig& cfg, BitRate rate, Time cable_delay,
                           Time neighbour_response, int small_packet_percentage,
                           BitRate slowest_in) {
  // The worst case of Cisco white paper c11-542809 (the common derivation;
  // IEEE 802.1Qbb's informative annex on PFC buffer requirements), in bits:
  //   2 L R / v + D_resp + 8 (MTU_any + 20) + 8 (64 + 20) + 8 (MTU_lossless + 20)
  // From the moment the queue crosses its threshold: the frame this switch is
  // sending on the port finishes (MTU_any), the PFC frame is sent (64 + 20),
  // crosses the cable (L / v), the neighbour acts on it after D_resp (its own
  // response delay: the neighbour's, not this switch's), finishes the frame
  // it is sending (MTU_lossless) and everything it sent meanwhile crosses the
  // cable back (L / v). The cable's propagation delay stands for L / v, the
  // largest Ethernet frame for both MTUs; PHY delays are not modelled (zero).
  // The dynamic threshold charges the packet that crosses it to headroom
  // (HPCC's MMU), one more lossless frame: 8 (MTU_lossless + 20).
  const double r = static_cast<double>(rate.in_bps());
  const double frame_bits = 8.0 * (cfg.max_frame + 20);
  const double crossing = cfg.pfc.threshold == PfcThreshold::kDynamic ? frame_bits : 0.0;
  // Cut-through: the frame being sent may come in at a slower port's rate,
  // and the port cannot end it before its last bit has arrived (link.h): it
  // takes 8 (MTU_any + 20) / R_in, the neighbour sending at R all along.
  const double r_in = static_cast<double>(slowest_in.in_bps());
  const double any_bits = cfg.forwarding == Forwarding::kCutThrough && r_in > 0 && r_in < r
                              ? frame_bits * r / r_in
                              : frame_bits;
  const double bits = 2 * cable_delay.in_seconds() * r + neighbour_response.in_seconds() * r +
                      any_bits + frame_bits + 8.0 * (64 + 20) + crossing;
  const double bytes = std::ceil(bits / 8);
  // Buffer is charged in whole cells, so what arrives takes more buffer than
  // wire: a frame of at least 1 KB wastes at most cell/1024 of itself; a
  // small frame of F bytes takes ceil(F/c) c bytes of buffer for F + 20 of
  // wire. A burst of minimum-size frames (ACKs released by a resume) is the
  // worst case, as SONiC's headroom calculation assumes by default.
  const double c = cfg.cell <= 1 ? 1.0 : cfg.cell;
  const double large = 1.0 + (c > 1 ? c / 1024.0 : 0.0);
  const double small = small_frame_occupancy(cfg.cell);
  const double p = small_packet_percentage / 100.0;
  const double charged = bytes * ((1.0 - p) * large + p * small);
  return Bytes(static_cast<int64_t>(std::ceil(charged / c) * c));
}

}  // namespace

Bytes auto_pfc_headroom(const SwitchConfig& cfg, BitRate rate, Time cable_delay,
                        Time neighbour_response, BitRate slowest_in) {
  return auto_pfc_headroom_at(cfg, rate, cable_delay, neighbour_response,
                              cfg.pfc.small_packet_percentage, slowest_in);
}

Bytes worst_case_pfc_headroom(const SwitchConfig& cfg, BitRate rate, Time cable_delay,
                              Time neighbour_response, BitRate slowest_in) {
  return auto_pfc_headroom_at(cfg, rate, cable_delay, neighbour_response, 100, slowest_in);
}

Bytes Switch::headroom_for(uint32_t port) const {
  const Link* l = this->port(port).link();
  // The queue of this port pauses the node at the cable's other end.
  return pfc_headroom(cfg_, l->rate(), l->delay(), l->to()->pfc_response_delay(), slowest_in_);
}

Bytes Switch::auto_headroom_for(uint32_t port) const {
  const Link* l = this->port(port).link();
  return auto_pfc_headroom(cfg_, l->rate(), l->delay(), l->to()->pfc_response_delay(), slowest_in_);
}

Bytes Switch::worst_case_headroom_for(uint32_t port) const {
  const Link* l = this->port(port).link();
  return worst_case_pfc_headroom(cfg_, l->rate(), l->delay(), l->to()->pfc_response_delay(),
                                 slowest_in_);
}

template <uint8_t kPoint>
[[gnu::always_inline]] inline void Switch::run_hooks(Packet& p, uint32_t port) {
  if ((hot_.hooks & kEcnAt(kPoint)) != 0) {
    // The marker's common outcome from lines the hop reads anyway (this
    // line, the packet, the MMU's count, the port's queue line): a priority
    // that does not mark, a packet not ECN-capable (or already CE), a queue
    // at or below kmin (EcnMarker contract 4).
    if (((hot_.ecn_priorities >> p.priority) & 1) != 0 && (p.ecn == 1 || p.ecn == 2)) {
      // The queue as the MMU counts it, this packet's own charge excluded.
      const int64_t q = hot_.mmu->egress_bytes(port, p.priority) - p.accounted;
      if (q > hot_.ports[port].queues.mark_floor()) ecn_->decide(port, p, q);
    }
    if ((hot_.hooks & kPoint) == 0) return;
  }
  run_hook_table<kPoint>(p, port);
}

template <uint8_t kPoint>
void Switch::run_hook_table(Packet& p, uint32_t port) {
  constexpr size_t kAt = kPoint == EgressHook::kAtDequeue;
  // Every port with the same hooks per priority (ECN on all of them): port
  // 0's ranges, shared by the switch's ports, not a per-queue entry (a line
  // per port and hop less).
  const size_t q =
      (hot_.uniform_hooks & kPoint) != 0 ? p.priority : size_t{port} * lanes_ + p.priority;
  const HookRange r = hook_range_[q * 2 + kAt];
  if (r.begin == r.end) return;
  const EgressView v(*this, *hot_.mmu, hot_.ports[port].queues, port, p.priority, p.accounted);
  for (uint32_t i = r.begin; i < r.end; ++i) {
    if constexpr (kPoint == EgressHook::kAtEnqueue) {
      hook_list_[i]->on_enqueue(v, p);
    } else {
      hook_list_[i]->on_dequeue(v, p);
    }
  }
}

void Switch::setup() {
  pipeline_.bind(ctx());
  const uint32_t n = num_ports();
  ports_ = std::vector<Port>(n);
  std::vector<Bytes> headroom(n);
  Pfc::Params pfc;
  pfc.quanta = cfg_.pfc.quanta;
  pfc.refresh = cfg_.pfc.refresh;
  pfc.response_delay = cfg_.pfc.response_delay;
  for (uint32_t i = 0; i < n; ++i) {
    ports_[i].set_lanes(lanes_);
    if (i < credits_.size() && credits_[i] != nullptr) {
      ports_[i].fc.use_credits(*credits_[i]);
      ports_[i].hoq_lifetime = hoq_lifetime_[i];
      if (ib_qos_ != nullptr) ports_[i].arb = std::make_unique<VlArbiter>(ib_qos_->vlarb);
      if (!hoq_lifetime_[i].is_infinite()) ports_[i].head_since.assign(lanes_, Time::zero());
    }
    ports_[i].fc.attach(ctx(), *this, i, id(), port(i).link()->rate(), pfc);
    headroom[i] = headroom_for(i);
  }
  // Ports whose headroom is below the worst case (the automatic value with
  // every frame minimum-size): a lossless drop there is what the configured
  // headroom or small_packet_percentage risks, counted, not a violation
  // (lossless_drop, sim/invariants.h). A credited port never drops for want
  // of room: always a violation.
  headroom_below_auto_.assign(n, false);
  for (uint32_t i = 0; i < n; ++i) {
    headroom_below_auto_[i] = !ports_[i].fc.credited() && headroom[i] < worst_case_headroom_for(i);
  }
  // A frame its neighbour sent ignoring a pause: the headroom it overfills
  // takes its own fill time at line rate (the automatic headroom's bytes) to
  // arrive; drops within that of such a frame are the watchdog's doing.
  pause_ignored_at_.assign(size_t{n} * lanes_, Time::infinite());
  pause_ignored_span_.assign(n, Time::zero());
  for (uint32_t i = 0; i < n; ++i)
    pause_ignored_span_[i] = auto_headroom_for(i) / port(i).link()->rate();
  hot_.watchdog_forward = cfg_.watchdog.enabled && cfg_.watchdog.action == WatchdogAction::kForward;
  hot_.ib = ib_qos_ != nullptr;
  hot_.credited =
      std::any_of(ports_.begin(), ports_.end(), [](const Port& pt) { return pt.fc.credited(); });
  checks_ = sim().checks();
  if (checks_) losses_ = std::make_unique<LossLedger>();
  mmu_ = std::make_unique<Mmu>(cfg_, n, std::move(headroom), lanes_);
  if (checks_) mmu_->enable_checks(*this);
  hot_.mmu = mmu_.get();
  hot_.ports = ports_.data();
  for (uint32_t i = 0; i < n; ++i) port(i).set_state_hint(&ports_[i]);
  // A cable failed from the start (topology.failed_links) is down already.
  for (uint32_t i = 0; i < n; ++i) {
    if (ports_[i].fc.credited() && port(i).link() != nullptr && !port(i).link()->up())
      ports_[i].link_down = true;
  }
  if (ecn_) {
    std::vector<BitRate> rates(n);
    for (uint32_t i = 0; i < n; ++i) rates[i] = port(i).link()->rate();
    ecn_->set_ports(rates);
    hot_.ecn_priorities = ecn_->priorities();
    for (uint32_t i = 0; i < n; ++i) ports_[i].queues.set_mark_floor(ecn_->floor(i));
  }
  // The hooks of every (port, priority, point), in registration order.
  for (const HookRegistration& r : hook_regs_) {
    for (const uint32_t i : r.ports) {
      if (i >= n) throw std::invalid_argument(name() + ": egress hook on a port it does not have");
    }
  }
  // Each distinct list of hooks is stored once (usually one: ECN on every
  // queue), so hook_list_ is a line or two however many ports.
  hook_range_.assign(size_t{n} * lanes_ * 2, HookRange{});
  hook_list_.clear();
  hot_.hooks = 0;
  hot_.uniform_hooks = EgressHook::kAtEnqueue | EgressHook::kAtDequeue;
  std::vector<EgressHook*> list;
  for (uint32_t i = 0; i < n; ++i) {
    for (uint8_t pr = 0; pr < lanes_; ++pr) {
      for (const uint8_t point : {EgressHook::kAtEnqueue, EgressHook::kAtDequeue}) {
        list.clear();
        for (const HookRegistration& r : hook_regs_) {
          if ((r.hook->points() & point) == 0 || ((r.priorities >> pr) & 1) == 0) continue;
          if (!r.ports.empty() && std::find(r.ports.begin(), r.ports.end(), i) == r.ports.end())
            continue;
          list.push_back(r.hook);
          hot_.hooks |= point;
        }
        HookRange range{0, 0};
        for (uint32_t b = 0; !list.empty() && b + list.size() <= hook_list_.size(); ++b) {
          if (std::equal(list.begin(), list.end(), hook_list_.begin() + b)) {
            range = {b, static_cast<uint32_t>(b + list.size())};
            break;
          }
        }
        if (!list.empty() && range.begin == range.end) {
          range.begin = static_cast<uint32_t>(hook_list_.size());
          hook_list_.insert(hook_list_.end(), list.begin(), list.end());
          range.end = static_cast<uint32_t>(hook_list_.size());
        }
        const size_t at = point == EgressHook::kAtDequeue;
        hook_range_[(size_t{i} * lanes_ + pr) * 2 + at] = range;
        // Uniform: the same hooks as port 0's (compared by content: two
        // equal lists may have been given different ranges).
        const HookRange& first = hook_range_[size_t{pr} * 2 + at];
        if (!std::equal(hook_list_.begin() + range.begin, hook_list_.begin() + range.end,
                        hook_list_.begin() + first.begin, hook_list_.begin() + first.end))
          hot_.uniform_hooks &= static_cast<uint8_t>(~point);
      }
    }
  }
  // The switch's own marker, called before the hooks, so it marks before
  // any hook reads the ECN field.
  if (ecn_) {
    hot_.hooks |= kEcnAt(hcfg().ecn_point == EcnPoint::kEnqueue ? EgressHook::kAtEnqueue
                                                                : EgressHook::kAtDequeue);
  }
}

uint64_t Switch::drops(DropReason r) const {
  uint64_t n = r == DropReason::kNoRoute ? counters_.dropped_no_route : 0;
  for (const Port& p : ports_) {
    for (const QueueEvents& c : p.events) n += c.drops[static_cast<size_t>(r)];
  }
  return n;
}

QueueCounters Switch::queue_counters(uint32_t port, uint8_t prio, Time end) const {
  const Port& pt = ports_[port];
  const QueueEvents& e = pt.events[prio];
  QueueCounters c;
  c.enqueued = pt.queues.enqueued(prio);
  c.ecn_marked = ecn_ ? ecn_->marked(port, prio) : 0;
  c.drops = e.drops;
  c.peak_bytes = pt.queues.peak_bytes(prio);
  c.watchdog_triggers = e.watchdog_triggers;
  c.hoq_discards = e.hoq_discards;
  c.xmit_wait = pt.fc.xmit_wait(prio, end);
  return c;
}

uint8_t Switch::classify(const Packet& p) const {
  return hcfg().trust == Trust::kDscp ? hcfg().dscp_to_priority[p.dscp & 63] : (p.pcp & 7);
}

int64_t Switch::route(const Packet& p, uint32_t in_port) {
  (void)in_port;
  switch (hcfg().ecmp) {
    case EcmpMode::kHash: {
      const uint32_t entropy =
          hcfg().hash_dest_qp ? p.flow_hash ^ (p.dst_qpn * 0x9e3779b1U) : p.flow_hash;
      const uint64_t key = ecmp_key(hot_.ecmp_seed, p.src, p.dst, entropy);
      if (const int64_t port = ForwardingTable::fast_select(hot_.fast, p.dst, key); port >= 0)
        return port;
      return fib_.select(p.dst, key);
    }
    case EcmpMode::kSpray: {
      return fib_.select(p.dst, rng_.next_u64());
    }
    case EcmpMode::kAdaptive: {
      // The least-loaded equal-cost port for this packet's priority; ties
      // broken by the flow hash so that equal loads do not all pick the first.
      int64_t best = -1;
      int64_t best_load = INT64_MAX;
      uint64_t best_tie = 0;
      const uint8_t prio = hot_.ib ? ib_qos_->sl2vl[p.sl & 15] : classify(p);
      fib_.for_each_port(p.dst, [&](uint32_t port) {
        const int64_t load =
            hot_.mmu->egress_bytes(port, prio) + (this->port(port).transmitting() ? 1 : 0);
        const uint64_t tie = mix64(hot_.ecmp_seed ^ p.flow_hash ^ port);
        if (load < best_load || (load == best_load && tie < best_tie)) {
          best = port;
          best_load = load;
          best_tie = tie;
        }
      });
      return best;
    }
  }
  return -1;
}

void Switch::receive(uint32_t port, PacketHandle p) {
  if (is_link_control(p->kind)) {
    Port& pt = hot_.ports[port];
    const Time recheck = pt.fc.on_control_frame(*p, ctx().now());
    pt.queues.cache_allowed(0, Time::zero());  // what may be sent has changed
    if (p->kind != PacketKind::kPfc) {
      ++counters_.fc_received;
      pt.credit_dirty = ~0U;  // a new credit limit
      note_credit_waits(pt, ctx().now());
      // Credits matter only to queued packets: a pull with none finds
      // nothing (and forward() wakes the port for the next one).
      if (!recheck.is_infinite() && pt.queues.nonempty_mask() != 0)
        this->port(port).wake_at(recheck);
      return;
    }
    ++counters_.pfc_received;
    if (pfc_probe.attached()) {
      for (uint8_t pr = 0; pr < pt.fc.lanes(); ++pr) {
        if ((p->pfc_class_enable >> pr) & 1) {
          pfc_probe.emit(PfcEvent{ctx().now(), id(), port, pr, p->pfc_quanta[pr] != 0, false,
                                  p->pfc_quanta[pr]});
        }
      }
    }
    if (!recheck.is_infinite()) this->port(port).wake_at(recheck);
    return;
  }
  if (hcfg().watchdog.enabled && !watchdog_.scheduled())
    ctx().schedule_in(watchdog_, hcfg().watchdog.timeout / 4);
  // InfiniBand: a packet is buffered on the VL it came by (its LRH's) and
  // leaves on the VL the SL-to-VL table gives its SL (IBA §7.6.6).
  // An SL mapped to VL15 (or beyond the lanes) is dropped (IBA §7.6.6),
  // counted with the packets that have no route; the loader keeps traffic
  // off such SLs.
  uint8_t in_prio = classify(*p);
  bool unroutable = false;
  if (hot_.ib) [[unlikely]] {
    in_prio = p->priority;
    unroutable = ib_qos_->sl2vl[p->sl & 15] >= lanes_;
  }
  hot_.mmu->prefetch(port, in_prio);
  if ((p->flags & kFlagPauseIgnored) != 0) [[unlikely]]
    note_pause_ignored(port, in_prio, *p);
  const int64_t egress = unroutable ? -1 : route(*p, port);
  if (egress < 0) {
    ++counters_.dropped_no_route;
    hot_.ports[port].fc.on_passed(in_prio, p->wire_bytes);  // credits: its blocks are free
    if (losses_) losses_->add(*p);
    if (drop_probe.attached())
      drop_probe.emit(
          DropEvent{ctx().now(), id(), port, in_prio, DropReason::kNoRoute, p->wire_bytes});
    return;
  }
  const auto out_port = static_cast<uint32_t>(egress);
  if (hot_.credited && hot_.ports[out_port].link_down) [[unlikely]] {
    hot_.ports[port].fc.on_passed(in_prio, p->wire_bytes);  // credits: its blocks are free
    const uint8_t out_vl = hot_.ib ? ib_qos_->sl2vl[p->sl & 15] : in_prio;
    drop(std::move(p), out_port, out_vl, DropReason::kPortDown);
    return;
  }
  if ((p->flags & (kFlagFirst | kFlagRetransmit)) == kFlagFirst && p->kind == PacketKind::kData &&
      route_probe.attached()) {
    route_probe.emit(*p, out_port);
  }
  uint8_t out_prio = in_prio;
  if (hot_.ib) [[unlikely]]
    out_prio = ib_qos_->sl2vl[p->sl & 15];
  if (hot_.rewrites) {
    for (const PriorityRewrite& r : rewrites_) {
      if (r.from != in_prio) continue;
      if (std::find(r.in_ports.begin(), r.in_ports.end(), port) == r.in_ports.end()) continue;
      if (!r.out_ports.empty() &&
          std::find(r.out_ports.begin(), r.out_ports.end(), out_port) == r.out_ports.end()) {
        continue;
      }
      out_prio = r.to;
      p->dscp = hcfg().priority_to_dscp[out_prio];
      p->pcp = out_prio;
      break;
    }
  }
  // Fetch what admit() and forward() will touch now, in parallel.
  hot_.mmu->prefetch(out_port, out_prio);
  hot_.ports[out_port].queues.prefetch_push(out_prio);
  // A stormed queue under the watchdog's drop action takes nothing.
  if (hcfg().watchdog.enabled && hcfg().watchdog.action == WatchdogAction::kDrop &&
      ctx().now() < hot_.ports[out_port].watchdog_until[out_prio]) {
    hot_.ports[port].fc.on_passed(in_prio, p->wire_bytes);
    drop(std::move(p), out_port, out_prio, DropReason::kWatchdog);
    return;
  }
  const uint32_t bytes = hot_.mmu->charge(HeaderSet(p->headers).frame_bytes_of_wire(p->wire_bytes));
  const DropReason verdict = hot_.mmu->admit(port, in_prio, out_port, out_prio, bytes);
  if (verdict != DropReason::kNone) {
    if (verdict == DropReason::kHeadroom || hot_.ports[port].fc.credited())
      lossless_drop(port, in_prio, *p);
    hot_.ports[port].fc.on_passed(in_prio, p->wire_bytes);
    drop(std::move(p), out_port, out_prio, verdict);
    return;
  }
  p->ingress_port = static_cast<uint16_t>(port);
  p->egress_port = static_cast<uint16_t>(out_port);
  p->ingress_priority = in_prio;
  p->priority = out_prio;
  p->accounted = bytes;
  hot_.ports[port].fc.on_arrival(in_prio, p->wire_bytes,
                                 [&] { return hot_.mmu->xoff_due(port, in_prio); });
  if (hcfg().latency == Time::zero()) {
    forward(std::move(p));
  } else {
    pipeline_.push(std::move(p));
  }
}

void Switch::leave_pipeline(PacketHandle p) {
  const uint32_t out = p->egress_port;
  const uint8_t prio = p->priority;
  const Port& pt = hot_.ports[out];
  DropReason why = DropReason::kNone;
  if (hcfg().watchdog.enabled && hcfg().watchdog.action == WatchdogAction::kDrop &&
      ctx().now() < pt.watchdog_until[prio]) {
    why = DropReason::kWatchdog;  // as receive() drops arrivals for a stormed queue
  } else if (hot_.credited && pt.link_down) {
    why = DropReason::kPortDown;
  }
  if (why == DropReason::kNone) {
    forward(std::move(p));
    return;
  }
  // Admitted at receive(): its buffer and ingress lane are released.
  hot_.mmu->release(p->ingress_port, p->ingress_priority, out, prio, p->accounted);
  const uint32_t in = p->ingress_port;
  const uint8_t in_prio = p->ingress_priority;
  hot_.ports[in].fc.on_departure(in_prio, p->wire_bytes,
                                 [&] { return hot_.mmu->xon_due(in, in_prio); });
  drop(std::move(p), out, prio, why);
}

void Switch::forward(PacketHandle p) {
  const uint32_t out = p->egress_port;
  const uint8_t prio = p->priority;
  if ((hot_.hooks & (EgressHook::kAtEnqueue | kEcnAt(EgressHook::kAtEnqueue))) != 0) [[unlikely]]
    run_hooks<EgressHook::kAtEnqueue>(*p, out);
  Port& pt = hot_.ports[out];
  pt.queues.push(prio, std::move(p), ctx().now());
  if (hot_.credited && pt.fc.credited()) [[unlikely]] {
    if (pt.queues.packets(prio) == 1) {
      if (!pt.head_since.empty()) new_head(pt, prio, ctx().now());
      pt.credit_dirty |= 1U << prio;  // a new head
    }
    const Time now = ctx().now();
    note_credit_waits(pt, now);
    if (!hot_.watchdog_forward) {
      // Only this lane's answer matters, and credits never let allowed()
      // cache one beyond `now`: ask for it alone. (A switch queues data VLs
      // only: receive() drops an SL mapped beyond them.)
      assert(prio < pt.fc.lanes());
      if (pt.fc.may_send(prio, pt.queues.packet(prio, 0), now)) {
        port(out).wake();
      } else {
        wake_on_pause_change(out, now);
      }
      return;
    }
  }
  // Into a paused queue: no pull now, it would find nothing; a pull when the
  // pause may end instead (a resume frame brings it forward; without one,
  // the pause simply expires). No earlier pull need have scheduled it: the
  // queue may have been empty when the pause came.
  const Time now = ctx().now();
  if (((allowed(pt, now) >> prio) & 1) != 0) {
    port(out).wake();
  } else if (now < pt.queues.allowed_until()) {
    // allowed() has just cached when the pause state next changes.
    if (!pt.queues.allowed_until().is_infinite()) port(out).wake_at(pt.queues.allowed_until());
  } else {
    wake_on_pause_change(out, now);  // the watchdog's forward mode keeps no cache
  }
}

// The priorities port `pt` may send now: those PFC has not paused (or whose
// pause the watchdog ignores). Cached in the queues' first line until the
// pause state can next change.
// Inlined into forward() and next_packet(), as before the policy choice grew it.
[[gnu::always_inline]] inline uint16_t Switch::allowed(Port& pt, Time now) {
  if (hcfg().watchdog.enabled && hcfg().watchdog.action == WatchdogAction::kForward) {
    uint16_t allowed = 0;
    for (uint8_t pr = 0; pr < pt.fc.lanes(); ++pr) {
      if (now < pt.watchdog_until[pr] || !pt.fc.paused(pr, now))
        allowed |= static_cast<uint16_t>(1U << pr);
    }
    return allowed;
  }
  if (now < pt.queues.allowed_until()) return pt.queues.cached_allowed();
  Time until;
  const auto allowed =
      static_cast<uint16_t>(pt.fc.sendable(now, until, pt.queues.nonempty_mask(), [&](uint8_t l) {
        return pt.queues.packets(l) > 0 ? &pt.queues.packet(l, 0) : nullptr;
      }));
  pt.queues.cache_allowed(allowed, until);
  return allowed;
}

PacketHandle Switch::next_packet(uint32_t port) {
  Port& pt = hot_.ports[port];
  EgressQueues& q = pt.queues;
  if (q.has_control()) return q.pop_control();
  if (q.nonempty_mask() == 0) return {};
  const Time now = ctx().now();
  if (hot_.credited && pt.fc.credited()) [[unlikely]]
    note_credit_waits(pt, now);
  PacketHandle p =
      pt.arb == nullptr ? q.pop(allowed(pt, now), hcfg(), now) : pop_arbitrated(pt, now);
  if (!p) {
    // All that is queued is paused: pull again when a pause may end, even if
    // no frame ends it (a pause that simply expires).
    wake_on_pause_change(port, now);
    return p;
  }
  if ((hot_.hooks & (EgressHook::kAtDequeue | kEcnAt(EgressHook::kAtDequeue))) != 0) [[unlikely]]
    run_hooks<EgressHook::kAtDequeue>(*p, port);
  // Sent although paused: the watchdog forwards a stormed queue.
  if (hot_.watchdog_forward && pt.fc.paused(p->priority, now)) [[unlikely]]
    p->flags |= kFlagPauseIgnored;
  hot_.mmu->release(p->ingress_port, p->ingress_priority, port, p->priority, p->accounted);
  const uint32_t in = p->ingress_port;
  const uint8_t in_prio = p->ingress_priority;
  if (hot_.credited) [[unlikely]] {
    pt.fc.on_transmit(p->priority, *p);
    pt.credit_dirty |= 1U << p->priority;  // a new head, fewer credits
    if (pt.fc.credited() && !pt.head_since.empty() && pt.queues.packets(p->priority) > 0)
      new_head(pt, p->priority, now);
  }
  // With credits its flow-control packet may go at once, but not on this
  // port, whose frame has not started yet.
  hot_.ports[in].fc.on_departure(
      in_prio, p->wire_bytes, [&] { return hot_.mmu->xon_due(in, in_prio); }, in != port);
  return p;
}

// Kept out of next_packet(), whose Ethernet path it would otherwise crowd.
PacketHandle Switch::pop_arbitrated(Port& pt, Time now) {
  return pt.queues.pop_arbitrated(allowed(pt, now), *pt.arb, now);
}

void Switch::wake_on_pause_change(uint32_t port, Time now) const {
  const Time until = hot_.ports[port].fc.stops_change_at(now);
  if (!until.is_infinite()) this->port(port).wake_at(until);
}

Time Switch::next_pull(uint32_t port, Time frame_end) const {
  // forward() and send_pfc() wake the port for anything new.
  const Port& pt = hot_.ports[port];
  return pt.queues.has_control() || pt.queues.nonempty_mask() != 0 ? frame_end : Time::infinite();
}

void Switch::drop(PacketHandle p, uint32_t port, uint8_t prio, DropReason why) {
  ++ports_[port].events[prio].drops[static_cast<size_t>(why)];
  if (losses_) losses_->add(*p);
  if (drop_probe.attached())
    drop_probe.emit(DropEvent{ctx().now(), id(), port, prio, why, p->wire_bytes});
}

void Switch::add_in_flight(std::map<uint64_t, int64_t>& to) const {
  auto add = [&](const Packet& p) {
    if (p.kind == PacketKind::kData) to[LossLedger::key(p.src, p.src_qpn)] += p.payload_bytes;
  };
  pipeline_.for_each(add);
  for (const Port& pt : ports_) {
    for (uint8_t pr = 0; pr < lanes_; ++pr) {
      for (size_t n = 0; n < pt.queues.packets(pr); ++n) add(pt.queues.packet(pr, n));
    }
  }
}

void Switch::note_pause_ignored(uint32_t port, uint8_t prio, Packet& p) {
  p.flags &= static_cast<uint8_t>(~kFlagPauseIgnored);  // this hop's, not the next's
  pause_ignored_at_[size_t{port} * lanes_ + prio] = ctx().now();
}

void Switch::lossless_drop(uint32_t in_port, uint8_t in_prio, const Packet& p) {
  if (headroom_below_auto_[in_port]) {
    ++counters_.lossless_drops_headroom_below_automatic;
    return;
  }
  // The neighbour's watchdog sent on this queue ignoring its pause (this
  // frame, or one within the headroom's fill time): what the watchdog's
  // forward action is configured to do in a storm.
  const Time ignored = pause_ignored_at_[size_t{in_port} * lanes_ + in_prio];
  if (!ignored.is_infinite() && ctx().now() - ignored <= pause_ignored_span_[in_port]) {
    ++counters_.lossless_drops_watchdog_forward;
    return;
  }
  if (!checks_) return;
  if (ports_[in_port].fc.credited()) {
    // Credits grant only room the buffer has: any drop for room is a bug.
    throw InvariantViolation(
        "lossless_drop",
        name() + " port " + std::to_string(in_port) + " VL " + std::to_string(in_prio), ctx().now(),
        "a " + std::to_string(p.wire_bytes) +
            " B packet dropped for want of buffer on a credited VL (" +
            std::to_string(mmu_->used()) + " B of the switch's buffer in use)");
  }
  // A pause lost on its way (the cable down, or bit errors on it) lets the
  // neighbour go on sending: a drop then is what the fault does, not a bug.
  const Link& out = *port(in_port).link();
  if (out.counters().lost_down > 0 || out.bit_error_rate() > 0) return;
  const Bytes worst_case = worst_case_headroom_for(in_port);
  throw InvariantViolation(
      "lossless_drop",
      name() + " port " + std::to_string(in_port) + " priority " + std::to_string(in_prio),
      ctx().now(),
      "a " + std::to_string(p.wire_bytes) + " B frame dropped for want of headroom (" +
          std::to_string(mmu_->headroom_used(in_port, in_prio)) + " B of " +
          std::to_string(mmu_->headroom(in_port).count()) +
          " B in use), though the headroom is not below the worst-case automatic " +
          std::to_string(worst_case.count()) + " B");
}

void Switch::emit_link_control(uint32_t port, PacketHandle frame) {
  if (frame->kind != PacketKind::kPfc) {
    ++counters_.fc_sent;
    // Ahead of everything: at once on an idle port (no pull event for it).
    EgressQueues& q = hot_.ports[port].queues;
    if (!queue_control_ && !q.has_control() && this->port(port).send_now(frame)) return;
    q.push_control(std::move(frame));
    this->port(port).wake();
    return;
  }
  if (pfc_probe.attached()) {
    const auto prio = static_cast<uint8_t>(__builtin_ctz(frame->pfc_class_enable));
    const uint16_t quanta = frame->pfc_quanta[prio];
    pfc_probe.emit(PfcEvent{ctx().now(), id(), port, prio, quanta != 0, true, quanta});
  }
  hot_.ports[port].queues.push_control(std::move(frame));
  ++counters_.pfc_sent;
  this->port(port).wake();
}

void Switch::on_link_down(uint32_t port) {
  Port& pt = hot_.ports[port];
  if (!pt.fc.credited()) return;
  pt.link_down = true;
  for (uint8_t pr = 0; pr < lanes_; ++pr) {
    while (!pt.queues.empty(pr)) drop(take_and_release(port, pr), port, pr, DropReason::kPortDown);
  }
  note_credit_waits(pt, ctx().now());
}

void Switch::on_link_up(uint32_t port) {
  Port& pt = hot_.ports[port];
  pt.link_down = false;
  if (!pt.fc.credited()) return;
  // Flow-control packets made before the restart and not sent yet carry
  // the old counts: the new ones replace them (never on the wire, not
  // counted as sent).
  while (pt.queues.has_control()) {
    pt.fc.discarded(*pt.queues.pop_control());
    --counters_.fc_sent;
  }
  // This runs between phases (an observer's event): the new grants are
  // queued and the port woken, so that they leave from an event of its
  // partition (a frame sent from here would wait, unseen, in the channel
  // to another partition).
  queue_control_ = true;
  pt.fc.on_link_up();
  queue_control_ = false;
  // Nothing may be sent on the port until the neighbour's first grant.
  pt.queues.cache_allowed(0, Time::zero());
  pt.credit_dirty = ~0U;
  note_credit_waits(pt, ctx().now());
}

void Switch::note_dirty_credit_waits(Port& pt, Time now) {
  // Only a lane with packets or one noted waiting can change: an empty lane
  // that is not waiting stays so. Of those, only a lane whose head or
  // credits changed since the last look, unless grants are pending.
  const uint32_t dirty = pt.fc.grants_pending() ? ~0U : pt.credit_dirty;
  pt.credit_dirty = 0;
  for (uint32_t m =
           (pt.queues.nonempty_mask() | pt.fc.waiting_mask()) & ((1U << lanes_) - 1) & dirty;
       m != 0; m &= m - 1) {
    const auto l = static_cast<uint8_t>(__builtin_ctz(m));
    pt.fc.note_waiting(l, !pt.queues.empty(l) && !pt.fc.may_send(l, pt.queues.packet(l, 0), now),
                       now);
  }
}

void Switch::new_head(Port& pt, uint8_t prio, Time now) {
  pt.head_since[prio] = now;
  const Time deadline = now + pt.hoq_lifetime;
  if (!hoq_timer_.scheduled()) {
    ctx().schedule(hoq_timer_, deadline);
  } else if (hoq_timer_.when() > deadline) {
    ctx().reschedule(hoq_timer_, deadline);
  }
}

void Switch::on_hoq_timer() {
  // A packet that has waited at the head of its egress queue for the
  // port's lifetime is discarded (IBA §18.2.5.4; OpenSM
  // head_of_queue_lifetime): the next one is at the head from now.
  const Time now = ctx().now();
  Time next = Time::infinite();
  for (uint32_t i = 0; i < ports_.size(); ++i) {
    Port& pt = ports_[i];
    if (pt.head_since.empty()) continue;
    bool discarded = false;
    for (uint8_t pr = 0; pr < lanes_; ++pr) {
      if (pt.queues.empty(pr)) continue;
      if (now - pt.head_since[pr] >= pt.hoq_lifetime) {
        PacketHandle p = take_and_release(i, pr);
        ++pt.events[pr].hoq_discards;
        ++counters_.hoq_discards;
        if (losses_) losses_->add(*p);
        if (drop_probe.attached()) {
          drop_probe.emit(
              DropEvent{now, id(), i, pr, DropReason::kHeadOfQueueLifetime, p->wire_bytes});
        }
        pt.head_since[pr] = now;
        discarded = true;
      }
      if (!pt.queues.empty(pr)) next = std::min(next, pt.head_since[pr] + pt.hoq_lifetime);
    }
    if (discarded) {
      note_credit_waits(pt, now);
      port(i).wake();  // the new head may fit the credits
    }
  }
  if (!next.is_infinite()) ctx().schedule(hoq_timer_, next);
}

// A queued packet taken out without being sent (discarded or dropped): its
// buffer released and its ingress lane told, as when a packet leaves.
PacketHandle Switch::take_and_release(uint32_t port, uint8_t prio) {
  PacketHandle p = ports_[port].queues.take(prio);
  // The dequeue hooks (queue averages) see it leave.
  const size_t q = (hot_.uniform_hooks & EgressHook::kAtDequeue) != 0
                       ? size_t{prio}
                       : size_t{port} * lanes_ + prio;
  const HookRange r = hook_range_[q * 2 + 1];
  if (r.begin != r.end) {
    const EgressView v(*this, *hot_.mmu, ports_[port].queues, port, prio, p->accounted);
    for (uint32_t i = r.begin; i < r.end; ++i) hook_list_[i]->on_discard(v, *p);
  }
  ports_[port].credit_dirty |= 1U << prio;  // a new head
  hot_.mmu->release(p->ingress_port, p->ingress_priority, port, prio, p->accounted);
  const uint32_t in = p->ingress_port;
  const uint8_t in_prio = p->ingress_priority;
  hot_.ports[in].fc.on_departure(in_prio, p->wire_bytes,
                                 [&] { return hot_.mmu->xon_due(in, in_prio); });
  return p;
}

void Switch::on_watchdog() {
  // A queue is stormed when it has been paused, with packets waiting and
  // nothing sent, for longer than the timeout.
  const Time now = ctx().now();
  for (uint32_t i = 0; i < ports_.size(); ++i) {
    Port& pt = ports_[i];
    for (uint8_t pr = 0; pr < pt.fc.lanes(); ++pr) {
      if (now < pt.watchdog_until[pr]) continue;
      if (pt.queues.empty(pr) || !pt.fc.paused(pr, now)) continue;
      if (now - pt.queues.last_sent(pr) < cfg_.watchdog.timeout) continue;
      pt.watchdog_until[pr] = now + cfg_.watchdog.restore;
      ++pt.events[pr].watchdog_triggers;
      if (cfg_.watchdog.action == WatchdogAction::kDrop) {
        while (!pt.queues.empty(pr)) {
          drop(take_and_release(i, pr), i, pr, DropReason::kWatchdog);
        }
      } else {
        port(i).wake();
      }
    }
  }
  // Keep watching only while something is buffered; an arrival restarts it.
  if (hot_.mmu->used() > 0) ctx().schedule_in(watchdog_, cfg_.watchdog.timeout / 4);
}

}  // namespace rdmasim
