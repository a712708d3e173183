// A generated topology with its routes, for topology tests.
#pragma once

#include "topologies/generators.h"
#include "topologies/routing.h"

namespace rdmasim::testing {

struct Built {
  Topology t;
  TopologyInfo info;
  Routes r;
};

// A rail-optimized fabric of the given shape, the rest at its defaults.
inline RailOptimizedConfig rail_config(uint32_t sus, uint32_t nodes_per_su, uint32_t gpus_per_node,
                                       uint32_t rails, uint32_t spines) {
  RailOptimizedConfig c;
  c.sus = sus;
  c.nodes_per_su = nodes_per_su;
  c.gpus_per_node = gpus_per_node;
  c.rails = rails;
  c.spines = spines;
  return c;
}

inline Built build(const FatTreeConfig& c) {
  Built b;
  b.info = build_fat_tree(c, b.t);
  b.r = compute_routes(b.t);
  return b;
}

inline Built build(const RailOptimizedConfig& c) {
  Built b;
  b.info = build_rail_optimized(c, b.t);
  b.r = compute_routes(b.t);
  return b;
}

}  // namespace rdmasim::testing
