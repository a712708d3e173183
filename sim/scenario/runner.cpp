#include "sim/scenario/runner.h"

#include <sys/resource.h>

#include <algorithm>
#include <cassert>
#include <chrono>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>

#include "models/cc/cc_sampler.h"
#include "models/nic/rdma_nic.h"
#include "models/switch/deadlock_detector.h"
#include "models/switch/queue_average.h"
#include "models/switch/queue_sampler.h"
#include "models/switch/switch.h"
#include "models/traffic/flow_generator.h"
#include "sim/cable.h"
#include "sim/huge_pages.h"
#include "sim/link_sampler.h"
#include "sim/scenario/fabric_builder.h"
#include "sim/scenario/fault_injector.h"
#include "sim/scenario/ideal_fct.h"
#include "sim/scenario/invariant_checks.h"
#include "sim/scenario/window_recorder.h"
#include "sim/scenario/workloads.h"
#include "topologies/partition.h"

namespace rdmasim {

const char* to_string(RunStatus s) {
  switch (s) {
    case RunStatus::kComplete:
      return "complete";
    case RunStatus::kTimeLimit:
      return "time_limit";
    case RunStatus::kStalled:
      return "stalled";
    case RunStatus::kQpError:
      return "qp_error";
    case RunStatus::kDeadlock:
      return "deadlock";
    case RunStatus::kInterrupted:
      return "interrupted";
    case RunStatus::kWallTimeLimit:
      return "wall_time_limit";
    case RunStatus::kInvariantViolated:
      return "invariant_violated";
  }
  return "?";
}

int exit_code(RunStatus s) {
  if (s == RunStatus::kInvariantViolated) return kInvariantExitCode;
  if (s == RunStatus::kStalled) return 3;
  if (s == RunStatus::kDeadlock) return 5;
  if (s == RunStatus::kWallTimeLimit) return 6;
  if (s == RunStatus::kInterrupted) return 130;
  return s == RunStatus::kQpError ? 4 : 0;
}

namespace {

// The partitions' events before `before` (each partition's are in time
// order), moved to `out` in (time, node) order, the order within a node
// being its events'. Every event before `before` is recorded, and a node
// is in one partition, so flushing in steps gives the order one sort of
// the whole run would: the same for any number of threads.
template <class Event>
void flush_by_time_and_node(std::vector<std::vector<Event>>& parts, Time before,
                            RowSpool<Event>& out) {
  std::vector<Event> batch;
  for (auto& p : parts) {
    const auto end =
        std::partition_point(p.begin(), p.end(), [&](const Event& e) { return e.time < before; });
    batch.insert(batch.end(), p.begin(), end);
    p.erase(p.begin(), end);
  }
  std::stable_sort(batch.begin(), batch.end(), [](const Event& a, const Event& b) {
    return a.time != b.time ? a.time < b.time : a.node < b.node;
  });
  out.append(batch.begin(), batch.end());
}

// What each host sends and receives, by its workloads.
std::vector<int64_t> host_bytes(const Topology& topo, const Workloads& workloads) {
  std::vector<int64_t> bytes(topo.num_hosts(), 0);
  for (const Workload* w : workloads.all) w->host_bytes(bytes);
  return bytes;
}

// Placement: each node and the links into it run in the node's partition.
// A host weighs the mean traffic per host plus the bytes its workloads make
// it send and receive: the receiver of an incast does the work of many
// senders. The workloads are observers (they post into any partition).
void place_partitions(Simulation& sim, const Topology& topo, const Fabric& fabric,
                      const Workloads& workloads, uint32_t threads) {
  sim.set_partitions(threads);
  std::vector<int64_t> weight = host_bytes(topo, workloads);
  int64_t bytes = 0;
  for (const int64_t w : weight) bytes += w;
  const int64_t mean = std::max<int64_t>(1, bytes / std::max<int64_t>(1, topo.num_hosts()));
  for (int64_t& w : weight) w += mean;
  const std::vector<uint32_t> part = partition_nodes(topo, threads, weight);
  for (uint32_t id = 0; id < fabric.nodes.size(); ++id) {
    fabric.nodes[id]->assign(sim.partition(part[id]));
  }
  for (size_t i = 0; i < fabric.cables.size(); ++i) {
    const TopoLink& l = topo.links()[i];
    place(fabric.cables[i], sim.partition(part[l.a]), sim.partition(part[l.b]));
  }
  for (Workload* w : workloads.all) sim.set_observer(*w);
}

// Observers and recorders, as the scenario's `output` asks: added in a fixed
// order (their component ids are event tags), attached before setup, read
// after the run. Not movable: the probes they attach point into them.
class Recorders {
 public:
  Recorders(const Scenario& sc, const RunOptions& options, uint32_t partitions)
      : sc_(sc), pfc_events_(partitions), drop_events_(partitions) {
    if (!options.spool_dir.empty()) {
      spool_dir_ = options.spool_dir;
      spool_chunk_rows_ = options.spool_chunk_rows;
      pfc_out_.spill_to(options.spool_dir, options.spool_chunk_rows);
      drop_out_.spill_to(options.spool_dir, options.spool_chunk_rows);
      queue_out_.spill_to(options.spool_dir, options.spool_chunk_rows);
      vl_out_.spill_to(options.spool_dir, options.spool_chunk_rows);
      link_out_.spill_to(options.spool_dir, options.spool_chunk_rows);
      cc_out_.spill_to(options.spool_dir, options.spool_chunk_rows);
    }
  }
  Recorders(const Recorders&) = delete;
  Recorders& operator=(const Recorders&) = delete;

