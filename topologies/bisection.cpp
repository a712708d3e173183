#include "topologies/bisection.h"

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/push_relabel_max_flow.hpp>
#include <numeric>

namespace rdmasim {
namespace {

using Traits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
using Graph = boost::adjacency_list<
    boost::vecS, boost::vecS, boost::directedS, boost::no_property,
    boost::property<
        boost::edge_capacity_t, int64_t,
        boost::property<boost::edge_residual_capacity_t, int64_t,
                        boost::property<boost::edge_reverse_t, Traits::edge_descriptor>>>>;

// One arc of capacity `cap` and its zero-capacity reverse, as the max-flow
// algorithms need.
void add_arc(Graph& g, uint32_t from, uint32_t to, int64_t cap) {
  auto capacity = boost::get(boost::edge_capacity, g);
  auto reverse = boost::get(boost::edge_reverse, g);
  const auto e = boost::add_edge(from, to, g).first;
  const auto r = boost::add_edge(to, from, g).first;
  capacity[e] = cap;
  capacity[r] = 0;
  reverse[e] = r;
  reverse[r] = e;
}

}  // namespace

BitRate split_capacity(const Topology& t, const std::vector<uint32_t>& order) {
  const auto n = static_cast<uint32_t>(t.nodes().size());
  const uint32_t source = n, sink = n + 1;
  Graph g(n + 2);
  // A host's own working cables: what its arc to the source or sink may
  // carry without ever limiting the flow (a bound per host, not the whole
  // fabric's, so the arcs' sum stays within int64 on 32,768-host fabrics).
  std::vector<int64_t> own(n, 0);
  for (const TopoLink& l : t.links()) {
    if (l.failed || l.kind == LinkKind::kNvlink) continue;
    add_arc(g, l.a, l.b, l.rate.in_bps());
    add_arc(g, l.b, l.a, l.rate.in_bps());
    own[l.a] += l.rate.in_bps();
    own[l.b] += l.rate.in_bps();
  }
  const size_t half = order.size() / 2;
  for (size_t i = 0; i < order.size(); ++i) {
    const uint32_t node = t.hosts()[order[i]];
    if (i < half) {
      add_arc(g, source, node, own[node]);
    } else {
      add_arc(g, node, sink, own[node]);
    }
  }
  if (half == 0) return BitRate::bps(0);
  return BitRate::bps(boost::push_relabel_max_flow(g, source, sink));
}

std::vector<uint32_t> rail_order(const Topology& t) {
  const HostGroups& groups = t.host_groups();
  const uint32_t rails = groups.count(HostGroupKind::kRail);
  std::vector<uint32_t> order;
  if (rails == 0) return order;
  std::vector<bool> placed(t.num_hosts(), false);
  for (uint32_t r = 0; r < rails; ++r) {
    for (uint32_t h : groups.members(HostGroupKind::kRail, r)) {
      order.push_back(h);
      placed[h] = true;
    }
  }
  for (uint32_t h = 0; h < t.num_hosts(); ++h) {
    if (!placed[h]) order.push_back(h);
  }
  return order;
}

BitRate bisection_bandwidth(const Topology& t) {
  std::vector<uint32_t> order(t.num_hosts());
  std::iota(order.begin(), order.end(), 0u);
  BitRate b = split_capacity(t, order);
  // A rail fabric's leaves are rails, not nodes: splitting by node keeps every
  // leaf's traffic local, so the rail split is the one its uplinks bound.
  const std::vector<uint32_t> rails = rail_order(t);
  if (!rails.empty()) b = std::min(b, split_capacity(t, rails));
  return b;
}

}  // namespace rdmasim
