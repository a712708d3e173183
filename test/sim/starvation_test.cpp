#include "sim/starvation.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <map>

using namespace rdmasim;

namespace {

// A scripted machine: the clock moves one window (20 ms) per reading, and
// each thread waits on a run queue `wait_share` of the time.
struct FakeProbe : ThreadProbe {
  int64_t now = 0;
  double wait_share = 0;
  bool readable = true;
  std::map<int, int64_t> waited;
  int64_t wall_ns() override {
    now += StarvationPolicy::kWindowNs;
    for (auto& [tid, w] : waited)
      w += static_cast<int64_t>(wait_share * StarvationPolicy::kWindowNs);
    return now;
  }
  bool times(int tid, ThreadTimes& out) override {
    if (!readable) return false;
    out.wait_ns = waited[tid];
    return true;
  }
};

}  // namespace

TEST_CASE("starvation: a thread waiting over a tenth of a window starts a trial of turns",
          "[quick][partition]") {
  FakeProbe probe;
  StarvationPolicy p(probe);
  probe.wait_share = 0.11;
  p.begin(false, {101, 102}, 0);
  // A window on threads at 1000 events per window, starved: try turns.
  CHECK(p.next(1000) == true);
  CHECK(p.starved_windows() == 1);
  p.begin(true, {}, 1000);
  SECTION("turns ran faster: they stay for kHoldWindows windows, then threads again") {
    uint64_t events = 1000 + 1500;
    CHECK(p.next(events) == true);  // the trial: 1500 > 1000 events per window
    for (int i = 1; i < StarvationPolicy::kHoldWindows; ++i) {
      events += 1500;
      CHECK(p.next(events) == true);
    }
    events += 1500;
    CHECK(p.next(events) == false);  // try threads again
    CHECK(p.turns_seconds() ==
          Approx((StarvationPolicy::kHoldWindows + 1) * StarvationPolicy::kWindowNs * 1e-9)
              .epsilon(1e-12));
  }
  SECTION("turns ran slower: threads again, with no trial for kHoldWindows windows") {
    uint64_t events = 1000 + 900;
    CHECK(p.next(events) == false);
    p.begin(false, {103, 104}, events);
    for (int i = 0; i < StarvationPolicy::kHoldWindows; ++i) {
      events += 1000;
      CHECK(p.next(events) == false);  // still starved, but held
    }
    events += 1000;
    CHECK(p.next(events) == true);  // the hold is over: another trial
    CHECK(p.starved_windows() == 2);
  }
}

TEST_CASE("starvation: a wait of at most a tenth, or unreadable times, keep the threads",
          "[quick][partition]") {
  FakeProbe probe;
  StarvationPolicy p(probe);
  probe.wait_share = 0.10;
  p.begin(false, {101}, 0);
  for (uint64_t w = 1; w <= 50; ++w) CHECK(p.next(w * 1000) == false);
  probe.wait_share = 0.9;
  probe.readable = false;
  p.begin(false, {101}, 50'000);
  for (uint64_t w = 51; w <= 100; ++w) CHECK(p.next(w * 1000) == false);
  CHECK(p.starved_windows() == 0);
  CHECK(p.turns_seconds() == 0);
}

TEST_CASE("starvation: the kernel's run-queue wait of this thread can be read",
          "[quick][partition]") {
  // schedstat exists where the kernel has CONFIG_SCHED_INFO (every
  // distribution kernel); without it the policy never finds starvation.
  if (!std::filesystem::exists("/proc/self/schedstat")) {
    WARN("no /proc/self/schedstat on this kernel");
    return;
  }
  ThreadProbe probe;
  ThreadTimes t;
  volatile uint64_t spin = 0;
  for (int i = 0; i < 10'000'000; ++i) spin = spin + 1;  // some time on a CPU
  REQUIRE(probe.times(current_thread_id(), t));
  CHECK(t.cpu_ns > 0);
  CHECK(t.wait_ns >= 0);
  CHECK_FALSE(probe.times(-1, t));
  const int64_t a = probe.wall_ns();
  CHECK(probe.wall_ns() >= a);
}
