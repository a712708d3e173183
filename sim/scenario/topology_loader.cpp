// Reads scenario key `topology` (docs/topologies.md): picks the generator,
// reads its parameters, builds the graph, applies failed links and static
// routes. Generator errors come back as ScenarioErrors naming the JSON path.
#include <algorithm>
#include <string>

#include "sim/scenario/host_set.h"
#include "sim/scenario/input_limits.h"
#include "sim/scenario/loader_parts.h"
#include "topologies/generators.h"
#include "topologies/topology_params.h"

namespace rdmasim {
namespace {

using nlohmann::json;

// Reads an array of unique node names into the topology.
std::vector<uint32_t> read_names(JsonReader& r, const std::string& key, bool required, bool hosts,
                                 Topology& t) {
  std::vector<uint32_t> ids;
  const auto items = r.array(key);
  if (required && items.empty()) r.fail(key, "empty", "at least one name");
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string path = r.path_of(key) + "[" + std::to_string(i) + "]";
    if (!items[i]->is_string() || items[i]->get<std::string>().empty()) {
      throw ScenarioError(path + ": " + show(*items[i]) +
                          " is not a name (expected a non-empty string)");
    }
    const std::string name = items[i]->get<std::string>();
    if (t.find(name)) {
      throw ScenarioError(path + ": \"" + name + "\" is already used (expected unique names)");
    }
    ids.push_back(hosts ? t.add_host(name) : t.add_switch(name));
  }
  return ids;
}

uint32_t node_named(JsonReader& r, const std::string& key, const Topology& t) {
  const std::string name = r.string(key);
  auto id = t.find(name);
  if (!id) r.fail(key, "\"" + name + "\" is not a node", "a node name of this topology");
  return *id;
}

TopologyInfo read_graph(JsonReader& r, const LinkSpec& def, Topology& t) {
  const std::vector<uint32_t> hosts = read_names(r, "hosts", true, true, t);
  read_names(r, "switches", false, false, t);
  for (JsonReader& l : r.objects("links")) {
    const uint32_t a = node_named(l, "a", t);
    const uint32_t b = node_named(l, "b", t);
    if (a == b) l.fail("b", "same node as a", "two different nodes");
    const LinkSpec spec = read_link(l, def);
    l.finish();
    t.add_link(a, b, spec.rate, spec.delay);
  }
  for (size_t i = 0; i < hosts.size(); ++i) {
    const TopoNode& n = t.node(hosts[i]);
    if (n.num_ports == 0) {
      throw ScenarioError(r.path_of("hosts") + "[" + std::to_string(i) + "]: host \"" + n.name +
                          "\" has no link (expected at least one link per host)");
    }
  }
  TopologyInfo info;
  info.kind = "graph";
  return info;
}

// A topology of more than kMaxTopologyNodes nodes is refused, before it is
// generated where its size follows from its parameters (docs/reliability.md).
void check_node_count(uint64_t hosts, uint64_t switches) {
  if (hosts + switches <= kMaxTopologyNodes) return;
  throw ScenarioError("topology: " + std::to_string(hosts + switches) + " nodes (" +
                      std::to_string(hosts) + " hosts, " + std::to_string(switches) +
                      " switches) are more than the limit of " + std::to_string(kMaxTopologyNodes) +
                      " (expected a smaller topology; docs/reliability.md#input-limits)");
}

void check_node_count(const FatTreeConfig& c) {
  const uint64_t leaves = c.tiers == 3 ? uint64_t{c.pods} * c.leaves_per_pod : uint64_t{c.leaves};
  const uint64_t switches =
      c.tiers == 3 ? leaves + uint64_t{c.pods} * c.spines_per_pod + c.cores : leaves + c.spines;
  check_node_count(leaves * c.hosts_per_leaf, switches);
}

TopologyInfo read_fat_tree(JsonReader& r, const LinkSpec& def, Topology& t) {
  FatTreeConfig c;
  if (r.has("k")) {
    const auto k = static_cast<uint32_t>(r.integer("k"));
    c = k_ary_fat_tree(k, read_link_object(r.object("link"), def));
    r.read(c);  // nothing else applies: given, it is an error
    check_node_count(c);
    return build_fat_tree(c, t);
  }
  r.read(c);
  check_node_count(c);
  if (c.tiers == 3) c.core_link = read_link_object(r.object("core_link"), def);
  c.host_link = read_link_object(r.object("host_link"), def);
  c.leaf_link = read_link_object(r.object("leaf_link"), def);
  return build_fat_tree(c, t);
}

TopologyInfo read_rail_optimized(JsonReader& r, const LinkSpec& def, Topology& t) {
  RailOptimizedConfig c;
  r.read(c);
  c.nic_link = read_link_object(r.object("nic_link"), def);
  c.leaf_link = read_link_object(r.object("leaf_link"), def);
  c.core_link = read_link_object(r.object("core_link"), def);
  c.nvlink = read_link_object(r.object("nvlink"), c.nvlink);
  c.pcie = read_link_object(r.object("pcie"), c.pcie);
  return build_rail_optimized(c, t);
}

// failed_links: [{"a": NAME, "b": NAME}]: every link between the two fails.
void read_failed_links(JsonReader& r, Topology& t) {
  for (JsonReader& f : r.objects("failed_links")) {
    const uint32_t a = node_named(f, "a", t);
    const uint32_t b = node_named(f, "b", t);
    f.finish();
    bool any = false;
    for (uint32_t i = 0; i < t.links().size(); ++i) {
      const TopoLink& l = t.links()[i];
      if ((l.a == a && l.b == b) || (l.a == b && l.b == a)) {
        t.fail_link(i);
        any = true;
      }
    }
    if (!any)
      f.fail("b", "no link joins \"" + t.node(a).name + "\" and \"" + t.node(b).name + "\"",
             "two nodes with a link between them");
  }
}

// routes: [{"at": SWITCH, "dst": HOST or [HOSTS], "via": [NEIGHBOURS]} or "ports": [N]]
void read_static_routes(JsonReader& r, const Topology& t, bool infiniband,
                        std::vector<StaticRoute>& out) {
  for (JsonReader& e : r.objects("routes")) {
    const uint32_t at = node_named(e, "at", t);
    if (t.node(at).kind != NodeKind::kSwitch)
      e.fail("at", "\"" + t.node(at).name + "\" is a host", "a switch");
    std::vector<uint32_t> dsts;
    const json* d = e.raw("dst");
    if (d == nullptr) e.fail("dst", "missing", "a host, or an array of hosts");
    // One host (a number is a host index here, not a count), or a host set.
    if ((d->is_string() && *d != "all") || d->is_number()) {
      dsts.push_back(parse_host(*d, e.path_of("dst"), t));
    } else {
      dsts = parse_host_set(*d, e.path_of("dst"), t, HostSetRules::at_least(1), nullptr);
    }
    e.resolve("dst", *d);
    std::vector<uint32_t> ports;
    const auto& adj = t.adjacency()[at];
    if (e.has("via") == e.has("ports"))
      e.fail("via", "give exactly one of via and ports",
             "\"via\": [neighbour names] or \"ports\": [numbers]");
    if (e.has("via")) {
      const auto via = e.array("via");
      for (size_t i = 0; i < via.size(); ++i) {
        const std::string path = e.path_of("via") + "[" + std::to_string(i) + "]";
        auto id = via[i]->is_string() ? t.find(via[i]->get<std::string>()) : std::nullopt;
        bool found = false;
        for (uint32_t p = 0; id && p < adj.size(); ++p) {
          if (adj[p].neighbor == *id) {
            ports.push_back(p);
            found = true;
          }
        }
        if (!found)
          throw ScenarioError(path + ": " + show(*via[i]) + " is not a neighbour of \"" +
                              t.node(at).name + "\" (expected a node it has a link to)");
      }
    } else {
      const auto list = e.array("ports");
      for (size_t i = 0; i < list.size(); ++i) {
        if (!list[i]->is_number_unsigned() || list[i]->get<uint64_t>() >= adj.size()) {
          throw ScenarioError(e.path_of("ports") + "[" + std::to_string(i) +
                              "]: " + show(*list[i]) + " is not a port of \"" + t.node(at).name +
                              "\" (expected 0 to " + std::to_string(adj.size() - 1) + ")");
        }
        ports.push_back(static_cast<uint32_t>(list[i]->get<uint64_t>()));
      }
    }
    // An InfiniBand switch's linear forwarding table gives one output port
    // per destination LID (IBA §18.2.4.3.2): no spreading among several.
    if (infiniband && ports.size() > 1) {
      const char* key = e.has("via") ? "via" : "ports";
      e.fail(key,
             std::to_string(ports.size()) + " ports of \"" + t.node(at).name +
                 "\" on InfiniBand, where a forwarding table entry is one port",
             "one neighbour over one cable, or one port");
    }
    e.finish();
    for (uint32_t dst : dsts) out.push_back(StaticRoute{at, dst, ports});
  }
}

// Ports of `at` whose neighbour is one of the names in key (a list).
std::vector<uint32_t> ports_towards(JsonReader& e, const std::string& key, uint32_t at,
                                    const Topology& t) {
  std::vector<uint32_t> ports;
  const auto& adj = t.adjacency()[at];
  const auto names = e.array(key);
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string path = e.path_of(key) + "[" + std::to_string(i) + "]";
    auto id = names[i]->is_string() ? t.find(names[i]->get<std::string>()) : std::nullopt;
    bool found = false;
    for (uint32_t p = 0; id && p < adj.size(); ++p) {
      if (adj[p].neighbor == *id) {
        ports.push_back(p);
        found = true;
      }
    }
    if (!found) {
      throw ScenarioError(path + ": " + show(*names[i]) + " is not a neighbour of \"" +
                          t.node(at).name + "\" (expected a node it has a link to)");
    }
  }
  return ports;
}

