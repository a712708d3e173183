// DCQCN through whole scenarios (issue 11's tests besides V5-V7): two flows
// sharing a port converge to a fair share at the header-overhead line rate;
// a 16:1 incast under DCQCN sends far fewer PFC pauses than without it and
// loses nothing; an ECN threshold sweep now moves the queue and the FCTs.
// Queues are measured exactly with a test-only egress hook and goodput
// from the bytes each flow's responder has received in order, both
// in-process (test/support/scenario_sim.h).
//
// The set-up's RED thresholds and buffer are the HPCC simulator's
// (simulation/mix/config.txt: Kmin 100 KB, Kmax 400 KB, Pmax 0.2, 32 MB),
// and so is its marking point: at dequeue, on the queue a packet leaves
// behind (SwitchNode::SwitchNotifyDequeue), as ns3-rdma does too. The
// outcome depends on it: docs/validation.md gives the figures with marking
// at enqueue (rdmasim's default), where barre_tuned reaches 77 % of the
// line rate in the fairness set-up.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "test/support/catch_units.h"
#include "test/support/roce_wire.h"
#include "test/support/run_helpers.h"
#include "test/support/scenario_sim.h"

using namespace rdmasim;
using namespace rdmasim::testing;

namespace {

uint64_t switch_drops(const Switch& sw) {
  uint64_t n = 0;
  for (uint8_t reason = 1; reason < static_cast<uint8_t>(DropReason::kCount); ++reason)
    n += sw.drops(static_cast<DropReason>(reason));
  return n;
}

// The fairness set-up: h1 and h2 send to h0 through one switch; 100 G, 1 us
// links, MTU 4096, 32 MB buffer, RED Kmin 100 KB, Kmax 400 KB, Pmax 0.2.
// `cc` is the fabric.cc object; `traffic` the traffic list.
std::string two_flows(const std::string& cc, const std::string& traffic, const std::string& kmin,
                      const std::string& kmax, const std::string& stop) {
  return R"({
    "fabric": {"mtu": 4096, "link": {"rate": "100Gbps", "delay": "1us"},
      "switch": {"buffer": "32MB",
                 "ecn": {"enabled": true, "kmin": ")" +
         kmin + R"(", "kmax": ")" + kmax + R"(", "pmax": 0.2, "mark": "dequeue"}},
      "cc": )" +
         cc + R"(},
    "topology": {"kind": "star", "hosts": 3},
    "traffic": )" +
         traffic + R"(,
    "stop": {"time": ")" +
         stop + R"("}
  })";
}

std::string dcqcn_preset(const std::string& preset) {
  return R"({"algorithm": "dcqcn", "dcqcn": {"preset": ")" + preset + R"("}})";
}

// The goodput of a 100G link carrying WRITE packets of 4096 payload bytes:
// 4096 / (4096 + 82) of the rate, the 82 bytes being Ethernet 14, IPv4 20,
// UDP 8, BTH 12, ICRC 4, FCS 4, preamble and SFD 8 and the inter-frame gap
// 12 (test/support/roce_wire.h gives each one's source). A message's first
// packet also carries a 16-byte RETH: one in 244,141 packets of a 1 GB
// message (a flow is one message), left out (2e-8 of the rate). ACKs and
// CNPs do not share the bottleneck's direction: data runs switch -> h0,
// ACKs and CNPs h0 -> switch -> sender.
double header_overhead_goodput(const ScenarioSim& s, double rate_bps) {
  const uint32_t mtu = s.scenario().fabric.nic.mtu;
  REQUIRE(mtu == 4096);
  const int wire = roce_wire::wire_bytes(4096);
  REQUIRE(s.format().wire_bytes(RcOpcode::kWriteMiddle, mtu) == static_cast<uint32_t>(wire));
  return 4096.0 / wire * rate_bps;
}

struct Fairness {
  double goodput[2] = {0, 0};  // bit/s over the window
  double jain = 0;
  double line = 0;  // the header-overhead formula
  uint64_t drops = 0, pfc = 0, marks = 0;
};

