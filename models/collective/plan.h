// CollectivePlan: a collective as a dependency graph of chunk transfers
// between ranks, built once per algorithm (ring.h) and run by the engine
// (collective.h) for every iteration.
//
// Contract:
//  1. A connection is one direction between two ranks in one channel: the
//     sender writes its elements, in order, into the receiver's buffer of
//     NCCL_STEPS slots; every element fits in one slot.
//  2. An element may be sent once the element it depends on (if any) has
//     arrived at the sender, on another connection, and been reduced; its
//     arrival at the receiver feeds at most one later element (its
//     consumer), whose posting frees its slot. An element without a
//     consumer frees its slot as soon as it is reduced.
//  3. Dependencies point from later to earlier steps, so the graph is
//     acyclic; `step` is the algorithm's step the element belongs to.
#pragma once

#include <cstdint>
#include <vector>

namespace rdmasim {

struct PlanElement {
  int64_t bytes = 0;
  uint32_t step = 0;
  int32_t dep_conn = -1;  // the connection whose element must arrive first; -1: none
  uint32_t dep_elem = 0;
  int32_t consumer_conn = -1;  // the connection whose element forwards this one; -1: none
  uint32_t consumer_elem = 0;
  bool reduce = false;  // reduced into the receiver's data on arrival (costs reduce time)
};

struct PlanConnection {
  uint32_t sender = 0, receiver = 0;  // ranks
  uint32_t channel = 0;
  std::vector<PlanElement> elems;
};

struct CollectivePlan {
  uint32_t ranks = 0;
  uint32_t steps = 0;  // the algorithm's steps (ring AllReduce: 2(n-1))
  std::vector<PlanConnection> conns;
};

}  // namespace rdmasim
