// Validation case V7 (docs/validation.md): the first-RTT overshoot of an N:1
// incast under DCQCN. N = 16 senders, each on its own 100 G link (its own
// ingress port), into one switch whose 100 G port to the receiver is the
// bottleneck; 1 us links; WRITEs with path MTU 1024; every sender starts at
// line rate at t = 0. DCQCN with the ConnectX-5 defaults (the connectx5
// preset); ECN marking at enqueue as a step at K = Kmin = Kmax = 5 KB; PFC
// with a static XOFF per ingress port and priority, headroom "auto" (the
// worst case of V4's formula with the 9216-byte MTU: at least H); 32 MB.
//
// Expected (derived in the case, recomputed here with the model's own
// delays: serialisation, 1 us propagation, switch latency 0, no NIC
// processing delay):
//   t_react = w + tau_f + 2 tau_cnp + 4 t_prop, w = ((N - 1)/2 + j0) tau_f,
//     j0 = floor(K / frame) + 1 (the MMU does not count the packet in
//     transmission: it is released when it starts to leave);
//   Q_peak = (N - 1) C t_react + sum_k max(0, N/2^k - 1) C T_dec;
//   k_c = the first k with N/2^k < 1;
//   T_empty = t_react + (k_c - 1) T_dec + Q_peak/C + 2 (N/2^k_c) T_dec.
// The formula counts bytes at the line rate (wire bytes); the queue is
// measured as the MMU counts it (frame bytes, the 20 bytes of preamble and
// inter-frame gap not stored), so Q_peak is compared in those units:
// x frame / wire.
// (a) XOFF = 2 Q_peak / N: Q_peak +-20 %, T_empty +-25 %, no PFC frame.
// (b) XOFF = Q_peak / (2N): at least one PFC frame.
#include <cmath>
#include <string>

#include "test/support/catch_units.h"
#include "test/support/roce_wire.h"
#include "test/support/run_helpers.h"
#include "test/support/scenario_sim.h"

using namespace rdmasim;
using namespace rdmasim::testing;

namespace {

constexpr int kN = 16;
constexpr double kC = 100e9;    // bit/s
constexpr double kTdec = 4e-6;  // rate_reduce_monitor_period (connectx5)
constexpr double kK = 5000;     // bytes
constexpr double kProp = 1e-6;  // link delay
constexpr uint32_t kMtu = 1024;

struct Expected {
  double wire = 0, frame = 0;  // bytes of a data packet: on the wire, as the MMU counts it
  double tau_f = 0, tau_cnp = 0;
  int j0 = 0;
  double t_react = 0;
  double q_peak = 0;  // bytes at the line rate (wire bytes)
  int k_c = 0;
  double t_empty = 0;
};

Expected expected() {
  Expected e;
  e.wire = roce_wire::wire_bytes(kMtu);    // 1106
  e.frame = roce_wire::frame_bytes(kMtu);  // 1086
  e.tau_f = e.wire * 8 / kC;
  e.tau_cnp = roce_wire::kCnpWire * 8 / kC;  // 98 wire bytes
  e.j0 = static_cast<int>(std::floor(kK / e.frame)) + 1;
  const double w = ((kN - 1) / 2.0 + e.j0) * e.tau_f;
  e.t_react = w + e.tau_f + 2 * e.tau_cnp + 4 * kProp;  // + processing delays: none here
  const double cb = kC / 8;
  e.q_peak = (kN - 1) * cb * e.t_react;
  for (int k = 1; kN / std::pow(2.0, k) > 1; ++k)
    e.q_peak += (kN / std::pow(2.0, k) - 1) * cb * kTdec;
  e.k_c = 1;
  while (kN / std::pow(2.0, e.k_c) >= 1) ++e.k_c;
  const double t_drain = e.q_peak / cb + 2 * (kN / std::pow(2.0, e.k_c)) * kTdec;
  e.t_empty = e.t_react + (e.k_c - 1) * kTdec + t_drain;
  return e;
}

struct V7Run {
  int64_t q_peak = 0;  // MMU bytes
  Time peak_at;
  Time first_arrival;
  Time empty_at = Time::infinite();  // first instant after the peak with the queue empty
  int64_t max_ingress = 0;
  uint64_t pfc_frames = 0;
  uint64_t drops = 0;
};

V7Run run_v7(int64_t xoff) {
  const int64_t xon = xoff * 4 / 5;  // the case leaves XON open: 80 % of XOFF
  const std::string json = R"({
    "fabric": {"mtu": 1024, "link": {"rate": "100Gbps", "delay": "1us"},
      "switch": {"buffer": "32MB", "latency": "0s",
                 "ecn": {"enabled": true, "kmin": "5KB", "kmax": "5KB", "pmax": 1.0, "mark": "enqueue"},
                 "pfc": {"threshold": "static", "xoff": )" +
                           std::to_string(xoff) + R"(, "xon": )" + std::to_string(xon) +
                           R"(, "headroom": "auto"}},
      "cc": {"algorithm": "dcqcn", "dcqcn": {"preset": "connectx5"}}},
    "topology": {"kind": "star", "hosts": 17},
    "traffic": [{"kind": "incast", "senders": "all", "dst": "h0", "size": "64MB"}],
    "stop": {"time": "300us"}
  })";
  const Scenario sc = load_scenario_text(json, "v7");
  REQUIRE(sc.fabric.sw.latency == Time::zero());  // QueueIntegral sees every change
  // The preset is the case's ConnectX set.
  const DcqcnConfig& d = dcqcn_config(sc);
  REQUIRE(d.initial_alpha_value == 1023);
  REQUIRE(d.dce_tcp_g == 1019);
  REQUIRE(d.rpg_min_dec_fac == 50);
  REQUIRE(d.rate_reduce_monitor_period.in_seconds() == kTdec);
  REQUIRE(d.min_time_between_cnps == Time::us(2));
  ScenarioSim s(sc);
  // The model's packets are the sizes the expected values use.
  REQUIRE(s.format().wire_bytes(RcOpcode::kWriteMiddle, kMtu) == roce_wire::wire_bytes(kMtu));
  REQUIRE(s.format().wire_bytes(RcOpcode::kCnp, 0) == roce_wire::kCnpWire);
  QueueIntegral q(Time::zero(), sc.stop.time, true);
  const auto [sw, port] = s.port_to_host(0);
  sw->add_egress_hook(q, 1 << sc.fabric.nic.data_priority, {port});
  s.sim.setup();
  s.sim.run(sc.stop.time);
  V7Run r;
  r.q_peak = q.peak();
  r.peak_at = q.peak_at();
  REQUIRE(!q.changes().empty());
  r.first_arrival = q.changes().front().first;
  for (const auto& [t, bytes] : q.changes()) {
    if (t > r.peak_at && bytes == 0) {
      r.empty_at = t;
      break;
    }
  }
  for (const int64_t b : q.ingress_peaks()) r.max_ingress = std::max(r.max_ingress, b);
  r.pfc_frames = sw->counters().pfc_sent;
  for (uint8_t reason = 1; reason < static_cast<uint8_t>(DropReason::kCount); ++reason)
    r.drops += sw->drops(static_cast<DropReason>(reason));
  return r;
}

}  // namespace

