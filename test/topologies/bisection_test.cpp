// Bisection bandwidth (topologies/bisection.h) against an independent
// computation: the smallest cut found by trying both sides for every switch
// (and, where the fabric is small enough, for every host too).
#include "test/support/catch_units.h"

#include <bit>
#include <numeric>

#include "topologies/bisection.h"
#include "topologies/export.h"
#include "topologies/generators.h"

using namespace rdmasim;

namespace {

const LinkSpec k100{BitRate::gbps(100), Time::us(1)};

// The cables a cut counts: working network links (NVLink does not).
std::vector<const TopoLink*> cut_links(const Topology& t) {
  std::vector<const TopoLink*> out;
  for (const TopoLink& l : t.links()) {
    if (!l.failed && l.kind == LinkKind::kNetwork) out.push_back(&l);
  }
  return out;
}

// The switches a cut can place: those with a network link.
std::vector<uint32_t> cut_switches(const Topology& t) {
  std::vector<bool> used(t.nodes().size(), false);
  for (const TopoLink* l : cut_links(t)) used[l->a] = used[l->b] = true;
  std::vector<uint32_t> out;
  for (uint32_t n = 0; n < t.nodes().size(); ++n) {
    if (used[n] && t.node(n).kind == NodeKind::kSwitch) out.push_back(n);
  }
  return out;
}

// Capacity from side A to side B, one direction per crossing cable.
int64_t cut_capacity(const std::vector<const TopoLink*>& links, const std::vector<bool>& side_a) {
  int64_t c = 0;
  for (const TopoLink* l : links) {
    if (side_a[l->a] != side_a[l->b]) c += l->rate.in_bps();
  }
  return c;
}

// The smallest cut with the first half of `order` on side A and the rest on
// side B, over every placement of the switches (max-flow min-cut).
BitRate brute_split(const Topology& t, const std::vector<uint32_t>& order) {
  const auto links = cut_links(t);
  const auto sw = cut_switches(t);
  REQUIRE(sw.size() <= 22);
  std::vector<bool> side_a(t.nodes().size(), false);
  for (size_t i = 0; i < order.size() / 2; ++i) side_a[t.hosts()[order[i]]] = true;
  int64_t best = INT64_MAX;
  for (uint64_t mask = 0; mask < (uint64_t{1} << sw.size()); ++mask) {
    for (size_t i = 0; i < sw.size(); ++i) side_a[sw[i]] = ((mask >> i) & 1) != 0;
    best = std::min(best, cut_capacity(links, side_a));
  }
  return BitRate::bps(best);
}

std::vector<uint32_t> host_order(const Topology& t) {
  std::vector<uint32_t> o(t.num_hosts());
  std::iota(o.begin(), o.end(), 0u);
  return o;
}

// The true minimum bisection: every split of the hosts into floor(N/2) and
// the rest, every placement of the switches.
BitRate brute_min_bisection(const Topology& t) {
  const auto links = cut_links(t);
  const auto sw = cut_switches(t);
  const auto n = static_cast<uint32_t>(t.num_hosts());
  REQUIRE(n + sw.size() <= 24);
  std::vector<bool> side_a(t.nodes().size(), false);
  int64_t best = INT64_MAX;
  for (uint64_t hosts = 0; hosts < (uint64_t{1} << n); ++hosts) {
    if (static_cast<uint32_t>(std::popcount(hosts)) != n / 2) continue;
    for (uint32_t h = 0; h < n; ++h) side_a[t.hosts()[h]] = ((hosts >> h) & 1) != 0;
    for (uint64_t mask = 0; mask < (uint64_t{1} << sw.size()); ++mask) {
      for (size_t i = 0; i < sw.size(); ++i) side_a[sw[i]] = ((mask >> i) & 1) != 0;
      best = std::min(best, cut_capacity(links, side_a));
    }
  }
  return BitRate::bps(best);
}

// The independent figure by the same definition: host order, and rail order
// where the fabric has rails.
BitRate brute_bisection(const Topology& t) {
  BitRate b = brute_split(t, host_order(t));
  if (!rail_order(t).empty()) b = std::min(b, brute_split(t, rail_order(t)));
  return b;
}

FatTreeConfig two_tier(uint32_t leaves, uint32_t spines, uint32_t hosts, uint32_t uplinks) {
  FatTreeConfig c;
  c.leaves = leaves;
  c.spines = spines;
  c.hosts_per_leaf = hosts;
  c.uplinks_per_leaf = uplinks;
  c.host_link = c.leaf_link = k100;
  return c;
}

}  // namespace

