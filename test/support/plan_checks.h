// Checks of a CollectivePlan's dependency graph (models/collective/plan.h
// contract 2 and 3), shared by the plan tests of every algorithm.
#pragma once

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstddef>
#include <numeric>
#include <vector>

#include "models/collective/plan.h"

namespace rdmasim::testing {

// `servers` whole servers of `gpus` GPUs, ranks in order (or reversed).
inline ServerLayout layout(uint32_t servers, uint32_t gpus, bool shuffle = false) {
  ServerLayout l;
  l.gpus = gpus;
  l.rank.resize(size_t{servers} * gpus);
  std::iota(l.rank.begin(), l.rank.end(), 0u);
  if (shuffle) std::reverse(l.rank.begin(), l.rank.end());
  return l;
}

// Every element's dependencies point at an element received by its sender,
// and each element has exactly `consumers` elements depending on it.
inline void check_consumers(const CollectivePlan& p) {
  std::vector<std::vector<int>> uses(p.conns.size());
  for (size_t i = 0; i < p.conns.size(); ++i) uses[i].assign(p.conns[i].elems.size(), 0);
  for (const PlanConnection& c : p.conns) {
    for (const PlanElement& e : c.elems) {
      for (size_t d = 0; d < PlanElement::kMaxDeps && e.dep_conn[d] >= 0; ++d) {
        const auto x = static_cast<size_t>(e.dep_conn[d]);
        REQUIRE(x < p.conns.size());
        CHECK(p.conns[x].receiver == c.sender);
        REQUIRE(e.dep_elem[d] < p.conns[x].elems.size());
        ++uses[x][e.dep_elem[d]];
      }
    }
  }
  for (size_t i = 0; i < p.conns.size(); ++i) {
    for (size_t k = 0; k < p.conns[i].elems.size(); ++k) {
      INFO("connection " << i << " element " << k);
      CHECK(uses[i][k] == p.conns[i].elems[k].consumers);
    }
  }
}

// Runs the plan with unbounded buffers: an element leaves once its
// dependencies have arrived and every element before it on its connection
// has left. True if every element gets to leave (the graph is acyclic and
// consistent with each connection's order).
inline bool runs_to_end(const CollectivePlan& p) {
  std::vector<size_t> sent(p.conns.size(), 0);
  for (bool moved = true; moved;) {
    moved = false;
    for (size_t i = 0; i < p.conns.size(); ++i) {
      const PlanConnection& c = p.conns[i];
      while (sent[i] < c.elems.size()) {
        const PlanElement& e = c.elems[sent[i]];
        bool ok = true;
        for (size_t d = 0; d < PlanElement::kMaxDeps && e.dep_conn[d] >= 0; ++d) {
          ok = ok && sent[static_cast<size_t>(e.dep_conn[d])] > e.dep_elem[d];
        }
        if (!ok) break;
        ++sent[i];
        moved = true;
      }
    }
  }
  for (size_t i = 0; i < p.conns.size(); ++i) {
    if (sent[i] != p.conns[i].elems.size()) return false;
  }
  return true;
}

}  // namespace rdmasim::testing
