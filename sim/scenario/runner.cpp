#include "sim/scenario/runner.h"

#include <sys/resource.h>

#include <cassert>
#include <chrono>
#include <map>
#include <stdexcept>

#include "models/cc/cc_sampler.h"
#include "models/nic/rdma_nic.h"
#include "models/switch/deadlock_detector.h"
#include "models/switch/queue_average.h"
#include "models/switch/queue_sampler.h"
#include "models/switch/switch.h"
#include "models/traffic/flow_generator.h"
#include "sim/cable.h"
#include "sim/scenario/fault_injector.h"
#include "sim/scenario/ideal_fct.h"
#include "sim/scenario/window_recorder.h"
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
  }
  return "?";
}

int exit_code(RunStatus s) {
  if (s == RunStatus::kStalled) return 3;
  if (s == RunStatus::kDeadlock) return 5;
  return s == RunStatus::kQpError ? 4 : 0;
}

namespace {

template <class Event>
void merge_by_time_and_node(std::vector<std::vector<Event>>& parts, std::vector<Event>& out) {
  for (auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  std::stable_sort(out.begin(), out.end(), [](const Event& a, const Event& b) {
    return a.time != b.time ? a.time < b.time : a.node < b.node;
  });
}

}  // namespace

RunResult run_scenario(const Scenario& sc, const RunOptions& options) {
  const auto wall_start = std::chrono::steady_clock::now();
  const Topology& topo = sc.topology;
  const RoceV2Format format(sc.fabric.ip, sc.fabric.vlan);

  Simulation sim(sc.seed);
  std::vector<Node*> nodes(topo.nodes().size());
  std::vector<RdmaNic*> nics(topo.num_hosts());
  std::vector<Switch*> switches;
  for (uint32_t id = 0; id < topo.nodes().size(); ++id) {
    const TopoNode& n = topo.node(id);
    if (n.kind == NodeKind::kHost) {
      nics[n.host_index] = &sim.add<RdmaNic>(n.name, n.host_index, sc.fabric.nic, format);
      nics[n.host_index]->set_egress_selector(&sc.routes);
      nodes[id] = nics[n.host_index];
    } else {
      switches.push_back(&sim.add<Switch>(n.name, sc.fabric.sw));
      nodes[id] = switches.back();
    }
  }
  std::vector<Cable> cables;
  cables.reserve(topo.links().size());
  for (const TopoLink& l : topo.links()) {
    cables.push_back(connect(sim, *nodes[l.a], *nodes[l.b], l.rate, l.delay));
    if (cables.back().a_port != l.a_port || cables.back().b_port != l.b_port) {
      throw std::logic_error("port numbering differs between topology and devices");
    }
  }
  if (sc.fabric.sw.forwarding == Forwarding::kCutThrough) {
    // Links into switches deliver frames once their headers are in.
    for (size_t i = 0; i < cables.size(); ++i) {
      const TopoLink& l = topo.links()[i];
      if (topo.node(l.b).kind == NodeKind::kSwitch)
        cables[i].a_to_b->set_cut_through(sc.fabric.sw.cut_through_bytes);
      if (topo.node(l.a).kind == NodeKind::kSwitch)
        cables[i].b_to_a->set_cut_through(sc.fabric.sw.cut_through_bytes);
    }
  }
  for (uint32_t id = 0; id < topo.nodes().size(); ++id) {
    if (topo.node(id).kind == NodeKind::kSwitch) {
      static_cast<Switch*>(nodes[id])->set_forwarding_table(sc.routes.table(id));
    }
  }
  for (const auto& [node, rule] : sc.rewrites) static_cast<Switch*>(nodes[node])->add_rewrite(rule);
  auto& traffic = sim.add<FlowGenerator>("traffic", sc.flows, nics);
  const uint32_t threads = std::max<uint32_t>(1, options.threads);
  if (threads > 1) {
    // Each node and the links into it run in the node's partition.
    sim.set_partitions(threads);
    // A host weighs the mean traffic per host plus the bytes it sends and
    // receives: the receiver of an incast does the work of many senders.
    std::vector<int64_t> weight(topo.num_hosts(), 0);
    int64_t bytes = 0;
    for (const FlowSpec& f : sc.flows) {
      weight[f.src] += f.bytes;
      weight[f.dst] += f.bytes;
      bytes += 2 * f.bytes;
    }
    const int64_t mean = std::max<int64_t>(1, bytes / std::max<int64_t>(1, topo.num_hosts()));
    for (int64_t& w : weight) w += mean;
    const std::vector<uint32_t> part = partition_nodes(topo, threads, weight);
    for (uint32_t id = 0; id < nodes.size(); ++id) nodes[id]->assign(sim.partition(part[id]));
    for (size_t i = 0; i < cables.size(); ++i) {
      const TopoLink& l = topo.links()[i];
      place(cables[i], sim.partition(part[l.a]), sim.partition(part[l.b]));
    }
    sim.set_observer(traffic);
  }

  // Observers and recorders, as the scenario's `output` asks.
  RunResult r;
  std::vector<const Switch*> const_switches(switches.begin(), switches.end());
  DeadlockDetector* deadlock = nullptr;
  if (sc.fabric.sw.deadlock_detection && !switches.empty()) {
    deadlock = &sim.add<DeadlockDetector>(
        "deadlock_detector", const_switches, sc.fabric.sw.deadlock_timeout,
        sc.fabric.sw.deadlock_timeout / 2, sc.fabric.sw.deadlock_stop);
    sim.set_observer(*deadlock);
  }
  QueueSampler* sampler = nullptr;
  if (!sc.output.queue_interval.is_infinite() && !switches.empty()) {
    sampler = &sim.add<QueueSampler>("queue_sampler", const_switches, sc.output.queue_interval);
    sim.set_observer(*sampler);
  }
  if (!sc.faults.empty()) {
    std::vector<Switch*> by_node(topo.nodes().size(), nullptr);
    for (uint32_t id = 0; id < topo.nodes().size(); ++id) {
      if (topo.node(id).kind == NodeKind::kSwitch) by_node[id] = static_cast<Switch*>(nodes[id]);
    }
    sim.set_observer(sim.add<FaultInjector>("faults", sc, cables, std::move(by_node), nics));
  }
  // Flow paths: the first data packet of each flow reports each switch's
  // choice; the host's own first hop is its QP's port.
  auto link_row = [&topo](uint32_t node, uint32_t port) {
    const uint32_t k = topo.adjacency()[node][port].link;
    return topo.links()[k].a == node ? 2 * k : 2 * k + 1;
  };
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> flow_of_qp;
  std::vector<std::vector<uint32_t>> paths(sc.flows.size());
  if (sc.output.flow_paths) {
    for (uint32_t i = 0; i < sc.flows.size(); ++i) flow_of_qp[traffic.data_qp(i)] = i;
    for (Switch* s : switches) {
      s->route_probe.attach([&, node = s->id()](const Packet& p, uint32_t port) {
        auto it = flow_of_qp.find({p.src, p.src_qpn});
        if (it != flow_of_qp.end()) paths[it->second].push_back(link_row(node, port));
      });
    }
  }
  LinkSampler* link_sampler = nullptr;
  if (!sc.output.link_interval.is_infinite()) {
    std::vector<const Link*> links;
    for (const Cable& c : cables) {
      links.push_back(c.a_to_b);
      links.push_back(c.b_to_a);
    }
    link_sampler = &sim.add<LinkSampler>("link_sampler", std::move(links), sc.output.link_interval);
    sim.set_observer(*link_sampler);
  }
  // Recorded per partition (threads append side by side), merged after the
  // run in (time, node) order: the order within a node is its events', the
  // same for any number of threads.
  std::vector<std::vector<PfcEvent>> pfc_events(threads);
  std::vector<std::vector<DropEvent>> drop_events(threads);
  for (Switch* s : switches) {
    if (sc.output.pfc_events) {
      s->pfc_probe.attach(
          [&to = pfc_events[s->ctx().index()]](const PfcEvent& e) { to.push_back(e); });
    }
    if (sc.output.drop_events) {
      s->drop_probe.attach(
          [&to = drop_events[s->ctx().index()]](const DropEvent& e) { to.push_back(e); });
    }
  }
  // Congestion-control samples (output.cc_interval): one sampler per QP
  // whose algorithm reports a state, written only from its NIC's events
  // (models/cc/cc_sampler.h), so partitions need no merging but a sort.
  struct SampledQp {
    uint32_t flow, part, host, qpn;
    bool sender;
    CcSampler sampler;
  };
  std::vector<SampledQp> sampled;
  if (!sc.output.cc_interval.is_infinite()) {
    for (uint32_t i = 0; i < sc.flows.size(); ++i) {
      for (uint32_t k = 0; k < traffic.num_parts(i); ++k) {
        const uint32_t part = traffic.first_part(i) + k;
        auto add = [&](std::pair<uint32_t, uint32_t> qp, bool sender) {
          if (nics[qp.first]->congestion_control(qp.second) == nullptr) return;
          sampled.push_back(
              SampledQp{i, k, qp.first, qp.second, sender, CcSampler(sc.output.cc_interval)});
        };
        add(traffic.part_sender(part), true);
        add(traffic.part_receiver(part), false);
      }
    }
    for (SampledQp& q : sampled) {
      nics[q.host]->congestion_control(q.qpn)->observe(
          [&sampler = q.sampler](const CcState& st) { sampler.change(st); });
    }
  }
  // The measurement window (output.window): its snapshots, and the switches'
  // exact queue averages over it (egress hooks, only when asked for).
  WindowRecorder* window = nullptr;
  std::vector<std::unique_ptr<QueueAverage>> averages;
  if (sc.output.window_given()) {
    std::vector<const Link*> links;
    for (const Cable& c : cables) {
      links.push_back(c.a_to_b);
      links.push_back(c.b_to_a);
    }
    window = &sim.add<WindowRecorder>("window", traffic, std::move(links), const_switches,
                                      sc.output.window_start, sc.output.window_end);
    sim.set_observer(*window);
    for (Switch* s : switches) {
      averages.push_back(std::make_unique<QueueAverage>(
          s->num_ports(), sc.output.window_start.value_or(Time::zero()),
          sc.output.window_end.value_or(Time::infinite())));
      s->add_egress_hook(*averages.back(), 0xFF);
    }
  }
  if (options.progress || options.max_events > 0) {
    int64_t total = 0;
    for (const FlowSpec& f : sc.flows) total += f.bytes;
    sim.set_progress_hook(
        [&, total](const Simulation& s) {
          if (options.max_events > 0 && s.events_dispatched() >= options.max_events) {
            sim.request_stop();
          }
          if (!options.progress) return;
          int64_t delivered = 0;
          for (const RdmaNic* n : nics) delivered += n->counters().payload_bytes_delivered;
          Progress p{s.now(), sc.stop.time, s.events_dispatched(),
                     total > 0 ? static_cast<double>(delivered) / static_cast<double>(total) : 0.0};
          options.progress(p);
        },
        options.max_events > 0 ? 4096 : 1 << 16);
  }

  if (options.on_built) options.on_built(sim, switches);
  sim.setup();
  const auto loop_start = std::chrono::steady_clock::now();
  const RunEnd end = sim.run(sc.stop.time);
  const auto loop_end = std::chrono::steady_clock::now();
  sim.finish();

  if (deadlock != nullptr && deadlock->detected()) {
    r.status = RunStatus::kDeadlock;
    r.deadlock.detected = true;
    r.deadlock.at = deadlock->detected_at();
    r.deadlock.cycle = deadlock->cycle();
  } else if (traffic.failed() > 0) {
    r.status = RunStatus::kQpError;
  } else if (traffic.completed() == sc.flows.size()) {
    r.status = RunStatus::kComplete;
  } else if (end == RunEnd::kTimeLimit) {
    r.status = RunStatus::kTimeLimit;
  } else {
    r.status = RunStatus::kStalled;
  }
  if (sampler != nullptr) r.queue_samples = std::move(sampler->samples());
  if (link_sampler != nullptr) r.link_samples = std::move(link_sampler->samples());
  r.sim_time = sim.now();
  r.events = sim.events_dispatched();
  r.fingerprint = sim.fingerprint();
  r.packets_created = sim.packets_created();
  r.threads = threads;
  r.phases = sim.phases();
  if (threads > 1) {
    for (uint32_t i = 0; i < threads; ++i) {
      r.partition_events.push_back(sim.partition(i).events_dispatched());
    }
  }
  merge_by_time_and_node(pfc_events, r.pfc_events);
  merge_by_time_and_node(drop_events, r.drop_events);
  for (uint8_t reason = 1; reason < static_cast<uint8_t>(DropReason::kCount); ++reason) {
    uint64_t n = 0;
    for (const Switch* s : switches) n += s->drops(static_cast<DropReason>(reason));
    r.switch_drops.emplace_back(to_string(static_cast<DropReason>(reason)), n);
  }
  for (const Switch* s : switches) {
    for (uint32_t p = 0; p < s->num_ports(); ++p) {
      for (uint8_t q = 0; q < 8; ++q) {
        const QueueCounters& c = s->queue_counters(p, q);
        uint64_t drops = 0;
        for (uint64_t d : c.drops) drops += d;
        if (c.enqueued > 0 || drops > 0) r.queue_totals.push_back({s->id(), p, q, c});
      }
    }
  }
  for (const Switch* s : switches) {
    r.drops_no_route += s->counters().dropped_no_route;
    r.pfc_frames_sent += s->counters().pfc_sent;
    r.ecn_marked += s->counters().ecn_marked;
    r.switch_buffer_peak = std::max(r.switch_buffer_peak, s->mmu().peak_used());
  }
  r.switch_buffer_size = sc.fabric.sw.buffer.count();
  for (const RdmaNic* n : nics) {
    const NicCounters& c = n->counters();
    r.out_of_sequence += c.out_of_sequence;
    r.retransmissions += c.retransmitted_packets;
    r.qp_errors += c.qp_errors;
    r.cc.cnps_sent += c.cnps_sent;
    r.cc.cnps_received += c.cnps_received;
    r.cc.ecn_marked_received += c.ecn_marked_received;
    r.cc.ecn_echo_acks_sent += c.ecn_echo_acks_sent;
    r.cc.ecn_echo_acks_received += c.ecn_echo_acks_received;
    for (uint32_t q = 0; q < n->num_qps(); ++q) {
      if (const CongestionControl* cc = n->congestion_control(RdmaNic::kFirstQpn + q))
        r.cc.rate_cuts += cc->decreases();
    }
  }

  // The measurement window: (start, end], clipped to the run. Its counters
  // at the start are zero without a start, missing if the run ended first
  // (an empty window); at the end, the final ones unless the run went on.
  std::optional<WindowCounters> w_start, w_end;
  {
    RunResult::Window& w = r.window;
    w.given = sc.output.window_given();
    w.start = sc.output.window_start.value_or(Time::zero());
    w.end = std::min(sc.output.window_end.value_or(Time::infinite()), r.sim_time);
    if (window != nullptr) {
      w_end = window->at_end() ? *window->at_end() : window->take();
      if (sc.output.window_start) w_start = window->at_start();
    }
    if (!sc.output.window_start) {
      w_start = WindowCounters{};  // before the first event: nothing yet
      w_start->delivered.assign(sc.flows.size(), 0);
      w_start->links.assign(2 * cables.size(), LinkCounters{});
    }
    if (!w_start) w.end = w.start;  // the run ended before the window began
    if (w_start && w_end) w.pfc_frames_sent = w_end->pfc_frames_sent - w_start->pfc_frames_sent;
    if (w_start && !w_end) w.pfc_frames_sent = r.pfc_frames_sent;
    w.queue_averages = !averages.empty();
    if (w.queue_averages) {
      std::vector<size_t> average_of(topo.nodes().size(), 0);  // node id -> switch index
      for (size_t k = 0; k < switches.size(); ++k) average_of[switches[k]->id()] = k;
      for (RunResult::QueueTotals& q : r.queue_totals) {
        const QueueAverage& a = *averages[average_of[q.node]];
        q.window_mean_bytes = w_start ? a.mean_bytes(q.port, q.priority, w.end) : 0.0;
        q.window_peak_bytes = w_start ? a.peak_bytes(q.port, q.priority, w.end) : 0;
      }
    }
  }

  for (size_t i = 0; i < cables.size(); ++i) {
    const TopoLink& l = topo.links()[i];
    for (int dir = 0; dir < 2; ++dir) {
      const Link& link = dir == 0 ? *cables[i].a_to_b : *cables[i].b_to_a;
      const LinkCounters& c = link.counters();
      LinkResult lr;
      lr.link = static_cast<uint32_t>(i);
      lr.from = dir == 0 ? l.a : l.b;
      lr.to = dir == 0 ? l.b : l.a;
      lr.from_port = dir == 0 ? l.a_port : l.b_port;
      lr.rate = link.rate();
      lr.frames = c.frames;
      lr.data_frames = c.data_frames;
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
      r.links.push_back(lr);
    }
  }

  const IdealFct ideal(topo, sc.routes, sc.fabric.nic, sc.fabric.sw, format, sc.seed);
  for (uint32_t i = 0; i < sc.flows.size(); ++i) {
    const FlowSpec& f = sc.flows[i];
    if (sc.output.flow_paths) {
      const auto [host, qpn] = traffic.data_qp(i);
      const uint32_t port = nics[host]->qp(qpn).port();
      // Only flows whose first packet crossed a switch, or hosts cabled
      // directly (no switch to report): the host's hop starts the path.
      if (!paths[i].empty() ||
          topo.node(topo.adjacency()[topo.hosts()[host]][port].neighbor).kind == NodeKind::kHost) {
        paths[i].insert(paths[i].begin(), link_row(topo.hosts()[host], port));
      }
    }
    const FlowRecord& rec = traffic.records()[i];
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
    fr.finish = rec.finish;
    fr.done = rec.done;
    fr.failed = rec.failed;
    if (rec.failed) fr.error = to_string(rec.status);
    fr.retransmissions = traffic.retransmissions(i);
    fr.path = std::move(paths[i]);
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

  // Congestion-control samples, in time order; at one time by flow, part,
  // sender first, then as recorded.
  for (SampledQp& q : sampled) {
    q.sampler.finish(r.sim_time);
    for (const CcSampleRow& row : q.sampler.rows()) {
      r.cc_samples.push_back(CcSampleResult{row.time, q.flow, q.part, q.host, q.qpn, q.sender,
                                            row.state, row.changes});
    }
  }
  std::stable_sort(
      r.cc_samples.begin(), r.cc_samples.end(),
      [](const CcSampleResult& a, const CcSampleResult& b) { return a.time < b.time; });

  r.wall.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  r.wall.build_seconds = std::chrono::duration<double>(loop_start - wall_start).count();
  r.wall.event_seconds = std::chrono::duration<double>(loop_end - loop_start).count();
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  r.wall.peak_rss_bytes = static_cast<int64_t>(ru.ru_maxrss) * 1024;
  return r;
}

}  // namespace rdmasim
