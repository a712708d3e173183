#include "topologies/min_hop.h"

namespace rdmasim {

std::vector<uint32_t> min_hop_lft(const Routes& routes, uint32_t s, uint32_t num_hosts) {
  const ForwardingTable& t = routes.table(s);
  std::vector<uint32_t> lft(num_hosts, kNoPort);
  std::vector<uint32_t> load;  // destinations assigned per port so far
  for (uint32_t d = 0; d < num_hosts; ++d) {
    uint32_t best = kNoPort;
    t.for_each_port(d, [&](uint32_t p) {
      if (p >= load.size()) load.resize(p + 1, 0);
      if (best == kNoPort || load[p] < load[best] || (load[p] == load[best] && p < best)) best = p;
    });
    if (best == kNoPort) continue;
    lft[d] = best;
    ++load[best];
  }
  return lft;
}

void apply_min_hop(Routes& routes, const Topology& topo) {
  for (uint32_t s = 0; s < topo.nodes().size(); ++s) {
    if (topo.node(s).kind != NodeKind::kSwitch) continue;
    routes.table(s).set_linear(min_hop_lft(routes, s, topo.num_hosts()));
  }
}

}  // namespace rdmasim
