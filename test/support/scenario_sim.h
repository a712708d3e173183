// A loaded scenario built into a Simulation in-process as run_scenario
// builds it (its build step: build_fabric, sim/scenario/fabric_builder.h,
// then build_workloads), so that a test can reach the switches and NICs,
// register egress hooks before setup and run in steps (sample counters at a window's edges). One
// partition; no outputs, faults or deadlock detector (an observer that changes nothing unless a
// deadlock stops the run). `ScenarioSim matches run_scenario`
// (test/scenarios/dcqcn_scenarios_test.cpp) checks it runs the same events.
//
// dcqcn_config: the DCQCN settings a scenario resolved for fabric.cc, so a
// test can check a preset gives the parameters its case names.
//
// QueueIntegral: a test-only egress hook that follows one egress queue's
// byte count as the MMU keeps it (what ECN marking compares) and integrates
// it over time exactly. The count changes when a packet is admitted and when
// it is dequeued; with the switch's pipeline latency 0 the admission is the
// enqueue point, so the hook sees every change at its instant.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <typeinfo>
#include <vector>

#include "models/cc/cc_algorithm.h"
#include "models/cc/dcqcn.h"
#include "models/nic/rdma_nic.h"
#include "models/switch/egress_hook.h"
#include "models/switch/switch.h"
#include "models/traffic/flow_generator.h"
#include "sim/cable.h"
#include "sim/scenario/fabric_builder.h"
#include "sim/scenario/scenario.h"
#include "sim/scenario/workloads.h"
#include "sim/simulation.h"

namespace rdmasim::testing {

class ScenarioSim {
 public:
  explicit ScenarioSim(const Scenario& sc) : sc_(sc), format_(sc.fabric), sim(sc.seed) {
    sim.set_checks(true);  // the invariants (sim/invariants.h), as every test runs them
    if (!sc.faults.empty()) throw std::logic_error("ScenarioSim: faults are not built");
    Fabric f = build_fabric(sim, sc, format_);
    nics = std::move(f.nics);
    switches = std::move(f.switches);
    switch_of_node = std::move(f.switch_of_node);
    cables = std::move(f.cables);
    Workloads w = build_workloads(sim, sc, nics);
    traffic = w.flows;
    collectives = std::move(w.collectives);
  }

  const Scenario& scenario() const { return sc_; }
  const TransportFormat& format() const { return format_.get(); }

  // The switch port that leads to host `host` (the switch the host is
  // cabled to), and that switch.
  std::pair<Switch*, uint32_t> port_to_host(uint32_t host) const {
    const Topology& topo = sc_.topology;
    const uint32_t h = topo.hosts()[host];
    const uint32_t sw = topo.adjacency()[h][0].neighbor;
    const auto& adj = topo.adjacency()[sw];
    for (uint32_t p = 0; p < adj.size(); ++p) {
      if (adj[p].neighbor == h) return {switch_of_node[sw], p};
    }
    throw std::logic_error("host not cabled to a switch");
  }

  // Payload bytes flow i's responder has received in order (its expected
  // PSN times the MTU; a WRITE or SEND of whole packets).
  int64_t delivered(uint32_t i) const {
    const FlowSpec& f = sc_.flows[i];
    const auto parts = traffic->part_qps(i);
    int64_t n = 0;
    for (const auto& [qs, qd] : parts) {
      (void)qs;
      n += static_cast<int64_t>(nics[f.dst]->qp(qd).epsn);
    }
    return std::min(f.bytes, n * static_cast<int64_t>(sc_.fabric.nic.mtu));
  }

 private:
  const Scenario& sc_;
  ScenarioFormat format_;

 public:
  Simulation sim;
  std::vector<RdmaNic*> nics;           // by host index
  std::vector<Switch*> switches;        // in node order
  std::vector<Switch*> switch_of_node;  // by node id (null for hosts)
  std::vector<Cable> cables;            // in topology link order
  FlowGenerator* traffic = nullptr;
  std::vector<Collective*> collectives;  // `traffic` items of kind collective
};

inline const DcqcnConfig& dcqcn_config(const Scenario& sc) {
  if (sc.fabric.cc == nullptr || sc.fabric.cc->fields_type() != typeid(DcqcnConfig))
    throw std::logic_error("dcqcn_config: fabric.cc is not DCQCN");
  // fields() is the config the table wrote; nothing here writes to it.
  return *static_cast<const DcqcnConfig*>(const_cast<CcConfig&>(*sc.fabric.cc).fields());
}

class QueueIntegral final : public EgressHook {
 public:
  // Integrates over [from, to]; keeps every change if `trace`.
  QueueIntegral(Time from, Time to, bool trace = false)
      : EgressHook(kAtEnqueue | kAtDequeue), from_(from), to_(to), trace_(trace) {}

  void on_enqueue(const EgressView& q, Packet& p) override {
    change(q.now(), q.mmu().egress_bytes(q.port(), q.priority()));
    // The packet's ingress queue has just been charged for it: its
    // occupancy (reserve + shared + headroom) is at a local peak.
    if (ingress_peak_.size() <= p.ingress_port) ingress_peak_.resize(p.ingress_port + 1, 0);
    int64_t& peak = ingress_peak_[p.ingress_port];
    peak = std::max(peak, q.mmu().ingress_bytes(p.ingress_port, p.ingress_priority));
  }
  void on_dequeue(const EgressView& q, Packet& p) override {
    (void)p;
    change(q.now(), q.queue_bytes());  // the count once this packet has left
  }

  // Byte-seconds over [from, min(to, now)], closing the current level at `now`.
  double mean(Time now) const {
    const Time end = std::min(now, to_);
    if (end <= from_) return 0;
    const double area = area_ + level_area(end);
    return area / (end - from_).in_seconds();
  }
  int64_t peak() const { return peak_; }
  Time peak_at() const { return peak_at_; }
  int64_t level() const { return level_; }
  // Per ingress port: the most its queue of the packets' priority held
  // (reserve, shared and headroom bytes) when one of them joined this queue.
  const std::vector<int64_t>& ingress_peaks() const { return ingress_peak_; }
  // (time, bytes after the change), if traced.
  const std::vector<std::pair<Time, int64_t>>& changes() const { return changes_; }

 private:
  // The area of the current level from its start to `t` inside the window.
  double level_area(Time t) const {
    const Time a = std::max(since_, from_);
    const Time b = std::min(t, to_);
    return b > a ? static_cast<double>(level_) * (b - a).in_seconds() : 0.0;
  }
  void change(Time now, int64_t bytes) {
    if (bytes == level_) return;
    area_ += level_area(now);
    level_ = bytes;
    since_ = now;
    if (bytes > peak_) {
      peak_ = bytes;
      peak_at_ = now;
    }
    if (trace_) changes_.emplace_back(now, bytes);
  }

  Time from_, to_;
  bool trace_;
  double area_ = 0;
  int64_t level_ = 0;
  Time since_;
  int64_t peak_ = 0;
  Time peak_at_;
  std::vector<std::pair<Time, int64_t>> changes_;
  std::vector<int64_t> ingress_peak_;
};

}  // namespace rdmasim::testing
