// Bisection bandwidth of a generated fabric, as `rdmasim topo --summary`
// prints it (docs/topologies.md#bisection-bandwidth).
//
// Contract:
//  1. split_capacity() is the maximum flow from the first floor(N/2) hosts of
//     `order` to the other hosts, over working (not failed) network links,
//     each direction of a cable carrying its rate; NVLink links do not count.
//  2. bisection_bandwidth() is split_capacity() in host-index order or, when
//     the topology has rails, the smaller of that and the same in rail order.
//  3. Both cost a max-flow over the whole graph: compute them where they are
//     printed, not on every load.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/units.h"
#include "topologies/topology.h"

namespace rdmasim {

BitRate split_capacity(const Topology& t, const std::vector<uint32_t>& order);

// Host indices in rail order: rail 0's hosts, rail 1's, ..., then the hosts in
// no rail (a management host), each in host-index order; empty without rails.
std::vector<uint32_t> rail_order(const Topology& t);

BitRate bisection_bandwidth(const Topology& t);

}  // namespace rdmasim
