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
  // k=4: 16 hosts. Host 0 weighs as much as the 15 others together: it is
  // one partition's worth, and the rest go to the other.
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
