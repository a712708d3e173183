// Slowdown statistics for summary.json: a completed flow's slowdown is its
// FCT over its ideal FCT (sim/scenario/ideal_fct.h); summarised overall, per
// traffic item and per size bucket with nearest-rank percentiles
// (docs/scenario.md, "Ideal FCT and slowdown").
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "sim/scenario/run_result.h"
#include "sim/units.h"

namespace rdmasim {

// Nearest-rank percentile of sorted values: the ceil(p/100 * n)-th smallest
// (at least the first); 0 for no values.
template <class T>
T nearest_rank(const std::vector<T>& sorted, double p) {
  if (sorted.empty()) return T{};
  auto rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(sorted.size())));
  rank = std::clamp<size_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}

struct SlowdownStats {
  size_t count = 0;  // completed flows
  double p50 = 0, p95 = 0, p99 = 0;
  double mean = 0, max = 0;
};
SlowdownStats slowdown_stats(std::vector<double> slowdowns);

// Size bucket i holds flows of edges[i-1] <= bytes < edges[i] (edges rising;
// the first from 0, the last without an upper end).
struct SizeBucket {
  int64_t min_bytes = 0;
  int64_t max_bytes = -1;  // exclusive; -1: none
  std::string label;       // "<10KB", "10KB-100KB", ">=1MB"
  SlowdownStats stats;
};

struct SlowdownSummary {
  SlowdownStats overall;
  std::vector<SlowdownStats> by_item;  // per traffic item (index = item)
  std::vector<SizeBucket> by_size;
};

// Over the completed flows of `flows`; `items` traffic items.
SlowdownSummary summarize_slowdown(const std::vector<FlowResult>& flows, size_t items,
                                   std::span<const Bytes> edges);

}  // namespace rdmasim
