// Shortest-path routing with equal-cost multipath: for every switch and every
// destination host, all ports whose neighbour is one hop closer to the host.
// Computed once at build time by a breadth-first search (Boost.Graph) from
// each destination host.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "topologies/topology.h"

namespace rdmasim {

struct Routes {
  // next_hops[node][host_index]: egress ports of `node` towards that host.
  // Empty for host nodes (a host has one port and uses it).
  std::vector<std::vector<std::vector<uint32_t>>> next_hops;
  // Hop count (links) between host pairs is not stored; this is the first
  // pair of hosts found with no path between them, if any.
  std::optional<std::pair<uint32_t, uint32_t>> unreachable;
};

Routes compute_routes(const Topology& topo);

}  // namespace rdmasim
