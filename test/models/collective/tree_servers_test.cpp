// The tree over whole servers (models/collective/tree.h): NCCL's double
// binary tree over the servers with a chain of GPUs inside each, as NCCL's
// src/graph/connect.cc builds it (ncclTopoPreset: tree.up = intra[i-1],
// down[0] = intra[i+1]; connectTrees: the servers' ncclGetDtree links,
// attached through treeToParent / treeToChild0 / treeToChild1, all intra[0]
// for NCCL_TOPO_PATTERN_TREE, appended to down[] by setTreeDown), with the
// model's chain order intra[i] = GPU (c + i) mod g. The expected links are
// worked out by hand from those rules; the bytes per rank follow from them:
// in a tree carrying D bytes a rank receives D from each child (reduce) and
// D from its parent (broadcast).
#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <numeric>
#include <vector>

#include "models/collective/tree.h"
#include "test/support/plan_checks.h"

using namespace rdmasim;
using namespace rdmasim::testing;

namespace {

// Servers in order, GPU l of server s is rank s g + l, unless `shuffle`:
// then the rank numbers are reversed (the trees must follow the layout).

// parent -> children in NCCL's down[] order; every other rank a leaf.
using Drawing = std::map<int32_t, std::vector<int32_t>>;

void check_drawn(const Tree& t, int32_t root, const Drawing& drawn) {
  const auto n = static_cast<int32_t>(t.size());
  std::vector<int> as_child(t.size(), 0);
  for (int32_t r = 0; r < n; ++r) {
    INFO("rank " << r);
    const TreeLinks& l = t[static_cast<size_t>(r)];
    std::vector<int32_t> kids(l.child.begin(), l.child.begin() + l.children());
    for (size_t k = l.children(); k < l.child.size(); ++k) CHECK(l.child[k] == -1);
    const auto it = drawn.find(r);
    CHECK(kids == (it == drawn.end() ? std::vector<int32_t>{} : it->second));
    for (const int32_t c : kids) {
      CHECK(t[static_cast<size_t>(c)].parent == r);
      ++as_child[static_cast<size_t>(c)];
    }
  }
  for (int32_t r = 0; r < n; ++r) {
    INFO("rank " << r);
    CHECK(as_child[static_cast<size_t>(r)] == (r == root ? 0 : 1));
    if (r == root) CHECK(t[static_cast<size_t>(r)].parent == -1);
  }
}

// The root server of tree t over N servers (ncclGetDtree): 0 in tree 0; in
// tree 1, N - 1 (mirrored, N even) or 1 (shifted, N odd).
uint32_t root_server(uint32_t t, uint32_t servers) {
  return t == 0 ? 0 : servers % 2 == 0 ? servers - 1 : 1;
}

}  // namespace

TEST_CASE("tree over servers: 3 servers of 4 GPUs, channels 0 and 1, as NCCL connects them",
          "[quick][collective]") {
  // Servers' trees (ncclGetDtree(3), N odd): tree 0 is 0-2, 2-1; tree 1,
  // shifted by one, is 1-0, 0-2. Rank 4 s + l is GPU l of server s.
  // Channel 0 chains GPUs 0, 1, 2, 3; the servers attach at GPU 0.
  const ServerLayout l = layout(3, 4);
  const std::array<Tree, 2> c0 = channel_trees(12, &l, 0);
  check_drawn(c0[0], 0,
              {{0, {1, 8}},
               {1, {2}},
               {2, {3}},
               {8, {9, 4}},
               {9, {10}},
               {10, {11}},
               {4, {5}},
               {5, {6}},
               {6, {7}}});
  check_drawn(c0[1], 4,
              {{4, {5, 0}},
               {5, {6}},
               {6, {7}},
               {0, {1, 8}},
               {1, {2}},
               {2, {3}},
               {8, {9}},
               {9, {10}},
               {10, {11}}});
  // Channel 1 chains GPUs 1, 2, 3, 0; the servers attach at GPU 1.
  const std::array<Tree, 2> c1 = channel_trees(12, &l, 1);
  check_drawn(c1[0], 1,
              {{1, {2, 9}},
               {2, {3}},
               {3, {0}},
               {9, {10, 5}},
               {10, {11}},
               {11, {8}},
               {5, {6}},
               {6, {7}},
               {7, {4}}});
  check_drawn(c1[1], 5,
              {{5, {6, 1}},
               {6, {7}},
               {7, {4}},
               {1, {2, 9}},
               {2, {3}},
               {3, {0}},
               {9, {10}},
               {10, {11}},
               {11, {8}}});
  // Channel 5 starts at GPU 5 mod 4 = 1, as channel 1.
  CHECK(channel_trees(12, &l, 5) == c1);
  // NCCL's depth estimate: 4 - 1 + log2i(3) = 4; with one GPU per node,
  // log2i(12) = 3. The trees' own depth: 3 chain hops + the servers' 2.
  CHECK(nccl_tree_depth(12, 3) == 4);
  CHECK(nccl_tree_depth(12, 12) == 3);
  CHECK(nccl_tree_depth(32, 4) == 9);
  CHECK(tree_depth(c0[0]) == 5);
}

