#include "models/collective/collective.h"

#include <algorithm>
#include <cassert>

#include "models/collective/hierarchical.h"
#include "models/collective/ring.h"
#include "models/collective/tree.h"
#include "models/traffic/flow_generator.h"

namespace rdmasim {

const char* to_string(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::kAllReduce:
      return "all_reduce";
    case CollectiveOp::kAllGather:
      return "all_gather";
    case CollectiveOp::kReduceScatter:
      return "reduce_scatter";
  }
  return "?";
}

const char* to_string(CollectiveAlgorithm a) {
  switch (a) {
    case CollectiveAlgorithm::kRing:
      return "ring";
    case CollectiveAlgorithm::kTree:
      return "tree";
    case CollectiveAlgorithm::kHierarchical:
      return "hierarchical";
  }
  return "?";
}

double bus_factor(CollectiveOp op, uint32_t n) {
  const double f = static_cast<double>(n - 1) / static_cast<double>(n);
  return op == CollectiveOp::kAllReduce ? 2 * f : f;
}

namespace {

// Work request ids: element << 32 | connection * 2, + 1 for a FIFO entry.
constexpr uint64_t kFifoBit = 1;
uint64_t wr_id(uint64_t g, uint32_t conn, bool fifo) {
  return (g << 32) | (uint64_t{conn} << 1) | (fifo ? kFifoBit : 0);
}

}  // namespace

Collective::Collective(Simulation& sim, std::string name, CollectiveSpec spec,
                       const std::vector<RdmaNic*>& nics)
    : Workload(sim, std::move(name)), spec_(std::move(spec)), nics_(nics) {
  const auto n = static_cast<uint32_t>(spec_.ranks.size());
  first_iter_.push_back(0);
  for (size_t ph = 0; ph < spec_.phases(); ++ph) {
    const int64_t bytes = spec_.phase_bytes(ph);
    switch (spec_.algorithm) {
      case CollectiveAlgorithm::kRing:
        plans_.push_back(ring_plan(spec_.op, n, bytes, spec_.channels, spec_.slot_bytes(),
                                   std::max<uint32_t>(1, spec_.steps / 2), spec_.rail_rings()));
        break;
      case CollectiveAlgorithm::kTree:
        assert(spec_.op == CollectiveOp::kAllReduce);
        plans_.push_back(
            tree_plan(n, bytes, spec_.channels, spec_.slot_bytes(), spec_.server_trees()));
        break;
      case CollectiveAlgorithm::kHierarchical:
        assert(spec_.op == CollectiveOp::kAllReduce && spec_.servers.gpus >= 2);
        plans_.push_back(hierarchical_plan(spec_.servers, bytes, spec_.channels, spec_.slot_bytes(),
                                           std::max<uint32_t>(1, spec_.steps / 2)));
        break;
    }
    first_iter_.push_back(first_iter_.back() + spec_.phase_iterations());
  }
  assert(first_iter_.back() == spec_.iterations);
  const CollectivePlan& plan0 = plans_[0];
  rank_.resize(n);
  for (uint32_t r = 0; r < n; ++r) rank_[r].host = spec_.ranks[r];
  for (const PlanConnection& pc : plan0.conns)
    plan_channels_ = std::max(plan_channels_, pc.channel + 1);
  reduce_free_.assign(size_t{n} * plan_channels_, Time::zero());
  first_qpn_.assign(nics_.size(), 0);
  ends_.resize(nics_.size());
  conns_.resize(plan0.conns.size());
  const auto create = [&](uint32_t host, uint32_t end) {
    const uint32_t q = nics_[host]->create_qp(this);
    if (ends_[host].empty()) first_qpn_[host] = q;
    assert(q == first_qpn_[host] + ends_[host].size());
    ends_[host].push_back(end);
    return q;
  };
  const uint32_t nq = spec_.qps;
  for (uint32_t i = 0; i < conns_.size(); ++i) {
    const PlanConnection& pc = plan0.conns[i];
    Conn& c = conns_[i];
    c.sender_host = spec_.ranks[pc.sender];
    c.receiver_host = spec_.ranks[pc.receiver];
    size_t most = 0;
    uint64_t base = 0;
    for (size_t ph = 0; ph < plans_.size(); ++ph) {
      const PlanConnection& pp = plans_[ph].conns[i];
      // Every size's plan has the same connections (the algorithm's shape).
      assert(pp.sender == pc.sender && pp.receiver == pc.receiver && pp.channel == pc.channel);
      c.phase_elems.push_back(pp.elems.size());
      c.phase_base.push_back(base);
      base += uint64_t{pp.elems.size()} * spec_.phase_iterations();
      most = std::max(most, pp.elems.size());
    }
    c.ready_at.assign(most, Time::zero());
    c.used.assign(most, 0);
    c.parts_acked.assign(spec_.steps, 0);
    c.parts_in.assign(spec_.steps, 0);
    c.parts_sent.assign(spec_.steps, 0);
    RdmaNic& s = *nics_[c.sender_host];
    RdmaNic& d = *nics_[c.receiver_host];
    for (uint32_t q = 0; q < nq; ++q) {
      const uint32_t end = (i * nq + q) * 2;
      c.qs.push_back(create(c.sender_host, end));
      c.qr.push_back(create(c.receiver_host, end + 1));
      // Each QP its own UDP source port: ECMP may put them on different paths.
      const uint32_t sport = roce_source_port(c.sender_host, c.qs[q]);
      s.connect_qp(c.qs[q], c.receiver_host, c.qr[q], sport);
      d.connect_qp(c.qr[q], c.sender_host, c.qs[q], sport);
      if (spec_.sl >= 0) {
        s.set_qp_sl(c.qs[q], static_cast<uint8_t>(spec_.sl));
        d.set_qp_sl(c.qr[q], static_cast<uint8_t>(spec_.sl));
      }
      // Every part of an element and every FIFO entry (on QP 0) is a WRITE
      // with immediate: one receive WQE each, posted up front.
      int64_t parts = 0;
      for (const CollectivePlan& pl : plans_) {
        for (const PlanElement& e : pl.conns[i].elems) {
          parts += (qp_parts(e.bytes, nq) > q ? 1 : 0) * int64_t{spec_.phase_iterations()};
        }
      }
      d.post_receives(c.qr[q], parts);
      if (q == 0) s.post_receives(c.qs[q], static_cast<int64_t>(base));
      if (spec_.cc) {
        s.set_congestion_control(c.qs[q], spec_.cc->make());
        d.set_congestion_control(c.qr[q], spec_.cc->make());
      }
    }
    rank_[pc.sender].out.push_back(i);
    rank_[pc.receiver].in.push_back(i);
  }
  iters_.resize(size_t{spec_.iterations} * n);
  cur_steps_.resize(size_t{n} * plan0.steps);
  step_rows_.resize(n);
  rank_rx_.assign(n, 0);
  relay_rx_.assign(n, 0);
  for (uint32_t r = 0; r < n; ++r) {
    kicks_.push_back(std::make_unique<IndexedEvent<Collective, &Collective::kick>>(
        this, r, EventClass::kTraffic, id()));
  }
}

