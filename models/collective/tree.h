// Double binary tree AllReduce (Sanders, Speck & Traff, Parallel Computing
// 2009; NCCL_ALGO=Tree since NCCL 2.4) as a CollectivePlan.
//  - Tree 0 is NCCL's binary tree over the tree's nodes (src/graph/trees.cc,
//    ncclGetBtree): node 0 is the root, with one child; every other node x
//    hangs below the node found by clearing x's lowest set bit and setting
//    the bit above it, or, if that node does not exist, by only clearing it.
//    Even nodes are inner nodes, odd nodes leaves.
//  - Tree 1 (ncclGetDtree) is tree 0 mirrored, node x in the place of
//    N-1-x, when N is even; when N is odd, tree 0 moved along by one node,
//    x in the place of x-1. Either way most inner nodes of one tree are
//    leaves of the other, so each node's links carry about the same load.
//  - The nodes are the servers where the ranks are whole servers of g >= 2
//    GPUs (the layout rail-aligned rings follow, plan.h rule 4), else the
//    ranks. On servers (src/graph/connect.cc, ncclTopoPreset and
//    connectTrees), channel c chains each server's GPUs in the order intra[i]
//    = GPU (c + i) mod g: intra[i]'s parent is intra[i-1], its child
//    intra[i+1]. NCCL connects a server to its parent and children through
//    chain positions its topology search picks by pattern; the model takes
//    NCCL_TOPO_PATTERN_TREE, where parent and both child servers attach at
//    intra[0]. So a rank has up to 3 children (NCCL_MAX_TREE_ARITY), every
//    hop between servers in channel c joins the GPUs c mod g of two servers,
//    on one rail, and a tree's root is intra[0] of its root server.
//  - Every channel runs both trees (NCCL duplicates its channels, the second
//    copy on tree 1, with the same chain), each on half the channel's data,
//    on QPs of its own.
//  - Each tree reduces towards its root and broadcasts back down, chunk by
//    chunk: a rank sends chunk k up once it has chunk k from each child, and
//    forwards chunk k down once it has it from its parent; the root turns
//    the reduced chunk around. Both phases run at once on different chunks,
//    as NCCL's runTreeSplit does.
//  - Chunks are one slot (NCCL's tree uses chunkSteps = 1), halved while the
//    message is short for the tree's depth (NCCL's enqueue.cc, pattern
//    TreeUpDown): while S / (tree channels x chunk) < 8 depth and chunk >
//    128 KiB, then < 4 depth and > 64 KiB, then < depth and > 32 KiB; the
//    depth is NCCL's estimate g - 1 + floor(log2 N) (connectTrees; g = 1
//    over the ranks).
// Steps: 0 the reduce (up the tree), 1 the broadcast (down).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "models/collective/plan.h"

namespace rdmasim {

// NCCL_MAX_TREE_ARITY (src/include/device.h): a chain successor and two
// child servers.
inline constexpr size_t kMaxTreeArity = PlanElement::kMaxDeps;

// A node's or rank's place in a tree: its parent and its children, packed
// at the front (-1: none). In a binary tree the smaller child comes first;
// in a tree over servers, the chain successor, then the child servers'
// ranks, the smaller server first (NCCL's down[] order, setTreeDown).
struct TreeLinks {
  int32_t parent = -1;
  std::array<int32_t, kMaxTreeArity> child{-1, -1, -1};
  uint32_t children() const {
    uint32_t k = 0;
    while (k < child.size() && child[k] >= 0) ++k;
    return k;
  }
  bool operator==(const TreeLinks&) const = default;
};
using Tree = std::vector<TreeLinks>;  // indexed by node or rank

// NCCL's binary tree over n >= 1 nodes (ncclGetBtree).
Tree binary_tree(uint32_t n);
// NCCL's two trees over n >= 2 nodes (ncclGetDtree).
std::array<Tree, 2> double_binary_tree(uint32_t n);
// The two trees over the ranks in channel c: the double binary tree over
// the n ranks, or, with `servers` (at least 2 servers of at least 2 GPUs),
// over the servers with channel c's chain inside each.
std::array<Tree, 2> channel_trees(uint32_t n, const ServerLayout* servers, uint32_t c);
// The number of edges from the root to the deepest leaf.
uint32_t tree_depth(const Tree& t);
// NCCL's depth estimate for the chunk rule (connectTrees): nRanks/nNodes -
// 1 + log2i(nNodes); floor(log2 n) with one rank per node.
uint32_t nccl_tree_depth(uint32_t ranks, uint32_t nodes);
// The chunk NCCL's tree AllReduce uses for `bytes` over `tree_channels`
// channels of trees of depth `depth`, starting from one slot.
int64_t tree_chunk_bytes(int64_t bytes, uint32_t tree_channels, uint32_t depth, int64_t slot_bytes);

// Requires n >= 2, bytes a positive multiple of 4 (float32 elements: a tree
// channel with no element has no transfer); `servers`, if
// given, of n ranks in at least 2 servers of at least 2 GPUs. Per tree
// channel j = 2c + t (channel c, tree t), connections 2(n-1): for each rank
// but the root, in rank order, the one up to its parent, then the one down.
CollectivePlan tree_plan(uint32_t n, int64_t bytes, uint32_t channels, int64_t slot_bytes,
                         const ServerLayout* servers = nullptr);

}  // namespace rdmasim