// Flow 0 from h1 at 0, flow 1 from h2 at 5 ms, both long; 50 ms; goodput
// over the last 20 ms. `seed` 0: the scenario's default.
Fairness run_fairness(const std::string& preset, int seed = 0) {
  const std::string traffic = R"([
      {"kind": "flow", "src": "h1", "dst": "h0", "size": "1GB"},
      {"kind": "flow", "src": "h2", "dst": "h0", "size": "1GB", "start": "5ms"}])";
  LoadOptions o;
  if (seed != 0) o.overrides = {"seed=" + std::to_string(seed)};
  const Scenario sc = load_scenario_text(
      two_flows(dcqcn_preset(preset), traffic, "100KB", "400KB", "50ms"), "fair", o);
  ScenarioSim s(sc);
  const Time from = Time::ms(30), to = sc.stop.time;
  s.sim.setup();
  s.sim.run(from);
  const int64_t at_from[2] = {s.delivered(0), s.delivered(1)};
  s.sim.run(to);
  Fairness f;
  for (int i = 0; i < 2; ++i)
    f.goodput[i] = static_cast<double>(s.delivered(i) - at_from[i]) * 8 / (to - from).in_seconds();
  const double sum = f.goodput[0] + f.goodput[1];
  f.jain = sum * sum / (2 * (f.goodput[0] * f.goodput[0] + f.goodput[1] * f.goodput[1]));
  f.line = header_overhead_goodput(s, 100e9);
  CHECK(s.traffic->completed() == 0);  // both still running at the window's end
  const auto [sw, port] = s.port_to_host(0);
  (void)port;
  f.drops = switch_drops(*sw);
  f.pfc = sw->counters().pfc_sent;
  f.marks = sw->counters().ecn_marked;
  return f;
}

void report(const std::string& preset, const Fairness& f) {
  WARN("fairness " << preset << ": goodputs " << f.goodput[0] / 1e9 << " and " << f.goodput[1] / 1e9
                   << " Gb/s over 30-50 ms, Jain index " << f.jain << ", total "
                   << (f.goodput[0] + f.goodput[1]) / 1e9 << " Gb/s = "
                   << (f.goodput[0] + f.goodput[1]) / f.line << " of " << f.line / 1e9 << " Gb/s; "
                   << f.marks << " marks, " << f.pfc << " PFC frames, " << f.drops << " drops");
}

void check_fair(const std::string& preset) {
  const Fairness f = run_fairness(preset);
  report(preset, f);
  CHECK(f.drops == 0);
  CHECK(f.jain >= 0.98);
  CHECK(f.goodput[0] + f.goodput[1] >= 0.95 * f.line);
}

}  // namespace

TEST_CASE("ScenarioSim matches run_scenario", "[quick][scenario][dcqcn]") {
  // The in-process build of the tests below runs the same events as the
  // runner: a 4:1 incast with DCQCN, ECN and PFC.
  const std::string json = R"({
    "fabric": {"mtu": 1024, "link": {"rate": "100Gbps", "delay": "1us"},
      "switch": {"ecn": {"enabled": true, "kmin": "5KB", "kmax": "50KB", "pmax": 0.2},
                 "deadlock_detection": {"enabled": false}},
      "cc": {"algorithm": "dcqcn"}},
    "topology": {"kind": "star", "hosts": 5},
    "traffic": [{"kind": "incast", "senders": "all", "dst": "h0", "size": "2MB"}]
  })";
  const Ran ran = run_text(json);
  REQUIRE(ran.result.status == RunStatus::kComplete);
  REQUIRE(ran.result.ecn_marked > 0);
  ScenarioSim s(ran.scenario);
  s.sim.setup();
  s.sim.run(ran.scenario.stop.time);
  CHECK(s.sim.events_dispatched() == ran.result.events);
  CHECK(s.sim.fingerprint() == ran.result.fingerprint);
  CHECK(s.traffic->completed() == 4);
}

TEST_CASE("DCQCN fairness: two flows converge with barre_tuned", "[scenario][dcqcn]") {
  check_fair("barre_tuned");
}

TEST_CASE("DCQCN fairness: two flows converge with sigcomm15", "[scenario][dcqcn]") {
  check_fair("sigcomm15");
}

TEST_CASE("DCQCN fairness: the connectx5 defaults (index reported)", "[scenario][dcqcn]") {
  // Barre et al. (USENIX ATC 2025, Fig. 12) show the firmware defaults
  // sharing unfairly: no threshold, the index is reported. (Here the two
  // flows share evenly but leave the link idle a third of the time: a limit
  // cycle of about 0.75 ms, docs/validation.md.)
  const Fairness f = run_fairness("connectx5");
  report("connectx5", f);
  CHECK(f.drops == 0);
  // Both flows move data in the window (a stalled one would make the index
  // meaningless; the index itself is only reported).
  CHECK(f.goodput[0] > 0);
  CHECK(f.goodput[1] > 0);
}

