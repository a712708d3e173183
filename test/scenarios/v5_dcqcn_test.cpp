// Validation case V5 (docs/validation.md): the DCQCN reaction point's step
// response. One flow at line rate C = 100 G; one CNP, the flow's first, at
// t_c; then nothing. After the cut RC0 = C (1 - alpha0 / 2), RT = C, and the
// k-th increase event sets RC_k = C - (C - RC0) / 2^k (RT stays at C: it is
// capped at line rate), at t_c + k T with the byte counter off; with it on,
// k = floor((t - t_c) / T) + floor(payload bytes sent since t_c / B).
// Alpha: alpha_c = (1 - g) alpha0 + g at the first update after t_c, then
// alpha_c (1 - g)^m at the m-th later one. Times exact, rates to a relative
// 1e-9, alpha to 1e-6.
#include <catch2/catch.hpp>
#include <cmath>
#include <iterator>
#include <memory>
#include <vector>

#include "models/cc/dcqcn.h"
#include "test/models/nic/nic_fixture.h"

using namespace rdmasim;
using namespace rdmasim::testing;

namespace {

constexpr double kC = 100e9;

// Sends one CNP from its QP at `at`, and nothing else.
class OneCnp : public CongestionControl {
 public:
  explicit OneCnp(Time at) : at_(at) {}
  void on_start(CcContext& ctx) override { ctx.schedule_timer(at_); }
  void on_timer(CcContext& ctx) override { ctx.send_cnp(); }

 private:
  Time at_;
};

struct Step {
  DcqcnState state;
  uint64_t packets_sent;  // data packets the requester had sent
};

// The alpha updates after t_c at which alpha is checked.
constexpr int kAlphaUpdates[] = {1, 2, 5, 56, 301};

struct StepResponse {
  std::vector<Step> events;
  // Alpha just after each of kAlphaUpdates, as the limiter computes it at
  // its last change: one that recovers to line rate is released there and
  // has no alpha after it (models/cc/dcqcn.h contract 5).
  std::vector<double> alpha_after_update;
  std::unique_ptr<Pair> pair;  // keeps the NICs, and so the algorithm, alive
  const Dcqcn* dcqcn = nullptr;
};

// One 64 MiB WRITE from a to b at 100 G, a CNP from b's QP at 20 us, run for
// 3 ms after it.
StepResponse run(const DcqcnConfig& cfg) {
  StepResponse r;
  r.pair = std::make_unique<Pair>();
  Pair& p = *r.pair;
  auto d = std::make_unique<Dcqcn>(cfg);
  Dcqcn* dq = d.get();
  RdmaNic& a = p.a;
  dq->changed.attach([&r, &a, &cfg, dq](const DcqcnState& s) {
    r.events.push_back(Step{s, a.counters().data_packets_sent});
    const Time tc = r.events.front().state.time;
    r.alpha_after_update.clear();
    for (int m : kAlphaUpdates) {
      r.alpha_after_update.push_back(dq->alpha(tc + cfg.dce_tcp_rtt * m + Time::ps(1)));
    }
  });
  p.a.set_congestion_control(p.qa, std::move(d));
  p.b.set_congestion_control(p.qb, std::make_unique<OneCnp>(Time::us(20)));
  p.a.post(p.qa, WorkRequest{1, Verb::kWrite, int64_t{64} << 20});
  p.sim.setup();
  p.sim.run(Time::us(20) + Time::ms(3) + Time::us(5));
  r.dcqcn = dq;
  return r;
}

DcqcnConfig paper_set() {
  DcqcnConfig c;
  c.initial_alpha_value = 1024;
  c.dce_tcp_g = 1020;  // g = 1/256
  c.dce_tcp_rtt = Time::us(55);
  c.rpg_time_reset = Time::us(55);
  c.rpg_threshold = 5;
  c.rpg_byte_reset = Bytes(0);
  return c;
}

DcqcnConfig connectx_set() {
  DcqcnConfig c;  // the ConnectX-5 defaults: alpha0 1023/1024, G 1019, K 1 us, T 300 us, F 1
  c.rpg_byte_reset = Bytes(0);
  return c;
}

// The timed checks of V5(a) for one parameter set.
void check_timer_only(const DcqcnConfig& c, double alpha0) {
  const StepResponse r = run(c);
  REQUIRE(r.events.size() >= 2);
  const double g = (1024.0 - c.dce_tcp_g) / 1024;
  const double ac = (1 - g) * alpha0 + g;
  const DcqcnState& cut = r.events[0].state;
  REQUIRE(cut.event == DcqcnState::Event::kCut);
  const Time tc = cut.time;
  const double rc0 = kC * (1 - alpha0 / 2);
  CHECK(cut.rc_bps == Approx(rc0).epsilon(1e-9));
  CHECK(cut.rt_bps == kC);
  CHECK(r.dcqcn->cuts() == 1);
  // Every later event is an increase at t_c + k T, with RC_k exactly.
  const size_t n = r.events.size() - 1;
  const auto expected_events = std::min<int64_t>(
      Time::ms(3) / c.rpg_time_reset, static_cast<int64_t>(std::ceil(std::log2(kC * alpha0))));
  CHECK(static_cast<int64_t>(n) == expected_events);
  for (size_t k = 1; k <= n; ++k) {
    const DcqcnState& e = r.events[k].state;
    INFO("increase event " << k);
    CHECK(e.event == DcqcnState::Event::kIncrease);
    CHECK(e.time == tc + c.rpg_time_reset * static_cast<int64_t>(k));
    const double rck = kC - (kC - rc0) / std::pow(2.0, static_cast<double>(k));
    CHECK(e.rc_bps == Approx(std::min(rck, kC)).epsilon(1e-9));
    CHECK(e.rt_bps == kC);
    // Alpha as of the event: the updates at t_c + j K before it.
    const int64_t j = (e.time - tc - Time::ps(1)) / c.dce_tcp_rtt;
    const double a = j == 0 ? alpha0 : ac * std::pow(1 - g, static_cast<double>(j - 1));
    CHECK(e.alpha == Approx(a).epsilon(1e-6));
  }
  // Alpha at the model's update instants (every dce_tcp_rtt after t_c).
  REQUIRE(r.alpha_after_update.size() == std::size(kAlphaUpdates));
  for (size_t i = 0; i < std::size(kAlphaUpdates); ++i) {
    const int m = kAlphaUpdates[i];
    const Time t = tc + c.dce_tcp_rtt * m + Time::ps(1);
    if (t > tc + Time::ms(3)) continue;
    INFO("alpha after update " << m);
    CHECK(r.alpha_after_update[i] == Approx(ac * std::pow(1 - g, m - 1)).epsilon(1e-6));
  }
}

}  // namespace