// The figures the closed forms got wrong (in brackets) before the max-flow.
TEST_CASE("bisection bandwidth: two tiers with an odd number of leaves", "[quick][topology]") {
  SECTION("3 leaves x 2 hosts, 2 spines, non-blocking [200G]") {
    Topology t;
    const TopologyInfo info = build_fat_tree(two_tier(3, 2, 2, 2), t);
    REQUIRE(info.has_bisection);
    CHECK(bisection_bandwidth(t) == BitRate::gbps(300));
    CHECK(brute_bisection(t) == BitRate::gbps(300));
    CHECK(brute_min_bisection(t) == BitRate::gbps(300));
    CHECK_THAT(topology_summary(t, info), Catch::Contains("bisection bandwidth 300Gbps"));
  }
  SECTION("3 leaves x 4 hosts, 2:1 [200G]") {
    Topology t;
    build_fat_tree(two_tier(3, 2, 4, 2), t);
    CHECK(bisection_bandwidth(t) == BitRate::gbps(400));
    CHECK(brute_bisection(t) == BitRate::gbps(400));
    CHECK(brute_min_bisection(t) == BitRate::gbps(400));
  }
  SECTION("one leaf of 4 hosts [no figure]: half the hosts' links") {
    Topology t;
    build_fat_tree(two_tier(1, 1, 4, 4), t);
    CHECK(bisection_bandwidth(t) == BitRate::gbps(200));
    CHECK(brute_min_bisection(t) == BitRate::gbps(200));
    Topology s;
    build_star(5, k100, s);  // 2 hosts against 3
    CHECK(bisection_bandwidth(s) == BitRate::gbps(200));
  }
}

TEST_CASE("bisection bandwidth: three tiers with an odd number of pods", "[quick][topology]") {
  // [400G]: the middle pod's first leaf is on the first side.
  FatTreeConfig c;
  c.tiers = 3;
  c.pods = 3;
  c.leaves_per_pod = 2;
  c.spines_per_pod = 2;
  c.cores = 4;
  c.hosts_per_leaf = 2;
  c.host_link = c.leaf_link = c.core_link = k100;
  Topology t;
  build_fat_tree(c, t);
  CHECK(bisection_bandwidth(t) == BitRate::gbps(600));
  CHECK(brute_bisection(t) == BitRate::gbps(600));
}

TEST_CASE("bisection bandwidth: failed links count for nothing", "[quick][topology]") {
  Topology t;
  build_fat_tree(k_ary_fat_tree(4, k100), t);
  CHECK(bisection_bandwidth(t) == BitRate::gbps(800));
  // [800G]: pod0.leaf0's hosts leave the pod by one uplink instead of two.
  const uint32_t leaf = *t.find("pod0.leaf0"), spine = *t.find("pod0.spine0");
  for (uint32_t i = 0; i < t.links().size(); ++i) {
    const TopoLink& l = t.links()[i];
    if ((l.a == leaf && l.b == spine) || (l.a == spine && l.b == leaf)) t.fail_link(i);
  }
  CHECK(bisection_bandwidth(t) == BitRate::gbps(700));
  CHECK(brute_bisection(t) == BitRate::gbps(700));
}

TEST_CASE("bisection bandwidth: rail-optimized fabrics", "[quick][topology]") {
  RailOptimizedConfig c;
  c.sus = 1;
  c.ufm = false;
  c.gpus_per_node = 4;
  c.nic_link = c.leaf_link = c.core_link = {BitRate::gbps(400), Time::us(1)};
  SECTION("GPUs sharing NIC ports [1600G]: the NIC ports bound it, not the GPUs") {
    c.nodes_per_su = 2;
    c.rails = 2;
    c.leaf_uplinks = 4;
    Topology t;
    build_rail_optimized(c, t);
    CHECK(bisection_bandwidth(t) == BitRate::gbps(800));
    CHECK(brute_bisection(t) == BitRate::gbps(800));
    CHECK(brute_min_bisection(t) == BitRate::gbps(800));
  }
  SECTION("2:1 leaves: the rail split is the smaller, not the node split") {
    c.nodes_per_su = 4;
    c.rails = 4;
    c.spines = 2;
    c.leaf_uplinks = 2;
    c.nvswitch = false;
    Topology t;
    build_rail_optimized(c, t);
    CHECK(split_capacity(t, host_order(t)) == BitRate::gbps(3200));
    CHECK(bisection_bandwidth(t) == BitRate::gbps(1600));
    CHECK(brute_bisection(t) == BitRate::gbps(1600));
    CHECK(brute_min_bisection(t) == BitRate::gbps(1600));
  }
  SECTION("two planes, two SUs: every plane counts") {
    c.sus = 2;
    c.nodes_per_su = 2;
    c.rails = 2;
    c.planes = 2;
    c.spines = 2;
    c.nvswitch = false;
    Topology t;
    build_rail_optimized(c, t);
    // SU 0's 4 NIC ports per plane, both planes.
    CHECK(bisection_bandwidth(t) == BitRate::gbps(3200));
    CHECK(brute_bisection(t) == BitRate::gbps(3200));
  }
}