  void attach(Simulation& sim, const Fabric& fabric, const FlowGenerator& traffic);
  // The collectives' step records (trace.h5's /collective_steps), with the trace.
  void attach(const std::vector<Collective*>& collectives);
  // The deadlock detector, if any: it may decide the run's status.
  const DeadlockDetector* deadlock() const { return deadlock_; }
  // Records time series (trace.h5's /queues, /pfc_events...): they are
  // flushed as the run goes (flush).
  bool time_series() const {
    return queue_sampler_ != nullptr || link_sampler_ != nullptr || sc_.output.pfc_events ||
           sc_.output.drop_events || !sampled_.empty() || !steps_.empty();
  }
  // Between events or phases, when only this thread runs: moves every row
  // that is final (no later event can add a row before it) from the
  // recorders to their spools, in the order of the file.
  void flush(Simulation& sim);
  // What they recorded (needs r.sim_time; the collectives' steps need
  // r.collectives).
  void collect(RunResult& r);
  // The measurement window's counters at its ends (see collect_window).
  void collect_window(RunResult& r, const Fabric& fabric);
  const std::optional<WindowCounters>& window_start() const { return w_start_; }
  const std::optional<WindowCounters>& window_end() const { return w_end_; }
  // The links flow i's data took (output.flow_paths), its host's hop first.
  std::vector<uint32_t> take_path(uint32_t i, const Fabric& fabric, const FlowGenerator& traffic);

 private:
  uint32_t link_row(uint32_t node, uint32_t port) const {
    const Topology& topo = sc_.topology;
    const uint32_t k = topo.adjacency()[node][port].link;
    return topo.links()[k].a == node ? 2 * k : 2 * k + 1;
  }