TEST_CASE("V7a N:1 incast first-RTT overshoot: Q_peak and T_empty without PFC",
          "[validation][V7]") {
  const Expected e = expected();
  const auto xoff = static_cast<int64_t>(2 * e.q_peak / kN);
  const V7Run r = run_v7(xoff);
  const double q_expected = e.q_peak * e.frame / e.wire;  // in the MMU's bytes
  const double t_empty = (r.empty_at - r.first_arrival).in_seconds();
  WARN("V7a expected: t_react " << e.t_react * 1e6 << " us (j0 = " << e.j0 << "), Q_peak "
                                << e.q_peak / 1e3 << " KB on the wire = " << q_expected / 1e3
                                << " KB as counted, k_c = " << e.k_c << ", T_empty "
                                << e.t_empty * 1e6 << " us; XOFF " << xoff << " B");
  WARN("V7a measured: Q_peak " << r.q_peak / 1e3 << " KB at "
                               << to_string(r.peak_at - r.first_arrival)
                               << " after the first arrival (expected " << q_expected / 1e3
                               << " KB, " << r.q_peak / q_expected << " x); T_empty "
                               << t_empty * 1e6 << " us (expected " << e.t_empty * 1e6 << " us, "
                               << t_empty / e.t_empty << " x); largest ingress queue "
                               << r.max_ingress / 1e3 << " KB against XOFF " << xoff / 1e3
                               << " KB; " << r.pfc_frames << " PFC frames");
  CHECK(r.drops == 0);
  CHECK(r.q_peak >= 0.8 * q_expected);
  CHECK(r.q_peak <= 1.2 * q_expected);
  REQUIRE(!r.empty_at.is_infinite());
  CHECK(t_empty >= 0.75 * e.t_empty);
  CHECK(t_empty <= 1.25 * e.t_empty);
  CHECK(r.pfc_frames == 0);
}

TEST_CASE("V7b N:1 incast first-RTT overshoot: XOFF below each port's share sends PFC",
          "[validation][V7]") {
  const Expected e = expected();
  const auto xoff = static_cast<int64_t>(e.q_peak / (2 * kN));
  const V7Run r = run_v7(xoff);
  WARN("V7b XOFF " << xoff / 1e3 << " KB: " << r.pfc_frames << " PFC frames, largest ingress queue "
                   << r.max_ingress / 1e3 << " KB, Q_peak " << r.q_peak / 1e3 << " KB, " << r.drops
                   << " drops");
  CHECK(r.pfc_frames >= 1);
  CHECK(r.drops == 0);
}
