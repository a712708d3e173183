#include "sim/scenario/fabric_builder.h"

#include <stdexcept>

namespace rdmasim {

std::vector<const Link*> Fabric::link_directions() const {
  std::vector<const Link*> links;
  links.reserve(2 * cables.size());
  for (const Cable& c : cables) {
    links.push_back(c.a_to_b);
    links.push_back(c.b_to_a);
  }
  return links;
}

Fabric build_fabric(Simulation& sim, const Scenario& sc, const ScenarioFormat& formats) {
  const TransportFormat& format = formats.get();
  const Topology& topo = sc.topology;
  Fabric f;
  f.nodes.resize(topo.nodes().size());
  f.nics.resize(topo.num_hosts());
  f.switch_of_node.assign(topo.nodes().size(), nullptr);
  for (uint32_t id = 0; id < topo.nodes().size(); ++id) {
    const TopoNode& n = topo.node(id);
    if (n.kind == NodeKind::kHost) {
      RdmaNic& nic = sim.add<RdmaNic>(n.name, n.host_index, sc.fabric.nic, format);
      nic.set_egress_selector(&sc.routes);
      nic.set_lossless(sc.fabric.sw.pfc.lossless_mask, sc.fabric.sw.max_frame);
      f.nics[n.host_index] = &nic;
      f.nodes[id] = &nic;
    } else {
      f.switch_of_node[id] =
          &sim.add<Switch>(n.name, n.tier == Tier::kNvSwitch ? sc.fabric.nvswitch : sc.fabric.sw);
      f.switches.push_back(f.switch_of_node[id]);
      f.nodes[id] = f.switch_of_node[id];
    }
  }
  f.cables.reserve(topo.links().size());
  for (const TopoLink& l : topo.links()) {
    f.cables.push_back(connect(sim, *f.nodes[l.a], *f.nodes[l.b], l.rate, l.delay));
    if (f.cables.back().a_port != l.a_port || f.cables.back().b_port != l.b_port) {
      throw std::logic_error("port numbering differs between topology and devices");
    }
    if (l.kind == LinkKind::kNvlink) {
      // NVLink framing at the GPU end (contract 4); the NVSwitch end frames
      // nothing of its own, and its config has no PFC.
      for (const auto& [node, port] : {std::pair{l.a, l.a_port}, std::pair{l.b, l.b_port}}) {
        if (topo.node(node).kind == NodeKind::kHost)
          f.nics[topo.node(node).host_index]->set_port_format(port, formats.nvlink());
      }
    }
  }
  if (sc.fabric.transport == Transport::kInfiniband) {
    // Every IB port, at both ends of every cable, runs credits instead of
    // PFC (docs/infiniband.md).
    // A switch port facing a host takes OpenSM's leaf lifetime.
    auto credit = [&](uint32_t node, uint32_t port, uint32_t peer) {
      if (f.switch_of_node[node] != nullptr) {
        const bool leaf = topo.node(peer).kind == NodeKind::kHost;
        f.switch_of_node[node]->use_credits(
            port, sc.fabric.credits,
            hoq_lifetime(leaf ? sc.fabric.leaf_hoq_lifetime : sc.fabric.hoq_lifetime),
            &sc.fabric.ib_qos_swe);
      } else {
        f.nics[topo.node(node).host_index]->use_credits(port, sc.fabric.credits,
                                                        &sc.fabric.ib_qos_ca);
      }
    };
    for (const TopoLink& l : topo.links()) {
      if (l.kind == LinkKind::kNvlink) continue;  // NVLink: lossless without credits
      credit(l.a, l.a_port, l.b);
      credit(l.b, l.b_port, l.a);
    }
  }
  if (sc.fabric.sw.forwarding == Forwarding::kCutThrough) {
    // Links into switches deliver frames once their headers are in.
    for (size_t i = 0; i < f.cables.size(); ++i) {
      const TopoLink& l = topo.links()[i];
      if (l.kind == LinkKind::kNvlink) continue;  // the NVSwitch stores and forwards
      if (topo.node(l.b).kind == NodeKind::kSwitch)
        f.cables[i].a_to_b->set_cut_through(sc.fabric.sw.cut_through_bytes);
      if (topo.node(l.a).kind == NodeKind::kSwitch)
        f.cables[i].b_to_a->set_cut_through(sc.fabric.sw.cut_through_bytes);
    }
  }
  for (uint32_t id = 0; id < topo.nodes().size(); ++id) {
    if (f.switch_of_node[id] != nullptr) {
      f.switch_of_node[id]->set_forwarding_table(sc.routes.table(id));
      // A frame cut through from the slowest link keeps every later port
      // busy at that pace: the headroom covers it (docs/switch.md).
      f.switch_of_node[id]->set_slowest_ingress(topo.slowest_network_rate());
    }
  }
  for (const auto& [node, rule] : sc.rewrites) f.switch_of_node[node]->add_rewrite(rule);
  // A failed link (topology.failed_links) is down for the whole run: routing
  // leaves it out, and a frame a static route sends into it is lost (an
  // InfiniBand switch discards it: Switch::setup() sees the cable down).
  for (size_t i = 0; i < f.cables.size(); ++i) {
    if (!topo.links()[i].failed) continue;
    const Cable& c = f.cables[i];
    c.a_to_b->set_up(false);
    c.b_to_a->set_up(false);
  }
  return f;
}

}  // namespace rdmasim