  const Scenario& sc_;
  DeadlockDetector* deadlock_ = nullptr;
  QueueSampler* queue_sampler_ = nullptr;
  LinkSampler* link_sampler_ = nullptr;
  // Flow paths: the first data packet of each flow reports each switch's
  // choice; the host's own first hop is its QP's port.
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> flow_of_qp_;
  std::vector<std::vector<uint32_t>> paths_;
  // Recorded per partition (threads append side by side), merged as they
  // are flushed (flush_by_time_and_node).
  std::vector<std::vector<PfcEvent>> pfc_events_;
  std::vector<std::vector<DropEvent>> drop_events_;
  // Where flush() moves the time series' final rows.
  RowSpool<PfcEvent> pfc_out_;
  RowSpool<DropEvent> drop_out_;
  RowSpool<QueueSample> queue_out_;
  RowSpool<VlBufferSample> vl_out_;
  RowSpool<LinkSample> link_out_;
  RowSpool<CcSampleResult> cc_out_;
  // Per collective: its step rows as they become final.
  struct CollectiveSteps {
    Collective* c;
    RowSpool<CollectiveResult::Step> out;
  };
  std::vector<CollectiveSteps> steps_;
  std::string spool_dir_;
  size_t spool_chunk_rows_ = 0;
  void flush_before(Time before, Time settled);
  // Congestion-control samples (output.cc_interval): one sampler per QP
  // whose algorithm reports a state, written only from its NIC's events
  // (models/cc/cc_sampler.h), so partitions need no merging but a sort.
  struct SampledQp {
    uint32_t flow, part, host, qpn;
    bool sender;
    CcSampler sampler;
  };
  std::vector<SampledQp> sampled_;
  // The measurement window (output.window): its snapshots, and the switches'
  // exact queue averages over it (egress hooks, only when asked for).
  WindowRecorder* window_ = nullptr;
  std::vector<std::unique_ptr<QueueAverage>> averages_;
  std::optional<WindowCounters> w_start_, w_end_;
};

void Recorders::attach(Simulation& sim, const Fabric& fabric, const FlowGenerator& traffic) {
  const Scenario& sc = sc_;
  const std::vector<Switch*>& switches = fabric.switches;
  std::vector<const Switch*> const_switches(switches.begin(), switches.end());
  if (sc.fabric.sw.deadlock_detection && !switches.empty()) {
    deadlock_ = &sim.add<DeadlockDetector>(
        "deadlock_detector", const_switches, sc.fabric.sw.deadlock_timeout,
        sc.fabric.sw.deadlock_timeout / 2, sc.fabric.sw.deadlock_stop);
    sim.set_observer(*deadlock_);
  }
  if (!sc.output.queue_interval.is_infinite() && !switches.empty()) {
    queue_sampler_ =
        &sim.add<QueueSampler>("queue_sampler", const_switches, sc.output.queue_interval);
    sim.set_observer(*queue_sampler_);
  }
  if (!sc.faults.empty()) {
    // Not a recorder, but an observer: added here, in its place among them.
    sim.set_observer(
        sim.add<FaultInjector>("faults", sc, fabric.cables, fabric.switch_of_node, fabric.nics));
  }
  paths_.resize(sc.flows.size());
  if (sc.output.flow_paths) {
    for (uint32_t i = 0; i < sc.flows.size(); ++i) flow_of_qp_[traffic.data_qp(i)] = i;
    for (Switch* s : switches) {
      s->route_probe.attach([this, node = s->id()](const Packet& p, uint32_t port) {
        auto it = flow_of_qp_.find({p.src, p.src_qpn});
        if (it != flow_of_qp_.end()) paths_[it->second].push_back(link_row(node, port));
      });
    }
  }
  if (!sc.output.link_interval.is_infinite()) {
    link_sampler_ =
        &sim.add<LinkSampler>("link_sampler", fabric.link_directions(), sc.output.link_interval);
    sim.set_observer(*link_sampler_);
  }
  for (Switch* s : switches) {
    if (sc.output.pfc_events) {
      s->pfc_probe.attach(
          [&to = pfc_events_[s->ctx().index()]](const PfcEvent& e) { to.push_back(e); });
    }
    if (sc.output.drop_events) {
      s->drop_probe.attach(
          [&to = drop_events_[s->ctx().index()]](const DropEvent& e) { to.push_back(e); });
    }
  }
  if (!sc.output.cc_interval.is_infinite()) {
    for (uint32_t i = 0; i < sc.flows.size(); ++i) {
      for (uint32_t k = 0; k < traffic.num_parts(i); ++k) {
        const uint32_t part = traffic.first_part(i) + k;
        auto add = [&](std::pair<uint32_t, uint32_t> qp, bool sender) {
          if (fabric.nics[qp.first]->congestion_control(qp.second) == nullptr) return;
          sampled_.push_back(
              SampledQp{i, k, qp.first, qp.second, sender, CcSampler(sc.output.cc_interval)});
        };
        add(traffic.part_sender(part), true);
        add(traffic.part_receiver(part), false);
      }
    }
    for (SampledQp& q : sampled_) {
      fabric.nics[q.host]->congestion_control(q.qpn)->observe(
          [&sampler = q.sampler](const CcState& st) { sampler.change(st); });
    }
  }
  if (sc.output.window_given()) {
    window_ = &sim.add<WindowRecorder>("window", traffic, fabric.link_directions(), const_switches,
                                       sc.output.window_start, sc.output.window_end);
    sim.set_observer(*window_);
    for (Switch* s : switches) {
      averages_.push_back(std::make_unique<QueueAverage>(
          s->num_ports(), sc.output.window_start.value_or(Time::zero()),
          sc.output.window_end.value_or(Time::infinite())));
      s->add_egress_hook(*averages_.back(), 0xFF);
    }
  }
}

void Recorders::attach(const std::vector<Collective*>& collectives) {
  if (!sc_.output.trace) return;
  for (Collective* c : collectives) {
    c->record_steps(true);
    steps_.push_back({c, {}});
    if (!spool_dir_.empty()) steps_.back().out.spill_to(spool_dir_, spool_chunk_rows_);
  }
}

namespace {

// Step rows in the order of the file: by when their rank ended the
// iteration, then by host (a host runs one rank of a collective), each
// rank-iteration's in step order. A rank's rows are final once it ends the
// iteration, in its own partition, so the order does not depend on threads.
void append_steps(std::vector<Collective::StepRow>& rows, RowSpool<CollectiveResult::Step>& out) {
  std::stable_sort(rows.begin(), rows.end(),
                   [](const Collective::StepRow& a, const Collective::StepRow& b) {
                     return a.done != b.done ? a.done < b.done : a.host < b.host;
                   });
  for (const Collective::StepRow& r : rows) {
    out.push_back({r.iter, r.rank, r.step, r.host, r.rec.start, r.rec.end, r.rec.bytes, r.done});
  }
  rows.clear();
}

}  // namespace

void Recorders::flush(Simulation& sim) {
  // Every event still to come is at next_event_time() or later, and so is
  // every row it records; the run ends at now() or later.
  const Time next = sim.next_event_time();
  flush_before(next, std::min(next, sim.now()));
}

// Rows before `before` are final: moved to the spools. Congestion-control
// samplers are settled at `settled` first (CcSampler::settle).
void Recorders::flush_before(Time before, Time settled) {
  // The samplers' rows are in recording order, which is the file's.
  if (queue_sampler_ != nullptr) {
    std::vector<QueueSample>& q = queue_sampler_->samples();
    queue_out_.append(q.begin(), q.end());
    q.clear();
    std::vector<VlBufferSample>& v = queue_sampler_->vl_buffer_samples();
    vl_out_.append(v.begin(), v.end());
    v.clear();
  }
  if (link_sampler_ != nullptr) {
    std::vector<LinkSample>& l = link_sampler_->samples();
    link_out_.append(l.begin(), l.end());
    l.clear();
  }
  flush_by_time_and_node(pfc_events_, before, pfc_out_);
  flush_by_time_and_node(drop_events_, before, drop_out_);
  // Congestion-control samples, in time order; at one time by flow, part,
  // sender first, then as recorded. A pending state may still be written
  // at its own time, so rows go only up to the earliest one.
  Time cc_before = before;
  for (SampledQp& q : sampled_) {
    q.sampler.settle(settled);
    cc_before = std::min(cc_before, q.sampler.pending_since());
  }
  std::vector<CcSampleResult> batch;
  for (SampledQp& q : sampled_) {
    std::vector<CcSampleRow>& rows = q.sampler.rows();
    const auto end = std::partition_point(
        rows.begin(), rows.end(), [&](const CcSampleRow& row) { return row.time < cc_before; });
    for (auto it = rows.begin(); it != end; ++it) {
      batch.push_back(CcSampleResult{it->time, q.flow, q.part, q.host, q.qpn, q.sender, it->state,
                                     it->changes});
    }
    rows.erase(rows.begin(), end);
  }
  std::stable_sort(
      batch.begin(), batch.end(),
      [](const CcSampleResult& a, const CcSampleResult& b) { return a.time < b.time; });
  cc_out_.append(batch.begin(), batch.end());
  std::vector<Collective::StepRow> rows;
  for (CollectiveSteps& s : steps_) {
    s.c->take_step_rows(before, rows);
    append_steps(rows, s.out);
  }
}

void Recorders::collect(RunResult& r) {
  for (SampledQp& q : sampled_) q.sampler.finish(r.sim_time);
  flush_before(Time::infinite(), Time::infinite());
  r.queue_samples = std::move(queue_out_);
  r.vl_buffer_samples = std::move(vl_out_);
  r.link_samples = std::move(link_out_);
  r.pfc_events = std::move(pfc_out_);
  r.drop_events = std::move(drop_out_);
  r.cc_samples = std::move(cc_out_);
  // After every finished iteration, those the run ended in.
  std::vector<Collective::StepRow> rows;
  for (size_t i = 0; i < steps_.size(); ++i) {
    steps_[i].c->take_open_step_rows(rows);
    append_steps(rows, steps_[i].out);
    r.collectives.at(i).step_rows = std::move(steps_[i].out);
  }
}

// The measurement window: (start, end], clipped to the run. Its counters at
// the start are zero without a start, missing if the run ended first (an
// empty window); at the end, the final ones unless the run went on. Needs
// r.sim_time, r.pfc_frames_sent and r.queue_totals.
void Recorders::collect_window(RunResult& r, const Fabric& fabric) {
  const Scenario& sc = sc_;
  RunResult::Window& w = r.window;
  w.given = sc.output.window_given();
  w.start = sc.output.window_start.value_or(Time::zero());
  w.end = std::min(sc.output.window_end.value_or(Time::infinite()), r.sim_time);
  if (window_ != nullptr) {
    w_end_ = window_->at_end() ? *window_->at_end() : window_->take();
    if (sc.output.window_start) w_start_ = window_->at_start();
  }
  if (!sc.output.window_start) {
    w_start_ = WindowCounters{};  // before the first event: nothing yet
    w_start_->delivered.assign(sc.flows.size(), 0);
    w_start_->links.assign(2 * fabric.cables.size(), LinkCounters{});
  }
  if (!w_start_) w.end = w.start;  // the run ended before the window began
  if (w_start_ && w_end_) w.pfc_frames_sent = w_end_->pfc_frames_sent - w_start_->pfc_frames_sent;
  if (w_start_ && !w_end_) w.pfc_frames_sent = r.pfc_frames_sent;
  w.queue_averages = !averages_.empty();
  if (w.queue_averages) {
    std::vector<size_t> average_of(sc.topology.nodes().size(), 0);  // node id -> switch index
    for (size_t k = 0; k < fabric.switches.size(); ++k) average_of[fabric.switches[k]->id()] = k;
    for (RunResult::QueueTotals& q : r.queue_totals) {
      const QueueAverage& a = *averages_[average_of[q.node]];
      q.window_mean_bytes = w_start_ ? a.mean_bytes(q.port, q.priority, w.end) : 0.0;
      q.window_peak_bytes = w_start_ ? a.peak_bytes(q.port, q.priority, w.end) : 0;
    }
  }
}

std::vector<uint32_t> Recorders::take_path(uint32_t i, const Fabric& fabric,
                                           const FlowGenerator& traffic) {
  std::vector<uint32_t>& path = paths_[i];
  if (sc_.output.flow_paths) {
    const Topology& topo = sc_.topology;
    const auto [host, qpn] = traffic.data_qp(i);
    const uint32_t port = fabric.nics[host]->qp(qpn).port();
    // Only flows whose first packet crossed a switch, or hosts cabled
    // directly (no switch to report): the host's hop starts the path.
    if (!path.empty() ||
        topo.node(topo.adjacency()[topo.hosts()[host]][port].neighbor).kind == NodeKind::kHost) {
      path.insert(path.begin(), link_row(topo.hosts()[host], port));
    }
  }
  return std::move(path);
}

// Why the progress hook stopped the run, if it did.
enum class HookStop : uint8_t { kNone, kEvents, kSignal, kWallTime };

RunStatus status_of(const Recorders& rec, const Workloads& workloads, RunEnd end, HookStop why) {
  if (rec.deadlock() != nullptr && rec.deadlock()->detected()) return RunStatus::kDeadlock;
  if (workloads.failed() > 0) return RunStatus::kQpError;
  if (workloads.finished()) return RunStatus::kComplete;
  if (end == RunEnd::kStopped && why == HookStop::kSignal) return RunStatus::kInterrupted;
  if (end == RunEnd::kStopped && why == HookStop::kWallTime) return RunStatus::kWallTimeLimit;
  return end == RunEnd::kTimeLimit ? RunStatus::kTimeLimit : RunStatus::kStalled;
}

// Collection: the switches' counters, per queue and in all.
void collect_switches(RunResult& r, const Scenario& sc, const Fabric& fabric) {
  const std::vector<Switch*>& switches = fabric.switches;
  for (uint8_t reason = 1; reason < static_cast<uint8_t>(DropReason::kCount); ++reason) {
    if (reason == static_cast<uint8_t>(DropReason::kHeadOfQueueLifetime)) continue;  // hoq_discards
    uint64_t n = 0;
    for (const Switch* s : switches) n += s->drops(static_cast<DropReason>(reason));
    r.switch_drops.emplace_back(to_string(static_cast<DropReason>(reason)), n);
  }
  for (const Switch* s : switches) {
    for (uint32_t p = 0; p < s->num_ports(); ++p) {
      for (uint8_t q = 0; q < 8; ++q) {
        const QueueCounters c = s->queue_counters(p, q, r.sim_time);
        uint64_t drops = 0;
        for (uint64_t d : c.drops) drops += d;
        if (c.enqueued > 0 || drops > 0) r.queue_totals.push_back({s->id(), p, q, c});
      }
    }
  }
  for (const Switch* s : switches) {
    r.drops_no_route += s->counters().dropped_no_route;
    r.pfc_frames_sent += s->counters().pfc_sent;
    r.ib_fc_packets_sent += s->counters().fc_sent;
    r.hoq_discards += s->counters().hoq_discards;
    r.ecn_marked += s->counters().ecn_marked;
    r.switch_buffer_peak = std::max(r.switch_buffer_peak, s->mmu().peak_used());
    r.lossless_drops_headroom_below_automatic +=
        s->counters().lossless_drops_headroom_below_automatic;
    r.lossless_drops_watchdog_forward += s->counters().lossless_drops_watchdog_forward;
  }
  r.switch_buffer_size = sc.fabric.sw.buffer.count();
}

// Collection: the NICs' counters, in all.
void collect_nics(RunResult& r, const Fabric& fabric) {
  for (const RdmaNic* n : fabric.nics) {
    const NicCounters& c = n->counters();
    r.out_of_sequence += c.out_of_sequence;
    r.retransmissions += c.retransmitted_packets;
    r.qp_errors += c.qp_errors;
    r.nic_rx_buffer_drops += c.rx_buffer_drops;
    r.lossless_drops_headroom_below_automatic += c.lossless_drops_headroom_below_automatic;
    r.lossless_drops_watchdog_forward += c.lossless_drops_watchdog_forward;
    r.cc.cnps_sent += c.cnps_sent;
    r.cc.cnps_received += c.cnps_received;
    r.cc.ecn_marked_received += c.ecn_marked_received;
    r.cc.ecn_echo_acks_sent += c.ecn_echo_acks_sent;
    r.cc.ecn_echo_acks_received += c.ecn_echo_acks_received;
    for (uint32_t q = 0; q < n->num_qps(); ++q) {
      if (const CongestionControl* cc = n->congestion_control(RdmaNic::kFirstQpn + q)) {
        r.cc.rate_cuts += cc->decreases();
        r.cc.rate_releases += cc->releases();
      }
    }
  }
}

// Collection: PortXmitWait of every credited port that waited, and the
// ports' flow-control packets and shared-pool use (credits only).
void collect_xmit_wait(RunResult& r, const Scenario& sc, const Fabric& fabric) {
  for (uint32_t node = 0; node < fabric.nodes.size(); ++node) {
    const Switch* s = fabric.switch_of_node[node];
    const RdmaNic* nic = s == nullptr
                             ? fabric.nics[static_cast<size_t>(sc.topology.node(node).host_index)]
                             : nullptr;
    for (uint32_t p = 0; p < fabric.nodes[node]->num_ports(); ++p) {
      const PortFlowControl& fc = s != nullptr ? s->flow_control(p) : nic->flow_control(p);
      if (!fc.credited()) continue;
      if (r.ib_fc_packets_by_vl.empty()) r.ib_fc_packets_by_vl.assign(sc.fabric.op_vls, 0);
      r.ib_shared_pool_peak_bytes =
          std::max(r.ib_shared_pool_peak_bytes,
                   static_cast<int64_t>(fc.credits()->peak_pool_use() * kIbCreditBlockBytes));
      for (uint8_t l = 0; l < fc.lanes(); ++l) {
        r.ib_shared_pool_revocations += fc.credits()->revocations(l);
        const Time w = fc.xmit_wait(l, r.sim_time);
        if (w > Time::zero()) r.ib_xmit_wait.push_back({node, p, l, w});
        if (l < r.ib_fc_packets_by_vl.size())
          r.ib_fc_packets_by_vl[l] += fc.credits()->packets_sent(l);
      }
    }
  }
}

// Collection: every link direction, in all and within the window.
void collect_links(RunResult& r, const Scenario& sc, const Fabric& fabric,
                   const std::optional<WindowCounters>& w_start,
                   const std::optional<WindowCounters>& w_end) {
  const Topology& topo = sc.topology;
  for (size_t i = 0; i < fabric.cables.size(); ++i) {
    const TopoLink& l = topo.links()[i];
    for (int dir = 0; dir < 2; ++dir) {
      const Link& link = dir == 0 ? *fabric.cables[i].a_to_b : *fabric.cables[i].b_to_a;
      const LinkCounters& c = link.counters();
      LinkResult lr;
      lr.link = static_cast<uint32_t>(i);
      lr.from = dir == 0 ? l.a : l.b;
      lr.to = dir == 0 ? l.b : l.a;
      lr.from_port = dir == 0 ? l.a_port : l.b_port;
      lr.rate = link.rate();
      lr.frames = c.frames;
      lr.data_frames = c.data_frames;
      lr.control_frames = c.control_frames;
      lr.wire_bytes = c.wire_bytes;
      lr.payload_bytes = c.payload_bytes;
      lr.busy = c.busy;
      if (w_start) {
        // The window's counters: all of them without a window, else the
        // difference of the snapshots.
        const size_t row = 2 * i + static_cast<size_t>(dir);
        const LinkCounters& a = w_start->links[row];
        const LinkCounters& b = w_end ? w_end->links[row] : c;
        lr.window_frames = b.frames - a.frames;
        lr.window_wire_bytes = b.wire_bytes - a.wire_bytes;
        lr.window_payload_bytes = b.payload_bytes - a.payload_bytes;
        lr.window_busy = b.busy - a.busy;
      }
      r.packet_hops += c.frames;
      r.link_lost_down += c.lost_down;
      r.link_corrupted += c.corrupted;
      r.data_packet_hops += c.data_frames;
      r.control_frame_hops += c.control_frames;
      r.links.push_back(lr);
    }
  }
}

// Collection: every flow of the flow generator, and the window's congestion
// notification over them.
void collect_flows(RunResult& r, const Scenario& sc, const Fabric& fabric,
                   const FlowGenerator& traffic, Recorders& rec, const ScenarioFormat& formats) {
  const std::optional<WindowCounters>& w_start = rec.window_start();
  const std::optional<WindowCounters>& w_end = rec.window_end();
  const IdealFct ideal(sc.topology, sc.routes, sc.fabric.nic, sc.fabric.sw, formats.get(), sc.seed,
                       formats.nvlink(), sc.fabric.nvswitch);
  for (uint32_t i = 0; i < sc.flows.size(); ++i) {
    const FlowSpec& f = sc.flows[i];
    const FlowRecord& rec_i = traffic.records()[i];
    FlowResult fr;
    fr.id = i;
    fr.name = f.name;
    fr.src = f.src;
    fr.dst = f.dst;
    fr.bytes = f.bytes;
    fr.op = f.op;
    fr.start = f.start;
    const auto progress = traffic.first_tx(i);
    fr.started = progress.has_value();
    fr.first_tx = progress.value_or(Time::zero());
    fr.finish = rec_i.finish;
    fr.done = rec_i.done;
    fr.failed = rec_i.failed;
    if (rec_i.failed) fr.error = to_string(rec_i.status);
    fr.retransmissions = traffic.retransmissions(i);
    fr.path = rec.take_path(i, fabric, traffic);
    fr.item = f.item;
    fr.ideal_fct = ideal.of(f, traffic.part_qps(i));
    const FlowGenerator::CcCounts cc = traffic.cc_counts(i);
    fr.cnps_received = cc.cnps_received;
    fr.cnps_sent = cc.cnps_sent;
    fr.ecn_marked = cc.ecn_marked;
    fr.ecn_echo_acks = cc.ecn_echo_acks;
    fr.rate_cuts = cc.rate_cuts;
    if (w_start) {
      fr.window_bytes =
          (w_end ? w_end->delivered[i] : traffic.delivered(i)) - w_start->delivered[i];
    }
    r.flows.push_back(std::move(fr));
  }
  if (w_start) {
    // The window's congestion notification: the difference of the
    // snapshots, or without an end snapshot the final counts.
    FlowGenerator::CcCounts last;
    if (w_end) {
      last = w_end->cc;
    } else {
      for (uint32_t i = 0; i < sc.flows.size(); ++i) last += traffic.cc_counts(i);
    }
    const FlowGenerator::CcCounts d = last - w_start->cc;
    r.window.cnps_received = d.cnps_received;
    r.window.cnps_sent = d.cnps_sent;
    r.window.ecn_echo_acks = d.ecn_echo_acks;
    r.window.rate_cuts = d.rate_cuts;
  }
}

// The invariants checked once the run is over (sim/scenario/invariant_checks.h):
// the violation's line, or empty.
std::string check_end_of_run(const RunResult& r, const Fabric& fabric, const Workloads& w) {
  try {
    check_qp_end_states(r.status, gather_qp_ends(fabric, *w.flows, w.collectives), r.sim_time);
    check_flow_bytes(gather_flow_bytes(fabric, *w.flows, w.collectives), r.sim_time);
  } catch (const InvariantViolation& v) {
    return v.what();
  }
  return {};
}

}  // namespace

void collect_collectives(RunResult& r, const Workloads& workloads) {
  for (const Collective* c : workloads.collectives) {
    const CollectiveSpec& s = c->spec();
    CollectiveResult cr;
    cr.name = s.name;
    cr.op = to_string(s.op);
    cr.algorithm = to_string(s.algorithm);
    cr.item = s.item;
    cr.ranks = c->ranks();
    cr.channels = s.channels;
    cr.steps = c->plan().steps;
    cr.bytes = s.bytes;
    cr.iterations = s.iterations;
    cr.completed = static_cast<uint32_t>(c->completed());
    const double factor = bus_factor(s.op, cr.ranks);
    Time sum;
    size_t phase = 0;
    for (uint32_t i = 0; i < s.iterations; ++i) {
      while (i >= c->phase_first_iteration(phase + 1)) ++phase;
      const auto bytes = static_cast<double>(s.phase_bytes(phase));
      CollectiveResult::Iteration it;
      it.start = c->iteration_start(i);
      it.end = c->iteration_end(i);
      it.done = !it.end.is_infinite();
      if (it.done) {
        const Time t = it.end - it.start;
        sum += t;
        it.time_us = t.in_us();
        it.algbw_gbps = bytes / t.in_seconds() * 1e-9;
        it.busbw_gbps = it.algbw_gbps * factor;
      }
      cr.iters.push_back(it);
    }
    // A sweep: per size, its timed iterations together over their number.
    cr.warmup_iters = s.warmup_iters;
    uint32_t sizes_done = 0;
    for (size_t p = 0; !s.sweep_bytes.empty() && p < s.phases(); ++p) {
      CollectiveResult::SweepRow row;
      row.bytes = s.sweep_bytes[p];
      // nccl-tests' count: all_reduce's whole buffer, the per-rank part otherwise.
      row.count = row.bytes / 4 / (s.op == CollectiveOp::kAllReduce ? 1 : int64_t{cr.ranks});
      row.first_iteration = c->phase_first_iteration(p) + s.warmup_iters;
      row.iters = s.sweep_iters;
      const Time end = c->iteration_end(row.first_iteration + row.iters - 1);
      row.done = !end.is_infinite();
      if (row.done) {
        const double t_s = (end - c->iteration_start(row.first_iteration)).in_seconds() / row.iters;
        row.time_us = t_s * 1e6;
        row.algbw_gbps = static_cast<double>(row.bytes) / t_s * 1e-9;
        row.busbw_gbps = row.algbw_gbps * factor;
        // Both columns, as nccl-tests adds them (in-place = out-of-place).
        cr.avg_busbw_gbps += 2 * row.busbw_gbps;
        sizes_done += 2;
      }
      cr.sweep.push_back(row);
    }
    if (sizes_done > 0) cr.avg_busbw_gbps /= sizes_done;
    if (cr.completed > 0 && s.sweep_bytes.empty()) {
      const double mean_s = sum.in_seconds() / cr.completed;
      cr.time_us = mean_s * 1e6;
      cr.algbw_gbps = static_cast<double>(s.bytes) / mean_s * 1e-9;
      cr.busbw_gbps = cr.algbw_gbps * factor;
    }
    for (uint32_t rank = 0; rank < cr.ranks; ++rank)
      cr.rank_bytes_received.push_back(c->received(rank));
    r.collectives.push_back(std::move(cr));
  }
}

namespace {

// One run from the beginning. With options.restart_when_sparse, a run whose
// first phase is too sparse for its threads stops there and returns only
// restarted_on_one_thread (set) and the density it found.
RunResult run_from_start(const Scenario& sc, const RunOptions& options,
                         std::chrono::steady_clock::time_point wall_start) {
  const auto build_start = std::chrono::steady_clock::now();
  const ScenarioFormat scenario_format(sc.fabric);
  const uint32_t threads = std::max<uint32_t>(1, options.threads);

  // Build: the devices, then the workloads on their NICs.
  Simulation sim(sc.seed);
  sim.set_checks(options.check);
  const Fabric fabric = build_fabric(sim, sc, scenario_format);
  Workloads workloads = build_workloads(sim, sc, fabric.nics);
  if (options.add_workloads) options.add_workloads(sim, fabric.nics, workloads.all);
  // Placement: partitions taking turns when the fabric is large (for the
  // caches), on one thread or in groups on each of the threads; at least
  // one partition per thread.
  const uint32_t locality = locality_partitions(host_bytes(sc.topology, workloads));
  const uint32_t parts = std::max(threads, options.partitions != 0 ? options.partitions : locality);
  if (parts > 1) place_partitions(sim, sc.topology, fabric, workloads, parts);
  if (threads > 1) sim.set_threads(threads);
  if (threads == 1 && parts > 1) {
    sim.set_min_events_per_lookahead(std::numeric_limits<double>::infinity());
  } else if (options.force_threads) {
    sim.set_min_events_per_lookahead(0);
    sim.set_adapt_to_starvation(false);
  } else if (threads > 1 && options.restart_when_sparse && parts != locality) {
    // (With as many partitions as a run on one thread takes, starting again
    // would give what taking turns in place gives: the same partitions.)
    sim.set_stop_when_sparse(true);
  }
  // Recorders.
  Recorders recorders(sc, options, parts);
  recorders.attach(sim, fabric, *workloads.flows);
  recorders.attach(workloads.collectives);
  // The progress hook is also where the run polls its stops from outside
  // (a signal, the wall-clock limit, the fuzz target's event budget): every
  // 4096 events, between phases in a partitioned run; the progress callback
  // itself every 65536.
  HookStop hook_stop = HookStop::kNone;
  const bool wall_limited = !sc.stop.wall_time.is_infinite();
  const auto wall_deadline =
      wall_start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                       std::chrono::duration<double>(sc.stop.wall_time.in_seconds()));
  // Time series are flushed there too, about every trace_flush_events.
  const bool flushed = recorders.time_series();
  // And the heap is moved onto huge pages as it grows (sim/huge_pages.h),
  // every kHeapEvery events: the network's own state is advised once built.
  HeapHugePages heap_pages;
  if (options.progress || options.max_events > 0 || options.stop_signal != nullptr ||
      wall_limited || flushed || options.heap_huge_pages) {
    const int64_t total = workloads.bytes_total();
    constexpr uint64_t kPollEvery = 4096;
    constexpr uint64_t kProgressEvery = 1 << 16;
    uint64_t next_progress = kProgressEvery;
    const uint64_t flush_every = std::max<uint64_t>(1, options.trace_flush_events);
    uint64_t next_flush = flush_every;
    // The counters live in the hook (captured by value, mutable): it runs
    // long after this block has closed.
    constexpr uint64_t kHeapEvery = uint64_t{1} << 22;
    uint64_t next_heap = kHeapEvery;
    sim.set_progress_hook(
        [&, total, next_progress, flush_every, next_flush, next_heap](const Simulation& s) mutable {
          if (options.heap_huge_pages && s.events_dispatched() >= next_heap) {
            heap_pages.advise();
            next_heap = s.events_dispatched() + kHeapEvery;
          }
          if (flushed && s.events_dispatched() >= next_flush) {
            recorders.flush(sim);
            next_flush = s.events_dispatched() + flush_every;
          }
          if (options.max_events > 0 && s.events_dispatched() >= options.max_events) {
            hook_stop = HookStop::kEvents;
            sim.request_stop();
          }
          if (wall_limited && std::chrono::steady_clock::now() >= wall_deadline) {
            hook_stop = HookStop::kWallTime;
            sim.request_stop();
          }
          // After the wall clock: a signal seen in the same poll wins, as the
          // exit code (128 + signal) does.
          if (options.stop_signal != nullptr &&
              options.stop_signal->load(std::memory_order_relaxed) != 0) {
            hook_stop = HookStop::kSignal;
            sim.request_stop();
          }
          if (!options.progress || s.events_dispatched() < next_progress) return;
          next_progress = s.events_dispatched() + kProgressEvery;
          const int64_t delivered = workloads.bytes_delivered();
          // Partitioned, between phases: everything before the next event
          // has run (the clock now() is the observers', which may lag).
          Time shown = s.now();
          if (s.partitions() > 1) {
            const Time next = sim.next_event_time();
            if (!next.is_infinite()) shown = std::max(shown, std::min(next, sc.stop.time));
          }
          Progress p{shown, sc.stop.time, s.events_dispatched(),
                     total > 0 ? static_cast<double>(delivered) / static_cast<double>(total) : 0.0};
          options.progress(p);
        },
        kPollEvery);
  }

