// CcSampler (models/cc/cc_sampler.h): the rows kept of a QP's congestion-
// control changes. By hand on a short sequence, then on a real DCQCN QP
// between two NICs (a middlebox marks CE), against the contract's
// decimation of the algorithm's own `changed` probe (test/support/
// cc_decimation.h).
#include "models/cc/cc_sampler.h"

#include <memory>
#include <vector>

#include "models/cc/dcqcn.h"
#include "test/models/nic/nic_fixture.h"
#include "test/support/catch_units.h"
#include "test/support/cc_decimation.h"

using namespace rdmasim;
using namespace rdmasim::testing;

namespace {

CcState at_ns(int64_t ns, double rate) { return CcState{Time::ns(ns), rate, 100e9, 0.5, -1}; }

struct Kept {
  int64_t ns;
  double rate;
  uint32_t changes;
};

std::vector<Kept> kept(const CcSampler& s) {
  std::vector<Kept> out;
  for (const CcSampleRow& r : s.rows()) {
    CHECK(r.time.in_ps() % 1000 == 0);
    out.push_back({r.time.in_ps() / 1000, r.state.rate_bps, r.changes});
  }
  return out;
}

bool operator==(const Kept& a, const Kept& b) {
  return a.ns == b.ns && a.rate == b.rate && a.changes == b.changes;
}

}  // namespace

namespace Catch {
template <>
struct StringMaker<Kept> {
  static std::string convert(const Kept& k) {
    return "{" + std::to_string(k.ns) + "ns, " + std::to_string(k.rate) + ", " +
           std::to_string(k.changes) + "}";
  }
};
}  // namespace Catch

TEST_CASE("cc samples: the first change, the last state of each interval, the last change",
          "[quick][cc][cc_samples]") {
  // Changes at 3, 5, 12, 14, 31, 55 and 58 ns (rate = the time, to tell them
  // apart), every 10 ns kept.
  const std::vector<int64_t> times = {3, 5, 12, 14, 31, 55, 58};
  auto feed = [&](CcSampler& s) {
    for (int64_t t : times) s.change(at_ns(t, static_cast<double>(t)));
  };
  SECTION("the run goes past the last interval") {
    CcSampler s(Time::ns(10));
    feed(s);
    s.finish(Time::ns(70));
    // 3 (the first); 5 at 10; 14 at 20 (12 and 14); 31 at 40; 58 at 60 (55, 58).
    CHECK(kept(s) ==
          std::vector<Kept>{{3, 3, 1}, {10, 5, 1}, {20, 14, 2}, {40, 31, 1}, {60, 58, 2}});
  }
  SECTION("the run ends inside the last interval: the last change at its own time") {
    CcSampler s(Time::ns(10));
    feed(s);
    s.finish(Time::ns(59));
    CHECK(kept(s) ==
          std::vector<Kept>{{3, 3, 1}, {10, 5, 1}, {20, 14, 2}, {40, 31, 1}, {58, 58, 2}});
  }
  SECTION("interval 0: every change") {
    CcSampler s(Time::zero());
    feed(s);
    s.finish(Time::ns(59));
    std::vector<Kept> all;
    for (int64_t t : times) all.push_back({t, static_cast<double>(t), 1});
    CHECK(kept(s) == all);
  }
  SECTION("changes on an interval's end belong to it; several at one instant: the last") {
    CcSampler s(Time::ns(10));
    for (auto [t, r] :
         std::vector<std::pair<int64_t, double>>{{10, 1}, {10, 2}, {20, 3}, {20, 4}, {21, 5}}) {
      s.change(at_ns(t, r));
    }
    s.finish(Time::ns(100));
    // 1 first, at 10; 2 at 10 (its interval (0, 10]); 4 at 20; 5 at 30.
    CHECK(kept(s) == std::vector<Kept>{{10, 1, 1}, {10, 2, 1}, {20, 4, 2}, {30, 5, 1}});
  }
  SECTION("one change only") {
    CcSampler s(Time::ns(10));
    s.change(at_ns(7, 7));
    s.finish(Time::ns(8));
    CHECK(kept(s) == std::vector<Kept>{{7, 7, 1}});
  }
}

TEST_CASE("cc samples: a DCQCN QP's rows are its changed probe, decimated",
          "[quick][cc][cc_samples]") {
  // A 4 MiB WRITE at 100 G; the middlebox marks every 16th data packet of the
  // first 600, so the sender cuts (at most every 4 us), then recovers by its
  // byte counter and a 20 us timer.
  Chain ch;
  ch.m.mark = [](const Packet& p, uint32_t in_port) {
    return in_port == 0 && p.kind == PacketKind::kData && p.psn % 16 == 0 && p.psn < 600;
  };
  DcqcnConfig cfg;
  cfg.rpg_time_reset = Time::us(20);
  auto sender = std::make_unique<Dcqcn>(cfg);
  Dcqcn& d = *sender;
  std::vector<CcState> raw;
  d.changed.attach([&raw](const DcqcnState& s) {
    raw.push_back(CcState{s.time, s.rc_bps, s.rt_bps, s.alpha, -1});
  });
  const std::vector<Time> intervals = {Time::zero(), Time::ns(1),  Time::us(1),
                                       Time::us(3),  Time::us(10), Time::us(50)};
  std::vector<CcSampler> samplers;
  for (Time i : intervals) samplers.emplace_back(i);
  for (CcSampler& s : samplers) {
    CHECK(d.observe([&s](const CcState& st) { s.change(st); }));
  }
  ch.a.set_congestion_control(ch.qa, std::move(sender));
  ch.b.set_congestion_control(ch.qb, std::make_unique<Dcqcn>(cfg));
  ch.a.post(ch.qa, WorkRequest{1, Verb::kWrite, int64_t{4} << 20});
  ch.sim.setup();
  ch.sim.run(Time::ms(2));
  REQUIRE(ch.log.sent.size() == 1);
  const Time end = ch.sim.now();
  // Cuts and increases, some at one instant with another.
  REQUIRE(d.cuts() >= 5);
  REQUIRE(raw.size() >= 30);
  for (size_t k = 0; k < intervals.size(); ++k) {
    INFO("interval " << to_string(intervals[k]));
    samplers[k].finish(end);
    const std::vector<ExpectedRow> want = decimate(raw, intervals[k], end);
    const std::vector<CcSampleRow>& got = samplers[k].rows();
    REQUIRE(got.size() == want.size());
    std::vector<Time> times;
    uint32_t changes = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      INFO("row " << i);
      CHECK(got[i].time == want[i].time);
      CHECK(got[i].state.time == want[i].state.time);
      CHECK(got[i].state.rate_bps == want[i].state.rate_bps);
      CHECK(got[i].state.target_bps == want[i].state.target_bps);
      CHECK(got[i].state.alpha == want[i].state.alpha);
      CHECK(got[i].state.window == -1);
      CHECK(got[i].changes == want[i].changes);
      times.push_back(got[i].time);
      changes += got[i].changes;
    }
    CHECK(changes == raw.size());
    CHECK(spacing_violation(times, intervals[k]) == -1);
    if (intervals[k] >= Time::us(3)) CHECK(got.size() < raw.size());
  }
  // Not attached: nothing to sample from an algorithm without a state.
  CHECK_FALSE(CongestionControl().observe([](const CcState&) {}));
}