void Collective::setup() {
  for (RankState& rs : rank_) {
    nics_[rs.host]->ctx().hold();
    rs.held = true;
    rs.next_start = spec_.start;
  }
  for (uint32_t r = 0; r < rank_.size(); ++r) wake(r, spec_.start);
}

uint32_t Collective::end_of(uint32_t host, uint32_t qpn) const {
  return ends_[host][qpn - first_qpn_[host]];
}

void Collective::wake(uint32_t rank, Time at) {
  Event& e = *kicks_[rank];
  Partition& p = nics_[rank_[rank].host]->ctx();
  if (!e.scheduled()) {
    p.schedule(e, at);
  } else if (e.when() > at) {
    p.reschedule(e, at);
  }
}

void Collective::on_send_completion(uint32_t host, const Completion& c) {
  const auto conn = static_cast<uint32_t>((c.wr_id & 0xFFFFFFFF) >> 1);
  const uint32_t rank =
      (c.wr_id & kFifoBit) != 0 ? plans_[0].conns[conn].receiver : plans_[0].conns[conn].sender;
  if (c.status != WcStatus::kSuccess) {
    fail(rank);
    return;
  }
  if ((c.wr_id & kFifoBit) != 0) return;  // a FIFO entry landed: nothing waits for that
  // A part acknowledged; send slots are free again once all the parts of
  // the elements before them are.
  Conn& k = conns_[conn];
  ++k.parts_acked[(c.wr_id >> 32) % spec_.steps];
  bool freed = false;
  while (k.send_done < k.posted) {
    uint8_t& a = k.parts_acked[k.send_done % spec_.steps];
    if (a < k.parts_sent[k.send_done % spec_.steps]) break;
    a = 0;
    ++k.send_done;
    freed = true;
  }
  if (freed) wake(rank, nics_[host]->ctx().now());
}

