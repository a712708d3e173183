#include "test/support/catch_units.h"

#include <algorithm>

#include "test/support/built_topology.h"
#include "test/support/route_walk.h"
#include "topologies/generators.h"

using namespace rdmasim;
using namespace rdmasim::testing;

namespace {
uint64_t tier_count(const Topology& t, Tier tier) {
  return std::count_if(t.nodes().begin(), t.nodes().end(),
                       [&](const TopoNode& n) { return n.tier == tier; });
}
uint64_t links_between(const Topology& t, Tier a, Tier b) {
  return std::count_if(t.links().begin(), t.links().end(), [&](const TopoLink& l) {
    const Tier x = t.node(l.a).tier, y = t.node(l.b).tier;
    return (x == a && y == b) || (x == b && y == a);
  });
}
}  // namespace

TEST_CASE("V10 DGX SuperPOD rail-optimised fabric counts", "[quick][validation][V10]") {
  // RA-11333 table 4: SUs, nodes, GPUs, leaves, spines, node+UFM cables, spine-leaf cables.
  struct Row {
    uint32_t sus, nodes, gpus, leaves, spines, node_cables, spine_cables;
  };
  const Row row =
      GENERATE(Row{1, 31, 248, 8, 4, 252, 256}, Row{2, 63, 504, 16, 8, 508, 512},
               Row{3, 95, 760, 24, 16, 764, 768}, Row{4, 127, 1016, 32, 16, 1020, 1024});
  RailOptimizedConfig c;
  c.sus = row.sus;
  const Built b = build(c);
  CHECK(tier_count(b.t, Tier::kNvSwitch) == row.nodes);  // one NVLink domain per node
  CHECK(b.t.num_hosts() == row.gpus + 1);                // GPUs and the UFM
  CHECK(tier_count(b.t, Tier::kLeaf) == row.leaves);
  CHECK(tier_count(b.t, Tier::kSpine) == row.spines);
  CHECK(links_between(b.t, Tier::kHost, Tier::kLeaf) == row.node_cables);  // 8 per node + 4 UFM
  CHECK(links_between(b.t, Tier::kLeaf, Tier::kSpine) == row.spine_cables);
  CHECK_FALSE(b.r.unreachable());
  // Every leaf and spine fits a 64-port QM9700.
  for (const TopoNode& n : b.t.nodes()) {
    if (n.tier == Tier::kLeaf || n.tier == Tier::kSpine) CHECK(n.num_ports <= 64);
  }
}

TEST_CASE("V10 switch hops between NICs: one on the same rail of an SU, else three",
          "[quick][validation][V10]") {
  RailOptimizedConfig c;
  c.sus = 2;
  c.nvswitch = false;  // hops between NICs: the network alone
  const Built b = build(c);
  auto gpu = [&](uint32_t su, uint32_t node, uint32_t g) {
    return b.t
        .node(*b.t.find("su" + std::to_string(su) + ".node" + std::to_string(node) + ".gpu" +
                        std::to_string(g)))
        .host_index;
  };
  CHECK(b.r.switch_hops(gpu(0, 0, 3), gpu(0, 17, 3)) == 1u);  // same rail, same SU
  CHECK(b.r.switch_hops(gpu(0, 0, 3), gpu(0, 17, 4)) == 3u);  // other rail
  CHECK(b.r.switch_hops(gpu(0, 0, 3), gpu(1, 5, 3)) == 3u);   // same rail, other SU
  CHECK(b.r.switch_hops(gpu(0, 0, 0), gpu(0, 0, 7)) == 3u);   // same node, over the network
  // And the tables deliver those paths.
  const auto path = walk(b.t, b.r, gpu(0, 0, 3), gpu(1, 5, 3), 99);
  REQUIRE(path);
  CHECK(path->size() == 4);
}

TEST_CASE("GPUs of one node talk over NVLink, never through another GPU", "[quick][topology]") {
  RailOptimizedConfig c;
  c.sus = 1;
  const Built b = build(c);
  const uint32_t g0 = b.t.node(*b.t.find("su0.node2.gpu0")).host_index;
  const uint32_t g5 = b.t.node(*b.t.find("su0.node2.gpu5")).host_index;
  const uint32_t other = b.t.node(*b.t.find("su0.node9.gpu5")).host_index;
  CHECK(b.r.switch_hops(g0, g5) == 1u);
  const auto path = walk(b.t, b.r, g0, g5, 1);
  REQUIRE(path);
  CHECK(b.t.node(b.t.adjacency()[path->at(0).node][path->at(0).port].neighbor).tier ==
        Tier::kNvSwitch);
  // Across nodes the GPU uses its NIC, whatever the rails.
  const auto across = walk(b.t, b.r, g0, other, 1);
  REQUIRE(across);
  CHECK(across->size() == 4);  // gpu -> rail0 leaf -> spine -> rail5 leaf -> gpu
}

