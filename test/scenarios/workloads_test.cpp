// The Workload seam (models/traffic/workload.h, issue 13) through
// run_scenario: a second, test-only workload shares the NICs of the flow
// generator's hosts; each receives the completions of its own QPs and only
// those (test/models/nic/completions_test.cpp checks the NIC's routing
// alone), and the run's status and end wait for both, on 1 and 2 threads. Expected values are
// counts of what each workload posted, not figures taken from runs.
#include <set>
#include <utility>
#include <vector>

#include "models/traffic/workload.h"
#include "test/support/catch_units.h"
#include "test/support/imm_workload.h"
#include "test/support/run_helpers.h"

using namespace rdmasim;
using namespace rdmasim::testing;

namespace {

// Four hosts on a star; flows h0->h1 and h2->h1 (a WRITE and a SEND, whose
// receive completion goes to the flow generator's handler) share the NICs
// of h0 and h1 with the test workload's h0->h1 messages.
const char* kScenario = R"({
  "fabric": {"link": {"rate": "100Gbps", "delay": "1us"}},
  "topology": {"kind": "star", "hosts": 4},
  "traffic": [
    {"kind": "flow", "src": "h0", "dst": "h1", "size": "64KiB"},
    {"kind": "flow", "src": "h2", "dst": "h1", "size": "48KiB", "op": "send"}
  ]
})";

}  // namespace

TEST_CASE("a second workload on the flow generator's NICs gets its own completions only",
          "[quick][scenario][workload]") {
  const Scenario sc = load_scenario_text(kScenario, "workloads");
  for (const uint32_t threads : {1u, 2u}) {
    INFO(threads << " threads");
    constexpr uint32_t kMessages = 12;
    constexpr int64_t kBytes = 64 * 1024;  // 12 x 64 KiB: longer than either flow
    ImmLog log;
    bool added = false;
    RunOptions o = testing::checked();
    o.threads = threads;
    o.add_workloads = [&](Simulation& sim, const std::vector<RdmaNic*>& nics,
                          std::vector<Workload*>& all) {
      all.push_back(&sim.add<ImmWorkload>(nics, 0, 1, kMessages, kBytes, log));
      added = true;
    };
    const RunResult r = run_scenario(sc, o);
    REQUIRE(added);
    REQUIRE(r.status == RunStatus::kComplete);
    // The flows completed as alone: their generator saw its completions.
    REQUIRE(r.flows.size() == 2);
    CHECK(r.flows[0].done);
    CHECK(r.flows[1].done);
    // The test workload: one send completion per message at h0, one receive
    // completion per message at h1, each on its own QP, in posting order,
    // with the message's immediate value.
    REQUIRE(log.sends.size() == kMessages);
    REQUIRE(log.receives.size() == kMessages);
    for (uint32_t i = 0; i < kMessages; ++i) {
      const auto& [sh, s] = log.sends[i];
      CHECK(sh == 0);
      CHECK(s.qpn == log.qs);
      CHECK(s.wr_id == i);
      CHECK(s.status == WcStatus::kSuccess);
      CHECK(s.bytes == kBytes);
      const auto& [rh, rc] = log.receives[i];
      CHECK(rh == 1);
      CHECK(rc.qpn == log.qd);
      CHECK(rc.imm == 1000 + i);
    }
    // The run ends with the later of the workloads: the test workload's
    // 768 KiB to h1 outlast both flows, so its last completion is the end.
    CHECK(log.sends.back().second.completed == r.sim_time);
    CHECK(r.flows[0].finish < r.sim_time);
    CHECK(r.flows[1].finish < r.sim_time);
  }
}
