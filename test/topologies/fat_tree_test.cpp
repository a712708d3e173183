#include "test/support/catch_units.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "sim/rng.h"
#include "test/support/built_topology.h"
#include "test/support/route_walk.h"
#include "topologies/bisection.h"
#include "topologies/generators.h"

using namespace rdmasim;
using namespace rdmasim::testing;

namespace {
const LinkSpec k100{BitRate::gbps(100), Time::us(1)};

uint64_t count(const Topology& t, NodeKind kind) {
  return std::count_if(t.nodes().begin(), t.nodes().end(),
                       [&](const TopoNode& n) { return n.kind == kind; });
}
}  // namespace

TEST_CASE("V9a fat-tree construction counts", "[quick][validation][V9]") {
  const uint32_t k = GENERATE(4u, 8u, 16u);
  const Built b = build(k_ary_fat_tree(k, k100));
  // Al-Fares et al. 2008, section 3: k^3/4 hosts, 5k^2/4 switches,
  // (k/2)^2 equal-cost paths between hosts in different pods.
  CHECK(count(b.t, NodeKind::kHost) == k * k * k / 4);
  CHECK(count(b.t, NodeKind::kSwitch) == 5 * k * k / 4);
  CHECK(b.t.links().size() == 3 * k * k * k / 4);  // host, leaf-agg and agg-core layers
  CHECK_FALSE(b.r.unreachable());
  const uint32_t hosts_per_pod = k * k / 4;
  // First host of pod 0 to the last host of the last pod: from the source's
  // leaf, count paths through the routing tables.
  const uint32_t src = 0, dst = k * k * k / 4 - 1;
  const uint32_t leaf = b.t.adjacency()[b.t.hosts()[src]][0].neighbor;
  CHECK(count_paths(b.t, b.r, leaf, dst) == (k / 2) * (k / 2));
  // Same pod, different leaf: k/2 paths; same leaf: 1.
  CHECK(count_paths(b.t, b.r, leaf, hosts_per_pod - 1) == k / 2);
  CHECK(count_paths(b.t, b.r, leaf, 1) == 1);
  CHECK(b.r.switch_hops(src, dst) == 5u);
  for (uint32_t s = 0; s < b.t.nodes().size(); ++s) {
    if (b.t.node(s).kind == NodeKind::kSwitch) CHECK(b.t.node(s).num_ports == k);
  }
}

TEST_CASE("V9b ECMP spread over edge uplinks", "[validation][V9]") {
  // Balls into bins: each edge switch hashes its m = k/2 outgoing flows onto
  // its m uplinks, so the expected fraction of uplinks in use is 1-(1-1/m)^m.
  const uint32_t k = GENERATE(4u, 8u, 16u);
  const Built b = build(k_ary_fat_tree(k, k100));
  const uint32_t hosts = k * k * k / 4, m = k / 2;
  RngStream rng(2024, "V9b");
  std::vector<uint32_t> perm(hosts);
  const int seeds = 10000;
  double fraction_sum = 0;
  uint64_t edges_counted = 0;
  std::vector<uint64_t> switch_seed(b.t.nodes().size());
  for (int seed = 0; seed < seeds; ++seed) {
    // A random derangement across edges: shuffle, then repair any host sent
    // to its own edge by swapping targets with a random other host.
    for (uint32_t i = 0; i < hosts; ++i) perm[i] = i;
    for (uint32_t i = hosts - 1; i > 0; --i) std::swap(perm[i], perm[rng.uniform(i + 1)]);
    auto same_edge = [&](uint32_t a, uint32_t c) { return a / m == c / m; };
    for (bool changed = true; changed;) {
      changed = false;
      for (uint32_t i = 0; i < hosts; ++i) {
        if (!same_edge(i, perm[i])) continue;
        const auto j = static_cast<uint32_t>(rng.uniform(hosts));
        if (!same_edge(i, perm[j]) && !same_edge(j, perm[i])) {
          std::swap(perm[i], perm[j]);
          changed = true;
        }
      }
    }
    for (auto& s : switch_seed) s = rng.next_u64();
    // Uplinks in use per edge switch.
    for (uint32_t e = 0; e < hosts / m; ++e) {
      std::set<int64_t> used;
      for (uint32_t h = e * m; h < (e + 1) * m; ++h) {
        const uint32_t leaf = b.t.adjacency()[b.t.hosts()[h]][0].neighbor;
        const uint64_t sport = rng.uniform(1 << 16);
        used.insert(
            b.r.table(leaf).select(perm[h], ecmp_key(switch_seed[leaf], h, perm[h], sport)));
      }
      fraction_sum += static_cast<double>(used.size()) / m;
      ++edges_counted;
    }
  }
  const double expected = 1 - std::pow(1 - 1.0 / m, m);
  CHECK(fraction_sum / edges_counted == Approx(expected).epsilon(0.01));
}

