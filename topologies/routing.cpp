#include "topologies/routing.h"

#include <algorithm>
#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/compressed_sparse_row_graph.hpp>
#include <limits>

namespace rdmasim {
namespace {

using Graph = boost::compressed_sparse_row_graph<boost::directedS>;
constexpr uint32_t kUnreached = std::numeric_limits<uint32_t>::max();

Graph make_graph(const Topology& topo) {
  std::vector<std::pair<uint32_t, uint32_t>> edges;
  edges.reserve(topo.links().size() * 2);
  for (const TopoLink& l : topo.links()) {
    edges.emplace_back(l.a, l.b);
    edges.emplace_back(l.b, l.a);
  }
  return Graph(boost::edges_are_unsorted_multi_pass, edges.begin(), edges.end(),
               topo.nodes().size());
}

}  // namespace

Routes compute_routes(const Topology& topo) {
  const Graph g = make_graph(topo);
  const size_t n = topo.nodes().size();
  Routes routes;
  routes.next_hops.resize(n);
  for (uint32_t v = 0; v < n; ++v) {
    if (topo.node(v).kind == NodeKind::kSwitch) routes.next_hops[v].resize(topo.num_hosts());
  }

  std::vector<uint32_t> dist(n);
  for (uint32_t h = 0; h < topo.num_hosts(); ++h) {
    const uint32_t dst = topo.hosts()[h];
    std::fill(dist.begin(), dist.end(), kUnreached);
    dist[dst] = 0;
    boost::breadth_first_search(
        g, dst,
        boost::visitor(boost::make_bfs_visitor(boost::record_distances(
            boost::make_iterator_property_map(dist.begin(), boost::get(boost::vertex_index, g)),
            boost::on_tree_edge()))));
    for (uint32_t src_host = 0; src_host < topo.num_hosts() && !routes.unreachable; ++src_host) {
      if (dist[topo.hosts()[src_host]] == kUnreached) {
        routes.unreachable = {std::min(src_host, h), std::max(src_host, h)};
      }
    }
    for (uint32_t v = 0; v < n; ++v) {
      if (topo.node(v).kind != NodeKind::kSwitch || dist[v] == kUnreached) continue;
      auto& ports = routes.next_hops[v][h];
      const auto& adj = topo.adjacency()[v];
      for (uint32_t p = 0; p < adj.size(); ++p) {
        if (dist[adj[p].neighbor] + 1 == dist[v]) ports.push_back(p);
      }
    }
  }
  return routes;
}

}  // namespace rdmasim
