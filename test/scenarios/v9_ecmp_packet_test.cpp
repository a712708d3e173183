// Validation case V9(c) (docs/validation.md): packet-level check of ECMP routing on a
// k = 8 fat-tree. Inter-edge derangement traffic; each flow f is paced at
// C / n_f, n_f being the most flows the routing puts on any link of f's path.
// Then no link is oversubscribed, every flow gets C / n_f, and every link
// carries the sum of C / n_f of its flows.
#include "test/support/catch_units.h"
#include "test/support/run_helpers.h"

#include <map>

using namespace rdmasim;
using namespace rdmasim::testing;

namespace {

// ACKs share the links with the data (in the other direction's flows): with
// one ACK per packet they would add 2 % to a link the case loads to exactly C,
// so the NICs coalesce ACKs (every 16 packets: 0.13 %).
const char* kDerangement = R"({
  "fabric": {"link": {"rate": "100Gbps", "delay": "1us"}, "nic": {"ack_interval": 16}},
  "topology": {"kind": "fat_tree", "k": 8},
  "traffic": [{"kind": "permutation", "pattern": "random", "across": "leaf", "size": "1GB"}],
  "output": {"link_interval": "1ms", "pfc_events": false}
})";

// Payload bytes of /links row `row` carried between two sample times.
int64_t payload_between(const RunResult& r, uint32_t row, Time a, Time b) {
  int64_t at_a = 0, at_b = 0;
  for (const LinkSample& s : r.link_samples.all()) {
    if (s.link != row) continue;
    if (s.time <= a) at_a = s.payload_bytes;
    if (s.time <= b) at_b = s.payload_bytes;
  }
  return at_b - at_a;
}

}  // namespace

// [no_sanitizer]: ten seeds of a 128-host fat-tree at line rate, 40 s in
// Release; the models it runs are covered under the sanitizers elsewhere.
TEST_CASE("V9c packet-level ECMP: paced flows get C/n_f and links carry their sums",
          "[validation][V9][no_sanitizer]") {
  const double C = 100e9;
  const double payload_share = 4096.0 / 4178.0;  // payload per wire byte of a data packet
  for (int seed = 1; seed <= 10; ++seed) {
    INFO("seed " << seed);
    // 1. Where does the routing put each flow? (The first packets tell.)
    LoadOptions probe;
    probe.overrides = {"seed=" + std::to_string(seed), "stop.time=\"30us\""};
    const Ran routed = run_text(kDerangement, probe);
    std::map<uint32_t, int> flows_on;  // link row -> flows
    for (const FlowResult& f : routed.result.flows) {
      REQUIRE(f.path.size() >= 3);
      for (uint32_t row : f.path) ++flows_on[row];
    }
    // 2. Pace every flow at C / n_f.
    LoadOptions paced;
    paced.overrides = {"seed=" + std::to_string(seed), "stop.time=\"3ms\""};
    std::vector<double> rate(routed.result.flows.size());
    for (size_t i = 0; i < rate.size(); ++i) {
      int n = 0;
      for (uint32_t row : routed.result.flows[i].path) n = std::max(n, flows_on[row]);
      rate[i] = C / n;
      paced.overrides.push_back(
          "traffic[" + std::to_string(i) + "]=" + R"({"kind":"flow","src":")" +
          routed.scenario.topology
              .node(routed.scenario.topology.hosts()[routed.result.flows[i].src])
              .name +
          R"(","dst":")" +
          routed.scenario.topology
              .node(routed.scenario.topology.hosts()[routed.result.flows[i].dst])
              .name +
          R"(","size":"1GB","rate":)" + std::to_string(static_cast<int64_t>(rate[i])) + "}");
    }
    const Ran r = run_text(kDerangement, paced);
    REQUIRE(r.result.status == RunStatus::kTimeLimit);
    // The flows keep their paths (same hosts, same QPs, same hash).
    for (size_t i = 0; i < rate.size(); ++i)
      CHECK(r.result.flows[i].path == routed.result.flows[i].path);
    // 3. Over the last 2 ms: every flow's rate, on its first link, and every
    // link's load, within 5 % of the sums of C / n_f.
    std::map<uint32_t, double> expected_load;
    for (size_t i = 0; i < rate.size(); ++i) {
      for (uint32_t row : r.result.flows[i].path) expected_load[row] += rate[i];
      const double got =
          payload_between(r.result, r.result.flows[i].path[0], Time::ms(1), Time::ms(3)) * 8 / 2e-3;
      CHECK(got == Approx(rate[i] * payload_share).epsilon(0.05));
    }
    for (const auto& [row, load] : expected_load) {
      CHECK(load <= C * (1 + 1e-9));  // nothing oversubscribed
      const double got = payload_between(r.result, row, Time::ms(1), Time::ms(3)) * 8 / 2e-3;
      CHECK(got == Approx(load * payload_share).epsilon(0.05));
    }
  }
}