  if (options.on_built) options.on_built(sim, fabric.switches);
  sim.setup();
  if (options.heap_huge_pages) heap_pages.advise();
  const auto loop_start = std::chrono::steady_clock::now();
  // A violated invariant stops the run; what was gathered is still collected.
  std::string violation;
  RunEnd end = RunEnd::kStopped;
  try {
    end = sim.run(sc.stop.time);
    if (sim.stopped_sparse()) {
      // Start again on one thread, unless the run has ended already (the
      // workloads are done, or nothing is due before the stop time) or is
      // to stop (a signal, the wall-clock limit): then it goes on here, its
      // partitions taking turns, and ends at once or at its next poll.
      const bool stop_pending = (options.stop_signal != nullptr &&
                                 options.stop_signal->load(std::memory_order_relaxed) != 0) ||
                                (wall_limited && std::chrono::steady_clock::now() >= wall_deadline);
      if (!stop_pending && !workloads.finished() && sim.next_event_time() <= sc.stop.time) {
        RunResult probe;
        probe.threads = threads;
        probe.events_per_partition_lookahead = sim.events_per_partition_lookahead();
        probe.events_per_thread_lookahead = sim.events_per_thread_lookahead();
        probe.restarted_on_one_thread = true;
        return probe;
      }
      end = sim.run(sc.stop.time);
    }
  } catch (const InvariantViolation& v) {
    violation = v.what();
  }
  const auto loop_end = std::chrono::steady_clock::now();
  sim.finish();

