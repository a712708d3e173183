// The double binary tree (models/collective/tree.h) against NCCL's own
// drawings of its trees (the comments above ncclGetBtree and ncclGetDtree
// in NCCL's src/graph/trees.cc, for 12 and 13 ranks), its chunk rule
// (enqueue.cc, pattern TreeUpDown) worked by hand, and the bytes each rank
// receives, derived from the tree's shape.
#include <catch2/catch.hpp>
#include <map>
#include <vector>

#include "models/collective/tree.h"

using namespace rdmasim;

namespace {

// parent -> children, as drawn.
using Drawing = std::map<int32_t, std::vector<int32_t>>;

void check_tree(const Tree& t, int32_t root, const Drawing& drawn) {
  const auto n = static_cast<int32_t>(t.size());
  for (int32_t r = 0; r < n; ++r) {
    INFO("rank " << r);
    const TreeLinks& l = t[static_cast<size_t>(r)];
    if (r == root) CHECK(l.parent == -1);
    std::vector<int32_t> kids;
    for (const int32_t c : l.child) {
      if (c >= 0) kids.push_back(c);
    }
    const auto it = drawn.find(r);
    CHECK(kids == (it == drawn.end() ? std::vector<int32_t>{} : it->second));
    for (const int32_t c : kids) CHECK(t[static_cast<size_t>(c)].parent == r);
  }
}

}  // namespace

TEST_CASE("double binary trees as NCCL draws them (12 ranks mirrored, 13 shifted)",
          "[quick][collective]") {
  {
    const std::array<Tree, 2> d = double_binary_tree(12);
    check_tree(d[0], 0,
               {{0, {8}}, {8, {4, 10}}, {4, {2, 6}}, {2, {1, 3}}, {6, {5, 7}}, {10, {9, 11}}});
    // Mirrored: r in the place of 11 - r.
    check_tree(d[1], 11,
               {{11, {3}}, {3, {1, 7}}, {1, {0, 2}}, {7, {5, 9}}, {5, {4, 6}}, {9, {8, 10}}});
    CHECK(tree_depth(d[0]) == 4);
  }
  {
    const std::array<Tree, 2> d = double_binary_tree(13);
    check_tree(
        d[0], 0,
        {{0, {8}}, {8, {4, 12}}, {4, {2, 6}}, {12, {10}}, {2, {1, 3}}, {6, {5, 7}}, {10, {9, 11}}});
    // Shifted by one: r in the place of r - 1.
    check_tree(
        d[1], 1,
        {{1, {9}}, {9, {0, 5}}, {5, {3, 7}}, {0, {11}}, {3, {2, 4}}, {7, {6, 8}}, {11, {10, 12}}});
  }
  // Two ranks: each the root of one tree and the leaf of the other.
  const std::array<Tree, 2> two = double_binary_tree(2);
  check_tree(two[0], 0, {{0, {1}}});
  check_tree(two[1], 1, {{1, {0}}});
}

TEST_CASE("tree chunks follow NCCL's rule for short messages", "[quick][collective]") {
  constexpr int64_t kSlot = 512 * 1024;
  // 8 ranks: depth 3 (0-4-2-1); one channel: two tree channels.
  CHECK(tree_depth(binary_tree(8)) == 3);
  // 64 MiB / (2 x 512 KiB) = 64 >= 8 x 3: one slot.
  CHECK(tree_chunk_bytes(int64_t{64} << 20, 2, 3, kSlot) == kSlot);
  // 16 MiB: 16 < 24, halve to 256 KiB: 32, done.
  CHECK(tree_chunk_bytes(int64_t{16} << 20, 2, 3, kSlot) == 256 * 1024);
  // 1 MiB: 1, 2 < 24 down to 128 KiB (the first rule's floor); 4 < 12,
  // halve to 64 KiB (the second's floor); 8 >= 3.
  CHECK(tree_chunk_bytes(int64_t{1} << 20, 2, 3, kSlot) == 64 * 1024);
  // 64 KiB: then 1 < 3, halve to 32 KiB (the third's floor).
  CHECK(tree_chunk_bytes(64 * 1024, 2, 3, kSlot) == 32 * 1024);
  // A slot already below the floors is kept.
  CHECK(tree_chunk_bytes(64, 2, 3, 8192) == 8192);
}

TEST_CASE("tree plans: bytes per rank from the trees' shape, dependencies along the edges",
          "[quick][collective]") {
  // 8 ranks (n even, tree 1 mirrored). Tree 0: 0-4, 4-{2,6}, 2-{1,3},
  // 6-{5,7}; tree 1: 7-3, 3-{1,5}, 1-{0,2}, 5-{4,6}. In a tree carrying D
  // bytes a rank receives D from each child (reduce) and D from its parent
  // (broadcast). Each tree carries S/2, so rank 0 (root with one child in
  // tree 0, leaf in tree 1) and rank 7 receive S; rank 4 (inner node of
  // tree 0, two children, and a leaf of tree 1) receives 3 S/2 + S/2 = 2S;
  // so do 1, 2, 3, 5, 6. In all, 2 x 2(n-1) edges x S/2 = 2(n-1) S.
  const uint32_t n = 8;
  for (const uint32_t channels : {1u, 3u}) {
    for (const int64_t slot : {int64_t{512} * 1024, int64_t{8192}}) {
      INFO("channels " << channels << " slot " << slot);
      // Halves over 2 x channels tree channels evenly, but not a multiple
      // of the chunk: the last chunk of each is shorter.
      const int64_t s = 24'000'000;
      const CollectivePlan p = tree_plan(n, s, channels, slot);
      CHECK(p.steps == 2);
      REQUIRE(p.conns.size() == size_t{2} * channels * 2 * (n - 1));
      std::vector<int64_t> rx(n, 0);
      for (const PlanConnection& c : p.conns) {
        for (const PlanElement& e : c.elems) {
          CHECK(e.bytes > 0);
          CHECK(e.bytes <= slot);
          rx[c.receiver] += e.bytes;
          CHECK(e.reduce == (e.step == 0));
          // Each dependency arrives at the sender, on the same tree channel,
          // the same chunk.
          for (size_t d = 0; d < 2; ++d) {
            if (e.dep_conn[d] < 0) continue;
            const PlanConnection& x = p.conns[static_cast<size_t>(e.dep_conn[d])];
            CHECK(x.receiver == c.sender);
            CHECK(x.channel == c.channel);
            CHECK(x.elems[e.dep_elem[d]].bytes == e.bytes);
          }
        }
      }
      for (uint32_t r = 0; r < n; ++r) {
        INFO("rank " << r);
        // S/2 per tree, split over the channels: the whole S per tree pair.
        CHECK(rx[r] == (r == 0 || r == 7 ? s : 2 * s));
      }
    }
  }
}
