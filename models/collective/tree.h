// Double binary tree AllReduce (Sanders, Speck & Traff, Parallel Computing
// 2009; NCCL_ALGO=Tree since NCCL 2.4) as a CollectivePlan.
//  - Tree 0 is NCCL's binary tree over the ranks (src/graph/trees.cc,
//    ncclGetBtree): rank 0 is the root, with one child; every other rank r
//    hangs below the rank found by clearing r's lowest set bit and setting
//    the bit above it, or, if that rank does not exist, by only clearing it.
//    Even ranks are inner nodes, odd ranks leaves.
//  - Tree 1 (ncclGetDtree) is tree 0 mirrored, rank r in the place of
//    n-1-r, when n is even; when n is odd, tree 0 moved along by one rank,
//    r in the place of r-1. Either way most inner nodes of one tree are
//    leaves of the other, so each rank's links carry about the same load.
//  - Every channel runs both trees (NCCL duplicates its channels, the second
//    copy on tree 1), each on half the channel's data, on QPs of its own.
//  - Each tree reduces towards its root and broadcasts back down, chunk by
//    chunk: a rank sends chunk k up once it has chunk k from each child, and
//    forwards chunk k down once it has it from its parent; the root turns
//    the reduced chunk around. Both phases run at once on different chunks,
//    as NCCL's runTreeSplit does.
//  - Chunks are one slot (NCCL's tree uses chunkSteps = 1), halved while the
//    message is short for the tree's depth (NCCL's enqueue.cc, pattern
//    TreeUpDown): while S / (tree channels x chunk) < 8 depth and chunk >
//    128 KiB, then < 4 depth and > 64 KiB, then < depth and > 32 KiB.
// Steps: 0 the reduce (up the tree), 1 the broadcast (down).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "models/collective/plan.h"

namespace rdmasim {

// A rank's place in a tree: its parent and its children, the smaller first
// (-1: none).
struct TreeLinks {
  int32_t parent = -1;
  std::array<int32_t, 2> child{-1, -1};
  uint32_t children() const { return (child[0] >= 0 ? 1u : 0u) + (child[1] >= 0 ? 1u : 0u); }
};
using Tree = std::vector<TreeLinks>;  // indexed by rank

// NCCL's binary tree over n >= 1 ranks (ncclGetBtree).
Tree binary_tree(uint32_t n);
// NCCL's two trees over n >= 2 ranks (ncclGetDtree).
std::array<Tree, 2> double_binary_tree(uint32_t n);
// The number of edges from the root to the deepest leaf.
uint32_t tree_depth(const Tree& t);
// The chunk NCCL's tree AllReduce uses for `bytes` over `tree_channels`
// channels of trees of depth `depth`, starting from one slot.
int64_t tree_chunk_bytes(int64_t bytes, uint32_t tree_channels, uint32_t depth, int64_t slot_bytes);

// Requires n >= 2, bytes a positive multiple of 4 (float32 elements): a
// tree channel with no element has no transfer.
CollectivePlan tree_plan(uint32_t n, int64_t bytes, uint32_t channels, int64_t slot_bytes);

}  // namespace rdmasim
