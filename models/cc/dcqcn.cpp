#include "models/cc/dcqcn.h"

#include <algorithm>
#include <cmath>

#include "models/proto/ib_transport.h"

namespace rdmasim {

// ---- reaction point ----

void Dcqcn::on_start(CcContext& ctx) {
  read_line_rate(ctx);
  // No limiter until the first signal (contract 1).
  rc_ = rt_ = line_bps_;
  apply_rate(ctx);
}

void Dcqcn::read_line_rate(const CcContext& ctx) {
  const double line = static_cast<double>(ctx.line_rate().in_bps());
  line_bps_ = line;
  release_bps_ = c_.rpg_max_rate.in_bps() > 0
                     ? std::min(line, static_cast<double>(c_.rpg_max_rate.in_bps()))
                     : line;
}

double Dcqcn::alpha(Time now) const {
  if (!started_) return 0;
  // Updates at alpha_at_ + k K for k >= 1 that are before `now`: the first
  // counts the interval's signal, the others decay (contract 3).
  const Time k = c_.dce_tcp_rtt;
  if (now <= alpha_at_ + k) return alpha_;
  const int64_t n = (now - alpha_at_ - Time::ps(1)) / k;
  const double keep = static_cast<double>(c_.dce_tcp_g) / 1024.0;
  double a = alpha_ * keep + (signalled_in_interval_ ? 1.0 - keep : 0.0);
  if (n > 1) a *= std::pow(keep, static_cast<double>(n - 1));
  return a;
}

void Dcqcn::settle_alpha(Time now) {
  const Time k = c_.dce_tcp_rtt;
  if (!started_ || now <= alpha_at_ + k) return;
  const int64_t n = (now - alpha_at_ - Time::ps(1)) / k;
  alpha_ = alpha(now);
  alpha_at_ = alpha_at_ + k * n;
  signalled_in_interval_ = false;
}

void Dcqcn::signal(CcContext& ctx) {
  const Time now = ctx.now();
  ++signals_;
  if (!started_) {
    // The first signal allocates the limiter: alpha and its updates start
    // (contract 1), relative to the line rate of the QP's port now (routes
    // recomputed after a fault may have moved it to another port).
    read_line_rate(ctx);
    started_ = true;
    alpha_ = static_cast<double>(c_.initial_alpha_value) / 1024.0;
    alpha_at_ = now;
    signalled_in_interval_ = true;
    if (c_.rate_to_set_on_first_cnp.in_bps() > 0) {
      rc_ = rt_ = std::min(line_bps_, static_cast<double>(c_.rate_to_set_on_first_cnp.in_bps()));
      last_cut_ = now;
      timer_stage_ = byte_stage_ = 0;
      bytes_since_cut_ = 0;
      increase_at_ = now + c_.rpg_time_reset;
      apply_rate(ctx);
      report(ctx, DcqcnState::Event::kFirstSignal);
      arm(ctx);
      return;
    }
    cut(ctx);
    return;
  }
  settle_alpha(now);
  signalled_in_interval_ = true;
  if (now - last_cut_ >= c_.rate_reduce_monitor_period) {
    cut(ctx);
  } else if (!cut_pending_) {
    // One cut per monitor period: this signal's, at the period's end.
    cut_pending_ = true;
    arm(ctx);
  }
}

void Dcqcn::cut(CcContext& ctx) {
  const Time now = ctx.now();
  settle_alpha(now);
  if (c_.clamp_tgt_rate || (c_.clamp_tgt_rate_after_time_inc && timer_stage_ > 0)) rt_ = rc_;
  const double a = alpha(now);
  const double floor_fac = rc_ * static_cast<double>(c_.rpg_min_dec_fac) / 100.0;
  // The floors bound the cut; a cut never raises RC (it may already be below
  // rpg_min_rate after rate_to_set_on_first_cnp).
  rc_ =
      std::min(rc_, std::max({rc_ * (1.0 - a / 2.0), floor_fac,
                              std::min(line_bps_, static_cast<double>(c_.rpg_min_rate.in_bps()))}));
  ++cuts_;
  last_cut_ = now;
  cut_pending_ = false;
  timer_stage_ = byte_stage_ = 0;
  bytes_since_cut_ = 0;
  increase_at_ = now + c_.rpg_time_reset;
  apply_rate(ctx);
  report(ctx, DcqcnState::Event::kCut);
  arm(ctx);
}

void Dcqcn::increase(CcContext& ctx, bool timer) {
  if (timer) {
    ++timer_stage_;
  } else {
    ++byte_stage_;
  }
  const int f = c_.rpg_threshold;
  enum class Stage { kFast, kAdditive, kHyper } stage;
  if (c_.rpg_byte_reset.count() == 0) {
    stage = timer_stage_ <= f ? Stage::kFast
                              : (timer_stage_ == f + 1 ? Stage::kAdditive : Stage::kHyper);
  } else {
    stage = std::max(timer_stage_, byte_stage_) <= f  ? Stage::kFast
            : std::min(timer_stage_, byte_stage_) > f ? Stage::kHyper
                                                      : Stage::kAdditive;
  }
  if (stage == Stage::kAdditive) rt_ += static_cast<double>(c_.rpg_ai_rate.in_bps());
  if (stage == Stage::kHyper) rt_ += static_cast<double>(c_.rpg_hai_rate.in_bps());
  rt_ = std::min(rt_, line_bps_);
  rc_ = (rt_ + rc_) / 2.0;
  // Released once RC reaches the release rate (contract 5; within the
  // pacing rate's resolution, 1 bit/s), unless a signal awaits its cut.
  if (rc_ < release_bps_ - 0.5 || cut_pending_) {
    apply_rate(ctx);
    report(ctx, DcqcnState::Event::kIncrease);
    return;
  }
  rc_ = rt_ = line_bps_;
  apply_rate(ctx);
  report(ctx, DcqcnState::Event::kIncrease, true);
  // The limiter's state goes with it: the next signal is a first signal.
  ++releases_;
  started_ = false;
  signalled_in_interval_ = false;
  timer_stage_ = byte_stage_ = 0;
  bytes_since_cut_ = 0;
  increase_at_ = Time::infinite();
}

void Dcqcn::apply_rate(CcContext& ctx) {
  // At line rate the QP is unpaced (pacing at line rate would only add
  // rounding); otherwise paced at RC, to the bit per second.
  ctx.set_rate(rc_ >= line_bps_ ? BitRate()
                                : BitRate::bps(std::max<int64_t>(1, std::llround(rc_))));
}

void Dcqcn::arm(CcContext& ctx) {
  Time next = increase_at_;
  if (cut_pending_) next = std::min(next, last_cut_ + c_.rate_reduce_monitor_period);
  if (next.is_infinite()) {
    ctx.cancel_timer();
  } else {
    ctx.schedule_timer(std::max(next, ctx.now()));
  }
}

void Dcqcn::on_timer(CcContext& ctx) {
  const Time now = ctx.now();
  if (cut_pending_ && now >= last_cut_ + c_.rate_reduce_monitor_period) {
    cut(ctx);  // restarts the increase timer
  } else if (now >= increase_at_) {
    increase_at_ = increase_at_ + c_.rpg_time_reset;
    increase(ctx, true);
  }
  arm(ctx);
}

void Dcqcn::on_packet_sent(CcContext& ctx, const CcSent& sent) {
  if (!started_ || c_.rpg_byte_reset.count() == 0 || increase_at_.is_infinite()) return;
  bytes_since_cut_ += sent.payload_bytes;
  if (bytes_since_cut_ < c_.rpg_byte_reset.count()) return;
  while (started_ && bytes_since_cut_ >= c_.rpg_byte_reset.count()) {
    bytes_since_cut_ -= c_.rpg_byte_reset.count();
    increase(ctx, false);
  }
  arm(ctx);  // the increase may have released the limiter
}

void Dcqcn::on_cnp(CcContext& ctx) { signal(ctx); }

void Dcqcn::on_ack(CcContext& ctx, const CcAck& ack) {
  if (ack.ecn_echo && c_.notification == DcqcnConfig::Notification::kAckEcho) signal(ctx);
}

void Dcqcn::report(CcContext& ctx, DcqcnState::Event e, bool released) {
  if (!changed.attached()) return;
  DcqcnState s;
  s.time = ctx.now();
  s.rc_bps = rc_;
  s.rt_bps = rt_;
  s.alpha = alpha(ctx.now());
  s.event = e;
  s.released = released;
  s.timer_stage = timer_stage_;
  s.byte_stage = byte_stage_;
  changed.emit(s);
}

// ---- notification point ----

void Dcqcn::on_ecn_marked(CcContext& ctx, const CcMarked& marked) {
  // The requester sends no ACK for a READ response, nor the responder for
  // a READ request (its responses answer it): an echo would never reach
  // the packet's sender (its reaction point), so a CNP tells it instead.
  const bool unacked = marked.opcode == static_cast<uint8_t>(RcOpcode::kReadRequest) ||
                       (marked.opcode >= static_cast<uint8_t>(RcOpcode::kReadResponseFirst) &&
                        marked.opcode <= static_cast<uint8_t>(RcOpcode::kReadResponseOnly));
  if (c_.notification == DcqcnConfig::Notification::kAckEcho && !unacked) {
    ctx.echo_ecn();
    return;
  }
  const Time now = ctx.now();
  if (cnp_sent_ && now - last_cnp_ < c_.min_time_between_cnps) return;
  cnp_sent_ = true;
  last_cnp_ = now;
  ++cnps_sent_;
  ctx.send_cnp();
}

// ---- parameters ----

std::string check_dcqcn(const DcqcnConfig& c) {
  // A floor above the release rate would keep every cut above it: the next
  // increase would release the limiter.
  if (c.rpg_max_rate.in_bps() > 0 && c.rpg_min_rate > c.rpg_max_rate) {
    return "rpg_min_rate: " + to_string(c.rpg_min_rate) + " is above rpg_max_rate " +
           to_string(c.rpg_max_rate) + " (expected rpg_min_rate <= rpg_max_rate)";
  }
  return {};
}

namespace {

using Values = std::vector<std::pair<std::string, std::string>>;

// `base` with the keys of `changes` replaced.
Values with(Values base, const Values& changes) {
  for (const auto& [k, v] : changes) {
    for (auto& e : base) {
      if (e.first == k) e.second = v;
    }
  }
  return base;
}

// Every key, as NVIDIA ConnectX-5 firmware sets it (the keys' defaults): each
// preset names every key, so that a preset in traffic[i].cc replaces all of
// an inherited fabric.cc setting.
const Values kConnectX5 = {{"notification", "\"cnp\""},
                           {"min_time_between_cnps", "\"2us\""},
                           {"rate_reduce_monitor_period", "\"4us\""},
                           {"initial_alpha_value", "1023"},
                           {"dce_tcp_g", "1019"},
                           {"dce_tcp_rtt", "\"1us\""},
                           {"rpg_min_dec_fac", "50"},
                           {"rpg_min_rate", "\"1Mbps\""},
                           {"rate_to_set_on_first_cnp", "\"off\""},
                           {"clamp_tgt_rate", "false"},
                           {"clamp_tgt_rate_after_time_inc", "true"},
                           {"rpg_time_reset", "\"300us\""},
                           {"rpg_byte_reset", "32767"},
                           {"rpg_threshold", "1"},
                           {"rpg_ai_rate", "\"5Mbps\""},
                           {"rpg_hai_rate", "\"50Mbps\""},
                           {"rpg_max_rate", "\"line_rate\""}};

}  // namespace

const Fields<DcqcnConfig>& dcqcn_params() {
  static const Fields<DcqcnConfig> t = [] {
    using C = DcqcnConfig;
    using N = DcqcnConfig::Notification;
    Fields<C> f("dcqcn", "DCQCN (docs/congestion-control.md)");
    f.add_choice("preset", std::vector<std::pair<std::string, int64_t>>{})
        .optional("none: each key's default (the ConnectX-5 firmware's)")
        .preset("connectx5", kConnectX5,
                "NVIDIA ConnectX-5 firmware 16.27 defaults (mlxconfig output, 2020; NVIDIA DOCA "
                "\"DCQCN CC Parameters\"), min_time_between_cnps 2 µs as that output shows")
        .preset("barre_tuned",
                with(kConnectX5, {{"min_time_between_cnps", "\"2us\""},
                                  {"rpg_min_dec_fac", "90"},
                                  {"rate_reduce_monitor_period", "\"2us\""},
                                  {"rpg_ai_rate", "\"10Mbps\""},
                                  {"rpg_time_reset", "\"50us\""}}),
                "one point inside each tuned range of Barre et al., USENIX ATC 2025, table 2 "
                "(min_time_between_cnps 0–2 µs, rpg_min_dec_fac 80–98, rate_reduce_monitor_period "
                "1–4 µs, rpg_ai_rate 8–20 Mb/s, rpg_time_reset 20–100 µs); the rest as connectx5")
        .preset("sigcomm15",
                with(kConnectX5, {{"min_time_between_cnps", "\"50us\""},
                                  {"rate_reduce_monitor_period", "\"0s\""},
                                  {"initial_alpha_value", "1024"},
                                  {"dce_tcp_g", "1020"},
                                  {"dce_tcp_rtt", "\"55us\""},
                                  {"rpg_min_dec_fac", "0"},
                                  {"clamp_tgt_rate", "true"},
                                  {"rpg_time_reset", "\"55us\""},
                                  {"rpg_byte_reset", "\"10MB\""},
                                  {"rpg_threshold", "5"},
                                  {"rpg_ai_rate", "\"40Mbps\""},
                                  {"rpg_hai_rate", "\"200Mbps\""}}),
                "Zhu et al., SIGCOMM 2015, §3 and §5 (40 GbE): N 50 µs, K 55 µs, T 55 µs, B 10 MB, "
                "F 5, g 1/256, R_AI 40 Mb/s, alpha 1 at the first CNP, RT <- RC at every cut. The "
                "paper fixes no R_HAI (200 Mb/s is ns3-rdma's) and no monitor period (it cuts on "
                "every CNP, at most one per N). The paper's values under this model's (the "
                "firmware's) rules: alpha updated on a K grid from the first CNP, not at each CNP; "
                "a constant R_HAI per hyper increase, not i x R_HAI")
        .preset("ns3_hpcc",
                with(kConnectX5, {{"notification", "\"ack_echo\""},
                                  {"min_time_between_cnps", "\"0s\""},
                                  {"rate_reduce_monitor_period", "\"4us\""},
                                  {"initial_alpha_value", "1024"},
                                  {"dce_tcp_g", "1020"},
                                  {"dce_tcp_rtt", "\"1us\""},
                                  {"rpg_min_dec_fac", "0"},
                                  {"rpg_min_rate", "\"100Mbps\""},
                                  {"rpg_time_reset", "\"900us\""},
                                  {"rpg_byte_reset", "0"},
                                  {"rpg_threshold", "1"},
                                  {"rpg_ai_rate", "\"50Mbps\""},
                                  {"rpg_hai_rate", "\"100Mbps\""}}),
                "ns-3's RDMA module in the HPCC code base (simulation/mix/config.txt, rdma-hw.cc "
                "Mellanox mode): ECN echoed on the ACK of each marked packet, no byte counter, "
                "alpha every 1 µs, a cut at most every 4 µs, RP timer 900 µs, g 1/256, F 1, R_AI "
                "50 Mb/s, R_HAI 100 Mb/s, min rate 100 Mb/s")
        .doc("a set of defaults for the keys below; keys given explicitly override it");
    f.choice("notification", &C::notification,
             std::vector<std::pair<std::string, N>>{{"cnp", N::kCnp}, {"ack_echo", N::kAckEcho}})
        .doc(
            "how the receiver signals a CE-marked packet: a CNP (RoCE v2), or an ECN echo on the "
            "ACK the packet triggers, as ns-3's RDMA module does")
        .source("IBA Annex A17.9.3; HPCC rdma-hw.cc");
    f.time("min_time_between_cnps", &C::min_time_between_cnps)
        .doc("NP: at most one CNP per QP per this interval")
        .source("ConnectX-5: 2 µs (mlxconfig output); Barre table 2: 4 µs; paper N = 50 µs");
    f.time("rate_reduce_monitor_period", &C::rate_reduce_monitor_period)
        .doc("RP: at most one rate cut per this period; signals within it cut once at its end")
        .source("ConnectX: 4 µs");
    f.integer("initial_alpha_value", &C::initial_alpha_value, 0, 1024)
        .unit("1/1024")
        .doc(
            "alpha at the first congestion signal (also the first after a release, "
            "rpg_max_rate); 1024 means alpha = 1 (beyond the firmware's 10-bit 1023)")
        .source("ConnectX: 1023; paper: 1");
    f.integer("dce_tcp_g", &C::dce_tcp_g, 0, 1024)
        .unit("1/1024")
        .doc(
            "G: alpha <- (G alpha + 1024 − G) / 1024 after an interval with a signal, G alpha / "
            "1024 after one without; g = (1024 − G) / 1024")
        .source("ConnectX: 1019 (g ≈ 1/205); paper: g = 1/256, G = 1020");
    f.time("dce_tcp_rtt", &C::dce_tcp_rtt, Time::ns(1))
        .doc("alpha update period (the paper's K)")
        .source("ConnectX: 1 µs; paper: 55 µs");
    f.integer("rpg_min_dec_fac", &C::rpg_min_dec_fac, 0, 100)
        .unit("%")
        .doc("a cut leaves at least this share of the current rate")
        .source("ConnectX: 50");
    f.rate("rpg_min_rate", &C::rpg_min_rate)
        .doc("no cut goes below this rate")
        .source("ConnectX: 1 Mb/s");
    f.rate("rate_to_set_on_first_cnp", &C::rate_to_set_on_first_cnp)
        .word("off", BitRate(), "the first signal cuts as every other does")
        .doc(
            "the rate (current and target) the first congestion signal sets instead of a cut, "
            "at most line rate; the first signal after a release is a first signal again")
        .source("ConnectX: 0 (off)");
    f.boolean("clamp_tgt_rate", &C::clamp_tgt_rate)
        .doc("RT <- RC at every cut")
        .source("ConnectX: false; the paper's Eq. 1 does it");
    f.boolean("clamp_tgt_rate_after_time_inc", &C::clamp_tgt_rate_after_time_inc)
        .doc("RT <- RC at a cut if a timer increase happened since the last cut")
        .source("ConnectX: true");
    f.time("rpg_time_reset", &C::rpg_time_reset, Time::ns(1))
        .doc("rate-increase timer period (the paper's T), the same in every stage")
        .source("ConnectX: 300 µs; paper: 55 µs");
    f.bytes("rpg_byte_reset", &C::rpg_byte_reset)
        .doc(
            "an increase event every this many payload bytes sent (the paper's B); 0 disables the "
            "byte counter. Values above the firmware's 32767 are accepted (the paper's 10 MB)")
        .source("ConnectX: 32767; paper: 10 MB");
    f.integer("rpg_threshold", &C::rpg_threshold, 0, 31)
        .doc("F: fast-recovery stages before additive increase")
        .source("ConnectX: 1; paper: 5");
    f.rate("rpg_ai_rate", &C::rpg_ai_rate)
        .doc("additive increase of the target rate per event (R_AI)")
        .source("ConnectX: 5 Mb/s; paper: 40 Mb/s");
    f.rate("rpg_hai_rate", &C::rpg_hai_rate)
        .doc("hyper increase of the target rate per event (R_HAI)")
        .source("ConnectX: 50 Mb/s");
    f.rate("rpg_max_rate", &C::rpg_max_rate)
        .word("line_rate", BitRate(), "the port's line rate (the firmware's 0)")
        .doc(
            "the release rate: once an increase brings RC to it, the rate limiter is released "
            "(the QP sends at line rate, unpaced, and its next signal allocates a limiter "
            "again: initial_alpha_value and rate_to_set_on_first_cnp apply anew). Not a start "
            "rate nor a cap: a QP starts at line rate and RT is capped at line rate. Above the "
            "line rate: line rate")
        .source(
            "ConnectX: 0, full port speed (mlxconfig: \"Once this limit is reached, the RP rate "
            "limiter is released and the flow is not rate limited any more\")");
    return f;
  }();
  return t;
}

}  // namespace rdmasim
