// DCQCN (Zhu et al., "Congestion Control for Large-Scale RDMA Deployments",
// SIGCOMM 2015, §3), with the semantics and parameter names of NVIDIA
// ConnectX firmware: the reaction point (RP, the sender's rate limiter) and
// the notification point (NP, the receiver's CNP generator) of one QP. The
// congestion point is the switches' ECN marking (models/switch/ecn_marker.h).
// docs/congestion-control.md states every rule below with its source.
//
// Contract (one object per QP; both ends of a connection carry one):
//  1. RP state: a rate limiter of current rate RC, target rate RT, alpha.
//     A QP starts without one, at line rate unpaced; its first congestion
//     signal (a CNP, or an ACK with an ECN echo when `notification` is
//     "ack_echo") allocates it, alpha = initial_alpha_value / 1024.
//  2. Cut: on a signal, at once if no cut happened in the last
//     rate_reduce_monitor_period, else once at the end of that period.
//     RT <- RC if clamp_tgt_rate, or if clamp_tgt_rate_after_time_inc and a
//     timer increase happened since the last cut; then
//     RC <- max(RC (1 - alpha/2), RC rpg_min_dec_fac/100, rpg_min_rate).
//     A cut resets both increase counters and restarts the increase timer.
//     With rate_to_set_on_first_cnp set, the first signal sets RC and RT to
//     it (at most line rate) instead of cutting.
//  3. Alpha: updated at t0 + k dce_tcp_rtt (t0 the first signal):
//     alpha <- (G alpha + (1024 - G)) / 1024 if a signal arrived in the
//     interval, (G / 1024) alpha otherwise, G = dce_tcp_g. Computed when
//     needed (it costs no events); a signal at an update's instant counts in
//     that update (deliveries precede timers at one instant).
//  4. Increase events, after a cut: every rpg_time_reset (timer stage T)
//     and every rpg_byte_reset payload bytes sent (byte stage B; 0 disables
//     the byte counter). With F = rpg_threshold: fast recovery while
//     max(T, B) <= F, hyper increase when min(T, B) > F, additive increase
//     between; with the byte counter off the timer alone decides: T <= F
//     fast recovery, T = F + 1 additive, T > F + 1 hyper. Fast recovery:
//     RC <- (RT + RC) / 2; additive: RT += rpg_ai_rate first; hyper: RT +=
//     rpg_hai_rate first; RT never above line rate. The timer keeps its
//     period in every stage.
//  5. Release: an increase that brings RC to rpg_max_rate (line rate if 0
//     or above it), to within 0.5 bit/s, releases the limiter, unless a cut
//     is pending: the QP sends at line rate unpaced, the timer stops, and
//     the next signal is a first signal again (NVIDIA's rpg_max_rate: "Once
//     this limit is reached, the RP rate limiter is released and the flow
//     is not rate limited any more"; mlxconfig help, DOCA DCQCN page).
//  6. NP: on a CE-marked packet, a CNP at once if none was sent in the last
//     min_time_between_cnps ("cnp"), or an ECN echo on the ACK the packet
//     triggers ("ack_echo", as ns-3's RDMA module in the HPCC code base).
//     A READ response is never acknowledged, so in "ack_echo" mode a marked
//     one is answered with a CNP (under the same limit) instead.
#pragma once

#include <memory>

#include "models/cc/congestion_control.h"
#include "sim/params.h"
#include "sim/probe.h"
#include "sim/units.h"