TEST_CASE("V5a DCQCN step response, timer only, paper set", "[validation][V5]") {
  const DcqcnConfig c = paper_set();
  check_timer_only(c, 1.0);
  // The values the case names: 0.75 C, 0.875 C and 0.984375 C at 55, 110 and
  // 275 us (k = 1, 2, 5, fast recovery), from RC0 = C / 2.
  for (int k : {1, 2, 5}) {
    CHECK(kC - (kC / 2) / std::pow(2.0, k) == Approx((k == 1   ? 0.75
                                                      : k == 2 ? 0.875
                                                               : 0.984375) *
                                                     kC)
                                                  .epsilon(1e-12));
  }
}

TEST_CASE("V5a DCQCN step response, timer only, ConnectX set", "[validation][V5]") {
  const DcqcnConfig c = connectx_set();
  const double alpha0 = 1023.0 / 1024;
  check_timer_only(c, alpha0);
  // 0.750244 C, 0.984390 C, 0.998049 C at 0.3, 1.5, 2.4 ms (k = 1, 5, 8).
  const double rc0 = kC * (1 - alpha0 / 2);
  const double named[][2] = {{1, 0.750244}, {5, 0.984390}, {8, 0.998049}};
  for (const auto& [k, frac] : named) {
    CHECK((kC - (kC - rc0) / std::pow(2.0, k)) / kC == Approx(frac).epsilon(1e-6));
  }
  // Alpha: about 0.763 after 55 later updates and 0.230 after 300 (the
  // simulated values at these instants are checked in check_timer_only).
  const double g = 5.0 / 1024, ac = (1 - g) * alpha0 + g;
  CHECK(ac * std::pow(1 - g, 55) == Approx(0.763).epsilon(1e-3));
  CHECK(ac * std::pow(1 - g, 300) == Approx(0.230).epsilon(1e-3));
}

TEST_CASE("V5b DCQCN step response with the byte counter", "[validation][V5]") {
  DcqcnConfig c;  // ConnectX set
  c.rpg_byte_reset = Bytes(32767);
  const StepResponse r = run(c);
  REQUIRE(r.events.size() >= 10);
  const Time tc = r.events[0].state.time;
  const uint64_t sent_at_cut = r.events[0].packets_sent;
  const double rc0 = kC * (1 - (1023.0 / 1024) / 2);
  size_t checked = 0;
  for (size_t i = 1; i < r.events.size(); ++i) {
    const Step& e = r.events[i];
    INFO("event " << i << " at " << to_string(e.state.time));
    // Every packet carries 4096 bytes of payload (the message is 64 MiB).
    const int64_t bytes = static_cast<int64_t>(e.packets_sent - sent_at_cut) * 4096;
    const int64_t timer_events = (e.state.time - tc) / c.rpg_time_reset;
    const int64_t byte_events = bytes / c.rpg_byte_reset.count();
    CHECK(e.state.timer_stage == timer_events);
    CHECK(e.state.byte_stage == byte_events);
    const int64_t k = timer_events + byte_events;
    CHECK(k == static_cast<int64_t>(i));
    const double rck = kC - (kC - rc0) / std::pow(2.0, static_cast<double>(k));
    CHECK(e.state.rc_bps == Approx(std::min(rck, kC)).epsilon(1e-9));
    ++checked;
  }
  CHECK(checked == r.events.size() - 1);
  CHECK(r.events.back().state.rc_bps == kC);  // recovered, then nothing more happens
}