  // Collection.
  RunResult r;
  r.status = status_of(recorders, workloads, end, hook_stop);
  if (r.status == RunStatus::kDeadlock) {
    r.deadlock.detected = true;
    r.deadlock.at = recorders.deadlock()->detected_at();
    r.deadlock.cycle = recorders.deadlock()->cycle();
  }
  r.sim_time = sim.now();
  r.events = sim.events_dispatched();
  r.fingerprint = sim.fingerprint();
  r.packets_created = sim.packets_created();
  r.threads = threads;
  r.partitions = parts;
  r.phases = sim.phases();
  r.threads_used = sim.threads_used();
  r.events_per_partition_lookahead = sim.events_per_partition_lookahead();
  r.events_per_thread_lookahead = sim.events_per_thread_lookahead();
  r.thread_sleeps = sim.thread_sleeps();
  r.starved_windows = sim.starved_windows();
  r.starved_turns_seconds = sim.starved_turns_seconds();
  if (parts > 1) {
    for (uint32_t i = 0; i < parts; ++i) {
      r.partition_events.push_back(sim.partition(i).events_dispatched());
    }
  }
  collect_collectives(r, workloads);
  recorders.collect(r);
  collect_switches(r, sc, fabric);
  collect_nics(r, fabric);
  collect_xmit_wait(r, sc, fabric);
  recorders.collect_window(r, fabric);
  collect_links(r, sc, fabric, recorders.window_start(), recorders.window_end());
  collect_flows(r, sc, fabric, *workloads.flows, recorders, scenario_format);
  r.checked = options.check;
  if (options.check && violation.empty()) violation = check_end_of_run(r, fabric, workloads);
  if (!violation.empty()) {
    r.status = RunStatus::kInvariantViolated;
    r.invariant = violation;
  }

