#include "models/traffic/flow_generator.h"

#include <algorithm>
#include <numeric>

#include "sim/hash.h"

namespace rdmasim {

uint32_t roce_source_port(uint32_t host, uint32_t qpn) {
  return static_cast<uint32_t>(mix64((uint64_t{host} << 32) | qpn) & 0xFFFF);
}

FlowGenerator::FlowGenerator(Simulation& sim, std::string name, std::vector<FlowSpec> flows,
                             const std::vector<RdmaNic*>& nics)
    : Workload(sim, std::move(name)),
      flows_(std::move(flows)),
      nics_(nics),
      start_(this, EventClass::kTraffic, id()) {
  records_.resize(flows_.size());
  first_part_.resize(flows_.size());
  parts_left_.resize(flows_.size());
  for (uint32_t i = 0; i < flows_.size(); ++i) {
    const FlowSpec& f = flows_[i];
    RdmaNic& src = *nics_[f.src];
    RdmaNic& dst = *nics_[f.dst];
    const uint32_t n = std::max<uint32_t>(1, f.qps);
    first_part_[i] = static_cast<uint32_t>(parts_.size());
    parts_left_[i] = n;
    records_[i].id = i;
    records_[i].first_tx = Time::infinite();
    for (uint32_t k = 0; k < n; ++k) {
      // The generator sees the completions of its own QPs only (others may
      // share the NICs).
      const uint32_t qs = src.create_qp(this);
      const uint32_t qd = dst.create_qp(this);
      // RoCE v2 NICs derive the UDP source port from the QP: a 16-bit value
      // that gives every QP its own ECMP entropy.
      const uint32_t sport = roce_source_port(f.src, qs);
      src.connect_qp(qs, f.dst, qd, sport);
      dst.connect_qp(qd, f.src, qs, sport);
      // Pace the side that sends the data (the requester, or for a READ the
      // responder); the flow's rate is shared equally by its QPs.
      if (f.sl >= 0) {
        src.set_qp_sl(qs, static_cast<uint8_t>(f.sl));
        dst.set_qp_sl(qd, static_cast<uint8_t>(f.sl));
      }
      const BitRate rate = BitRate::bps(f.rate.in_bps() / n);
      if (f.op == Verb::kRead) {
        dst.set_qp_rate(qd, rate);
      } else {
        src.set_qp_rate(qs, rate);
      }
      // Congestion control at both ends: each end is the reaction point for
      // what it sends and the notification point for what it receives.
      if (f.cc) {
        src.set_congestion_control(qs, f.cc->make());
        dst.set_congestion_control(qd, f.cc->make());
      }
      // Bytes split as evenly as they go: the first (bytes mod n) parts get one more.
      const int64_t bytes = f.bytes / n + (static_cast<int64_t>(k) < f.bytes % n ? 1 : 0);
      parts_.push_back(Part{i, qs, qd, bytes});
    }
  }
  order_.resize(flows_.size());
  std::iota(order_.begin(), order_.end(), 0);
  std::stable_sort(order_.begin(), order_.end(),
                   [&](uint32_t a, uint32_t b) { return flows_[a].start < flows_[b].start; });
}

void FlowGenerator::setup() {
  for (const FlowSpec& f : flows_) nics_[f.src]->ctx().hold();
  if (!order_.empty()) ctx().schedule(start_, flows_[order_[0]].start);
}

void FlowGenerator::host_bytes(std::vector<int64_t>& bytes) const {
  for (const FlowSpec& f : flows_) {
    bytes[f.src] += f.bytes;
    bytes[f.dst] += f.bytes;
  }
}

int64_t FlowGenerator::bytes_total() const {
  int64_t n = 0;
  for (const FlowSpec& f : flows_) n += f.bytes;
  return n;
}

int64_t FlowGenerator::bytes_delivered() const {
  int64_t n = 0;
  for (uint32_t i = 0; i < flows_.size(); ++i) n += delivered(i);
  return n;
}

size_t FlowGenerator::completed() const {
  return static_cast<size_t>(
      std::count_if(records_.begin(), records_.end(), [](const FlowRecord& r) { return r.done; }));
}

size_t FlowGenerator::failed() const {
  return static_cast<size_t>(std::count_if(records_.begin(), records_.end(),
                                           [](const FlowRecord& r) { return r.failed; }));
}

void FlowGenerator::on_start() {
  const Time now = ctx().now();
  while (next_ < order_.size() && flows_[order_[next_]].start == now) {
    const uint32_t i = order_[next_++];
    const FlowSpec& f = flows_[i];
    for (uint32_t k = first_part_[i]; k < first_part_[i] + std::max<uint32_t>(1, f.qps); ++k) {
      nics_[f.src]->post(parts_[k].qs, WorkRequest{k, f.op, parts_[k].bytes});
    }
  }
  if (next_ < order_.size()) ctx().schedule(start_, flows_[order_[next_]].start);
}

std::optional<Time> FlowGenerator::first_tx(uint32_t i) const {
  // The earliest first packet of its parts: recorded for completed parts,
  // from the QP (its only WQE) for those still going.
  Time t = records_[i].first_tx;
  for (uint32_t k = first_part_[i]; k < first_part_[i] + std::max<uint32_t>(1, flows_[i].qps);
       ++k) {
    const QueuePair& q = nics_[flows_[i].src]->qp(parts_[k].qs);
    if (!q.wqes().empty() && q.wqes().front().started) t = std::min(t, q.wqes().front().first_tx);
  }
  if (t.is_infinite()) return std::nullopt;
  return t;
}

uint64_t FlowGenerator::retransmissions(uint32_t i) const {
  const FlowSpec& f = flows_[i];
  uint64_t n = 0;
  for (uint32_t k = first_part_[i]; k < first_part_[i] + std::max<uint32_t>(1, f.qps); ++k) {
    n +=
        nics_[f.src]->qp(parts_[k].qs).retransmitted + nics_[f.dst]->qp(parts_[k].qd).retransmitted;
  }
  return n;
}

std::pair<uint32_t, uint32_t> FlowGenerator::part_sender(uint32_t k) const {
  const FlowSpec& f = flows_[parts_[k].flow];
  return f.op == Verb::kRead ? std::make_pair(f.dst, parts_[k].qd)
                             : std::make_pair(f.src, parts_[k].qs);
}

std::pair<uint32_t, uint32_t> FlowGenerator::part_receiver(uint32_t k) const {
  const FlowSpec& f = flows_[parts_[k].flow];
  return f.op == Verb::kRead ? std::make_pair(f.src, parts_[k].qs)
                             : std::make_pair(f.dst, parts_[k].qd);
}

int64_t FlowGenerator::delivered(uint32_t i) const {
  const FlowSpec& f = flows_[i];
  int64_t n = 0;
  for (uint32_t k = first_part_[i]; k < first_part_[i] + num_parts(i); ++k) {
    if (f.op == Verb::kRead) {
      // READ responses land at the requester: the PSNs below una, in order.
      const RdmaNic& nic = *nics_[f.src];
      n += nic.qp(parts_[k].qs).bytes_below_una(nic.config().mtu);
    } else {
      // Every message's bytes, not only the current one's.
      n += nics_[f.dst]->qp(parts_[k].qd).rx_bytes;
    }
  }
  return n;
}

FlowGenerator::CcCounts FlowGenerator::cc_counts(uint32_t i) const {
  CcCounts c;
  for (uint32_t k = first_part_[i]; k < first_part_[i] + num_parts(i); ++k) {
    const auto [sh, sq] = part_sender(k);
    const auto [rh, rq] = part_receiver(k);
    const QueuePair& s = nics_[sh]->qp(sq);
    const QueuePair& r = nics_[rh]->qp(rq);
    c.cnps_received += s.cnps_received;
    c.ecn_echo_acks += s.ecn_echo_received;
    c.cnps_sent += r.cnps_sent;
    c.ecn_marked += r.ecn_marked;
    if (const CongestionControl* cc = nics_[sh]->congestion_control(sq))
      c.rate_cuts += cc->decreases();
  }
  return c;
}

void FlowGenerator::on_send_completion(uint32_t host, const Completion& c) {
  const Part& part = parts_[c.wr_id];
  FlowRecord& r = records_[part.flow];
  if (c.started) r.first_tx = std::min(r.first_tx, c.first_tx);
  r.finish = std::max(r.finish, c.completed);
  if (c.status != WcStatus::kSuccess && !r.failed) {
    // The first failure decides the flow.
    r.failed = true;
    r.status = c.status;
    nics_[host]->ctx().release();  // the flow has ended (contract 5)
  }
  if (--parts_left_[part.flow] == 0 && !r.failed) {
    r.done = true;
    nics_[host]->ctx().release();
  }
}

}  // namespace rdmasim