TEST_CASE("every pair of hosts reaches each other through the tables", "[quick][routing]") {
  FatTreeConfig two;
  two.tiers = 2;
  two.leaves = 6;
  two.spines = 3;
  two.hosts_per_leaf = 4;
  two.uplinks_per_leaf = 6;  // two parallel links per spine
  two.host_link = two.leaf_link = k100;
  for (const FatTreeConfig& c : {two, k_ary_fat_tree(4, k100)}) {
    const Built b = build(c);
    const uint32_t n = static_cast<uint32_t>(b.t.num_hosts());
    for (uint32_t s = 0; s < n; ++s) {
      for (uint32_t d = 0; d < n; ++d) {
        if (s == d) continue;
        const auto path = walk(b.t, b.r, s, d, s * 7919 + d);
        REQUIRE(path);
        CHECK(path->size() == *b.r.switch_hops(s, d) + 1);
      }
    }
  }
}

TEST_CASE("oversubscription: the built ratio is the one asked for", "[quick][topology]") {
  const double ratio = GENERATE(1.0, 2.0, 4.0);
  FatTreeConfig c;
  c.tiers = 2;
  c.leaves = 8;
  c.spines = 2;  // 8, 4 or 2 uplinks: each a multiple of the spines
  c.hosts_per_leaf = 32;
  c.host_link = {BitRate::gbps(100), Time::us(1)};
  c.leaf_link = {BitRate::gbps(400), Time::us(1)};
  c.oversubscription = ratio;
  const Built b = build(c);
  CHECK(b.info.oversubscription == Approx(ratio));
  // Measured on the graph: host-facing over fabric-facing capacity of a leaf.
  double down = 0, up = 0;
  const uint32_t leaf0 = *b.t.find("leaf0");
  for (const auto& adj : b.t.adjacency()[leaf0]) {
    const double r = static_cast<double>(b.t.links()[adj.link].rate.in_bps());
    (b.t.node(adj.neighbor).kind == NodeKind::kHost ? down : up) += r;
  }
  CHECK(down / up == Approx(ratio));
  // Bisection: half the leaves' uplinks.
  CHECK(bisection_bandwidth(b.t).in_bps() == static_cast<int64_t>(4 * up));
}

TEST_CASE("a non-oversubscribed fat-tree carries a shift permutation at full rate",
          "[quick][topology]") {
  // Routing-only: host (pod p, leaf l, host h) sends to (pod p+1, l, h). Choose
  // for each flow the path leaf -> spine h -> core (h, l) -> ..., which is among
  // the ECMP choices the tables offer; then no link carries more than one flow
  // and every flow gets the full host rate (Al-Fares et al. 2008, section 3.4).
  const uint32_t k = 8;
  const Built b = build(k_ary_fat_tree(k, k100));
  const uint32_t half = k / 2, hosts = k * k * k / 4, per_pod = half * half;
  std::vector<int> load(2 * b.t.links().size(), 0);  // per link direction
  for (uint32_t src = 0; src < hosts; ++src) {
    const uint32_t dst = (src + per_pod) % hosts;
    const uint32_t l = (src % per_pod) / half, h = src % half;
    const std::string spine = "pod" + std::to_string(src / per_pod) + ".spine" + std::to_string(h);
    const std::string core = "core" + std::to_string(h * half + l);
    uint32_t node = b.t.hosts()[src];
    // The node each hop should reach: any leaf, then the chosen spine and core.
    const std::vector<std::string> want = {"", spine, core, "", "", ""};
    for (int hop = 0; node != b.t.hosts()[dst]; ++hop) {
      REQUIRE(hop < 6);
      // Candidate ports offered by the routing at this node.
      std::vector<uint32_t> offered;
      if (b.t.node(node).kind == NodeKind::kHost) {
        offered.push_back(b.r.egress_port(src, dst, 0));
      } else {
        b.r.table(node).for_each_port(dst, [&](uint32_t p) { offered.push_back(p); });
      }
      REQUIRE_FALSE(offered.empty());
      uint32_t chosen = offered[0];
      if (!want[hop].empty()) {
        bool found = false;
        for (uint32_t p : offered) {
          if (b.t.node(b.t.adjacency()[node][p].neighbor).name == want[hop])
            chosen = p, found = true;
        }
        REQUIRE(found);  // the perfect path is among the ECMP choices
      }
      const auto& adj = b.t.adjacency()[node][chosen];
      ++load[2 * adj.link + (b.t.links()[adj.link].a == node ? 0 : 1)];
      node = adj.neighbor;
    }
  }
  // All links run at the host rate and no direction of any link carries two
  // flows: every flow gets the full rate. In a shift, every direction of every
  // link carries exactly one.
  CHECK(*std::max_element(load.begin(), load.end()) == 1);
  CHECK(*std::min_element(load.begin(), load.end()) == 1);
}