  r.wall.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  r.wall.build_seconds = std::chrono::duration<double>(loop_start - build_start).count();
  r.wall.event_seconds = std::chrono::duration<double>(loop_end - loop_start).count();
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  r.wall.peak_rss_bytes = static_cast<int64_t>(ru.ru_maxrss) * 1024;
  r.wall.heap_huge_page_bytes = static_cast<int64_t>(heap_pages.collapsed());
  return r;
}

}  // namespace

uint32_t locality_partitions(const std::vector<int64_t>& host_bytes) {
  const auto hosts = static_cast<uint32_t>(host_bytes.size());
  if (hosts < kLocalityMinHosts) return 1;
  const auto busy = static_cast<uint32_t>(
      std::count_if(host_bytes.begin(), host_bytes.end(), [](int64_t b) { return b > 0; }));
  if (2 * static_cast<uint64_t>(busy) < hosts) return 1;
  return std::min(kMaxLocalityPartitions, hosts / kHostsPerLocalityPartition);
}

RunResult run_scenario(const Scenario& sc, const RunOptions& options) {
  const auto wall_start = std::chrono::steady_clock::now();
  RunResult first = run_from_start(sc, options, wall_start);
  if (!first.restarted_on_one_thread) return first;
  const double first_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  // Too sparse for threads: from the beginning on one, whose results the
  // partitioned run would have had too (sim/simulation.h contract 5).
  RunOptions one = options;
  one.threads = 1;
  // A run on one thread's own choice (locality_partitions: the network
  // whole unless it is large and busy): its results and fingerprint.
  one.partitions = 0;
  RunResult r = run_from_start(sc, one, wall_start);
  r.threads = first.threads;
  r.threads_used = 1;
  r.events_per_partition_lookahead = first.events_per_partition_lookahead;
  r.events_per_thread_lookahead = first.events_per_thread_lookahead;
  r.restarted_on_one_thread = true;
  r.wall.first_attempt_seconds = first_seconds;
  return r;
}

}  // namespace rdmasim
