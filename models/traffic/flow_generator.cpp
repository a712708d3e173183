#include "models/traffic/flow_generator.h"

#include <algorithm>
#include <numeric>

#include "sim/hash.h"

namespace rdmasim {

FlowGenerator::FlowGenerator(Simulation& sim, std::string name, std::vector<FlowSpec> flows,
                             const std::vector<RdmaNic*>& nics)
    : Component(sim, std::move(name)),
      flows_(std::move(flows)),
      nics_(nics),
      start_(this, EventClass::kTraffic, id()) {
  records_.resize(flows_.size());
  qpn_.resize(flows_.size());
  dqpn_.resize(flows_.size());
  for (uint32_t i = 0; i < flows_.size(); ++i) {
    const FlowSpec& f = flows_[i];
    RdmaNic& src = *nics_[f.src];
    RdmaNic& dst = *nics_[f.dst];
    const uint32_t qs = src.create_qp();
    const uint32_t qd = dst.create_qp();
    // RoCE v2 NICs derive the UDP source port from the QP: a 16-bit value
    // that gives every QP its own ECMP entropy.
    const auto sport = static_cast<uint32_t>(mix64((uint64_t{f.src} << 32) | qs) & 0xFFFF);
    src.connect_qp(qs, f.dst, qd, sport);
    dst.connect_qp(qd, f.src, qs, sport);
    // Pace the side that sends the data: the requester, or for a READ the
    // responder.
    if (f.op == Verb::kRead) {
      dst.set_qp_rate(qd, f.rate);
    } else {
      src.set_qp_rate(qs, f.rate);
    }
    qpn_[i] = qs;
    dqpn_[i] = qd;
    records_[i].id = i;
  }
  for (RdmaNic* nic : nics_) nic->set_completion_handler(this);
  order_.resize(flows_.size());
  std::iota(order_.begin(), order_.end(), 0);
  std::stable_sort(order_.begin(), order_.end(),
                   [&](uint32_t a, uint32_t b) { return flows_[a].start < flows_[b].start; });
}

void FlowGenerator::setup() {
  if (!order_.empty()) sim().schedule(start_, flows_[order_[0]].start);
}

void FlowGenerator::on_start() {
  const Time now = sim().now();
  while (next_ < order_.size() && flows_[order_[next_]].start == now) {
    const uint32_t i = order_[next_++];
    const FlowSpec& f = flows_[i];
    nics_[f.src]->post(qpn_[i], WorkRequest{i, f.op, f.bytes});
  }
  if (next_ < order_.size()) sim().schedule(start_, flows_[order_[next_]].start);
}

std::optional<Time> FlowGenerator::first_tx(uint32_t i) const {
  const FlowRecord& r = records_[i];
  if (r.done || r.failed) {
    if (r.first_tx == Time::infinite()) return std::nullopt;  // failed before it sent
    return r.first_tx;
  }
  // Still outstanding: its WQE, the only one on its QP, knows.
  const QueuePair& q = nics_[flows_[i].src]->qp(qpn_[i]);
  if (q.wqes().empty() || !q.wqes().front().started) return std::nullopt;
  return q.wqes().front().first_tx;
}

uint64_t FlowGenerator::retransmissions(uint32_t i) const {
  const FlowSpec& f = flows_[i];
  return nics_[f.src]->qp(qpn_[i]).retransmitted + nics_[f.dst]->qp(dqpn_[i]).retransmitted;
}

void FlowGenerator::on_send_completion(uint32_t /*host*/, const Completion& c) {
  FlowRecord& r = records_[c.wr_id];
  r.first_tx = c.started ? c.first_tx : Time::infinite();
  r.finish = c.completed;
  r.status = c.status;
  if (c.status == WcStatus::kSuccess) {
    r.done = true;
    ++completed_;
  } else {
    r.failed = true;
    ++failed_;
  }
  if (completed_ + failed_ == flows_.size()) sim().request_stop();
}

}  // namespace rdmasim
