// The min-hop engine (topologies/min_hop.h): every destination reached along
// a shortest path from every source (so loop-free), and the per-switch
// balance OpenSM's minhop gives: destinations handed out in LID order to the
// least-loaded candidate port, so equal ports take them round-robin.
#include <algorithm>
#include <map>
#include <set>

#include "test/support/built_topology.h"
#include "test/support/catch_units.h"
#include "topologies/generators.h"
#include "topologies/min_hop.h"

using namespace rdmasim;

namespace {

Topology k8() {
  Topology t;
  build_fat_tree(k_ary_fat_tree(8, LinkSpec{}), t);
  return t;
}

Topology rail() { return rdmasim::testing::build(rdmasim::testing::rail_config(2, 4, 8, 8, 4)).t; }

// Follows the LFTs from host src to host dst; the number of switches
// crossed, or 0 on a loop, a dead end or a wrong delivery.
uint32_t walk(const Topology& t, const Routes& r, uint32_t src, uint32_t dst) {
  const uint32_t hosts_node = t.hosts()[src];
  const uint32_t port = r.egress_port(src, dst, 0);
  uint32_t node = t.adjacency()[hosts_node][port].neighbor;
  for (uint32_t hops = 1; hops <= 64; ++hops) {
    if (t.node(node).kind == NodeKind::kHost) return t.node(node).host_index == dst ? hops - 1 : 0;
    int64_t out = -1;
    r.table(node).for_each_port(dst, [&](uint32_t p) {
      if (out >= 0) out = -2;  // more than one port: not a linear table
      if (out == -1) out = p;
    });
    if (out < 0) return 0;
    node = t.adjacency()[node][static_cast<uint32_t>(out)].neighbor;
  }
  return 0;
}

// Every pair: the LFT walk crosses exactly the shortest path's switches.
void check_shortest_and_loop_free(const Topology& t) {
  const Routes r = compute_routes(t, {}, RoutingEngine::kMinHop);
  for (uint32_t s = 0; s < t.num_hosts(); ++s) {
    for (uint32_t d = 0; d < t.num_hosts(); ++d) {
      if (s == d) continue;
      const uint32_t hops = walk(t, r, s, d);
      if (hops != *r.switch_hops(s, d)) {
        FAIL_CHECK(t.node(t.hosts()[s]).name << " -> " << t.node(t.hosts()[d]).name << ": " << hops
                                             << " switches, shortest " << *r.switch_hops(s, d));
      }
    }
  }
}

// At every switch, the destinations that share a candidate set (ECMP's
// port set) spread over its ports within one of each other.
void check_balanced(const Topology& t) {
  const Routes ecmp = compute_routes(t);
  const Routes lft = compute_routes(t, {}, RoutingEngine::kMinHop);
  for (uint32_t s = 0; s < t.nodes().size(); ++s) {
    if (t.node(s).kind != NodeKind::kSwitch) continue;
    std::map<std::vector<uint32_t>, std::map<uint32_t, uint32_t>> per_set;  // set -> port -> n
    for (uint32_t d = 0; d < t.num_hosts(); ++d) {
      std::vector<uint32_t> set;
      ecmp.table(s).for_each_port(d, [&](uint32_t p) { set.push_back(p); });
      // A GPU reached through its NIC and its NVLink at equal cost lists its
      // ports once per attachment (ForwardingTable contract 4).
      std::sort(set.begin(), set.end());
      set.erase(std::unique(set.begin(), set.end()), set.end());
      if (set.size() < 2) continue;
      auto& counts = per_set[set];
      for (uint32_t p : set) counts.emplace(p, 0);
      lft.table(s).for_each_port(d, [&](uint32_t p) { ++counts[p]; });
    }
    for (const auto& [set, counts] : per_set) {
      uint32_t lo = UINT32_MAX, hi = 0;
      for (const auto& [p, n] : counts) lo = std::min(lo, n), hi = std::max(hi, n);
      CHECK(counts.size() == set.size());
      CHECK(hi - lo <= 1);
    }
  }
}

}  // namespace