TEST_CASE("DCQCN fairness extensive: 16 seeds", "[extensive][scenario][dcqcn]") {
  // The CI tests run the scenario's default seed. Over seeds 1-16 (RED's
  // draws differ): barre_tuned meets both bounds at every seed; sigcomm15's
  // two flows converge slowly (RT moves only by R_AI and by the part of a
  // cut not yet recovered when the next comes: tens of ms at 100 G), so its
  // index over 30-50 ms depends on the split the second flow's arrival
  // left; it is reported, seed by seed.
  for (int seed = 1; seed <= 16; ++seed) {
    INFO("seed " << seed);
    const Fairness b = run_fairness("barre_tuned", seed);
    report("barre_tuned seed " + std::to_string(seed), b);
    CHECK(b.jain >= 0.98);
    CHECK(b.goodput[0] + b.goodput[1] >= 0.95 * b.line);
    const Fairness p = run_fairness("sigcomm15", seed);
    report("sigcomm15 seed " + std::to_string(seed), p);
    CHECK(p.drops == 0);
  }
}

namespace {

struct IncastRun {
  uint64_t pfc = 0;
  uint64_t drops = 0;
  uint64_t marks = 0;
  uint64_t link_losses = 0;
  double goodput = 0;  // all flows' payload over the run, bit/s
};

// 16 senders of long flows into h0, on the fairness set-up's switch and
// marking, PFC on (dynamic thresholds, the default), for 5 ms.
IncastRun run_pfc_incast(const std::string& cc) {
  const std::string json = R"({
    "fabric": {"mtu": 4096, "link": {"rate": "100Gbps", "delay": "1us"},
      "switch": {"buffer": "32MB",
                 "ecn": {"enabled": true, "kmin": "100KB", "kmax": "400KB", "pmax": 0.2,
                         "mark": "dequeue"}},
      "cc": )" + cc + R"(},
    "topology": {"kind": "star", "hosts": 17},
    "traffic": [{"kind": "incast", "senders": "all", "dst": "h0", "size": "1GB"}],
    "stop": {"time": "5ms"}
  })";
  const Scenario sc = load_scenario_text(json, "pfc_relief");
  REQUIRE(sc.fabric.sw.lossless(sc.fabric.nic.data_priority));
  ScenarioSim s(sc);
  s.sim.setup();
  s.sim.run(sc.stop.time);
  IncastRun r;
  const auto [sw, port] = s.port_to_host(0);
  (void)port;
  r.pfc = sw->counters().pfc_sent;
  r.drops = switch_drops(*sw);
  r.marks = sw->counters().ecn_marked;
  for (const Cable& c : s.cables)
    r.link_losses += c.a_to_b->counters().lost_down + c.b_to_a->counters().lost_down;
  for (const RdmaNic* n : s.nics) r.drops += n->counters().rx_buffer_drops;
  for (uint32_t i = 0; i < sc.flows.size(); ++i)
    r.goodput += static_cast<double>(s.delivered(i)) * 8 / sc.stop.time.in_seconds();
  return r;
}

}  // namespace

TEST_CASE(
    "DCQCN PFC relief: a 16:1 incast with the paper's parameters pauses 10x less and "
    "loses nothing",
    "[scenario][dcqcn]") {
  const IncastRun none = run_pfc_incast(R"({"algorithm": "none"})");
  CHECK(none.pfc > 0);
  CHECK(none.drops == 0);
  CHECK(none.link_losses == 0);
  // The claim is the DCQCN paper's (Zhu et al., SIGCOMM 2015 §6: PFC pauses
  // cut by orders of magnitude), made with the paper's parameters: it is
  // checked with sigcomm15. The other presets are measured and reported:
  // connectx5 and barre_tuned fall in a limit cycle (every QP cut to the
  // floor while the queue drains, then all jump back together at the first
  // timer increase, RT being still the line rate; above 32767 B / monitor
  // period the byte counter's increases outpace the cuts, so the queue runs
  // up to PFC's dynamic threshold again), about 5x fewer pauses than none.
  for (const char* preset : {"sigcomm15", "connectx5", "barre_tuned", "ns3_hpcc"}) {
    const IncastRun d = run_pfc_incast(dcqcn_preset(preset));
    WARN("PFC relief, 16:1 incast over 5 ms: "
         << none.pfc << " PFC frames without CC, " << d.pfc << " with DCQCN " << preset
         << (d.pfc == 0 ? ": ratio > " : ": ratio ")
         << static_cast<double>(none.pfc) / static_cast<double>(std::max<uint64_t>(d.pfc, 1))
         << "; " << d.drops << " drops, " << d.link_losses << " link losses, " << d.marks
         << " marks; goodput " << d.goodput / 1e9 << " Gb/s (" << none.goodput / 1e9
         << " without CC)");
    INFO(preset);
    CHECK(d.drops == 0);
    CHECK(d.link_losses == 0);
    if (std::string(preset) == "sigcomm15") CHECK(d.pfc * 10 <= none.pfc);
  }
}

