// The min-hop routing engine of an InfiniBand subnet manager (OpenSM's
// default, `-R minhop`): one linear forwarding table (LFT) per switch, one
// egress port per destination, no per-flow hashing.
//
// Model (OpenSM user manual, "Min Hop Algorithm", LMC = 0):
//  - The candidates for destination d at switch s are the ports one hop
//    closer to d (the shortest-path sets of topologies/routing.h; a host
//    cabled to s is reached through its own port).
//  - Every switch visits the destinations in LID order (host-index order:
//    LIDs are assigned host by host) and gives each the candidate port that
//    has carried the fewest destinations so far, the lowest port number on a
//    tie. So ports that share a candidate set carry destination counts
//    within one of each other.
//  - Only hosts are destinations: switches' own LIDs (management traffic
//    only) are not routed, so they do not count in the balance. OpenSM's
//    preferences among equal ports for multi-LID (LMC > 0) groups and
//    distinct remote systems are not modelled.
//  - Recomputed, like the shortest paths, whenever the routes are (after a
//    fault, by the fault injector's reconvergence).
#pragma once

#include <cstdint>
#include <vector>

#include "topologies/routing.h"

namespace rdmasim {

// The LFT of switch `s` of `routes` (one port per host index, kNoPort where
// there is no path), balanced as above.
std::vector<uint32_t> min_hop_lft(const Routes& routes, uint32_t s, uint32_t num_hosts);

// Replaces every switch's candidate lists in `routes` by its min-hop LFT.
void apply_min_hop(Routes& routes, const Topology& topo);

}  // namespace rdmasim
