#include "sim/output/summary.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "sim/hash.h"
#include "sim/output/output_error.h"
#include "sim/output/slowdown.h"
#include "sim/output/version.h"

namespace rdmasim {
namespace {

using nlohmann::json;

double goodput_gbps(int64_t bytes, Time t) {
  return t.in_ps() > 0 ? static_cast<double>(bytes) * 8.0 / t.in_seconds() * 1e-9 : 0.0;
}

// Nearest-rank percentile of sorted values (slowdown.h).
int64_t percentile(const std::vector<int64_t>& sorted, double p) { return nearest_rank(sorted, p); }

json stats_json(const SlowdownStats& st) {
  json j = {{"count", st.count}};
  if (st.count > 0) {
    j["p50"] = st.p50;
    j["p95"] = st.p95;
    j["p99"] = st.p99;
    j["mean"] = st.mean;
    j["max"] = st.max;
  }
  return j;
}

struct FlowStats {
  size_t completed = 0;
  int64_t bytes_completed = 0;
  std::vector<int64_t> fct_ps;  // sorted
  std::vector<double> goodput;  // sorted
  Time first_start = Time::infinite();
  Time last_finish = Time::zero();
};

FlowStats flow_stats(const RunResult& r) {
  FlowStats s;
  for (const FlowResult& f : r.flows) {
    if (!f.done) continue;
    ++s.completed;
    s.bytes_completed += f.bytes;
    s.fct_ps.push_back(f.fct().in_ps());
    s.goodput.push_back(goodput_gbps(f.bytes, f.fct()));
    s.first_start = std::min(s.first_start, f.first_tx);
    s.last_finish = std::max(s.last_finish, f.finish);
  }
  std::sort(s.fct_ps.begin(), s.fct_ps.end());
  std::sort(s.goodput.begin(), s.goodput.end());
  return s;
}

// Jain's fairness index of `x`: (sum x)^2 / (n sum x^2); -1 if undefined
// (no values, or all zero).
double jain_index(const std::vector<double>& x) {
  double sum = 0, sq = 0;
  for (double v : x) {
    sum += v;
    sq += v * v;
  }
  return x.empty() || sq <= 0 ? -1.0 : sum * sum / (static_cast<double>(x.size()) * sq);
}

// A flow takes part in the window if it sent before the window's end and had
// not completed by its start.
bool active_in(const FlowResult& f, const RunResult::Window& w) {
  return f.started && f.first_tx < w.end && (!f.done || f.finish > w.start);
}

json window_json(const Scenario& sc, const RunResult& r) {
  const RunResult::Window& w = r.window;
  const Time len = w.length();
  json j = {{"given", w.given},
            {"start_ps", w.start.in_ps()},
            {"end_ps", w.end.in_ps()},
            {"duration_ps", len.in_ps()}};
  int64_t bytes = 0;
  std::vector<double> goodputs;
  for (const FlowResult& f : r.flows) {
    bytes += f.window_bytes;
    if (active_in(f, w)) goodputs.push_back(goodput_gbps(f.window_bytes, len));
  }
  j["payload_bytes"] = bytes;
  j["goodput_gbps"] = goodput_gbps(bytes, len);
  j["flows_active"] = goodputs.size();
  const double jain = jain_index(goodputs);
  if (jain >= 0) j["jain_fairness"] = jain;
  j["pfc_frames_sent"] = w.pfc_frames_sent;
  j["cnps_sent"] = w.cnps_sent;
  j["cnps_received"] = w.cnps_received;
  j["ecn_echo_acks"] = w.ecn_echo_acks;
  j["rate_cuts"] = w.rate_cuts;
  // The busiest link direction over the window.
  const LinkResult* busiest = nullptr;
  for (const LinkResult& l : r.links) {
    if (busiest == nullptr || l.window_busy > busiest->window_busy) busiest = &l;
  }
  if (busiest != nullptr && len > Time::zero() && busiest->window_busy > Time::zero()) {
    j["busiest_link"] = {{"from", sc.topology.node(busiest->from).name},
                         {"to", sc.topology.node(busiest->to).name},
                         {"utilisation", static_cast<double>(busiest->window_busy.in_ps()) /
                                             static_cast<double>(len.in_ps())},
                         {"payload_gbps", goodput_gbps(busiest->window_payload_bytes, len)}};
  }
  if (w.queue_averages) {
    // The queue with the largest time-average length over the window, and
    // the one with the largest peak (the first of equals, in table order).
    const RunResult::QueueTotals *top = nullptr, *peak = nullptr;
    for (const RunResult::QueueTotals& q : r.queue_totals) {
      if (top == nullptr || q.window_mean_bytes > top->window_mean_bytes) top = &q;
      if (peak == nullptr || q.window_peak_bytes > peak->window_peak_bytes) peak = &q;
    }
    auto where = [&](const RunResult::QueueTotals& q) {
      return json{
          {"node", sc.topology.node(q.node).name}, {"port", q.port}, {"priority", q.priority}};
    };
    json qj = {{"max_mean_bytes", top != nullptr ? top->window_mean_bytes : 0.0},
               {"max_peak_bytes", peak != nullptr ? peak->window_peak_bytes : int64_t{0}}};
    if (top != nullptr) {
      qj.update(where(*top));
      qj["peak_at"] = where(*peak);
    }
    j["queues"] = std::move(qj);
  }
  return j;
}

}  // namespace

std::string summary_json(const Scenario& sc, const RunResult& r) {
  json j;
  j["status"] = to_string(r.status);
  j["scenario"] = {{"name", sc.name}, {"hash", sc.hash}, {"seed", sc.seed}};
  // The link layer the fabric ran (fabric.transport's value).
  j["transport"] = sc.fabric.transport == Transport::kInfiniband ? "infiniband" : "roce_v2";
  j["version"] = version();
  j["git_revision"] = git_revision();
  j["sim_time_ps"] = r.sim_time.in_ps();
  j["sim_time"] = to_string(r.sim_time);
  j["events"] = r.events;
  j["fingerprint"] = hex64(r.fingerprint);
  j["packet_hops"] = r.packet_hops;
  j["data_packet_hops"] = r.data_packet_hops;
  j["packets_created"] = r.packets_created;
  json drops = {
      {"total", r.total_drops()}, {"link_down", r.link_lost_down}, {"corrupted", r.link_corrupted}};
  for (const auto& [reason, n] : r.switch_drops) drops[reason] = n;
  // Switches' InfiniBand head-of-queue discards (also under "infiniband")
  // and NICs' receive-buffer drops: losses too.
  drops["head_of_queue_lifetime"] = r.hoq_discards;
  drops["nic_rx_buffer"] = r.nic_rx_buffer_drops;
  j["drops"] = std::move(drops);
  // Of the headroom drops, those on ports whose headroom is configured below
  // the automatic value (sim/invariants.h, lossless_drop); not a reason of
  // its own, so not in "drops", whose reasons sum to the total.
  j["lossless_drops_headroom_below_automatic"] = r.lossless_drops_headroom_below_automatic;
  // Of the lossless drops, those after a neighbour's PFC watchdog forwarded
  // a stormed queue ignoring its pause (the configured outcome of a storm).
  j["lossless_drops_watchdog_forward"] = r.lossless_drops_watchdog_forward;
  // Invariant checks (docs/reliability.md): whether they ran, and the
  // violation's line (status invariant_violated).
  j["invariants"] = {{"checked", r.checked}, {"violation", r.invariant}};
  j["pfc_frames_sent"] = r.pfc_frames_sent;
  if (sc.fabric.transport == Transport::kInfiniband) {
    // Credits instead of PFC (docs/infiniband.md).
    // PortXmitWait per port and VL, in ps (IBA counts ticks of symbol
    // times; the model has exact times).
    json waits = json::array();
    for (const RunResult::XmitWait& w : r.ib_xmit_wait) {
      waits.push_back({{"node", sc.topology.node(w.node).name},
                       {"port", w.port},
                       {"vl", w.vl},
                       {"xmit_wait_ps", w.wait.in_ps()}});
    }
    // Every flow-control packet on every link, NICs' included, per data
    // packet-hop: the overhead the credit loop adds (IBA 7.9.4).
    const double fc_per_data = r.data_packet_hops > 0 ? static_cast<double>(r.control_frame_hops) /
                                                            static_cast<double>(r.data_packet_hops)
                                                      : 0.0;
    j["infiniband"] = {{"flow_control_packets_sent", r.ib_fc_packets_sent},
                       {"flow_control_packets_by_vl", r.ib_fc_packets_by_vl},
                       {"flow_control_packet_hops", r.control_frame_hops},
                       {"flow_control_packets_per_data_packet", fc_per_data},
                       {"head_of_queue_discards", r.hoq_discards},
                       {"shared_pool_revocations", r.ib_shared_pool_revocations},
                       {"shared_pool_peak_bytes", r.ib_shared_pool_peak_bytes},
                       {"port_xmit_wait", std::move(waits)}};
  }
  j["ecn_marked"] = r.ecn_marked;
  j["cc"] = {{"cnps_sent", r.cc.cnps_sent},
             {"cnps_received", r.cc.cnps_received},
             {"ecn_marked_received", r.cc.ecn_marked_received},
             {"ecn_echo_acks_sent", r.cc.ecn_echo_acks_sent},
             {"ecn_echo_acks_received", r.cc.ecn_echo_acks_received},
             {"rate_cuts", r.cc.rate_cuts},
             {"rate_releases", r.cc.rate_releases}};
  j["switch_buffer"] = {{"peak_bytes", r.switch_buffer_peak}, {"size_bytes", r.switch_buffer_size}};
  j["out_of_sequence"] = r.out_of_sequence;
  j["retransmissions"] = r.retransmissions;
  j["qp_errors"] = r.qp_errors;

  const FlowStats s = flow_stats(r);
  json flows;
  flows["count"] = r.flows.size();
  flows["completed"] = s.completed;
  flows["failed"] =
      std::count_if(r.flows.begin(), r.flows.end(), [](const FlowResult& f) { return f.failed; });
  flows["bytes_completed"] = s.bytes_completed;
  if (s.completed > 0) {
    double mean = 0;
    for (int64_t v : s.fct_ps) mean += static_cast<double>(v);
    mean /= static_cast<double>(s.completed);
    flows["fct_ps"] = {{"min", s.fct_ps.front()},
                       {"mean", mean},
                       {"p50", percentile(s.fct_ps, 50)},
                       {"p99", percentile(s.fct_ps, 99)},
                       {"max", s.fct_ps.back()}};
    double gmean = 0;
    for (double g : s.goodput) gmean += g;
    flows["goodput_gbps"] = {
        {"min", s.goodput.front()}, {"mean", gmean / s.completed}, {"max", s.goodput.back()}};
    // Aggregate: every completed payload byte over the span from the first
    // flow's first packet to the last flow's completion.
    flows["aggregate_goodput_gbps"] =
        goodput_gbps(s.bytes_completed, s.last_finish - s.first_start);
  }
  const SlowdownSummary slow =
      summarize_slowdown(r.flows, sc.traffic_items, sc.output.size_buckets);
  flows["slowdown"] = stats_json(slow.overall);
  j["flows"] = flows;
  json by_item = json::array();
  for (size_t i = 0; i < slow.by_item.size(); ++i) {
    json e = stats_json(slow.by_item[i]);
    e["item"] = i;
    by_item.push_back(std::move(e));
  }
  j["slowdown_by_item"] = std::move(by_item);
  // Congestion notification per traffic item: its flows' counts, summed.
  struct CcSum {
    uint64_t cnps_received = 0, cnps_sent = 0, ecn_marked = 0, ecn_echo_acks = 0, rate_cuts = 0;
  };
  std::vector<CcSum> item_cc(sc.traffic_items);
  for (const FlowResult& f : r.flows) {
    CcSum& t = item_cc[f.item];
    t.cnps_received += f.cnps_received;
    t.cnps_sent += f.cnps_sent;
    t.ecn_marked += f.ecn_marked;
    t.ecn_echo_acks += f.ecn_echo_acks;
    t.rate_cuts += f.rate_cuts;
  }
  json cc_by_item = json::array();
  for (size_t i = 0; i < item_cc.size(); ++i) {
    const CcSum& t = item_cc[i];
    cc_by_item.push_back({{"item", i},
                          {"cnps_received", t.cnps_received},
                          {"cnps_sent", t.cnps_sent},
                          {"ecn_marked", t.ecn_marked},
                          {"ecn_echo_acks", t.ecn_echo_acks},
                          {"rate_cuts", t.rate_cuts}});
  }
  j["cc_by_item"] = std::move(cc_by_item);
  json by_size = json::array();
  for (const SizeBucket& b : slow.by_size) {
    json e = stats_json(b.stats);
    e["bucket"] = b.label;
    e["min_bytes"] = b.min_bytes;
    if (b.max_bytes >= 0) e["max_bytes"] = b.max_bytes;
    by_size.push_back(std::move(e));
  }
  j["slowdown_by_size"] = std::move(by_size);
  j["window"] = window_json(sc, r);

  json per_flow = json::array();
  for (const FlowResult& f : r.flows) {
    json e = {{"id", f.id},
              {"src", sc.topology.node(sc.topology.hosts()[f.src]).name},
              {"dst", sc.topology.node(sc.topology.hosts()[f.dst]).name},
              {"bytes", f.bytes},
              {"op", to_string(f.op)},
              {"start_ps", f.start.in_ps()},
              {"done", f.done},
              {"item", f.item},
              {"retransmissions", f.retransmissions},
              {"cnps_received", f.cnps_received},
              {"cnps_sent", f.cnps_sent},
              {"ecn_marked", f.ecn_marked},
              {"ecn_echo_acks", f.ecn_echo_acks},
              {"rate_cuts", f.rate_cuts},
              {"window_bytes", f.window_bytes},
              {"window_goodput_gbps", goodput_gbps(f.window_bytes, r.window.length())}};
    if (!f.ideal_fct.is_infinite()) e["ideal_fct_ps"] = f.ideal_fct.in_ps();
    if (f.failed) e["error"] = f.error;
    if (!f.name.empty()) e["name"] = f.name;
    if (f.started) e["first_tx_ps"] = f.first_tx.in_ps();
    if (f.done) {
      e["finish_ps"] = f.finish.in_ps();
      e["fct_ps"] = f.fct().in_ps();
      e["goodput_gbps"] = goodput_gbps(f.bytes, f.fct());
      if (f.ideal_fct > Time::zero() && !f.ideal_fct.is_infinite()) e["slowdown"] = f.slowdown();
    }
    per_flow.push_back(std::move(e));
  }
  j["per_flow"] = std::move(per_flow);
  // Only when there are collectives, so that flow-only summaries keep their keys.
  if (!r.collectives.empty()) {
    json colls = json::array();
    for (const CollectiveResult& c : r.collectives) {
      json iters = json::array();
      for (const CollectiveResult::Iteration& it : c.iters) {
        json e = {{"start_ps", it.start.is_infinite() ? -1 : it.start.in_ps()}, {"done", it.done}};
        if (it.done) {
          e["end_ps"] = it.end.in_ps();
          e["time_us"] = it.time_us;
          e["algbw_gbps"] = it.algbw_gbps;
          e["busbw_gbps"] = it.busbw_gbps;
        }
        iters.push_back(std::move(e));
      }
      json e = {{"name", c.name},
                {"item", c.item},
                {"op", c.op},
                {"algorithm", c.algorithm},
                {"ranks", c.ranks},
                {"channels", c.channels},
                {"steps", c.steps},
                {"size_bytes", c.bytes},
                {"iterations", c.iterations},
                {"completed", c.completed},
                {"per_iteration", std::move(iters)}};
      if (c.completed > 0 && c.sweep.empty()) {
        e["time_us"] = c.time_us;
        e["algbw_gbps"] = c.algbw_gbps;
        e["busbw_gbps"] = c.busbw_gbps;
      }
      if (!c.sweep.empty()) {
        json rows = json::array();
        for (const CollectiveResult::SweepRow& w : c.sweep) {
          json row = {{"size_bytes", w.bytes},
                      {"count", w.count},
                      {"first_iteration", w.first_iteration},
                      {"iters", w.iters},
                      {"done", w.done}};
          if (w.done) {
            row["time_us"] = w.time_us;
            row["algbw_gbps"] = w.algbw_gbps;
            row["busbw_gbps"] = w.busbw_gbps;
          }
          rows.push_back(std::move(row));
        }
        e["warmup_iters"] = c.warmup_iters;
        e["sweep"] = std::move(rows);
        e["avg_busbw_gbps"] = c.avg_busbw_gbps;
      }
      colls.push_back(std::move(e));
    }
    j["collectives"] = std::move(colls);
  }
  if (r.deadlock.detected) {
    json cycle = json::array();
    for (const DeadlockQueue& q : r.deadlock.cycle) {
      cycle.push_back({{"node", q.name},
                       {"port", q.port},
                       {"priority", q.priority},
                       {"blocked_by", blocked_by_name(q.blocked_by)}});
    }
    j["deadlock"] = {{"detected_at_ps", r.deadlock.at.in_ps()}, {"cycle", std::move(cycle)}};
  }

  // Rates are per second of the event loop: the cost of the simulation proper.
  const double loop = std::max(r.wall.event_seconds, 1e-9);
  j["run"] = {{"wall_seconds", r.wall.load_seconds + r.wall.seconds},
              {"load_seconds", r.wall.load_seconds},
              {"build_seconds", r.wall.build_seconds},
              {"event_loop_seconds", r.wall.event_seconds},
              {"events_per_second", static_cast<double>(r.events) / loop},
              {"packet_hops_per_second", static_cast<double>(r.packet_hops) / loop},
              {"data_packet_hops_per_second", static_cast<double>(r.data_packet_hops) / loop},
              {"peak_rss_bytes", r.wall.peak_rss_bytes},
              {"heap_huge_page_bytes", r.wall.heap_huge_page_bytes},
              {"threads", r.threads},
              {"threads_used", r.threads_used},
              {"partitions", r.partitions},
              {"restarted_on_one_thread", r.restarted_on_one_thread},
              {"first_attempt_seconds", r.wall.first_attempt_seconds},
              {"events_per_partition_lookahead", r.events_per_partition_lookahead},
              {"events_per_thread_lookahead", r.events_per_thread_lookahead},
              {"thread_sleeps", r.thread_sleeps},
              {"starved_windows", r.starved_windows},
              {"starved_turns_seconds", r.starved_turns_seconds},
              {"phases", r.phases},
              {"partition_events", r.partition_events}};
  return j.dump(2) + "\n";
}

namespace {

// Events per thread per lookahead as the summary line gives it: whole
// numbers, but two significant digits of a sparse run's (0.5 or 0.0078,
// not 0).
std::string density(double events) {
  return events < 10 ? fmt::format("{:.2g}", events) : fmt::format("{:.0f}", events);
}

}  // namespace

std::string human_summary(const Scenario& sc, const RunResult& r) {
  const FlowStats s = flow_stats(r);
  std::string out = fmt::format("rdmasim {}: {} (seed {}): {}\n", version(), sc.name, sc.seed,
                                to_string(r.status));
  if (!r.invariant.empty()) out += "  " + r.invariant + "\n";
  const double loop = std::max(r.wall.event_seconds, 1e-9);
  out += fmt::format(
      "  simulated {} in {:.3f} s wall ({:.3f} s building): {} events ({:.2f} M/s), {} packet-hops "
      "({:.2f} M/s)\n",
      to_human(r.sim_time), r.wall.load_seconds + r.wall.seconds,
      r.wall.load_seconds + r.wall.build_seconds, r.events, r.events / loop * 1e-6, r.packet_hops,
      r.packet_hops / loop * 1e-6);
  if (r.partitions > 1 && (r.threads == 1 || r.restarted_on_one_thread)) {
    out += fmt::format(
        "  on 1 thread, the network in {} partitions taking turns, for the caches ({} phase{}; "
        "--partitions 1 runs it whole)\n",
        r.partitions, r.phases, r.phases == 1 ? "" : "s");
  }
  if (r.threads > 1) {
    // A thread's events: those of its group of partitions (partition i on
    // thread i * threads / partitions, Simulation::set_threads).
    std::vector<uint64_t> by_thread(r.threads, 0);
    const size_t parts = r.partition_events.size();
    for (size_t i = 0; i < parts; ++i) by_thread[i * r.threads / parts] += r.partition_events[i];
    std::string per;
    for (uint64_t e : by_thread) per += (per.empty() ? "" : " / ") + std::to_string(e);
    if (r.restarted_on_one_thread) {
      out += fmt::format(
          "  on 1 thread: the first phase on {} showed {} events per thread per lookahead, "
          "too few for threads to pay, and the run started again on one after {:.3f} s "
          "(--force-threads keeps them)\n",
          r.threads, density(r.events_per_thread_lookahead), r.wall.first_attempt_seconds);
    } else if (r.threads_used < r.threads) {
      // The first phase on threads, the rest in turns on one (below): the
      // sums are of the partitions each thread had, not of what it ran.
      out += fmt::format(
          "  on {} threads for the first phase, then on 1 ({} phase{}; events of each thread's "
          "partitions {})\n",
          r.threads, r.phases, r.phases == 1 ? "" : "s", per);
    } else {
      out += fmt::format("  on {} threads ({} phase{}; events per thread {})\n", r.threads,
                         r.phases, r.phases == 1 ? "" : "s", per);
      if (r.partitions > r.threads) {
        out += fmt::format(
            "  the network in {} partitions, each thread's taking turns, for the caches\n",
            r.partitions);
      }
    }
    if (r.threads_used < r.threads && !r.restarted_on_one_thread) {
      out += fmt::format(
          "  why: the first phase showed {} events per thread per lookahead, too few for "
          "threads to pay, so the {} partitions took turns (--force-threads keeps the threads)\n",
          density(r.events_per_thread_lookahead), r.partitions);
    }
    if (r.starved_windows > 0) {
      out += fmt::format(
          "  a thread was kept off its CPU by other processes ({} time{}): the partitions took "
          "turns on one thread for {:.1f} s of the run (--force-threads keeps the threads)\n",
          r.starved_windows, r.starved_windows == 1 ? "" : "s", r.starved_turns_seconds);
    }
  }
  // A run of collectives alone has no flows of its own to report.
  if (!r.flows.empty() || r.collectives.empty())
    out += fmt::format("  flows: {} of {} complete", s.completed, r.flows.size());
  if (s.completed > 0) {
    double mean = 0;
    for (int64_t v : s.fct_ps) mean += static_cast<double>(v);
    mean /= static_cast<double>(s.completed);
    out += fmt::format("; FCT mean {}, max {}; goodput {:.2f} Gb/s aggregate",
                       to_human(Time::ps(static_cast<int64_t>(mean))),
                       to_human(Time::ps(s.fct_ps.back())),
                       goodput_gbps(s.bytes_completed, s.last_finish - s.first_start));
  }
  const SlowdownStats slow = summarize_slowdown(r.flows, 0, {}).overall;
  if (slow.count > 0) {
    out += fmt::format("; slowdown p50 {:.3g}, p99 {:.3g}", slow.p50, slow.p99);
  }
  if (!r.flows.empty() || r.collectives.empty()) out += "\n";
  for (const CollectiveResult& c : r.collectives) {
    out += fmt::format("  {}: {} {} of {} on {} ranks, {} channel(s): {} of {} iterations", c.name,
                       c.algorithm, c.op, to_string(Bytes(c.bytes)), c.ranks, c.channels,
                       c.completed, c.iterations);
    if (c.completed > 0 && c.sweep.empty()) {
      out += fmt::format("; time {:.2f} us, algbw {:.2f} GB/s, busbw {:.2f} GB/s", c.time_us,
                         c.algbw_gbps, c.busbw_gbps);
    }
    if (!c.sweep.empty()) out += fmt::format("; {} sizes", c.sweep.size());
    out += "\n";
  }
  if (sc.fabric.transport == Transport::kInfiniband) {
    // Credits instead of PFC, and no ECN: what the credit loop costs.
    out += fmt::format(
        "  drops: {}; flow-control packets: {} ({:.2f} per data packet-hop); peak switch buffer "
        "{:.1f} KB",
        r.total_drops(), r.control_frame_hops,
        r.data_packet_hops > 0
            ? static_cast<double>(r.control_frame_hops) / static_cast<double>(r.data_packet_hops)
            : 0.0,
        r.switch_buffer_peak / 1e3);
  } else {
    out +=
        fmt::format("  drops: {}; PFC frames: {}; ECN marks: {}; peak switch buffer {:.1f} KB",
                    r.total_drops(), r.pfc_frames_sent, r.ecn_marked, r.switch_buffer_peak / 1e3);
  }
  if (r.cc.cnps_sent + r.cc.cnps_received > 0) {
    out += fmt::format("; CNPs: {} sent, {} received", r.cc.cnps_sent, r.cc.cnps_received);
  }
  if (r.cc.ecn_echo_acks_received > 0) {
    out += fmt::format("; ECN-echo ACKs: {}", r.cc.ecn_echo_acks_received);
  }
  if (r.cc.rate_cuts > 0) out += fmt::format("; rate cuts: {}", r.cc.rate_cuts);
  out += "\n";
  return out;
}

void write_file_atomic(const std::string& path, const std::string& content) {
  write_file_atomic(path, content.data(), content.size());
}

void write_file_atomic(const std::string& path, const void* data, size_t size) {
  const std::string tmp = temporary_name(path);
  // Every call that can fail is checked: a full disk (ENOSPC), a file size
  // limit (EFBIG) or an I/O error shows at write() or only at close().
  const auto fail = [&](const std::string& what, int err) {
    std::remove(tmp.c_str());
    throw OutputError(
        path, what + ": " + std::strerror(err) + " (nothing was written under " + "this name)");
  };
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) {
    const int err = errno;
    throw OutputError(path, "cannot create " + tmp + ": " + std::strerror(err));
  }
  const char* p = static_cast<const char*>(data);
  for (size_t left = size; left > 0;) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : EIO;
      ::close(fd);
      fail("cannot write " + tmp, err);
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  if (::close(fd) != 0) fail("cannot write " + tmp + " (at close)", errno);
  if (::rename(tmp.c_str(), path.c_str()) != 0) fail("cannot rename " + tmp + " to it", errno);
}

}  // namespace rdmasim
