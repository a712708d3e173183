#include "test/support/catch_units.h"

#include <algorithm>
#include <string>

#include "test/support/built_topology.h"
#include "topologies/partition.h"

using namespace rdmasim;
using namespace rdmasim::testing;

namespace {
const LinkSpec k100{BitRate::gbps(100), Time::us(1)};

// Pod number of a fat-tree node from its group ("pod3"), or -1 (cores).
int pod_of(const TopoNode& n) {
  if (n.group.rfind("pod", 0) != 0) return -1;
  return std::stoi(n.group.substr(3));
}
}  // namespace

TEST_CASE("a fat-tree splits by pods, with the cores shared out", "[quick][partition]") {
  const uint32_t k = GENERATE(4u, 8u);
  const Built b = build(k_ary_fat_tree(k, k100));
  const auto part = partition_nodes(b.t, 2);
  REQUIRE(part.size() == b.t.nodes().size());
  uint32_t cores[2] = {0, 0};
  for (uint32_t id = 0; id < b.t.nodes().size(); ++id) {
    const TopoNode& n = b.t.node(id);
    const int pod = pod_of(n);
    INFO(n.name);
    if (pod >= 0) {
      // Pods 0..k/2-1 in partition 0, the rest in 1: hosts and pod switches.
      CHECK(part[id] == (static_cast<uint32_t>(pod) < k / 2 ? 0u : 1u));
    } else {
      CHECK(n.tier == Tier::kCore);
      ++cores[part[id]];
    }
  }
  CHECK(cores[0] == k * k / 8);
  CHECK(cores[1] == k * k / 8);
  // Only links between a pod and a core switch can cross partitions.
  for (const TopoLink& l : b.t.links()) {
    if (part[l.a] == part[l.b]) continue;
    CHECK((b.t.node(l.a).tier == Tier::kCore || b.t.node(l.b).tier == Tier::kCore));
  }
}

TEST_CASE("one partition holds everything; more split hosts evenly", "[quick][partition]") {
  const Built b = build(k_ary_fat_tree(4, k100));
  for (uint32_t p : partition_nodes(b.t, 1)) CHECK(p == 0);
  const auto part = partition_nodes(b.t, 4);
  uint32_t hosts[4] = {0, 0, 0, 0};
  for (uint32_t h = 0; h < b.t.num_hosts(); ++h) ++hosts[part[b.t.hosts()[h]]];
  for (uint32_t n : hosts) CHECK(n == 4);
}

TEST_CASE("a heavy host gets a partition of its own share", "[quick][partition]") {
  // k=4: 16 hosts, pods of 4. Host 0 weighs as much as the 15 others
  // together: one partition's worth, alone. (Its pod may be split: all the
  // fat-tree's links have the same delay.)
  const Built b = build(k_ary_fat_tree(4, k100));
  std::vector<int64_t> weight(16, 10);
  weight[0] = 150;
  const auto part = partition_nodes(b.t, 2, weight);
  CHECK(part[b.t.hosts()[0]] == 0);
  for (uint32_t h = 1; h < 16; ++h) CHECK(part[b.t.hosts()[h]] == 1);
  // Uniform weights: the plain split.
  CHECK(partition_nodes(b.t, 2, std::vector<int64_t>(16, 7)) == partition_nodes(b.t, 2));
  CHECK_THROWS(partition_nodes(b.t, 2, std::vector<int64_t>(15, 1)));
  CHECK_THROWS(partition_nodes(b.t, 2, std::vector<int64_t>(16, 0)));
}

TEST_CASE("a host goes to the block its weight's midpoint falls in", "[quick][partition]") {
  // Four hosts on one switch, no groups. Weights 1, 1, 1000, 1 over 4
  // partitions (a share of 250.75 each): midpoints 0.5, 1.5, 502 and
  // 1002.5 fall in blocks 0, 0, 2 and 3; partition 1 gets nothing.
  Topology t;
  const uint32_t sw = t.add_switch("sw");
  for (int h = 0; h < 4; ++h)
    t.add_link(t.add_host("h" + std::to_string(h)), sw, k100.rate, k100.delay);
  const auto part = partition_nodes(t, 4, {1, 1, 1000, 1});
  CHECK(part[t.hosts()[0]] == 0);
  CHECK(part[t.hosts()[1]] == 0);
  CHECK(part[t.hosts()[2]] == 2);
  CHECK(part[t.hosts()[3]] == 3);
  // The switch: one neighbour in each of 0 (two), 2 and 3: the majority.
  CHECK(part[sw] == 0);
}

TEST_CASE("switches join partitions layer by layer out from the hosts", "[quick][partition]") {
  // h0 - s1 - s2 - s3 - h1, plus s2 - s4 - h2: s1 sits next to h0 (0), s3
  // next to h1 (1), s4 next to h2 (1), all in the first layer. Then s2 sees
  // s1 (0), s3 and s4 (1): partition 1. Placing s2 in the same layer as its
  // neighbours (seeing only s1 when it is visited) would give 0.
  Topology t;
  const uint32_t h0 = t.add_host("h0"), h1 = t.add_host("h1"), h2 = t.add_host("h2");
  const uint32_t s1 = t.add_switch("s1"), s2 = t.add_switch("s2"), s3 = t.add_switch("s3"),
                 s4 = t.add_switch("s4");
  for (const auto& [a, b] : std::vector<std::pair<uint32_t, uint32_t>>{
           {h0, s1}, {s1, s2}, {s2, s3}, {s3, h1}, {s2, s4}, {s4, h2}}) {
    t.add_link(a, b, k100.rate, k100.delay);
  }
  const auto part = partition_nodes(t, 2, {2, 1, 1});
  CHECK(part[h0] == 0);
  CHECK(part[h1] == 1);
  CHECK(part[h2] == 1);
  CHECK(part[s1] == 0);
  CHECK(part[s3] == 1);
  CHECK(part[s4] == 1);
  CHECK(part[s2] == 1);
}

TEST_CASE("a rail-optimized fabric splits between servers, never inside one",
          "[quick][partition]") {
  RailOptimizedConfig c;
  c.sus = 2;
  const Built b = build(c);
  for (const uint32_t parts : {2u, 3u, 8u}) {
    INFO(parts << " partitions");
    const auto part = partition_nodes(b.t, parts);
    uint32_t crossing = 0;
    for (const TopoLink& l : b.t.links()) {
      if (part[l.a] == part[l.b]) continue;
      ++crossing;
      // Only cables between a NIC and a leaf, or between switches, cross:
      // no NVLink or PCIe link inside a server.
      INFO(b.t.node(l.a).name << " - " << b.t.node(l.b).name);
      CHECK(l.delay > std::max(c.nvlink.delay, c.pcie.delay));
    }
    CHECK(crossing > 0);
  }
}