TEST_CASE("min-hop: loop-free shortest paths for every pair of a k=8 fat-tree",
          "[quick][routing]") {
  check_shortest_and_loop_free(k8());
}

TEST_CASE("min-hop: loop-free shortest paths for every pair of a rail-optimized fabric",
          "[quick][routing]") {
  check_shortest_and_loop_free(rail());
}

TEST_CASE("min-hop: destinations balanced over equal ports within one", "[quick][routing]") {
  check_balanced(k8());
  check_balanced(rail());
}

TEST_CASE("min-hop: a leaf hands its remote destinations to its uplinks round-robin, in LID order",
          "[quick][routing]") {
  // k = 8: leaf pod0.leaf0 holds hosts 0-3 and has 4 uplinks; the 124 other
  // hosts, in host-index order, go to uplinks 1st, 2nd, 3rd, 4th, 1st, ...:
  // 31 each, exactly.
  const Topology t = k8();
  const uint32_t leaf = *t.find("pod0.leaf0");
  const Routes ecmp = compute_routes(t);
  std::vector<uint32_t> up;
  ecmp.table(leaf).for_each_port(4, [&](uint32_t p) { up.push_back(p); });
  REQUIRE(up.size() == 4);
  std::sort(up.begin(), up.end());
  const std::vector<uint32_t> lft = min_hop_lft(ecmp, leaf, t.num_hosts());
  std::map<uint32_t, uint32_t> load;
  for (uint32_t d = 4; d < 128; ++d) {
    CHECK(lft[d] == up[(d - 4) % 4]);
    ++load[lft[d]];
  }
  for (uint32_t p : up) CHECK(load[p] == 31);
  // Its own hosts leave by their own ports.
  for (uint32_t d = 0; d < 4; ++d) {
    std::vector<uint32_t> own;
    ecmp.table(leaf).for_each_port(d, [&](uint32_t p) { own.push_back(p); });
    CHECK(lft[d] == own.at(0));
  }
}

TEST_CASE("min-hop: recomputed after a fault, the failed uplink carries nothing",
          "[quick][routing]") {
  Topology t = k8();
  const uint32_t leaf = *t.find("pod0.leaf0");
  // The leaf's first uplink fails: its 124 remote destinations go round-robin
  // over the 3 others: 42, 41, 41.
  std::vector<uint32_t> up;
  compute_routes(t).table(leaf).for_each_port(4, [&](uint32_t p) { up.push_back(p); });
  std::sort(up.begin(), up.end());
  t.set_link_failed(t.adjacency()[leaf][up[0]].link, true);
  const Routes r = compute_routes(t, {}, RoutingEngine::kMinHop);
  std::map<uint32_t, uint32_t> load;
  for (uint32_t d = 4; d < 128; ++d) r.table(leaf).for_each_port(d, [&](uint32_t p) { ++load[p]; });
  CHECK(load.count(up[0]) == 0);
  CHECK(load[up[1]] == 42);
  CHECK(load[up[2]] == 41);
  CHECK(load[up[3]] == 41);
  check_shortest_and_loop_free(t);
}

TEST_CASE("min-hop: the lookup a switch makes returns the table's one port", "[quick][routing]") {
  const Topology t = k8();
  const Routes r = compute_routes(t, {}, RoutingEngine::kMinHop);
  const uint32_t leaf = *t.find("pod0.leaf0");
  const ForwardingTable& f = r.table(leaf);
  REQUIRE(f.linear());
  const ForwardingTable::FastView v = f.fast_view();
  REQUIRE(v.size == 128);
  for (uint32_t d = 0; d < 128; ++d) {
    std::vector<uint32_t> one;
    f.for_each_port(d, [&](uint32_t p) { one.push_back(p); });
    REQUIRE(one.size() == 1);
    // Any flow key: the same port, by select() and by the fast table.
    for (uint64_t key : {uint64_t{0}, uint64_t{12345}, ~uint64_t{0}}) {
      CHECK(f.select(d, key) == one[0]);
      CHECK(ForwardingTable::fast_select(v, d, key) == one[0]);
    }
  }
}
