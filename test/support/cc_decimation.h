// The decimation of congestion-control samples as models/cc/cc_sampler.h's
// contract states it, written independently for tests to compare the
// sampler's rows with: the first change; then the changes after it grouped
// by interval ((k-1) I, k I], each group's last state at k I, or at its own
// time if k I is after the end of the run; with I = 0 every change.
#pragma once

#include <cstdint>
#include <vector>

#include "models/cc/congestion_control.h"
#include "sim/units.h"

namespace rdmasim::testing {

struct ExpectedRow {
  Time time;
  CcState state;
  uint32_t changes;
};

// The interval k of a change at t: the smallest k with k I >= t.
inline int64_t interval_of(Time t, Time interval) {
  return t.in_ps() / interval.in_ps() + (t.in_ps() % interval.in_ps() != 0 ? 1 : 0);
}

inline std::vector<ExpectedRow> decimate(const std::vector<CcState>& changes, Time interval,
                                         Time end) {
  std::vector<ExpectedRow> out;
  if (changes.empty()) return out;
  out.push_back({changes[0].time, changes[0], 1});
  size_t i = 1;
  while (i < changes.size()) {
    if (interval == Time::zero()) {
      out.push_back({changes[i].time, changes[i], 1});
      ++i;
      continue;
    }
    const int64_t k = interval_of(changes[i].time, interval);
    size_t j = i;
    while (j + 1 < changes.size() && interval_of(changes[j + 1].time, interval) == k) ++j;
    const Time grid = interval * k;
    out.push_back(
        {grid <= end ? grid : changes[j].time, changes[j], static_cast<uint32_t>(j - i + 1)});
    i = j + 1;
  }
  return out;
}

// Whether consecutive rows (their times) keep the contract's spacing: at
// least `interval` apart, but for the first row and the next and the last
// row and the one before; never out of order. Returns the first offending
// index, or -1.
inline int64_t spacing_violation(const std::vector<Time>& times, Time interval) {
  for (size_t i = 1; i < times.size(); ++i) {
    if (times[i] < times[i - 1]) return static_cast<int64_t>(i);
    const bool excepted = i == 1 || i + 1 == times.size();
    if (!excepted && times[i] - times[i - 1] < interval) return static_cast<int64_t>(i);
  }
  return -1;
}

}  // namespace rdmasim::testing