TEST_CASE("rail-optimised variants: shared NICs, planes and a core layer", "[quick][topology]") {
  SECTION("two GPUs per NIC port through a PCIe switch") {
    RailOptimizedConfig c;
    c.sus = 1;
    c.rails = 4;
    c.ufm = true;
    const Built b = build(c);
    CHECK(tier_count(b.t, Tier::kNicSwitch) == 31 * 4);
    CHECK(tier_count(b.t, Tier::kLeaf) == 4);
    CHECK_FALSE(b.r.unreachable());
  }
  SECTION("two planes: every GPU has a NIC port in each") {
    RailOptimizedConfig c;
    c.sus = 1;
    c.planes = 2;
    c.ufm = false;
    const Built b = build(c);
    CHECK(tier_count(b.t, Tier::kLeaf) == 16);
    CHECK(tier_count(b.t, Tier::kSpine) == 8);
    const uint32_t g = *b.t.find("su0.node0.gpu0");
    CHECK(b.t.node(g).num_ports == 3);  // two planes and NVLink
    const uint32_t a = b.t.node(g).host_index;
    const uint32_t d = b.t.node(*b.t.find("su0.node1.gpu4")).host_index;
    CHECK(b.r.egress_port_count(a, d) == 2);  // either plane
  }
  SECTION("per-SU spines joined by cores") {
    RailOptimizedConfig c;
    c.sus = 4;
    c.spines = 8;
    c.cores = 16;
    c.switch_ports = 0;
    const Built b = build(c);
    CHECK(tier_count(b.t, Tier::kSpine) == 32);
    CHECK(tier_count(b.t, Tier::kCore) == 16);
    CHECK_FALSE(b.r.unreachable());
    const uint32_t a = b.t.node(*b.t.find("su0.node0.gpu0")).host_index;
    const uint32_t d = b.t.node(*b.t.find("su3.node0.gpu0")).host_index;
    CHECK(b.r.switch_hops(a, d) == 5u);
  }
}

TEST_CASE("rail-optimised generator rejects impossible parameters", "[quick][topology]") {
  RailOptimizedConfig c;
  c.rails = 3;  // does not divide 8 GPUs
  Topology t;
  try {
    build_rail_optimized(c, t);
    FAIL("no error");
  } catch (const TopologyError& e) {
    CHECK(e.param() == "rails");
  }
  RailOptimizedConfig big;
  big.sus = 5;  // beyond the reference table, no spine count given
  Topology t2;
  CHECK_THROWS_AS(build_rail_optimized(big, t2), TopologyError);
}

TEST_CASE("every pair of GPUs reaches each other through the tables", "[quick][routing]") {
  RailOptimizedConfig c;
  c.sus = 2;
  c.nodes_per_su = 3;
  c.spines = 2;
  c.leaf_uplinks = 4;
  for (uint32_t rails : {8u, 4u}) {
    c.rails = rails;
    const Built b = build(c);
    const auto n = static_cast<uint32_t>(b.t.num_hosts());
    for (uint32_t s = 0; s < n; ++s) {
      for (uint32_t d = 0; d < n; ++d) {
        if (s == d) continue;
        const auto path = walk(b.t, b.r, s, d, s * 131 + d);
        REQUIRE(path);
        CHECK(path->size() == *b.r.switch_hops(s, d) + 1);
      }
    }
  }
}

TEST_CASE("rail leaves without a core layer reach every spine", "[quick][topology]") {
  RailOptimizedConfig c = rail_config(1, 2, 8, 8, 0);  // the reference's 4 spines
  c.ufm = false;
  SECTION("the default uplinks: one per node slot, rounded up to a multiple of the spines") {
    // Was 2 uplinks over 4 spines, which left rail leaves 0 and 1 no common spine.
    const Built b = build(c);
    CHECK_FALSE(b.r.unreachable());
    CHECK(b.t.node(*b.t.find("su0.rail0")).num_ports == 2 + 4);
    c.nodes_per_su = 6;
    const Built six = build(c);
    CHECK(six.t.node(*six.t.find("su0.rail0")).num_ports == 6 + 8);
  }
  SECTION("fewer uplinks than spines is refused") {
    c.leaf_uplinks = 2;
    Topology t;
    try {
      build_rail_optimized(c, t);
      FAIL("no error");
    } catch (const TopologyError& e) {
      CHECK(e.param() == "leaf_uplinks");
      CHECK_THAT(e.what(), Catch::Contains("expected a multiple of spines: 4, 8"));
    }
  }
}

TEST_CASE("rail leaves under a core layer may take a block of the spines", "[quick][topology]") {
  RailOptimizedConfig c = rail_config(2, 4, 8, 8, 4);
  c.ufm = false;
  c.cores = 4;
  c.switch_ports = 0;
  SECTION("2 uplinks over 4 spines: the cores join the blocks") {
    c.leaf_uplinks = 2;
    const Built b = build(c);
    CHECK_FALSE(b.r.unreachable());
    CHECK(b.t.node(*b.t.find("su0.rail0")).num_ports == 4 + 2);
  }
  SECTION("blocks at both levels that no SU bridges are refused") {
    // SU 0's spines reach cores 0-3 only, SU 1's cores 4-7.
    c.cores = 8;
    c.spine_uplinks = 1;
    Topology t;
    try {
      build_rail_optimized(c, t);
      FAIL("no error");
    } catch (const TopologyError& e) {
      CHECK(e.param() == "spine_uplinks");
      CHECK_THAT(e.what(), Catch::Contains("unconnected (expected a multiple of cores: 8"));
    }
  }
}

TEST_CASE("a core layer with the default spines fits the default radix", "[quick][topology]") {
  // Was 4 spines per SU, each needing 64 leaf and 64 core ports of 64.
  RailOptimizedConfig c;
  c.sus = 2;
  c.cores = 8;
  const Built b = build(c);
  CHECK_FALSE(b.r.unreachable());
  CHECK(tier_count(b.t, Tier::kSpine) == 2 * 8);
  for (uint32_t n = 0; n < b.t.nodes().size(); ++n) {
    if (b.t.node(n).kind == NodeKind::kSwitch) CHECK(b.t.node(n).num_ports <= 64);
  }
  CHECK(b.t.node(*b.t.find("su0.spine0")).num_ports == 64);
}