void Collective::on_receive_completion(uint32_t host, const Completion& c) {
  const uint32_t end = end_of(host, c.qpn);
  const uint32_t conn = (end >> 1) / spec_.qps;
  Conn& k = conns_[conn];
  const Time now = c.completed;
  if ((end & 1) == 0) {
    // At the sender: a FIFO entry, one more slot offered.
    assert(c.imm == static_cast<uint32_t>(k.offered));
    ++k.offered;
    wake(plans_[0].conns[conn].sender, now);
    return;
  }
  const PlanConnection& pc = *k.recv.pc;
  const uint32_t nsteps = plans_[0].steps;
  // At the receiver: a part of an element (imm: the element, counted over
  // iterations); the elements whose parts have all arrived, in order, have
  // arrived.
  const uint64_t base = k.recv.base;
  assert(c.imm >= k.arrived && c.imm < base + k.recv.elems);
  ++k.parts_in[c.imm % spec_.steps];
  StepRecord* const row = &cur_steps_[size_t{pc.receiver} * nsteps];
  const PlanElement& part_of = pc.elems[c.imm - base];
  if (part_of.relay) {
    relay_rx_[pc.receiver] += c.bytes;  // a PXN proxy's: not its rank's data
  } else {
    rank_rx_[pc.receiver] += c.bytes;
    row[part_of.step].bytes += c.bytes;
  }
  Time first = Time::infinite();
  while (k.arrived < base + k.recv.elems) {
    uint8_t& got = k.parts_in[k.arrived % spec_.steps];
    const uint64_t e = k.arrived - base;
    const PlanElement& pe = pc.elems[e];
    if (got < qp_parts(pe.bytes, spec_.qps)) break;
    got = 0;
    Time t = now;
    if (pe.reduce && spec_.reduce_rate.in_bps() > 0) {
      Time& busy = reduce_free_[size_t{pc.receiver} * plan_channels_ + pc.channel];
      t = std::max(now, busy) +
          Time::ps(static_cast<int64_t>((static_cast<__int128>(pe.bytes) * 8 * 1'000'000'000'000) /
                                        spec_.reduce_rate.in_bps()));
      busy = t;
    }
    k.ready_at[e] = t;
    ++k.arrived;
    if (!pe.relay) {
      StepRecord& sr = row[pe.step];
      sr.end = sr.end.is_infinite() ? now : std::max(sr.end, now);
    }
    first = std::min(first, t);
  }
  if (!first.is_infinite()) wake(pc.receiver, first);
}

void Collective::kick(uint32_t rank) {
  RankState& rs = rank_[rank];
  const Time now = nics_[rs.host]->ctx().now();
  if (rs.failed) return;
  if (!rs.active) {
    if (rs.iter >= spec_.iterations) return;
    if (now < rs.next_start) {
      wake(rank, rs.next_start);  // woken early (a slot offered for its next iteration)
      return;
    }
    begin_iteration(rank);
  }
  // Received elements become usable in order as their reductions end; those
  // nothing forwards free their slot at once.
  Time next = Time::infinite();
  for (const uint32_t x : rs.in) {
    Conn& k = conns_[x];
    const uint64_t base = k.recv.base;
    while (k.ready < k.arrived) {
      const uint64_t e = k.ready - base;
      if (k.ready_at[e] > now) {
        next = std::min(next, k.ready_at[e]);
        break;
      }
      ++k.ready;
      if (k.recv.pc->elems[e].consumers == 0) use(x, e);
    }
  }
  for (const uint32_t y : rs.out) try_send(rank, y);
  if (rs.pending == 0) end_iteration(rank);
  if (!next.is_infinite()) wake(rank, next);
}