TEST_CASE("tree over servers: 4 servers of 2 GPUs, a rank with three children",
          "[quick][collective]") {
  // Servers' trees (ncclGetDtree(4), N even): tree 0 is 0-2, 2-{1,3};
  // tree 1, mirrored, is 3-1, 1-{0,2}. Rank 2 s + l is GPU l of server s.
  // GPU 0 of server 2 has, in channel 0's tree 0, its chain successor and
  // both child servers' GPU 0: NCCL_MAX_TREE_ARITY = 3 children.
  const ServerLayout l = layout(4, 2);
  const std::array<Tree, 2> c0 = channel_trees(8, &l, 0);
  check_drawn(c0[0], 0, {{0, {1, 4}}, {4, {5, 2, 6}}, {2, {3}}, {6, {7}}});
  check_drawn(c0[1], 6, {{6, {7, 2}}, {2, {3, 0, 4}}, {0, {1}}, {4, {5}}});
  // Channel 1 chains GPU 1, then GPU 0.
  const std::array<Tree, 2> c1 = channel_trees(8, &l, 1);
  check_drawn(c1[0], 1, {{1, {0, 5}}, {5, {4, 3, 7}}, {3, {2}}, {7, {6}}});
  check_drawn(c1[1], 7, {{7, {6, 3}}, {3, {2, 1, 5}}, {1, {0}}, {5, {4}}});
}

TEST_CASE("tree over servers: every hop between servers on rail c mod g, chains inside",
          "[quick][collective]") {
  for (const uint32_t servers : {2u, 3u, 4u, 5u, 8u}) {
    for (const uint32_t gpus : {2u, 4u, 8u}) {
      for (const bool shuffle : {false, true}) {
        const uint32_t n = servers * gpus;
        const ServerLayout l = layout(servers, gpus, shuffle);
        std::vector<uint32_t> server(n), gpu(n);
        for (uint32_t i = 0; i < n; ++i) {
          server[l.rank[i]] = i / gpus;
          gpu[l.rank[i]] = i % gpus;
        }
        const std::array<Tree, 2> nodes = double_binary_tree(servers);
        for (uint32_t c = 0; c < gpus + 1; ++c) {
          const std::array<Tree, 2> trees = channel_trees(n, &l, c);
          for (uint32_t t = 0; t < 2; ++t) {
            INFO("N=" << servers << " g=" << gpus << " shuffle=" << shuffle << " channel " << c
                      << " tree " << t);
            const Tree& tr = trees[t];
            const uint32_t j = c % gpus;
            REQUIRE(tr.size() == n);
            uint32_t roots = 0;
            for (uint32_t r = 0; r < n; ++r) {
              const TreeLinks& x = tr[r];
              const TreeLinks& node = nodes[t][server[r]];
              // Chain position i: GPU (c + i) mod g.
              const uint32_t i = (gpu[r] + gpus - j) % gpus;
              // The chain successor, and at intra[0] the child servers.
              CHECK(x.children() == (i + 1 < gpus ? 1u : 0u) + (i == 0 ? node.children() : 0u));
              CHECK(x.children() <= 3);
              if (x.parent < 0) {
                ++roots;
                CHECK(server[r] == root_server(t, servers));
                CHECK(i == 0);
                continue;
              }
              const auto p = static_cast<uint32_t>(x.parent);
              if (server[p] == server[r]) {
                CHECK(gpu[r] == (gpu[p] + 1) % gpus);  // along the chain
                CHECK(gpu[r] != j);
              } else {
                // Between servers: a server tree edge, GPU j to GPU j.
                CHECK(static_cast<int32_t>(server[p]) == node.parent);
                CHECK(gpu[r] == j);
                CHECK(gpu[p] == j);
              }
            }
            CHECK(roots == 1);
            CHECK(tree_depth(tr) == tree_depth(nodes[t]) + gpus - 1);
          }
        }
      }
    }
  }
}

