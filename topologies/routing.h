// Shortest-path routing with equal-cost multipath, computed once at build.
//
// Model:
//  - Hosts never forward: a path runs host -> switches -> host.
//  - An *attachment group* is a switch with at least one host cabled to it
//    (a leaf, a rail leaf, an NVSwitch). One breadth-first search per group
//    over the switch graph (Boost.Graph, compressed sparse rows) gives every
//    switch its hop count to the group and the ports one hop closer.
//  - Switch tables are keyed by group, not by host, so they grow as switches
//    x groups (e.g. 2,048 x 1,024 for a 32,768-host three-tier tree) and the
//    port sets are interned per switch (models/switch/forwarding_table.h).
//  - A host with several ports (a GPU with its NIC and its NVLink, a
//    dual-plane NIC) sends each flow out of a port on a shortest path, chosen
//    by the flow's hash among ties (egress_port()).
//  - Failed links are ignored. Static routes from the scenario replace the
//    computed ones at their switch, for their destination.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "models/nic/rdma_nic.h"
#include "models/switch/forwarding_table.h"
#include "topologies/topology.h"

namespace rdmasim {

// How switches choose among the shortest paths: kEcmp keeps every
// equal-cost port and hashes flows over them (Ethernet); kMinHop gives each
// destination one port, balanced per switch (InfiniBand's linear forwarding
// tables, topologies/min_hop.h).
enum class RoutingEngine : uint8_t { kEcmp, kMinHop };

// A static route: at `node`, packets for host `dst` leave by `ports`.
struct StaticRoute {
  uint32_t node;
  uint32_t dst;  // host index
  std::vector<uint32_t> ports;
};

class Routes : public EgressSelector {
 public:
  Routes() = default;

  // One table per node id; hosts' tables are empty.
  const ForwardingTable& table(uint32_t node) const { return tables_[node]; }
  ForwardingTable& table(uint32_t node) { return tables_[node]; }
  const std::shared_ptr<const HostAttachments>& hosts() const { return hosts_; }
  uint32_t num_groups() const { return static_cast<uint32_t>(group_switch_.size()); }
  uint32_t group_switch(uint32_t g) const { return group_switch_[g]; }

  // Switches on a shortest path from host src to host dst (0 for hosts cabled
  // to each other), or nullopt if there is none.
  std::optional<uint32_t> switch_hops(uint32_t src, uint32_t dst) const;
  // The egress port of host src for a flow to dst with hash `flow_hash`: one
  // of the ports on a shortest path, the same for the same hash.
  uint32_t egress_port(uint32_t src, uint32_t dst, uint64_t flow_hash) const override;
  bool reachable(uint32_t src, uint32_t dst) const override {
    return egress_port_count(src, dst) > 0;
  }
  // Number of equal-cost egress ports of host src towards dst.
  uint32_t egress_port_count(uint32_t src, uint32_t dst) const;

  // The first pair of hosts (by index, lower first) with no path, if any.
  const std::optional<std::pair<uint32_t, uint32_t>>& unreachable() const { return unreachable_; }

 private:
  friend Routes compute_routes(const Topology&, const std::vector<StaticRoute>&, RoutingEngine);
  // Cost of reaching dst from host src's attachment `a`, in switches crossed
  // after a (0 when a is dst itself or dst hangs off a).
  uint32_t attachment_cost(const HostAttachments::Attachment& a, uint32_t dst) const;

  std::vector<ForwardingTable> tables_;
  std::shared_ptr<const HostAttachments> hosts_;
  std::vector<uint32_t> group_switch_;
  std::optional<std::pair<uint32_t, uint32_t>> unreachable_;
};

Routes compute_routes(const Topology& topo, const std::vector<StaticRoute>& static_routes = {},
                      RoutingEngine engine = RoutingEngine::kEcmp);

}  // namespace rdmasim
