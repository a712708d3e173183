#include "topologies/routing.h"

#include <algorithm>
#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/compressed_sparse_row_graph.hpp>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>

#include "sim/hash.h"
#include "topologies/min_hop.h"

namespace rdmasim {
namespace {

using Graph = boost::compressed_sparse_row_graph<boost::directedS>;
constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
constexpr uint32_t kInf = std::numeric_limits<uint32_t>::max();

// Connected components of the switch graph (union-find).
struct Components {
  explicit Components(size_t n) : parent(n) {
    for (size_t i = 0; i < n; ++i) parent[i] = static_cast<uint32_t>(i);
  }
  uint32_t find(uint32_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  }
  void unite(uint32_t a, uint32_t b) { parent[find(a)] = find(b); }
  std::vector<uint32_t> parent;
};

}  // namespace

uint32_t Routes::attachment_cost(const HostAttachments::Attachment& a, uint32_t dst) const {
  if (a.group == kNoGroup) return a.node == dst ? 0 : kInf;  // a cable to another host
  uint32_t best = kInf;
  for (const auto& b : hosts_->of(dst)) {
    if (b.node == a.node && b.group != kNoGroup) return 1;  // dst hangs off the same switch
    if (b.group == kNoGroup) continue;
    const uint8_t d = tables_[a.node].group_distance(b.group);
    if (d != kUnreachable) best = std::min<uint32_t>(best, 1U + d);
  }
  return best;
}

std::optional<uint32_t> Routes::switch_hops(uint32_t src, uint32_t dst) const {
  uint32_t best = kInf;
  for (const auto& a : hosts_->of(src)) best = std::min(best, attachment_cost(a, dst));
  if (best == kInf) return std::nullopt;
  return best;
}

uint32_t Routes::egress_port_count(uint32_t src, uint32_t dst) const {
  const std::optional<uint32_t> best = switch_hops(src, dst);
  if (!best) return 0;
  uint32_t n = 0;
  for (const auto& a : hosts_->of(src)) n += attachment_cost(a, dst) == *best ? 1 : 0;
  return n;
}

uint32_t Routes::egress_port(uint32_t src, uint32_t dst, uint64_t flow_hash) const {
  const auto atts = hosts_->of(src);
  const std::optional<uint32_t> best = switch_hops(src, dst);
  if (!best) return atts.empty() ? 0 : atts[0].host_port;
  const uint32_t n = egress_port_count(src, dst);
  uint64_t pick = n <= 1 ? 0 : mix64(flow_hash) % n;
  for (const auto& a : atts) {
    if (attachment_cost(a, dst) == *best && pick-- == 0) return a.host_port;
  }
  return atts[0].host_port;
}

Routes compute_routes(const Topology& topo, const std::vector<StaticRoute>& static_routes,
                      RoutingEngine engine) {
  const size_t n = topo.nodes().size();
  const size_t num_hosts = topo.num_hosts();
  Routes r;

  // Attachment groups: switches with a working cable to a host, in id order.
  std::vector<uint32_t> group_of(n, kNoGroup);
  for (const TopoLink& l : topo.links()) {
    if (l.failed) continue;
    const bool ah = topo.node(l.a).kind == NodeKind::kHost,
               bh = topo.node(l.b).kind == NodeKind::kHost;
    if (ah && !bh) group_of[l.b] = 0;
    if (bh && !ah) group_of[l.a] = 0;
  }
  for (uint32_t v = 0; v < n; ++v) {
    if (group_of[v] == 0) {
      group_of[v] = static_cast<uint32_t>(r.group_switch_.size());
      r.group_switch_.push_back(v);
    }
  }

  // Host attachments, in each host's port order.
  auto hosts = std::make_shared<HostAttachments>();
  hosts->offsets.reserve(num_hosts + 1);
  hosts->offsets.push_back(0);
  for (uint32_t h = 0; h < num_hosts; ++h) {
    const uint32_t node = topo.hosts()[h];
    for (const auto& adj : topo.adjacency()[node]) {
      const TopoLink& l = topo.links()[adj.link];
      if (l.failed) continue;
      const bool at_a = l.a == node;
      const uint32_t other = adj.neighbor;
      const uint32_t other_port = at_a ? l.b_port : l.a_port;
      const uint32_t host_port = at_a ? l.a_port : l.b_port;
      const bool other_is_host = topo.node(other).kind == NodeKind::kHost;
      hosts->items.push_back({other_is_host ? topo.node(other).host_index : other, other_port,
                              host_port, other_is_host ? kNoGroup : group_of[other]});
    }
    hosts->offsets.push_back(static_cast<uint32_t>(hosts->items.size()));
  }
  hosts->build_routes(static_cast<uint32_t>(r.group_switch_.size()));
  r.hosts_ = hosts;

  // The switch graph: working switch-to-switch links, both directions.
  std::vector<std::pair<uint32_t, uint32_t>> edges;
  Components comp(n);
  for (const TopoLink& l : topo.links()) {
    if (l.failed || topo.node(l.a).kind == NodeKind::kHost ||
        topo.node(l.b).kind == NodeKind::kHost) {
      continue;
    }
    edges.emplace_back(l.a, l.b);
    edges.emplace_back(l.b, l.a);
    comp.unite(l.a, l.b);
  }
  const Graph g(boost::edges_are_unsorted_multi_pass, edges.begin(), edges.end(), n);

  // dist[group][switch], in switch-to-switch hops (uint8: 254 is plenty).
  const size_t groups = r.group_switch_.size();
  std::vector<uint8_t> dist(groups * n, kUnreachable);
  std::vector<uint32_t> d32(n);
  for (uint32_t gi = 0; gi < groups; ++gi) {
    std::fill(d32.begin(), d32.end(), kInf);
    d32[r.group_switch_[gi]] = 0;
    boost::breadth_first_search(
        g, r.group_switch_[gi],
        boost::visitor(boost::make_bfs_visitor(boost::record_distances(
            boost::make_iterator_property_map(d32.begin(), boost::get(boost::vertex_index, g)),
            boost::on_tree_edge()))));
    uint8_t* row = &dist[gi * n];
    for (uint32_t v = 0; v < n; ++v) {
      if (d32[v] != kInf)
        row[v] = static_cast<uint8_t>(std::min<uint32_t>(d32[v], kUnreachable - 1));
    }
  }

  // Per switch: distance and interned next-hop port set for every group.
  r.tables_.resize(n);
  std::vector<uint32_t> candidate;
  for (uint32_t s = 0; s < n; ++s) {
    if (topo.node(s).kind != NodeKind::kSwitch) continue;
    const auto& adj = topo.adjacency()[s];
    std::vector<uint8_t> gdist(groups);
    std::vector<uint32_t> gset(groups, kNoGroup);
    std::vector<uint32_t> offsets{0};
    std::vector<uint32_t> ports;
    std::unordered_map<uint64_t, std::vector<uint32_t>> interned;  // hash -> set ids
    for (uint32_t gi = 0; gi < groups; ++gi) {
      const uint8_t d = dist[gi * n + s];
      gdist[gi] = d;
      if (d == 0 || d == kUnreachable) continue;
      candidate.clear();
      for (uint32_t p = 0; p < adj.size(); ++p) {
        const uint32_t u = adj[p].neighbor;
        if (topo.links()[adj[p].link].failed || topo.node(u).kind == NodeKind::kHost) continue;
        if (dist[gi * n + u] + 1 == d) candidate.push_back(p);
      }
      uint64_t h = 0xcbf29ce484222325ULL;
      for (uint32_t p : candidate) h = mix64(h ^ p);
      uint32_t id = kNoGroup;
      for (uint32_t existing : interned[h]) {
        if (std::equal(candidate.begin(), candidate.end(), ports.begin() + offsets[existing],
                       ports.begin() + offsets[existing + 1])) {
          id = existing;
          break;
        }
      }
      if (id == kNoGroup) {
        id = static_cast<uint32_t>(offsets.size() - 1);
        ports.insert(ports.end(), candidate.begin(), candidate.end());
        offsets.push_back(static_cast<uint32_t>(ports.size()));
        interned[h].push_back(id);
      }
      gset[gi] = id;
    }
    r.tables_[s] = ForwardingTable(s, hosts, std::move(gdist), std::move(gset), std::move(offsets),
                                   std::move(ports));
  }
  for (const StaticRoute& sr : static_routes) r.tables_[sr.node].set_static_route(sr.dst, sr.ports);
  if (engine == RoutingEngine::kMinHop) apply_min_hop(r, topo);

  // Reachability. Hosts do not forward, so two hosts are connected if they
  // are cabled to each other or to switches of a common component. Hosts
  // with the same set of components behave alike: compare the sets.
  std::map<std::vector<uint32_t>, uint32_t> signature_first_host;
  std::vector<const std::vector<uint32_t>*> signatures;
  for (uint32_t h = 0; h < num_hosts; ++h) {
    std::set<uint32_t> comps;
    for (const auto& a : hosts->of(h)) {
      if (a.group != kNoGroup) comps.insert(comp.find(a.node));
    }
    std::vector<uint32_t> sig(comps.begin(), comps.end());
    if (sig.empty()) sig.push_back(kNone - h);  // only cabled to hosts (or nothing): its own class
    signature_first_host.emplace(std::move(sig), h);
  }
  std::vector<std::pair<std::vector<uint32_t>, uint32_t>> classes(signature_first_host.begin(),
                                                                  signature_first_host.end());
  std::sort(classes.begin(), classes.end(),
            [](const auto& x, const auto& y) { return x.second < y.second; });
  for (size_t i = 0; i < classes.size() && !r.unreachable_; ++i) {
    for (size_t j = i + 1; j < classes.size() && !r.unreachable_; ++j) {
      const auto& a = classes[i].first;
      const auto& b = classes[j].first;
      std::vector<uint32_t> common;
      std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(common));
      if (!common.empty()) continue;
      const uint32_t ha = classes[i].second, hb = classes[j].second;
      if (r.switch_hops(ha, hb).has_value()) continue;  // cabled to each other
      r.unreachable_ = std::make_pair(std::min(ha, hb), std::max(ha, hb));
    }
  }
  return r;
}

}  // namespace rdmasim
