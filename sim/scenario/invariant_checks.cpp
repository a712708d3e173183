#include "sim/scenario/invariant_checks.h"

#include <map>

#include "models/collective/collective.h"
#include "models/nic/rdma_nic.h"
#include "models/switch/switch.h"
#include "models/traffic/flow_generator.h"
#include "sim/invariants.h"
#include "sim/scenario/fabric_builder.h"

namespace rdmasim {

void check_qp_end_states(RunStatus status, const std::vector<QpEnd>& qps, Time now) {
  for (const QpEnd& q : qps) {
    if (q.error && !q.reported) {
      throw InvariantViolation("qp_end_state", q.where, now,
                               "the QP is in the error state, but no error was reported");
    }
    if (status == RunStatus::kComplete && (q.error || q.open)) {
      throw InvariantViolation("qp_end_state", q.where, now,
                               std::string("the run completed, but the QP is ") +
                                   (q.error ? "in the error state" : "still open"));
    }
  }
}

void check_flow_bytes(const std::vector<FlowBytes>& flows, Time now) {
  for (const FlowBytes& f : flows) {
    if (f.sent == f.delivered + f.in_flight + f.dropped && f.delivered >= 0 && f.in_flight >= 0 &&
        f.dropped >= 0)
      continue;
    throw InvariantViolation("flow_bytes", f.where, now,
                             "sent " + std::to_string(f.sent) + " B, delivered " +
                                 std::to_string(f.delivered) + " B + in flight " +
                                 std::to_string(f.in_flight) + " B + dropped " +
                                 std::to_string(f.dropped) + " B (expected sent = their sum)");
  }
}

std::vector<QpEnd> gather_qp_ends(const Fabric& fabric, const FlowGenerator& traffic,
                                  const std::vector<Collective*>& collectives) {
  std::vector<QpEnd> out;
  // Errors a NIC counted against the QPs it holds in error.
  for (uint32_t h = 0; h < fabric.nics.size(); ++h) {
    const RdmaNic& nic = *fabric.nics[h];
    uint64_t in_error = 0;
    for (uint32_t k = 0; k < nic.num_qps(); ++k) in_error += nic.qp(RdmaNic::kFirstQpn + k).error;
    if (in_error != nic.counters().qp_errors) {
      QpEnd q;
      q.where = "host " + std::to_string(h) + " (" + nic.name() + ")";
      q.error = true;
      q.reported = false;
      out.push_back(q);
    }
  }
  const auto& flows = traffic.flows();
  for (uint32_t i = 0; i < flows.size(); ++i) {
    const FlowRecord& rec = traffic.records()[i];
    for (uint32_t k = 0; k < traffic.num_parts(i); ++k) {
      const uint32_t part = traffic.first_part(i) + k;
      for (const bool sender : {true, false}) {
        const auto [host, qpn] = sender ? traffic.part_sender(part) : traffic.part_receiver(part);
        const QueuePair& qp = fabric.nics[host]->qp(qpn);
        QpEnd q;
        q.where = "flow " + std::to_string(i) + " (" + flows[i].name + ") part " +
                  std::to_string(k) + (sender ? " sender" : " receiver") + " host " +
                  std::to_string(host) + " QP " + std::to_string(qpn);
        q.error = qp.error;
        q.open = qp.outstanding() || qp.has_new_data();
        q.reported = rec.failed;
        out.push_back(q);
      }
    }
  }
  for (const Collective* c : collectives) {
    const bool failed = c->failed() > 0;
    for (uint32_t i = 0; i < c->connections(); ++i) {
      const Collective::ConnectionEnds e = c->connection_ends(i);
      for (size_t k = 0; k < e.qs.size(); ++k) {
        for (const bool sender : {true, false}) {
          const uint32_t host = sender ? e.sender_host : e.receiver_host;
          const uint32_t qpn = sender ? e.qs[k] : e.qr[k];
          const QueuePair& qp = fabric.nics[host]->qp(qpn);
          QpEnd q;
          q.where = "collective " + c->name() + " connection " + std::to_string(i) +
                    (sender ? " sender" : " receiver") + " host " + std::to_string(host) + " QP " +
                    std::to_string(qpn);
          q.error = qp.error;
          q.open = qp.has_new_data() ||
                   (qp.outstanding() && !(sender ? e.data_arrived : e.offers_arrived));
          q.reported = failed;
          out.push_back(q);
        }
      }
    }
  }
  return out;
}

std::vector<FlowBytes> gather_flow_bytes(const Fabric& fabric, const FlowGenerator& traffic,
                                         const std::vector<Collective*>& collectives) {
  std::map<uint64_t, int64_t> in_flight, dropped;
  for (const Cable& c : fabric.cables) {
    for (const Link* l : {c.a_to_b, c.b_to_a}) {
      l->add_in_flight(in_flight);
      l->add_losses(dropped);
    }
  }
  for (const Switch* s : fabric.switches) {
    s->add_in_flight(in_flight);
    s->add_losses(dropped);
  }
  auto at = [](const std::map<uint64_t, int64_t>& m, uint64_t k) {
    const auto it = m.find(k);
    return it == m.end() ? int64_t{0} : it->second;
  };
  std::vector<FlowBytes> out;
  const auto& flows = traffic.flows();
  for (uint32_t i = 0; i < flows.size(); ++i) {
    for (uint32_t k = 0; k < traffic.num_parts(i); ++k) {
      const uint32_t part = traffic.first_part(i) + k;
      const auto s = traffic.part_sender(part);
      const auto r = traffic.part_receiver(part);
      for (const auto& [from, to] : {std::make_pair(s, r), std::make_pair(r, s)}) {
        const uint64_t key = LossLedger::key(from.first, from.second);
        FlowBytes f;
        f.where = "flow " + std::to_string(i) + " (" + flows[i].name + ") part " +
                  std::to_string(k) + ", host " + std::to_string(from.first) + " QP " +
                  std::to_string(from.second) + " to host " + std::to_string(to.first) + " QP " +
                  std::to_string(to.second);
        f.sent = fabric.nics[from.first]->wire_payload(from.second).sent;
        f.delivered = fabric.nics[to.first]->wire_payload(to.second).received;
        f.in_flight = at(in_flight, key);
        f.dropped = at(dropped, key);
        out.push_back(f);
      }
    }
  }
  for (const Collective* c : collectives) {
    for (uint32_t i = 0; i < c->connections(); ++i) {
      const Collective::ConnectionEnds e = c->connection_ends(i);
      for (size_t k = 0; k < e.qs.size(); ++k) {
        const std::pair<uint32_t, uint32_t> s{e.sender_host, e.qs[k]}, r{e.receiver_host, e.qr[k]};
        for (const auto& [from, to] : {std::make_pair(s, r), std::make_pair(r, s)}) {
          const uint64_t key = LossLedger::key(from.first, from.second);
          FlowBytes f;
          f.where = "collective " + c->name() + " connection " + std::to_string(i) + ", host " +
                    std::to_string(from.first) + " QP " + std::to_string(from.second) +
                    " to host " + std::to_string(to.first) + " QP " + std::to_string(to.second);
          f.sent = fabric.nics[from.first]->wire_payload(from.second).sent;
          f.delivered = fabric.nics[to.first]->wire_payload(to.second).received;
          f.in_flight = at(in_flight, key);
          f.dropped = at(dropped, key);
          out.push_back(f);
        }
      }
    }
  }
  return out;
}

}  // namespace rdmasim
