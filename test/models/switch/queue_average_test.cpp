// QueueAverage (models/switch/queue_average.h): the exact time-average of an
// egress queue over a window, on the burst of test/support/burst.h, whose
// queue is known at every enqueue and dequeue: frame i joins at enqueue(i),
// frame j leaves at departure(j), so the queue holds W x (frames joined -
// frames left) wire bytes, a step function whose integral is a finite sum.
#include "models/switch/queue_average.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "test/support/burst.h"
#include "test/support/catch_units.h"

using namespace rdmasim;
using rdmasim::testing::Burst;

namespace {

// The integral of the burst's queue over [s, e), in byte-picoseconds, from
// the formulas: steps of +W at each enqueue and -W at each departure.
int64_t burst_area(const Burst& b, Time s, Time e) {
  std::vector<std::pair<Time, int64_t>> steps;
  for (uint32_t i = 0; i < b.n; ++i) {
    steps.emplace_back(b.enqueue(i), Burst::wire());
    steps.emplace_back(b.departure(i), -int64_t{Burst::wire()});
  }
  std::stable_sort(steps.begin(), steps.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  int64_t level = 0, area = 0;
  Time since = Time::zero();
  for (const auto& [t, d] : steps) {
    const Time lo = std::max(since, s), hi = std::min(t, e);
    if (hi > lo) area += level * (hi - lo).in_ps();
    level += d;
    since = t;
  }
  if (e > std::max(since, s)) area += level * (e - std::max(since, s)).in_ps();
  return area;
}

// The burst queue's peak over (s, e]: its level just after s, and after
// each single enqueue or departure in (s, e], an enqueue before a departure
// at one instant (burst.h's tie order), so momentary levels count.
int64_t burst_peak(const Burst& b, Time s, Time e) {
  std::vector<std::pair<Time, int64_t>> steps;  // (time, +1 join / -1 leave)
  for (uint32_t i = 0; i < b.n; ++i) {
    steps.emplace_back(b.enqueue(i), 1);
    steps.emplace_back(b.departure(i), -1);
  }
  std::sort(steps.begin(), steps.end(), [](const auto& x, const auto& y) {
    return x.first != y.first ? x.first < y.first : x.second > y.second;
  });
  int64_t at_start = 0;
  for (const auto& [t, d] : steps) at_start += t <= s ? d : 0;
  int64_t level = 0, peak = at_start;
  for (const auto& [t, d] : steps) {
    level += d;
    if (s < t && t <= e) peak = std::max(peak, level);
  }
  return peak * Burst::wire();
}

}  // namespace

TEST_CASE("queue average: the exact time-average of a burst's egress queue",
          "[quick][switch][queue_average]") {
  Burst b(SwitchConfig{}, 16);
  const Time T = Burst::in_time();
  // Windows: the whole burst; one starting mid-frame and ending mid-drain;
  // one up to the first frame, which leaves as it joins; one after the queue
  // has emptied; one inside the peak's plateau (no packet joins or leaves in
  // it); one from a picosecond before a join to that join.
  const std::vector<std::pair<Time, Time>> windows = {
      {Time::zero(), b.departure(15) + T * 4},
      {b.enqueue(3) + T / 3, b.departure(9) + T * 2 / 7},
      {Time::zero(), b.enqueue(0)},
      {b.departure(15) + T, b.departure(15) + T * 9},
      {b.enqueue(15) + T / 4, b.enqueue(15) + T * 3 / 4},
      {b.enqueue(14) - Time::ps(1), b.enqueue(14)}};
  std::vector<std::unique_ptr<QueueAverage>> avg;
  for (const auto& [s, e] : windows) {
    avg.push_back(std::make_unique<QueueAverage>(b.sw->num_ports(), s, e));
    b.sw->add_egress_hook(*avg.back(), 0xFF);
  }
  b.run();
  const Time end = b.sim.now();
  REQUIRE(end > b.departure(15));
  const uint32_t port = b.cb.b_port;
  for (size_t k = 0; k < windows.size(); ++k) {
    const auto [s, e] = windows[k];
    INFO("window " << k << ": " << to_string(s) << " .. " << to_string(e));
    const Time stop = std::min(e, end);
    const double want = stop > s ? static_cast<double>(burst_area(b, s, stop)) /
                                       static_cast<double>((stop - s).in_ps())
                                 : 0.0;
    CHECK(avg[k]->mean_bytes(port, 3, end) == want);
    CHECK(avg[k]->peak_bytes(port, 3, end) == burst_peak(b, s, stop));
    // Nothing else queued: the other port, the other priorities.
    CHECK(avg[k]->mean_bytes(b.ca.b_port, 3, end) == 0.0);
    CHECK(avg[k]->mean_bytes(port, 0, end) == 0.0);
  }
  // The whole burst in closed form: frame j waits from enqueue(j) =
  // enqueue(0) + j T to departure(j) = enqueue(0) + 4 j T, 3 j T in all, so
  // the area is W 3 T (0 + 1 + ... + 15) = 360 W T.
  REQUIRE(b.enqueue(5) - b.enqueue(0) == T * 5);
  const double whole = static_cast<double>(Burst::wire()) * 360.0 * static_cast<double>(T.in_ps()) /
                       static_cast<double>(windows[0].second.in_ps());
  CHECK(avg[0]->mean_bytes(port, 3, end) == Approx(whole).epsilon(1e-12));
  CHECK(avg[2]->mean_bytes(port, 3, end) == 0.0);
  CHECK(avg[3]->mean_bytes(port, 3, end) == 0.0);
  // Peaks by hand: frame 15 joins at 15 T with 12 frames queued after it
  // (16 joined, frames 0..3 gone); frame 0 is queued only at the instant it
  // joins; when frame 14 joins, 11 are queued.
  const int64_t W = Burst::wire();
  CHECK(avg[0]->peak_bytes(port, 3, end) == 12 * W);
  CHECK(avg[1]->peak_bytes(port, 3, end) == 12 * W);
  CHECK(avg[2]->peak_bytes(port, 3, end) == W);
  CHECK(avg[3]->peak_bytes(port, 3, end) == 0);
  CHECK(avg[4]->peak_bytes(port, 3, end) == 12 * W);
  CHECK(avg[4]->mean_bytes(port, 3, end) == static_cast<double>(12 * W));
  CHECK(avg[5]->peak_bytes(port, 3, end) == 11 * W);
  // A window that begins after the run: nothing.
  CHECK(avg[0]->peak_bytes(port, 3, Time::zero()) == 0);
}
