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