TEST_CASE("fat-tree generator rejects impossible parameters", "[quick][topology]") {
  FatTreeConfig c;
  c.tiers = 2;
  c.leaves = 4;
  c.spines = 0;
  c.hosts_per_leaf = 8;
  Topology t;
  CHECK_THROWS_AS(build_fat_tree(c, t), TopologyError);
  c.spines = 4;
  c.switch_ports = 8;  // 8 hosts + 8 uplinks do not fit
  try {
    Topology t2;
    build_fat_tree(c, t2);
    FAIL("no error");
  } catch (const TopologyError& e) {
    CHECK(e.param() == "switch_ports");
  }
  c.switch_ports = 0;
  c.uplinks_per_leaf = 6;  // not spreadable over 4 spines
  Topology t3;
  CHECK_THROWS_AS(build_fat_tree(c, t3), TopologyError);
  CHECK_THROWS_AS(k_ary_fat_tree(5, k100), TopologyError);
}

// select() has a direct per-destination table for small fabrics and the
// general walk otherwise; both must pick mix64(key) mod n among the ports that
// for_each_port lists, in its order.
TEST_CASE("ECMP select picks the hashed port among the equal-cost ones", "[quick][routing][ecmp]") {
  // k = 6: three uplinks (a count that is not a power of two); k = 32: 8,192
  // hosts, beyond the 4,096 hosts a per-host table once reached. The fast
  // table a switch reads (contract 6) must cover every destination, the
  // switch's own hosts included, and give select()'s port.
  const uint32_t k = GENERATE(4u, 6u, 32u);
  const Built b = build(k_ary_fat_tree(k, k100));
  const auto hosts = static_cast<uint32_t>(b.t.hosts().size());
  RngStream rng(7, "select");
  uint64_t checked = 0;
  for (uint32_t node = 0; node < b.t.nodes().size(); ++node) {
    if (b.t.nodes()[node].kind != NodeKind::kSwitch) continue;
    const ForwardingTable& t = b.r.table(node);
    // Every destination on the small fabrics; 64 drawn at k = 32.
    const uint32_t draws = k <= 6 ? hosts : 64;
    for (uint32_t i = 0; i < draws; ++i) {
      const auto dst = k <= 6 ? i : static_cast<uint32_t>(rng.uniform(hosts));
      std::vector<uint32_t> ports;
      t.for_each_port(dst, [&](uint32_t p) { ports.push_back(p); });
      REQUIRE(!ports.empty());
      const uint64_t key = rng.next_u64();
      const int64_t expected = ports[mix64(key) % ports.size()];
      CHECK(t.select(dst, key) == expected);
      CHECK(ForwardingTable::fast_select(t.fast_view(), dst, key) == expected);
      ++checked;
    }
  }
  CHECK(checked > 0);
}

// Contract 6's packed host routes: group << 12 | port. A port or a group
// count that does not fit leaves every host to the general walk (no route
// array), never a truncated port.
TEST_CASE("host routes are packed, or absent when they do not fit", "[quick][routing]") {
  HostAttachments h;
  h.offsets = {0, 1, 2, 4, 4};
  h.items = {{7, 3, 0, 5}, {9, 4095, 0, 2}, {7, 1, 0, 5}, {9, 2, 1, 2}};
  h.build_routes(6);
  REQUIRE(h.route.size() == 4);
  CHECK(HostAttachments::route_group(h.route[0]) == 5);
  CHECK(HostAttachments::route_port(h.route[0]) == 3);
  CHECK(HostAttachments::route_port(h.route[1]) == 4095);
  CHECK(HostAttachments::route_group(h.route[2]) == 6);  // dual-homed: general walk
  CHECK(HostAttachments::route_group(h.route[3]) == 6);  // not cabled
  h.items[1].node_port = 4096;
  h.build_routes(6);
  CHECK(h.route.empty());
  h.items[1].node_port = 1;
  h.build_routes(HostAttachments::kRouteMaxGroups);
  CHECK(h.route.empty());
}

TEST_CASE("two tiers: fewer uplinks than spines is refused, as it disconnects leaves",
          "[quick][topology]") {
  // Leaf i used to take spines i*u ... i*u+u-1 mod spines: leaves 0 and 1 of
  // 4 leaves with 2 uplinks over 4 spines then shared no spine.
  FatTreeConfig c;
  c.leaves = 4;
  c.spines = 4;
  c.hosts_per_leaf = 2;
  c.host_link = c.leaf_link = k100;
  for (uint32_t uplinks : {0u, 2u, 6u}) {  // 0: 2, from oversubscription 1
    c.uplinks_per_leaf = uplinks;
    Topology t;
    try {
      build_fat_tree(c, t);
      FAIL("no error for " << uplinks << " uplinks");
    } catch (const TopologyError& e) {
      CHECK(e.param() == "uplinks_per_leaf");
      CHECK_THAT(e.what(), Catch::Contains("expected a multiple of spines: 4, 8"));
    }
  }
  c.uplinks_per_leaf = 8;  // two cables to each spine
  const Built b = build(c);
  CHECK_FALSE(b.r.unreachable());
}
