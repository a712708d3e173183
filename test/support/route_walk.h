// Follows the simulator's routing tables hop by hop, as packets would, for
// routing-only tests.
#pragma once

#include <optional>
#include <vector>

#include "topologies/routing.h"
#include "topologies/topology.h"

namespace rdmasim::testing {

struct Hop {
  uint32_t node;
  uint32_t port;  // egress port at `node`
  uint32_t link;  // topology link index
};

// The path of a flow with entropy `flow_key` from host src to host dst, or
// nullopt if it is dropped or loops (more than 64 hops).
inline std::optional<std::vector<Hop>> walk(const Topology& t, const Routes& r, uint32_t src,
                                            uint32_t dst, uint64_t flow_key) {
  std::vector<Hop> path;
  uint32_t node = t.hosts()[src];
  uint32_t port = r.egress_port(src, dst, flow_key);
  for (int i = 0; i < 64; ++i) {
    const auto& adj = t.adjacency()[node][port];
    path.push_back({node, port, adj.link});
    node = adj.neighbor;
    if (node == t.hosts()[dst]) return path;
    if (t.node(node).kind == NodeKind::kHost) return std::nullopt;  // hosts never forward
    const int64_t p = r.table(node).select(dst, flow_key);
    if (p < 0) return std::nullopt;
    port = static_cast<uint32_t>(p);
  }
  return std::nullopt;
}

// Number of distinct shortest paths from the switch `node` to host dst, by
// following every equal-cost port.
inline uint64_t count_paths(const Topology& t, const Routes& r, uint32_t node, uint32_t dst,
                            int depth = 0) {
  if (node == t.hosts()[dst]) return 1;
  if (depth > 16 || t.node(node).kind == NodeKind::kHost) return 0;
  uint64_t n = 0;
  r.table(node).for_each_port(dst, [&](uint32_t p) {
    n += count_paths(t, r, t.adjacency()[node][p].neighbor, dst, depth + 1);
  });
  return n;
}

}  // namespace rdmasim::testing