void Collective::begin_iteration(uint32_t rank) {
  RankState& rs = rank_[rank];
  rs.active = true;
  const Time now = nics_[rs.host]->ctx().now();
  RankIteration& ri = iters_[size_t{rs.iter} * ranks() + rank];
  ri.start = now;
  while (rs.iter >= first_iter_[rs.phase + 1]) ++rs.phase;
  const uint32_t p = rs.phase;
  const uint64_t in_phase = rs.iter - first_iter_[p];
  rs.pending = 0;
  for (const uint32_t y : rs.out) {
    Conn& k = conns_[y];
    k.send = current(y, p, in_phase);
    rs.pending += k.send.elems;
  }
  for (const uint32_t x : rs.in) {
    Conn& k = conns_[x];
    k.recv = current(x, p, in_phase);
    rs.pending += k.recv.elems;
    reduce_free_[size_t{rank} * plan_channels_ + k.recv.pc->channel] = now;
    // Offer the first NCCL_STEPS slots.
    const uint64_t base = k.recv.base;
    for (uint64_t g = base; g < base + std::min<uint64_t>(spec_.steps, k.recv.elems); ++g) {
      offer(x, g);
    }
  }
}

void Collective::take_step_rows(Time before, std::vector<StepRow>& out) {
  for (std::vector<StepRow>& rows : step_rows_) {
    const auto end = std::partition_point(rows.begin(), rows.end(),
                                          [&](const StepRow& r) { return r.done < before; });
    out.insert(out.end(), rows.begin(), end);
    rows.erase(rows.begin(), end);
  }
}

void Collective::take_open_step_rows(std::vector<StepRow>& out) {
  if (!record_steps_) return;
  const uint32_t nsteps = plans_[0].steps;
  for (uint32_t rank = 0; rank < ranks(); ++rank) {
    const RankState& rs = rank_[rank];
    if (!rs.active) continue;
    for (uint32_t st = 0; st < nsteps; ++st) {
      out.push_back(
          {Time::infinite(), rs.host, rs.iter, rank, st, cur_steps_[size_t{rank} * nsteps + st]});
    }
  }
}

Collective::Conn::Current Collective::current(uint32_t c, uint32_t p, uint64_t in_phase) const {
  const Conn& k = conns_[c];
  return {k.phase_base[p] + in_phase * k.phase_elems[p], k.phase_elems[p], &plans_[p].conns[c]};
}

void Collective::end_iteration(uint32_t rank) {
  RankState& rs = rank_[rank];
  const Time now = nics_[rs.host]->ctx().now();
  RankIteration& ri = iters_[size_t{rs.iter} * ranks() + rank];
  ri.end = now;
  ++ri.ends;
  rs.active = false;
  const uint32_t nsteps = plans_[0].steps;
  StepRecord* const row = &cur_steps_[size_t{rank} * nsteps];
  for (uint32_t st = 0; st < nsteps; ++st) {
    if (record_steps_) step_rows_[rank].push_back({now, rs.host, rs.iter, rank, st, row[st]});
    row[st] = StepRecord{};
  }
  ++rs.iter;
  if (rs.iter < spec_.iterations) {
    rs.next_start = now + spec_.gap;
    wake(rank, rs.next_start);
  } else if (rs.held) {
    rs.held = false;
    nics_[rs.host]->ctx().release();
  }
}

void Collective::try_send(uint32_t rank, uint32_t y) {
  RankState& rs = rank_[rank];
  Conn& k = conns_[y];
  const PlanConnection& pc = *k.send.pc;
  const uint64_t base = k.send.base;
  RdmaNic& nic = *nics_[rs.host];
  while (k.posted < base + k.send.elems && k.posted < k.offered &&
         k.posted < k.send_done + spec_.steps) {
    const uint64_t e = k.posted - base;
    const PlanElement& pe = pc.elems[e];
    if (!deps_ready(pe)) break;
    const uint32_t parts = qp_parts(pe.bytes, spec_.qps);
    k.parts_sent[k.posted % spec_.steps] = static_cast<uint8_t>(parts);
    // One WRITE with immediate per QP, as NCCL splits a transfer.
    for (uint32_t q = 0; q < parts; ++q) {
      nic.post(k.qs[q],
               WorkRequest{wr_id(k.posted, y, false), Verb::kWriteImm,
                           qp_part_bytes(pe.bytes, spec_.qps, q), static_cast<uint32_t>(k.posted)});
    }
    ++k.posted;
    --rs.pending;
    StepRecord& sr = cur_steps_[size_t{rank} * plans_[0].steps + pe.step];
    if (sr.start.is_infinite()) sr.start = nic.ctx().now();
    // Its data has been copied out of the receive slots it came in.
    for (size_t d = 0; d < PlanElement::kMaxDeps && pe.dep_conn[d] >= 0; ++d) {
      use(static_cast<uint32_t>(pe.dep_conn[d]), pe.dep_elem[d]);
    }
  }
}

