// FlowRoute: the links a QP's packets take across the idle fabric, found
// from the routing tables the way the switches choose (without running).
//
// Contract:
//  1. Hosts pick their egress port as RdmaNic::connect_qp does (the routes'
//     EgressSelector, for hosts with several ports); switches as
//     Switch::route does for its ECMP mode: `hash` by the flow key of the
//     packet's source, destination and UDP source port (and destination QP
//     with `hash_dest_qp`) salted with the switch's seed (ecmp_seed()).
//     `spray` and `adaptive` choose per packet while running; here the hash
//     choice stands for them (on an idle fabric `adaptive` sees equal
//     queues).
//  2. A hop is a link direction, numbered as the /links rows of the trace
//     (row 2k: topology link k from a to b; 2k+1: b to a).
#pragma once

#include <cstdint>
#include <vector>

#include "models/switch/switch_config.h"
#include "topologies/routing.h"
#include "topologies/topology.h"

namespace rdmasim {

class FlowRouter {
 public:
  // `seed` is the scenario's seed (switch ECMP seeds derive from it).
  FlowRouter(const Topology& topo, const Routes& routes, const SwitchConfig& sw, uint64_t seed);

  // The /links rows from host index `src` to host index `dst` of a QP whose
  // packets carry UDP source port `flow_hash` and destination QPN
  // `dst_qpn`; empty if the routes lead nowhere (a drop or a loop).
  std::vector<uint32_t> rows(uint32_t src, uint32_t dst, uint32_t flow_hash,
                             uint32_t dst_qpn) const;

 private:
  const Topology& topo_;
  const Routes& routes_;
  const SwitchConfig& sw_;
  std::vector<uint64_t> seeds_;  // per node id (switches)
};

}  // namespace rdmasim