namespace {

struct SweepRun {
  double mean_queue = 0;  // bytes over [6 ms, 16 ms]
  std::vector<Time> fcts;
};

// Flow 0 (150 MB) from h1 at 0, flow 1 (100 MB) from h2 at 5 ms; both
// complete. Kmax = 4 Kmin.
SweepRun run_sweep(const std::string& cc, int kmin_kb) {
  const std::string traffic = R"([
      {"kind": "flow", "src": "h1", "dst": "h0", "size": "150MB"},
      {"kind": "flow", "src": "h2", "dst": "h0", "size": "100MB", "start": "5ms"}])";
  const Scenario sc = load_scenario_text(two_flows(cc, traffic, std::to_string(kmin_kb) + "KB",
                                                   std::to_string(4 * kmin_kb) + "KB", "100ms"),
                                         "sweep");
  ScenarioSim s(sc);
  QueueIntegral q(Time::ms(6), Time::ms(16));
  const auto [sw, port] = s.port_to_host(0);
  sw->add_egress_hook(q, 1 << sc.fabric.nic.data_priority, {port});
  s.sim.setup();
  s.sim.run(sc.stop.time);
  REQUIRE(s.traffic->completed() == 2);
  SweepRun r;
  r.mean_queue = q.mean(s.sim.now());
  for (const FlowRecord& f : s.traffic->records()) r.fcts.push_back(f.fct());
  // Both flows were still sending throughout the window.
  CHECK(s.traffic->records()[0].finish > Time::ms(16));
  CHECK(s.traffic->records()[1].finish > Time::ms(16));
  CHECK(switch_drops(*sw) == 0);
  return r;
}

}  // namespace

TEST_CASE("DCQCN ECN threshold sweep: the queue follows Kmin and FCTs move", "[scenario][dcqcn]") {
  const std::vector<int> kmins = {50, 100, 200, 400};
  std::vector<SweepRun> with, without;
  for (const int k : kmins) {
    with.push_back(run_sweep(dcqcn_preset("barre_tuned"), k));
    without.push_back(run_sweep(R"({"algorithm": "none"})", k));
    WARN("Kmin " << k << " KB, Kmax " << 4 * k << " KB: DCQCN (barre_tuned) mean queue "
                 << with.back().mean_queue / 1e3 << " KB, FCTs " << to_string(with.back().fcts[0])
                 << " and " << to_string(with.back().fcts[1]) << "; without CC "
                 << without.back().mean_queue / 1e3 << " KB, FCTs "
                 << to_string(without.back().fcts[0]) << " and "
                 << to_string(without.back().fcts[1]));
  }
  for (size_t i = 1; i < kmins.size(); ++i) {
    INFO("Kmin " << kmins[i - 1] << " -> " << kmins[i] << " KB");
    CHECK(with[i].mean_queue > with[i - 1].mean_queue);
  }
  // Every pair of settings ends its flows at different times with DCQCN;
  // without a reaction to marks, the thresholds change nothing.
  for (size_t i = 0; i < kmins.size(); ++i) {
    for (size_t j = i + 1; j < kmins.size(); ++j) {
      INFO("Kmin " << kmins[i] << " and " << kmins[j] << " KB");
      // Moved by more than noise: some flow's FCT differs by at least 0.1 %
      // (the closest pair measured differs by 0.39 %).
      double moved = 0;
      for (size_t k = 0; k < with[i].fcts.size(); ++k) {
        const double a = static_cast<double>(with[i].fcts[k].in_ps());
        const double b = static_cast<double>(with[j].fcts[k].in_ps());
        moved = std::max(moved, std::abs(a - b) / std::max(a, b));
      }
      CHECK(moved >= 1e-3);
      CHECK(without[i].fcts == without[j].fcts);
    }
  }
}