// priority_rewrite: [{"at": SWITCH, "from_neighbors": [...], "to_neighbors": [...], "from": P,
// "to": Q}]
void read_rewrites(JsonReader& r, const Topology& t,
                   std::vector<std::pair<uint32_t, PriorityRewrite>>& out) {
  for (JsonReader& e : r.objects("priority_rewrite")) {
    const uint32_t at = node_named(e, "at", t);
    if (t.node(at).kind != NodeKind::kSwitch)
      e.fail("at", "\"" + t.node(at).name + "\" is a host", "a switch");
    PriorityRewrite rule;
    rule.in_ports = ports_towards(e, "from_neighbors", at, t);
    if (rule.in_ports.empty())
      e.fail("from_neighbors", "missing or empty", "the neighbours whose packets are rewritten");
    rule.out_ports = ports_towards(e, "to_neighbors", at, t);
    rule.from = static_cast<uint8_t>(e.integer("from"));
    rule.to = static_cast<uint8_t>(e.integer("to"));
    e.finish();
    out.emplace_back(at, std::move(rule));
  }
}

}  // namespace

LinkSpec read_link(JsonReader& r, const LinkSpec& def) {
  LinkSpec l;
  l.rate = r.rate("rate", def.rate);
  l.delay = r.time("delay", def.delay);
  return l;
}