bool Collective::deps_ready(const PlanElement& pe) const {
  for (size_t d = 0; d < PlanElement::kMaxDeps && pe.dep_conn[d] >= 0; ++d) {
    const Conn& x = conns_[static_cast<uint32_t>(pe.dep_conn[d])];
    if (x.ready <= x.recv.base + pe.dep_elem[d]) return false;
  }
  return true;
}

// Element e of connection x (at its receiver) has been used once more: by
// one of its consumers, or (without consumers) once usable. Slots are freed
// in order once every consumer has used them, as NCCL's kernel consumes its
// receive slots one after another; each freed slot is offered for the
// element NCCL_STEPS later.
void Collective::use(uint32_t x, uint64_t e) {
  Conn& k = conns_[x];
  const PlanConnection& pc = *k.recv.pc;
  RankState& rs = rank_[pc.receiver];
  const uint64_t base = k.recv.base;
  ++k.used[e];
  const auto uses = [&pc](uint64_t i) {
    return std::max<uint8_t>(1, pc.elems[static_cast<size_t>(i)].consumers);
  };
  while (k.freed < base + k.recv.elems && k.used[k.freed - base] == uses(k.freed - base)) {
    k.used[k.freed - base] = 0;  // ready for the next iteration
    const uint64_t g = k.freed++;
    --rs.pending;
    if (g + spec_.steps < base + k.recv.elems) offer(x, g + spec_.steps);
  }
}

void Collective::offer(uint32_t x, uint64_t g) {
  Conn& k = conns_[x];
  assert(g == k.offers_sent);
  ++k.offers_sent;
  nics_[k.receiver_host]->post(k.qr[0], WorkRequest{wr_id(g, x, true), Verb::kWriteImm,
                                                    kFifoEntryBytes, static_cast<uint32_t>(g)});
}

void Collective::fail(uint32_t rank) {
  RankState& rs = rank_[rank];
  if (rs.failed) return;
  rs.failed = true;
  if (rs.held) {
    rs.held = false;
    nics_[rs.host]->ctx().release();
  }
}

Time Collective::iteration_start(uint32_t iter) const {
  Time t = Time::infinite();
  for (uint32_t r = 0; r < ranks(); ++r) t = std::min(t, rank_iteration(iter, r).start);
  return t;
}

Time Collective::iteration_end(uint32_t iter) const {
  Time t = Time::zero();
  for (uint32_t r = 0; r < ranks(); ++r) {
    const Time e = rank_iteration(iter, r).end;
    if (e.is_infinite()) return e;
    t = std::max(t, e);
  }
  return t;
}

void Collective::host_bytes(std::vector<int64_t>& bytes) const {
  for (const CollectivePlan& pl : plans_) {
    for (const PlanConnection& pc : pl.conns) {
      int64_t b = 0;
      for (const PlanElement& e : pc.elems) b += e.bytes;
      b *= spec_.phase_iterations();
      bytes[spec_.ranks[pc.sender]] += b;
      bytes[spec_.ranks[pc.receiver]] += b;
    }
  }
}

int64_t Collective::bytes_total() const {
  int64_t n = 0;
  for (const CollectivePlan& pl : plans_) {
    int64_t b = 0;
    for (const PlanConnection& pc : pl.conns) {
      for (const PlanElement& e : pc.elems) b += e.bytes;
    }
    n += b * spec_.phase_iterations();
  }
  return n;
}

int64_t Collective::bytes_delivered() const {
  int64_t n = 0;
  for (const int64_t b : rank_rx_) n += b;
  for (const int64_t b : relay_rx_) n += b;
  return n;
}

size_t Collective::completed() const {
  uint32_t n = spec_.iterations;
  for (const RankState& rs : rank_) n = std::min(n, rs.iter);
  return n;
}

size_t Collective::failed() const {
  for (const RankState& rs : rank_) {
    if (rs.failed) return units() - completed();
  }
  return 0;
}

}  // namespace rdmasim
