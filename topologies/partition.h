// Partitioning a topology for a run on several threads (sim/simulation.h
// contract 5): which partition each node runs in.
//
// Contract:
//  1. Hosts are split into `parts` contiguous blocks by host index (host
//     indices follow the topology's own order: pods, racks, rails) of about
//     equal weight. A host's weight estimates its share of the work: the
//     caller gives it (e.g. from the bytes the traffic sends to and from
//     it, so the receiver of an incast weighs as much as many senders), or
//     all hosts weigh the same. A host goes to the block its weight's
//     midpoint falls in. Hosts of one group (TopoNode::group) stay
//     together, in the first one's partition, if the links inside the group
//     are shorter than its links out and it is no larger than a partition's
//     share of hosts (rounded up): cutting a server's NVLinks would make the lookahead
//     their 100 ns, while a fat-tree's pods (links all alike) may be split
//     for balance. (A partition can end up with no host, or nothing at all.)
//  2. Switches then join, layer by layer outwards from the hosts, the
//     partition most of their already placed neighbours (counted per link)
//     are in; ties go to the partition with the fewest switches so far, then
//     to the lowest index. So a fat-tree with equal traffic per host splits
//     by pods, with the core switches shared out evenly, and only core links
//     cross partitions.
//  3. Deterministic: a function of the topology and `parts` only.
#pragma once

#include <cstdint>
#include <vector>

#include "topologies/topology.h"

namespace rdmasim {

// The partition (0..parts-1) of every node, by node id. parts >= 1;
// host_weight: by host index, positive (empty: all equal).
std::vector<uint32_t> partition_nodes(const Topology& topo, uint32_t parts,
                                      const std::vector<int64_t>& host_weight = {});

}  // namespace rdmasim