namespace rdmasim {

struct DcqcnConfig {
  enum class Notification : uint8_t { kCnp, kAckEcho };
  // ---- notification point ----
  Notification notification = Notification::kCnp;
  Time min_time_between_cnps = Time::us(2);
  // ---- reaction point: decrease ----
  Time rate_reduce_monitor_period = Time::us(4);
  int initial_alpha_value = 1023;  // alpha = value / 1024
  int dce_tcp_g = 1019;            // g = (1024 - G) / 1024
  Time dce_tcp_rtt = Time::us(1);  // alpha update period
  int rpg_min_dec_fac = 50;        // percent: a cut keeps at least this share
  BitRate rpg_min_rate = BitRate::mbps(1);
  BitRate rate_to_set_on_first_cnp;  // 0: off (the first signal cuts as any other)
  bool clamp_tgt_rate = false;
  bool clamp_tgt_rate_after_time_inc = true;
  // ---- reaction point: increase ----
  Time rpg_time_reset = Time::us(300);
  Bytes rpg_byte_reset = Bytes(32767);  // 0: no byte counter
  int rpg_threshold = 1;                // F: fast-recovery stages
  BitRate rpg_ai_rate = BitRate::mbps(5);
  BitRate rpg_hai_rate = BitRate::mbps(50);
  BitRate rpg_max_rate;  // the release rate; 0: line rate
};

// The keys of `fabric.cc.dcqcn` (and `traffic[i].cc.dcqcn`), with presets.
const Fields<DcqcnConfig>& dcqcn_params();
// Cross-key checks after reading: "" if the config is consistent, else
// "key: problem (expected ...)".
std::string check_dcqcn(const DcqcnConfig& c);

// What the RP's state is after a change (outputs, tests).
struct DcqcnState {
  Time time;
  double rc_bps = 0;  // current rate
  double rt_bps = 0;  // target rate
  double alpha = 0;
  enum class Event : uint8_t { kCut, kFirstSignal, kIncrease } event = Event::kCut;
  // The increase released the limiter (contract 5): RC and RT are line
  // rate; alpha is the limiter's last.
  bool released = false;
  int timer_stage = 0;
  int byte_stage = 0;
};

class Dcqcn : public CongestionControl {
 public:
  explicit Dcqcn(const DcqcnConfig& cfg) : c_(cfg) {
    // Packets sent drive the byte counter only; ACKs matter only when they
    // carry the notification (congestion_control.h contract 7).
    const bool echo = c_.notification == DcqcnConfig::Notification::kAckEcho;
    set_needs((c_.rpg_byte_reset.count() > 0 ? kNeedSent : 0) |
              (echo ? kNeedAck | kNeedAckOut : 0));
  }

  void on_start(CcContext& ctx) override;
  void on_packet_sent(CcContext& ctx, const CcSent& sent) override;
  void on_ack(CcContext& ctx, const CcAck& ack) override;
  void on_cnp(CcContext& ctx) override;
  void on_ecn_marked(CcContext& ctx, const CcMarked& marked) override;
  void on_timer(CcContext& ctx) override;

  // ---- observation ----
  double rate_bps() const { return rc_; }
  double target_bps() const { return rt_; }
  // Alpha as of `now` (contract 3).
  double alpha(Time now) const;
  uint64_t cuts() const { return cuts_; }
  uint64_t signals() const { return signals_; }
  uint64_t cnps_sent() const { return cnps_sent_; }
  // Every change of RC or RT (a cut, the first signal, an increase).
  Probe<const DcqcnState&> changed;
  // The outputs' view of `changed` (RC, RT and alpha) and of cuts()
  // (congestion_control.h contract 8).
  bool observe(CcStateSink sink) override {
    changed.attach([sink = std::move(sink)](const DcqcnState& s) {
      sink(CcState{s.time, s.rc_bps, s.rt_bps, s.alpha, -1});
    });
    return true;
  }
  uint64_t decreases() const override { return cuts_; }
  // Limiter releases (contract 5).
  uint64_t releases() const override { return releases_; }

 private:
  void signal(CcContext& ctx);
  void cut(CcContext& ctx);
  void increase(CcContext& ctx, bool timer);
  // Applies the alpha updates at instants before `now`.
  void settle_alpha(Time now);
  void apply_rate(CcContext& ctx);
  void arm(CcContext& ctx);
  void report(CcContext& ctx, DcqcnState::Event e, bool released = false);

  const DcqcnConfig& c_;
  // What every packet sent reads (on_packet_sent) and every CE-marked one
  // (on_ecn_marked), in the object's first line with the base's needs.
  bool started_ = false;   // a limiter is allocated (a signal since the start or release)
  bool cnp_sent_ = false;  // NP: a CNP was sent (last_cnp_ is valid)
  Time increase_at_ = Time::infinite();
  int64_t bytes_since_cut_ = 0;
  Time last_cnp_;
  // The QP's port's line rate, read at the start and at each first signal
  // (a QP may move to another port when routes reconverge).
  void read_line_rate(const CcContext& ctx);
  double line_bps_ = 0;     // the port's line rate (read_line_rate)
  double release_bps_ = 0;  // rpg_max_rate, at most line rate
  double rc_ = 0;
  double rt_ = 0;
  // Alpha as of alpha_at_, and whether a signal arrived in the interval
  // ending at the next update (alpha_at_ + dce_tcp_rtt).
  double alpha_ = 0;
  Time alpha_at_;
  bool signalled_in_interval_ = false;
  Time last_cut_;
  bool cut_pending_ = false;
  int timer_stage_ = 0;
  int byte_stage_ = 0;
  uint64_t cuts_ = 0;
  uint64_t signals_ = 0;
  uint64_t cnps_sent_ = 0;
  uint64_t releases_ = 0;
};

}  // namespace rdmasim
