// DCQCN's rules one by one (models/cc/dcqcn.h), driven through a fake
// context: what each signal, timer and packet does to RC, RT and alpha, with
// values worked out by hand from the rules. The step response through real
// NICs is V5 (test/scenarios/v5_dcqcn_test.cpp).
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "models/cc/dcqcn.h"

namespace rdmasim {
namespace {

constexpr double kLine = 100e9;

class FakeContext final : public CcContext {
 public:
  FakeContext() = default;
  FakeContext(const FakeContext&) = delete;
  virtual ~FakeContext() = default;
  Time now() const override { return now_; }
  BitRate line_rate() const override { return BitRate::gbps(100); }
  uint32_t mtu() const override { return 4096; }
  void set_rate(BitRate r) override { rate = r; }
  void set_window(Bytes w) override { window = w; }
  void schedule_timer(Time at) override { timer = at; }
  void cancel_timer() override { timer = Time::infinite(); }
  void send_cnp() override { cnps.push_back(now_); }
  void echo_ecn() override { ++echoes; }

  Time now_;
  BitRate rate;
  Bytes window;
  Time timer = Time::infinite();
  std::vector<Time> cnps;
  int echoes = 0;
};

// Runs the algorithm's timer at every wake-up up to `until`.
void run_until(Dcqcn& d, FakeContext& ctx, Time until) {
  while (!ctx.timer.is_infinite() && ctx.timer <= until) {
    ctx.now_ = ctx.timer;
    ctx.timer = Time::infinite();
    d.on_timer(ctx);
  }
  ctx.now_ = until;
}

DcqcnConfig timer_only() {
  DcqcnConfig c;
  c.rpg_byte_reset = Bytes(0);
  return c;
}

}  // namespace

TEST_CASE("dcqcn: a QP starts unpaced at line rate, with no timer", "[quick][cc][dcqcn]") {
  const DcqcnConfig c;
  Dcqcn d(c);
  FakeContext ctx;
  d.on_start(ctx);
  CHECK(d.rate_bps() == kLine);
  CHECK(d.target_bps() == kLine);
  CHECK(ctx.rate == BitRate());
  CHECK(ctx.timer.is_infinite());
  CHECK(d.alpha(Time::us(5)) == 0);
}

TEST_CASE("dcqcn: the first CNP cuts at once with the initial alpha", "[quick][cc][dcqcn]") {
  const DcqcnConfig c = timer_only();  // initial_alpha_value 1023
  Dcqcn d(c);
  FakeContext ctx;
  d.on_start(ctx);
  ctx.now_ = Time::us(10);
  d.on_cnp(ctx);
  const double a0 = 1023.0 / 1024;
  CHECK(d.rate_bps() == Approx(kLine * (1 - a0 / 2)).epsilon(1e-12));
  CHECK(d.target_bps() == kLine);  // no clamp at the first cut (no timer increase yet)
  CHECK(ctx.rate == BitRate::bps(std::llround(kLine * (1 - a0 / 2))));
  CHECK(ctx.timer == Time::us(10) + c.rpg_time_reset);
  CHECK(d.cuts() == 1);
}

TEST_CASE("dcqcn: one cut per monitor period; signals within it cut once at its end",
          "[quick][cc][dcqcn]") {
  DcqcnConfig c = timer_only();
  c.initial_alpha_value = 1024;  // alpha 1: each cut halves (rpg_min_dec_fac 50 binds equally)
  c.dce_tcp_g = 1024;            // alpha stays 1
  Dcqcn d(c);
  FakeContext ctx;
  d.on_start(ctx);
  ctx.now_ = Time::us(10);
  d.on_cnp(ctx);
  CHECK(d.rate_bps() == kLine / 2);
  ctx.now_ = Time::us(11);
  d.on_cnp(ctx);  // inside the 4 us period: deferred
  ctx.now_ = Time::us(12);
  d.on_cnp(ctx);  // still one pending cut
  CHECK(d.rate_bps() == kLine / 2);
  CHECK(ctx.timer == Time::us(14));
  run_until(d, ctx, Time::us(14));
  CHECK(d.cuts() == 2);
  CHECK(d.rate_bps() == kLine / 4);
  // A signal after the period cuts at once.
  ctx.now_ = Time::us(19);
  d.on_cnp(ctx);
  CHECK(d.cuts() == 3);
  CHECK(d.rate_bps() == kLine / 8);
}

TEST_CASE("dcqcn: rpg_min_dec_fac and rpg_min_rate bound a cut", "[quick][cc][dcqcn]") {
  DcqcnConfig c = timer_only();
  c.initial_alpha_value = 1024;
  c.dce_tcp_g = 1024;
  c.rpg_min_dec_fac = 80;  // a cut keeps at least 80 %
  c.rate_reduce_monitor_period = Time::zero();
  c.rpg_min_rate = BitRate::gbps(70);
  Dcqcn d(c);
  FakeContext ctx;
  d.on_start(ctx);
  ctx.now_ = Time::us(1);
  d.on_cnp(ctx);
  CHECK(d.rate_bps() == 80e9);
  ctx.now_ = Time::us(2);
  d.on_cnp(ctx);
  CHECK(d.rate_bps() == 70e9);  // 64 G by the factor, held at the floor
}

TEST_CASE("dcqcn: alpha updates every dce_tcp_rtt, with a signal and without",
          "[quick][cc][dcqcn]") {
  const DcqcnConfig c = timer_only();  // G 1019, K 1 us, alpha0 1023/1024
  Dcqcn d(c);
  FakeContext ctx;
  d.on_start(ctx);
  const Time tc = Time::us(10);
  ctx.now_ = tc;
  d.on_cnp(ctx);
  const double keep = 1019.0 / 1024, a0 = 1023.0 / 1024;
  const double ac = keep * a0 + (1 - keep);
  CHECK(d.alpha(tc) == a0);
  CHECK(d.alpha(tc + Time::us(1)) == a0);  // the update at tc + K has not happened before it
  CHECK(d.alpha(tc + Time::us(1) + Time::ps(1)) == Approx(ac).epsilon(1e-12));
  for (int m : {2, 55, 300}) {
    CHECK(d.alpha(tc + Time::us(m) + Time::ps(1)) ==
          Approx(ac * std::pow(keep, m - 1)).epsilon(1e-12));
  }
  // A CNP in the 5th interval counts at its end.
  ctx.now_ = tc + Time::us(4) + Time::ns(500);
  d.on_cnp(ctx);
  const double a4 = ac * std::pow(keep, 3);
  CHECK(d.alpha(tc + Time::us(5) + Time::ps(1)) == Approx(a4 * keep + 1 - keep).epsilon(1e-12));
  // A CNP exactly at an update's instant counts in that update.
  ctx.now_ = tc + Time::us(8);
  d.on_cnp(ctx);
  const double a7 = (a4 * keep + 1 - keep) * std::pow(keep, 2);
  CHECK(d.alpha(tc + Time::us(8) + Time::ps(1)) == Approx(a7 * keep + 1 - keep).epsilon(1e-12));
}

TEST_CASE("dcqcn: timer increases: fast recovery for F stages, then additive, then hyper",
          "[quick][cc][dcqcn]") {
  DcqcnConfig c = timer_only();
  c.initial_alpha_value = 1024;
  c.dce_tcp_g = 1024;
  c.rpg_threshold = 2;
  c.rpg_ai_rate = BitRate::gbps(1);
  c.rpg_hai_rate = BitRate::gbps(4);
  c.clamp_tgt_rate = true;
  c.rate_reduce_monitor_period = Time::zero();
  Dcqcn d(c);
  FakeContext ctx;
  d.on_start(ctx);
  ctx.now_ = Time::zero();
  // Two cuts keep RT below line rate, to show the steps: RT <- 100, RC 50;
  // then RT <- 50, RC 25.
  d.on_cnp(ctx);
  d.on_cnp(ctx);
  double rc = 25e9, rt = 50e9;
  CHECK(d.rate_bps() == rc);
  CHECK(d.target_bps() == rt);
  // Events 1, 2: fast recovery; 3: additive (T = F + 1); 4, 5: hyper.
  const double add[] = {0, 0, 1e9, 4e9, 4e9};
  for (int k = 1; k <= 5; ++k) {
    run_until(d, ctx, k * c.rpg_time_reset);
    rt = std::min(kLine, rt + add[k - 1]);
    rc = (rt + rc) / 2;
    INFO("event " << k);
    CHECK(d.rate_bps() == Approx(rc).epsilon(1e-12));
    CHECK(d.target_bps() == rt);
  }
  // A cut clamps RT to RC (clamp_tgt_rate) and restarts the stages.
  ctx.now_ = 5 * c.rpg_time_reset + Time::us(1);
  d.on_cnp(ctx);
  rt = rc;
  rc = rc / 2;
  CHECK(d.target_bps() == Approx(rt).epsilon(1e-12));
  CHECK(d.rate_bps() == Approx(rc).epsilon(1e-12));
  run_until(d, ctx, ctx.now_ + c.rpg_time_reset);
  CHECK(d.rate_bps() == Approx((rt + rc) / 2).epsilon(1e-12));  // fast recovery again
}

TEST_CASE("dcqcn: with the byte counter, additive once one counter passes F, hyper once both do",
          "[quick][cc][dcqcn]") {
  DcqcnConfig c;
  c.initial_alpha_value = 1024;
  c.dce_tcp_g = 1024;
  c.rpg_threshold = 1;
  c.rpg_byte_reset = Bytes(10'000);
  c.rpg_ai_rate = BitRate::gbps(1);
  c.rpg_hai_rate = BitRate::gbps(4);
  c.clamp_tgt_rate = true;
  c.rate_reduce_monitor_period = Time::zero();
  Dcqcn d(c);
  FakeContext ctx;
  d.on_start(ctx);
  d.on_cnp(ctx);  // RT <- 100, RC 50
  d.on_cnp(ctx);  // RT <- 50, RC 25: RT below line rate shows the steps
  double rc = 25e9, rt = 50e9;
  auto bytes = [&](int64_t n) {
    CcSent s;
    s.payload_bytes = static_cast<uint32_t>(n);
    d.on_packet_sent(ctx, s);
  };
  // B = 1: max(T, B) = 1 <= F: fast recovery.
  bytes(10'000);
  rc = (rt + rc) / 2;
  CHECK(d.rate_bps() == Approx(rc).epsilon(1e-12));
  // B = 2 > F, T = 0: additive.
  bytes(9'999);
  CHECK(d.rate_bps() == Approx(rc).epsilon(1e-12));  // not yet 10,000 bytes
  bytes(1);
  rt = std::min(kLine, rt + 1e9);
  rc = (rt + rc) / 2;
  CHECK(d.rate_bps() == Approx(rc).epsilon(1e-12));
  // Timer: T = 1, still additive (min = 1 <= F); T = 2: hyper.
  run_until(d, ctx, c.rpg_time_reset);
  rt = std::min(kLine, rt + 1e9);
  rc = (rt + rc) / 2;
  CHECK(d.rate_bps() == Approx(rc).epsilon(1e-12));
  run_until(d, ctx, 2 * c.rpg_time_reset);
  rt = std::min(kLine, rt + 4e9);
  rc = (rt + rc) / 2;
  CHECK(d.rate_bps() == Approx(rc).epsilon(1e-12));
}

TEST_CASE("dcqcn: back at line rate the limiter is released: unpaced, no timer",
          "[quick][cc][dcqcn]") {
  const DcqcnConfig c = timer_only();
  Dcqcn d(c);
  FakeContext ctx;
  d.on_start(ctx);
  d.on_cnp(ctx);
  int events = 0;
  while (!ctx.timer.is_infinite() && events < 100) {
    run_until(d, ctx, ctx.timer);
    ++events;
  }
  CHECK(d.rate_bps() == kLine);
  CHECK(ctx.rate == BitRate());
  CHECK(ctx.timer.is_infinite());
  CHECK(d.releases() == 1);
  // RC_k = C - (C - RC0) / 2^k reaches C within half a bit per second.
  const double gap = kLine * (1023.0 / 2048);
  CHECK(events == static_cast<int>(std::ceil(std::log2(gap / 0.5))));
}

// NVIDIA's rpg_max_rate (mlxconfig help; DOCA "DCQCN CC Parameters"): "Once
// this limit is reached, the RP rate limiter is released and the flow is not
// rate limited any more".
TEST_CASE("dcqcn: rpg_max_rate is the release rate, not a start rate or a cap",
          "[quick][cc][dcqcn]") {
  DcqcnConfig c = timer_only();
  c.initial_alpha_value = 1024;  // alpha 1: the cut halves
  c.rpg_max_rate = BitRate::gbps(90);
  Dcqcn d(c);
  FakeContext ctx;
  d.on_start(ctx);
  CHECK(d.rate_bps() == kLine);
  CHECK(ctx.rate == BitRate());  // no limiter: line rate, unpaced
  const Time tc = Time::us(10);
  ctx.now_ = tc;
  d.on_cnp(ctx);
  CHECK(d.rate_bps() == 50e9);
  CHECK(d.target_bps() == kLine);  // RT's ceiling is line rate
  // RC_k = C - (C - RC0) / 2^k: 75 G, 87.5 G, then 93.75 G >= 90 G: the
  // limiter is released at t_c + 3 T.
  run_until(d, ctx, tc + 2 * c.rpg_time_reset);
  CHECK(d.rate_bps() == 87.5e9);
  CHECK(ctx.rate == BitRate::mbps(87'500));
  CHECK(ctx.timer == tc + 3 * c.rpg_time_reset);
  run_until(d, ctx, tc + 3 * c.rpg_time_reset);
  CHECK(d.rate_bps() == kLine);
  CHECK(d.target_bps() == kLine);
  CHECK(ctx.rate == BitRate());
  CHECK(ctx.timer.is_infinite());
  CHECK(d.alpha(ctx.now_ + Time::us(5)) == 0);  // no limiter, no alpha
  CHECK(d.releases() == 1);
  // The byte counter releases as well (B = 10,000 bytes, F = 1): fast
  // recovery to 75 G, then additive (RT held at line rate) to 87.5 G and
  // 93.75 G, after 30,000 bytes.
  DcqcnConfig cb = c;
  cb.rpg_byte_reset = Bytes(10'000);
  Dcqcn e(cb);
  FakeContext ctx2;
  e.on_start(ctx2);
  ctx2.now_ = tc;
  e.on_cnp(ctx2);
  CcSent sent;
  sent.payload_bytes = 10'000;
  e.on_packet_sent(ctx2, sent);
  e.on_packet_sent(ctx2, sent);
  CHECK(e.rate_bps() == 87.5e9);
  e.on_packet_sent(ctx2, sent);
  CHECK(e.rate_bps() == kLine);
  CHECK(ctx2.rate == BitRate());
  CHECK(ctx2.timer.is_infinite());
  e.on_packet_sent(ctx2, sent);  // no limiter: nothing counts
  CHECK(e.rate_bps() == kLine);
  CHECK(e.releases() == 1);
}

TEST_CASE("dcqcn: no release while a signal awaits its cut", "[quick][cc][dcqcn]") {
  DcqcnConfig c;
  c.initial_alpha_value = 1024;
  c.dce_tcp_g = 1024;  // alpha stays 1: each cut halves
  c.rpg_byte_reset = Bytes(10'000);
  c.rpg_max_rate = BitRate::gbps(90);
  Dcqcn d(c);
  FakeContext ctx;
  d.on_start(ctx);
  d.on_cnp(ctx);  // RC 50 G
  ctx.now_ = Time::us(1);
  d.on_cnp(ctx);  // within the 4 us monitor period: its cut at 4 us
  CcSent sent;
  sent.payload_bytes = 30'000;
  d.on_packet_sent(ctx, sent);  // 75, 87.5, 93.75 G: not released
  CHECK(d.rate_bps() == 93.75e9);
  CHECK(d.releases() == 0);
  run_until(d, ctx, Time::us(4));
  CHECK(d.cuts() == 2);
  CHECK(d.rate_bps() == 93.75e9 / 2);
  // RT stayed at line rate (no timer increase): 73.4375, 86.71875, then
  // 93.359375 G >= 90 G.
  d.on_packet_sent(ctx, sent);
  CHECK(d.rate_bps() == kLine);
  CHECK(d.releases() == 1);
}

TEST_CASE("dcqcn: after a release the next CNP takes initial_alpha_value again",
          "[quick][cc][dcqcn]") {
  const DcqcnConfig c = timer_only();  // alpha0 1023/1024, G 1019, released at line rate
  Dcqcn d(c);
  FakeContext ctx;
  d.on_start(ctx);
  ctx.now_ = Time::us(10);
  d.on_cnp(ctx);
  while (!ctx.timer.is_infinite()) run_until(d, ctx, ctx.timer);
  REQUIRE(d.rate_bps() == kLine);
  // About 11 ms later the old limiter's alpha would be (1019/1024)^11000,
  // a cut of nothing; a new limiter starts from alpha0.
  const Time t = ctx.now_ + Time::us(100);
  ctx.now_ = t;
  d.on_cnp(ctx);
  const double a0 = 1023.0 / 1024;
  CHECK(d.alpha(t) == a0);
  CHECK(d.rate_bps() == kLine * (1 - a0 / 2));
  CHECK(d.target_bps() == kLine);
  CHECK(ctx.rate == BitRate::bps(std::llround(kLine * (1 - a0 / 2))));
  CHECK(ctx.timer == t + c.rpg_time_reset);
  CHECK(d.cuts() == 2);
  CHECK(d.releases() == 1);
}

TEST_CASE("dcqcn: after a release rate_to_set_on_first_cnp applies again", "[quick][cc][dcqcn]") {
  DcqcnConfig c = timer_only();
  c.rate_to_set_on_first_cnp = BitRate::gbps(20);
  c.rpg_ai_rate = BitRate::gbps(10);
  c.rpg_hai_rate = BitRate::gbps(40);
  c.rpg_max_rate = BitRate::gbps(90);
  Dcqcn d(c);
  FakeContext ctx;
  d.on_start(ctx);
  const Time t0 = Time::us(3);
  ctx.now_ = t0;
  d.on_cnp(ctx);
  CHECK(d.rate_bps() == 20e9);
  // F = 1, timer only: event 1 fast recovery (RC 20 G), 2 additive (RT 30 G,
  // RC 25 G), then hyper: RT 70 G, RC 47.5 G; RT 100 G (line rate), RC
  // 73.75 G; RC 86.875 G; RC 93.4375 G >= 90 G: released at t0 + 6 T.
  const double rcs[] = {20e9, 25e9, 47.5e9, 73.75e9, 86.875e9};
  for (int k = 1; k <= 5; ++k) {
    run_until(d, ctx, t0 + k * c.rpg_time_reset);
    INFO("event " << k);
    CHECK(d.rate_bps() == rcs[k - 1]);
  }
  run_until(d, ctx, t0 + 6 * c.rpg_time_reset);
  CHECK(d.rate_bps() == kLine);
  CHECK(ctx.rate == BitRate());
  CHECK(ctx.timer.is_infinite());
  const Time t = t0 + 6 * c.rpg_time_reset + Time::us(50);
  ctx.now_ = t;
  d.on_cnp(ctx);
  CHECK(d.rate_bps() == 20e9);
  CHECK(d.target_bps() == 20e9);
  CHECK(d.cuts() == 0);
  CHECK(d.releases() == 1);
  CHECK(d.alpha(t) == 1023.0 / 1024);
  CHECK(ctx.rate == BitRate::gbps(20));
  CHECK(ctx.timer == t + c.rpg_time_reset);
}

TEST_CASE("dcqcn: rate_to_set_on_first_cnp sets the rate instead of cutting",
          "[quick][cc][dcqcn]") {
  DcqcnConfig c = timer_only();
  c.rate_to_set_on_first_cnp = BitRate::gbps(20);
  Dcqcn d(c);
  FakeContext ctx;
  d.on_start(ctx);
  ctx.now_ = Time::us(3);
  d.on_cnp(ctx);
  CHECK(d.rate_bps() == 20e9);
  CHECK(d.target_bps() == 20e9);
  CHECK(d.cuts() == 0);
  ctx.now_ = Time::us(4);  // within the monitor period of that setting
  d.on_cnp(ctx);
  CHECK(d.cuts() == 0);
  run_until(d, ctx, Time::us(7));
  CHECK(d.cuts() == 1);
}

TEST_CASE("dcqcn notification point: at most one CNP per min_time_between_cnps, or echoes",
          "[quick][cc][dcqcn]") {
  DcqcnConfig c;
  c.min_time_between_cnps = Time::us(2);
  Dcqcn d(c);
  FakeContext ctx;
  d.on_start(ctx);
  for (int64_t ns : {0, 500, 1999, 2000, 2500, 4100}) {
    ctx.now_ = Time::ns(ns);
    d.on_ecn_marked(ctx, CcMarked{});
  }
  CHECK(ctx.cnps == std::vector<Time>{Time::ns(0), Time::ns(2000), Time::ns(4100)});
  CHECK(d.cnps_sent() == 3);
  DcqcnConfig e;
  e.notification = DcqcnConfig::Notification::kAckEcho;
  Dcqcn echo(e);
  FakeContext ctx2;
  echo.on_start(ctx2);
  for (int i = 0; i < 3; ++i) echo.on_ecn_marked(ctx2, CcMarked{});
  CHECK(ctx2.echoes == 3);
  CHECK(ctx2.cnps.empty());
  // The reaction point treats an echoed ACK as a CNP (and ignores echoes in
  // "cnp" mode).
  CcAck ack;
  ack.ecn_echo = true;
  echo.on_ack(ctx2, ack);
  CHECK(echo.cuts() == 1);
  d.on_ack(ctx, ack);
  CHECK(d.cuts() == 0);
  // A READ response is never acknowledged: in "ack_echo" mode a marked one
  // is answered with a CNP, not an echo that no ACK would carry.
  CcMarked read;
  read.opcode = 0x0F;  // RDMA READ Response Last (IBA Table 37)
  echo.on_ecn_marked(ctx2, read);
  CHECK(ctx2.echoes == 3);
  CHECK(ctx2.cnps.size() == 1);
  // Nor is a READ request (its responses answer it): an echo set on the
  // responder's QP would wait for an ACK it never sends, or ride a later
  // NAK as a stale signal. A CNP, as in "cnp" mode.
  CcMarked request;
  request.opcode = 0x0C;  // RDMA READ Request (IBA Table 37)
  ctx2.now_ = Time::us(100);
  echo.on_ecn_marked(ctx2, request);
  CHECK(ctx2.echoes == 3);
  CHECK(ctx2.cnps.size() == 2);
}

TEST_CASE("dcqcn parameters: presets, ranges, and the cross-key check", "[quick][cc][dcqcn]") {
  const Fields<DcqcnConfig>& t = dcqcn_params();
  const Param* preset = t.find("preset");
  REQUIRE(preset != nullptr);
  std::vector<std::string> names;
  for (const ParamPreset& p : preset->presets) {
    names.push_back(p.name);
    // Every preset names every key, so that it replaces an inherited setting.
    CHECK(p.values.size() == t.params().size() - 1);
  }
  CHECK(names == std::vector<std::string>{"connectx5", "barre_tuned", "sigcomm15", "ns3_hpcc"});
  CHECK(t.find("rpg_min_dec_fac")->imax == 100);
  CHECK(t.find("initial_alpha_value")->imax == 1024);
  DcqcnConfig c;
  c.rpg_max_rate = BitRate::mbps(1);
  c.rpg_min_rate = BitRate::mbps(2);
  CHECK(check_dcqcn(c).starts_with("rpg_min_rate: "));
  CHECK(check_dcqcn(DcqcnConfig{}).empty());
}

}  // namespace rdmasim
