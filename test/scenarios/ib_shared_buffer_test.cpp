// Shared VL buffers at fabric level (docs/infiniband.md, "Shared buffer"):
// the physical bound, not just the grants. Four data VLs on every port of a
// k = 4 fat-tree share a pool three times each VL's own buffer, with
// WebSearch traffic on each VL, so VLs go idle while others are busy and
// claims are revoked and re-granted throughout (shared_idle_time 0, the
// most revocations: any update that finds a VL empty); 2 us links leave a long
// round trip for a sender to spend an old grant in. (A model that frees the
// claim when it sends the revocation, not when the answer arrives,
// overfills ports 17 times here.) Expected from the flow-control rule alone (IBA
// §7.9: a sender spends only credits it was granted): no arrival ever
// finds a port's buffer full, no packet is dropped, every flow completes.
#include <nlohmann/json.hpp>

#include "sim/output/summary.h"
#include "test/support/catch_units.h"
#include "test/support/run_helpers.h"
#include "test/support/scenario_sim.h"

#include <algorithm>
#include <string>

using namespace rdmasim;
using namespace rdmasim::testing;

TEST_CASE("Shared VL buffers on a fat-tree: revoked and re-granted claims never overfill a port",
          "[scenario][infiniband]") {
  const char* json = R"({"seed": 7,
    "fabric": {"transport": "infiniband", "mtu": 4096,
               "link": {"rate": "EDR", "delay": "2us"},
               "infiniband": {"op_vls": 4,
                              "credits": {"vl_buffer": "8KiB", "shared_buffer": "24KiB",
                                          "shared_idle_time": "0s"}}},
    "topology": {"kind": "fat_tree", "k": 4},
    "traffic": [
      {"kind": "background", "cdf": "websearch", "load": 0.5, "duration": "300us", "sl": 0},
      {"kind": "background", "cdf": "websearch", "load": 0.5, "duration": "300us", "sl": 1},
      {"kind": "background", "cdf": "websearch", "load": 0.5, "duration": "300us", "sl": 2},
      {"kind": "background", "cdf": "websearch", "load": 0.5, "duration": "300us", "sl": 3}]})";
  const Scenario sc = load_scenario_text(json, "shared_pool");
  ScenarioSim s(sc);
  s.sim.setup();
  s.sim.run();
  REQUIRE(s.traffic->completed() == sc.flows.size());
  uint64_t overfull = 0, pool_used = 0, revocations = 0, drops = 0;
  auto add = [&](const Credits* c) {
    REQUIRE(c != nullptr);
    overfull += c->overfull();
    pool_used = std::max(pool_used, c->peak_pool_use());
    for (uint8_t vl = 0; vl < c->lanes(); ++vl) revocations += c->revocations(vl);
  };
  for (const Switch* sw : s.switches) {
    for (uint32_t p = 0; p < sw->num_ports(); ++p) add(sw->flow_control(p).credits());
    for (size_t r = 0; r < static_cast<size_t>(DropReason::kCount); ++r)
      drops += sw->drops(static_cast<DropReason>(r));
  }
  for (const RdmaNic* nic : s.nics) add(nic->flow_control(0).credits());
  CHECK(overfull == 0);
  CHECK(drops == 0);
  // The case exercises what it claims: some port held packets in its pool
  // (24 KiB is 384 blocks), and claims were revoked.
  CHECK(pool_used > 0);
  CHECK(revocations > 0);
  // The summary reports them: the same run through the runner.
  const Ran ran = run_text(json);
  REQUIRE(ran.result.status == RunStatus::kComplete);
  const auto j = nlohmann::json::parse(summary_json(ran.scenario, ran.result))["infiniband"];
  CHECK(j["shared_pool_revocations"] == revocations);
  CHECK(j["shared_pool_peak_bytes"] == pool_used * 64);
}