LinkSpec read_link_object(JsonReader r, const LinkSpec& def) {
  LinkSpec l = read_link(r, def);
  r.finish();
  return l;
}

TopologyInfo read_topology(JsonReader r, const FabricConfig& f, Topology& t,
                           std::vector<StaticRoute>& static_routes,
                           std::vector<std::pair<uint32_t, PriorityRewrite>>& rewrites,
                           Time& reconvergence) {
  const auto kind = r.kind_as<TopologyKind>();
  TopologyInfo info;
  try {
    switch (kind) {
      case TopologyKind::kStar: {
        const auto n = static_cast<uint32_t>(r.integer("hosts"));
        check_node_count(n, 1);
        info = build_star(n, read_link_object(r.object("link"), f.link), t);
        break;
      }
      case TopologyKind::kGraph:
        info = read_graph(r, f.link, t);
        break;
      case TopologyKind::kFatTree:
        info = read_fat_tree(r, f.link, t);
        break;
      case TopologyKind::kRailOptimized:
        info = read_rail_optimized(r, f.link, t);
        break;
    }
  } catch (const TopologyError& e) {
    throw ScenarioError(r.path_of(e.param()) + ": " + e.what());
  }
  // Every kind, once generated (a star's and a fat-tree's were checked before).
  check_node_count(t.num_hosts(), t.nodes().size() - t.num_hosts());
  read_failed_links(r, t);
  reconvergence = r.time("reconvergence_delay");
  read_static_routes(r, t, f.transport == Transport::kInfiniband, static_routes);
  if (f.transport == Transport::kInfiniband && r.has("priority_rewrite")) {
    throw ScenarioError(
        r.path_of("priority_rewrite") +
        ": applies to transport \"roce_v2\" only (expected no priority_rewrite: an "
        "InfiniBand packet's VL at every port is its SL's, fabric.infiniband.qos.sl2vl)");
  }
  read_rewrites(r, t, rewrites);
  if (f.transport == Transport::kInfiniband) r.unresolve("priority_rewrite");  // as fabric's
  r.finish();
  return info;
}

}  // namespace rdmasim