TEST_CASE("tree plan over servers: bytes per rank (children + parent) x share, acyclic",
          "[quick][collective]") {
  // 3 servers of 4 GPUs, one channel, S = 24,000,000: each tree carries
  // D = S/2. Channel 0's chains are GPUs 0-3 and the servers' trees 0-2-1
  // and 1-0-2 (see above). A chain's last GPU has a parent in each tree (1
  // D each), GPUs 1 and 2 a parent and a child (2 D each). GPU 0: server
  // 0 root of tree 0 with its chain and server 2 (2 D), in tree 1 a parent
  // too (3 D); server 1 parent and chain (2 D), root of tree 1 with its
  // chain and server 0 (2 D); server 2 parent, chain and server 1 (3 D),
  // then parent and chain (2 D). In D: 5 4 4 2 | 4 4 4 2 | 5 4 4 2, 44 in
  // all = 2 (n - 1) S.
  constexpr int64_t kSlot = 512 * 1024;
  const int64_t s = 24'000'000;
  {
    const ServerLayout l = layout(3, 4);
    const CollectivePlan p = tree_plan(12, s, 1, kSlot, &l);
    std::vector<int64_t> rx(12, 0);
    for (const PlanConnection& c : p.conns) {
      for (const PlanElement& e : c.elems) rx[c.receiver] += e.bytes;
    }
    const std::vector<int64_t> d{5, 4, 4, 2, 4, 4, 4, 2, 5, 4, 4, 2};
    for (uint32_t r = 0; r < 12; ++r) CHECK(rx[r] == d[r] * (s / 2));
  }
  // In general: per channel c and tree t, a rank at chain position i of
  // server x receives (children + 1 if it has a parent) x D, D = S / (2
  // channels): children = 1 if i < g - 1, plus server x's children if
  // i = 0; a parent unless i = 0 on the root server.
  for (const uint32_t servers : {2u, 3u, 4u, 5u}) {
    for (const uint32_t gpus : {2u, 4u}) {
      for (const uint32_t channels : {1u, 3u}) {
        for (const bool shuffle : {false, true}) {
          const uint32_t n = servers * gpus;
          INFO("N=" << servers << " g=" << gpus << " channels=" << channels
                    << " shuffle=" << shuffle);
          const ServerLayout l = layout(servers, gpus, shuffle);
          std::vector<uint32_t> server(n), gpu(n);
          for (uint32_t i = 0; i < n; ++i) {
            server[l.rank[i]] = i / gpus;
            gpu[l.rank[i]] = i % gpus;
          }
          const std::array<Tree, 2> nodes = double_binary_tree(servers);
          const int64_t share = s / (2 * channels);
          std::vector<int64_t> expect(n, 0);
          for (uint32_t c = 0; c < channels; ++c) {
            for (uint32_t t = 0; t < 2; ++t) {
              for (uint32_t r = 0; r < n; ++r) {
                const uint32_t i = (gpu[r] + gpus - c % gpus) % gpus;
                const bool root = i == 0 && server[r] == root_server(t, servers);
                const uint32_t kids =
                    (i + 1 < gpus ? 1u : 0u) + (i == 0 ? nodes[t][server[r]].children() : 0u);
                expect[r] += (kids + (root ? 0 : 1)) * share;
              }
            }
          }
          const CollectivePlan p = tree_plan(n, s, channels, kSlot, &l);
          CHECK(p.steps == 2);
          REQUIRE(p.conns.size() == size_t{2} * channels * 2 * (n - 1));
          std::vector<int64_t> rx(n, 0);
          for (const PlanConnection& c : p.conns) {
            // Between servers only GPU c mod g to GPU c mod g.
            if (server[c.sender] != server[c.receiver]) {
              CHECK(gpu[c.sender] == (c.channel / 2) % gpus);
              CHECK(gpu[c.receiver] == (c.channel / 2) % gpus);
            }
            for (const PlanElement& e : c.elems) {
              CHECK(e.bytes > 0);
              CHECK(e.bytes <= kSlot);
              CHECK(e.reduce == (e.step == 0));
              CHECK(!e.relay);
              rx[c.receiver] += e.bytes;
              for (size_t d = 0; d < PlanElement::kMaxDeps && e.dep_conn[d] >= 0; ++d) {
                const PlanConnection& x = p.conns[static_cast<size_t>(e.dep_conn[d])];
                CHECK(x.channel == c.channel);
                CHECK(x.elems[e.dep_elem[d]].bytes == e.bytes);
              }
            }
          }
          int64_t total = 0;
          for (uint32_t r = 0; r < n; ++r) {
            CHECK(rx[r] == expect[r]);
            total += rx[r];
          }
          CHECK(total == 2 * int64_t{n - 1} * s);
          check_consumers(p);
          CHECK(runs_to_end(p));
        }
      }
    }
  }
}

TEST_CASE("tree plan over servers: chunks from NCCL's depth g - 1 + log2i(N)",
          "[quick][collective]") {
  // 3 servers of 4 GPUs, one channel (two tree channels), 512 KiB slots,
  // S = 12 MiB. NCCL's depth 4 - 1 + 1 = 4: 12 MiB / (2 x 512 KiB) = 12 <
  // 32, halve: 24 < 32, halve: 48, so 128 KiB chunks. Over the ranks
  // (depth log2i(12) = 3): 12 < 24, halve: 24, so 256 KiB.
  constexpr int64_t kSlot = 512 * 1024;
  const int64_t s = int64_t{12} << 20;
  const ServerLayout l = layout(3, 4);
  const auto largest = [](const CollectivePlan& p) {
    int64_t b = 0;
    for (const PlanConnection& c : p.conns) {
      for (const PlanElement& e : c.elems) b = std::max(b, e.bytes);
    }
    return b;
  };
  CHECK(largest(tree_plan(12, s, 1, kSlot, &l)) == 128 * 1024);
  CHECK(largest(tree_plan(12, s, 1, kSlot)) == 256 * 1024);
}
