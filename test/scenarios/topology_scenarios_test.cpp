// The example topology scenarios run to completion with flow traffic, and
// their flows' goodput obeys the formula bound: no flow beats 4096/4178 of the
// slowest network link on its path (all of an NVLink's); a flow alone on its
// path reaches it.
#include "test/support/catch_units.h"
#include "test/support/route_walk.h"
#include "test/support/run_helpers.h"

using namespace rdmasim;
using namespace rdmasim::testing;

TEST_CASE("topology scenarios run with flow traffic", "[topology][scenario]") {
  const std::string name = GENERATE(as<std::string>{}, "fat_tree_2tier", "fat_tree_k8",
                                    "fat_tree_oversubscribed", "rail_optimized_4su");
  const Ran r = run_file("scenarios/" + name + ".json");
  REQUIRE(r.result.status == RunStatus::kComplete);
  const Topology& t = r.scenario.topology;
  for (const FlowResult& f : r.result.flows) {
    // The slowest link on the flow's path, following the tables.
    // (Every path between two hosts crosses links of the same rates in these
    // topologies, so any flow key gives the same bound.)
    // An NVLink (inside a rail-optimized server) carries its payload at its
    // rate: no header bytes (models/proto/nvlink.h).
    double bound = 1e300;
    const auto path = walk(t, r.scenario.routes, f.src, f.dst, 0);
    REQUIRE(path);
    for (const Hop& h : *path) {
      const TopoLink& l = t.links()[h.link];
      const double efficiency = l.kind == LinkKind::kNvlink ? 1.0 : 4096.0 / 4178.0;
      bound = std::min(bound, efficiency * static_cast<double>(l.rate.in_bps()));
    }
    const double goodput = f.bytes * 8.0 / f.fct().in_seconds();
    CHECK(goodput <= bound * 1.0001);
  }
}

TEST_CASE("uncontended flows in a fat-tree reach the line rate after headers",
          "[topology][scenario]") {
  // fat_tree_2tier: 100G hosts under leaves with 4 x 400G uplinks: every flow
  // is limited by its own host link only.
  const Ran r = run_file("scenarios/fat_tree_2tier.json");
  for (const FlowResult& f : r.result.flows) {
    const double goodput = f.bytes * 8.0 / f.fct().in_seconds();
    CHECK(goodput == Approx(4096.0 / 4178.0 * 100e9).epsilon(0.01));
  }
}

TEST_CASE("an oversubscribed leaf limits its hosts to its uplink capacity",
          "[topology][scenario]") {
  // fat_tree_oversubscribed: 12 hosts under leaf0 send 100G flows to other
  // leaves through leaf0's 2 uplinks of 400G (the leaf is 3:1). Together they
  // want 1.2 Tb/s and can get at most 800 Gb/s after headers, so the last one
  // finishes no sooner than all their bytes take at that rate.
  const Ran r = run_file("scenarios/fat_tree_oversubscribed.json");
  REQUIRE(r.result.status == RunStatus::kComplete);
  int64_t bytes = 0;
  Time last;
  for (const FlowResult& f : r.result.flows) {
    bytes += f.bytes;
    last = std::max(last, f.finish);
  }
  const double uplinks = 2 * 400e9 * 4096.0 / 4178.0;
  CHECK(last.in_seconds() >= bytes * 8.0 / uplinks);
  // And the leaf's uplinks carried every payload byte of those flows.
  const Topology& t = r.scenario.topology;
  const uint32_t leaf0 = *t.find("leaf0");
  int64_t up = 0;
  for (const LinkResult& l : r.result.links) {
    if (l.from == leaf0 && t.node(l.to).tier == Tier::kSpine) up += l.payload_bytes;
  }
  CHECK(up == bytes);
}
