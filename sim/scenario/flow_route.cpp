#include "sim/scenario/flow_route.h"

#include "models/switch/switch.h"

namespace rdmasim {

FlowRouter::FlowRouter(const Topology& topo, const Routes& routes, const SwitchConfig& sw,
                       uint64_t seed)
    : topo_(topo), routes_(routes), sw_(sw), seeds_(topo.nodes().size(), 0) {
  for (uint32_t id = 0; id < topo.nodes().size(); ++id) {
    if (topo.node(id).kind == NodeKind::kSwitch)
      seeds_[id] = ecmp_seed(seed, topo.node(id).name, sw);
  }
}

std::vector<uint32_t> FlowRouter::rows(uint32_t src, uint32_t dst, uint32_t flow_hash,
                                       uint32_t dst_qpn) const {
  std::vector<uint32_t> out;
  const uint32_t from = topo_.hosts()[src];
  const uint32_t to = topo_.hosts()[dst];
  // RdmaNic::connect_qp: a NIC with one port sends by it.
  uint32_t node = from;
  uint32_t port = topo_.node(from).num_ports > 1 ? routes_.egress_port(src, dst, flow_hash) : 0;
  // Switch::route (hash mode): the entropy and the flow key.
  const uint32_t entropy = sw_.hash_dest_qp ? flow_hash ^ (dst_qpn * 0x9e3779b1U) : flow_hash;
  for (size_t hop = 0; hop <= topo_.nodes().size(); ++hop) {
    const Topology::Adjacent& adj = topo_.adjacency()[node][port];
    const TopoLink& l = topo_.links()[adj.link];
    out.push_back(l.a == node ? 2 * adj.link : 2 * adj.link + 1);
    node = adj.neighbor;
    if (node == to) return out;
    if (topo_.node(node).kind != NodeKind::kSwitch) break;  // hosts never forward
    const int64_t p = routes_.table(node).select(dst, ecmp_key(seeds_[node], src, dst, entropy));
    if (p < 0) break;
    port = static_cast<uint32_t>(p);
  }
  return {};
}

}  // namespace rdmasim
