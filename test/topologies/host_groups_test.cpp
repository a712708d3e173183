// The host groups each generator declares (topologies/host_groups.h), against
// the numbering docs/topologies.md documents: hosts are created leaf by leaf,
// pod by pod, SU by SU, node by node, GPU by GPU.
#include <catch2/catch.hpp>

#include "test/support/built_topology.h"
#include "topologies/generators.h"

using namespace rdmasim;

namespace {
using Hosts = std::vector<uint32_t>;
constexpr HostGroupKind kLeaf = HostGroupKind::kLeaf, kPod = HostGroupKind::kPod,
                        kRail = HostGroupKind::kRail, kSu = HostGroupKind::kSu;
}  // namespace

TEST_CASE("host groups: a two-tier fat-tree has leaves only", "[quick][topology][host_set]") {
  FatTreeConfig c;
  c.leaves = 3;
  c.spines = 1;
  c.hosts_per_leaf = 2;
  Topology t;
  build_fat_tree(c, t);
  const HostGroups& g = t.host_groups();
  CHECK(g.count(kLeaf) == 3);
  CHECK(g.count(kPod) == 0);
  CHECK(g.count(kRail) == 0);
  CHECK(g.count(kSu) == 0);
  // leaf<i>.h<n> is host 2i + n.
  CHECK(g.members(kLeaf, 0) == Hosts{0, 1});
  CHECK(g.members(kLeaf, 2) == Hosts{4, 5});
  CHECK(t.node(t.hosts()[5]).name == "leaf2.h1");
}

TEST_CASE("host groups: a k=4 fat-tree numbers its leaves across pods",
          "[quick][topology][host_set]") {
  Topology t;
  build_fat_tree(k_ary_fat_tree(4, LinkSpec{}), t);
  const HostGroups& g = t.host_groups();
  REQUIRE(g.count(kPod) == 4);
  REQUIRE(g.count(kLeaf) == 8);
  // pod p holds hosts 4p … 4p + 3; pod<p>.leaf<l> is leaf 2p + l, hosts 2(2p + l) and one more.
  CHECK(g.members(kPod, 2) == Hosts{8, 9, 10, 11});
  CHECK(g.members(kLeaf, 5) == Hosts{10, 11});
  CHECK(t.node(t.hosts()[10]).name == "pod2.leaf1.h0");
}

TEST_CASE(
    "host groups: a rail-optimized fabric has rails, SUs, leaves and servers; the UFM is in none",
    "[quick][topology][host_set]") {
  const Topology t = rdmasim::testing::build(rdmasim::testing::rail_config(2, 3, 4, 4, 1)).t;
  // SU0: nodes 0-2, GPUs 0-11; SU1: nodes 0-1, GPUs 12-19; the UFM (SU1's
  // last slot) is host 20.
  REQUIRE(t.num_hosts() == 21);
  REQUIRE(t.node(t.hosts()[20]).name == "ufm");
  const HostGroups& g = t.host_groups();
  CHECK(g.is_management(20));
  CHECK_FALSE(g.is_management(19));
  CHECK(g.count(kRail) == 4);
  CHECK(g.count(kSu) == 2);
  CHECK(g.count(kLeaf) == 8);
  CHECK(g.count(kPod) == 0);
  CHECK(g.members(kRail, 1) == Hosts{1, 5, 9, 13, 17});
  CHECK(g.members(kSu, 1) == Hosts{12, 13, 14, 15, 16, 17, 18, 19});
  CHECK(g.members(kLeaf, 4 + 3) == Hosts{15, 19});  // su1.rail3
  // Servers: su<s>.node<n> is node 3s + n; the UFM's slot (su1.node2) is none.
  CHECK(g.count(HostGroupKind::kNode) == 5);
  CHECK(g.members(HostGroupKind::kNode, 0) == Hosts{0, 1, 2, 3});
  CHECK(g.members(HostGroupKind::kNode, 4) == Hosts{16, 17, 18, 19});  // su1.node1
  // The UFM is cabled to rails 0-3 of SU1 but is in none of their groups.
  for (uint32_t r = 0; r < 4; ++r) CHECK(g.members(kRail, r).back() != 20);
}

TEST_CASE("host groups: GPUs sharing a NIC port are on its rail", "[quick][topology][host_set]") {
  RailOptimizedConfig c;
  c.sus = 1;
  c.nodes_per_su = 2;
  c.gpus_per_node = 4;
  c.rails = 2;  // GPUs 0-1 share NIC port 0, GPUs 2-3 port 1
  c.ufm = false;
  c.spines = 1;
  Topology t;
  build_rail_optimized(c, t);
  const HostGroups& g = t.host_groups();
  CHECK(g.members(kRail, 0) == Hosts{0, 1, 4, 5});
  CHECK(g.members(kRail, 1) == Hosts{2, 3, 6, 7});
  CHECK(g.members(kLeaf, 1) == Hosts{2, 3, 6, 7});
}

TEST_CASE("host groups: a star is one leaf; a hand-built graph has none",
          "[quick][topology][host_set]") {
  Topology star;
  build_star(3, LinkSpec{}, star);
  CHECK(star.host_groups().count(kLeaf) == 1);
  CHECK(star.host_groups().members(kLeaf, 0) == Hosts{0, 1, 2});
  Topology graph;
  graph.add_host("a");
  for (size_t k = 0; k < static_cast<size_t>(HostGroupKind::kCount); ++k) {
    CHECK(graph.host_groups().count(static_cast<HostGroupKind>(k)) == 0);
  }
}
