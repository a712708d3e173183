// CollectivePlan: a collective as a dependency graph of chunk transfers
// between ranks, built once per algorithm (ring.h, tree.h) and run by the engine
// (collective.h) for every iteration.
//
// Contract:
//  1. A connection is one direction between two ranks in one channel: the
//     sender writes its elements, in order, into the receiver's buffer of
//     NCCL_STEPS slots; every element fits in one slot.
//  2. An element may be sent once the elements it depends on (none, one, or
//     up to kMaxDeps = 3: a tree node reduces its children's data, at most
//     NCCL_MAX_TREE_ARITY = 3 of them) have arrived at the sender, on other
//     connections, and been reduced; its arrival at the receiver feeds
//     `consumers` later elements (up to 3 where a tree node forwards to its
//     children), and its slot is freed once all of them are posted. An
//     element without consumers frees its slot as soon as it is reduced.
//  3. The graph is acyclic: in a ring, dependencies point from later to
//     earlier steps; in a tree, up the tree's edges toward the root, then
//     down them away from it. `step` is the algorithm's step the element
//     belongs to.
//  4. Rail alignment (NCCL_CROSS_NIC=0, the default on rail-optimized
//     fabrics): where the ranks are whole servers (ServerLayout), channel j
//     enters and leaves every server on rail j. Its ring runs server by
//     server, each server's GPUs from GPU j (j mod g) on, so it enters at
//     GPU j's own NIC; the server's last GPU, j - 1, reaches the NIC of
//     rail j as NCCL's PXN does: its elements go over NVLink to GPU j (a
//     relay element: the proxy forwards it unreduced, and it is not data of
//     the proxy's rank), which posts them on its NIC to GPU j of the next
//     server. Trees over whole servers (tree.h) enter and leave every
//     server of channel j at GPU j mod g (NCCL's TREE pattern), and
//     hierarchical plans (hierarchical.h) keep every network hop on one
//     rail by construction.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace rdmasim {

struct PlanElement {
  int64_t bytes = 0;
  uint32_t step = 0;
  // A tree node's children: NCCL_MAX_TREE_ARITY (src/include/device.h).
  static constexpr size_t kMaxDeps = 3;
  // The connections whose elements must arrive first (-1: none), in order.
  std::array<int32_t, kMaxDeps> dep_conn{-1, -1, -1};
  std::array<uint32_t, kMaxDeps> dep_elem{0, 0, 0};
  uint8_t consumers = 0;  // later elements that forward this one (at most kMaxDeps)
  bool reduce = false;    // reduced into the receiver's data on arrival (costs reduce time)
  // Received by a PXN proxy (rule 4): forwarded, not the receiver's data, so
  // not in its received bytes or step records.
  bool relay = false;
};

struct PlanConnection {
  uint32_t sender = 0, receiver = 0;  // ranks
  uint32_t channel = 0;
  std::vector<PlanElement> elems;
};

// The ranks as whole servers (plan.h rule 4): rank[s * gpus + l] is the rank
// on GPU l of server s; servers in the order their first rank appears, GPUs
// in the server's own order (GPU l on rail l of a rail-optimized fabric).
struct ServerLayout {
  uint32_t gpus = 0;
  std::vector<uint32_t> rank;
  uint32_t servers() const { return gpus == 0 ? 0 : static_cast<uint32_t>(rank.size() / gpus); }
  bool operator==(const ServerLayout&) const = default;
};

struct CollectivePlan {
  uint32_t ranks = 0;
  uint32_t steps = 0;  // the algorithm's steps (ring AllReduce: 2(n-1); tree: 2;
                       // hierarchical: 2(g-1) + 2(N-1))
  std::vector<PlanConnection> conns;
};

}  // namespace rdmasim
