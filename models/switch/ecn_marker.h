// EcnMarker: RED-style ECN marking of egress queues, the congestion point of
// DCQCN (Zhu et al., SIGCOMM 2015, §3; NVIDIA DOCA "DCQCN"). A packet that
// finds q bytes in its queue (as the MMU counts them, itself excluded) is
// marked with probability 0 for q <= kmin, pmax (q - kmin) / (kmax - kmin)
// for kmin < q <= kmax, and 1 above kmax. Only ECN-capable packets (ECT(0),
// ECT(1)) are marked; a mark sets the IP ECN field to CE (RFC 3168 §5).
//
// Contract:
//  1. The switch installs it as its first egress hook when
//     fabric.switch.ecn is enabled, for the queues of `ecn.priorities`, at
//     the point `ecn.mark` names (enqueue or dequeue).
//  2. It draws from the switch's own stream, which per-packet spraying shares:
//     one uniform draw per ECT packet with kmin < q <= kmax, in the order the
//     switch sees them, and none otherwise.
//  3. Thresholds are per port, fixed at setup from the port's link rate
//     (red_for): the `ecn.by_rate` entry of that rate if there is one (ns-3's
//     KMIN_MAP / KMAX_MAP / PMAX_MAP, as the HPCC simulator sets them), else
//     ecn's own kmin, kmax, pmax.
#pragma once

#include <cstdint>
#include <vector>

#include "models/switch/egress_hook.h"
#include "models/switch/switch_config.h"
#include "sim/probe.h"
#include "sim/rng.h"
#include "sim/units.h"

namespace rdmasim {

// One queue's RED curve, in bytes of the queue.
struct RedThresholds {
  int64_t kmin;
  int64_t kmax;
  double pmax;
};

class EcnMarker final : public EgressHook {
 public:
  // `probe` reports every decision on an ECN-capable packet: (q, marked).
  EcnMarker(const SwitchConfig& cfg, RngStream& rng, const Probe<int64_t, bool>& probe)
      : EgressHook(cfg.ecn_point == EcnPoint::kEnqueue ? kAtEnqueue : kAtDequeue),
        cfg_(cfg.ecn),
        rng_(rng),
        probe_(probe) {}

  // The thresholds of a port with this link rate.
  static RedThresholds red_for(const EcnConfig& ecn, BitRate rate) {
    for (const EcnConfig::ByRate& b : ecn.by_rate) {
      if (b.rate == rate) return {b.kmin.count(), b.kmax.count(), b.pmax};
    }
    return {ecn.kmin.count(), ecn.kmax.count(), ecn.pmax};
  }
  // Fixes each port's thresholds from its link rate (rates[port]); from
  // Switch::setup().
  void set_ports(const std::vector<BitRate>& rates) {
    red_.clear();
    for (const BitRate r : rates) red_.push_back(red_for(cfg_, r));
    marked_.assign(rates.size() * kEthernetPriorities, 0);
  }

  void on_enqueue(const EgressView& q, Packet& p) override { mark(q, p); }
  void on_dequeue(const EgressView& q, Packet& p) override { mark(q, p); }

  const RedThresholds& thresholds(uint32_t port) const { return red_[port]; }
  // Packets marked, in all and per egress queue.
  uint64_t marked() const { return total_; }
  uint64_t marked(uint32_t port, uint8_t prio) const {
    return marked_[size_t{port} * kEthernetPriorities + prio];
  }

 private:
  void mark(const EgressView& v, Packet& p) {
    if (p.ecn != 1 && p.ecn != 2) return;  // not ECN-capable (or already CE)
    const int64_t q = v.queue_bytes();
    const bool m = red(red_[v.port()], q);
    probe_.emit(q, m);
    if (m) {
      p.ecn = 3;
      ++marked_[size_t{v.port()} * kEthernetPriorities + v.priority()];
      ++total_;
    }
  }
  bool red(const RedThresholds& r, int64_t q) {
    if (q > r.kmax) return true;
    if (q <= r.kmin) return false;
    const double prob =
        r.pmax * static_cast<double>(q - r.kmin) / static_cast<double>(r.kmax - r.kmin);
    return rng_.uniform01() < prob;
  }

  const EcnConfig& cfg_;
  RngStream& rng_;
  const Probe<int64_t, bool>& probe_;
  std::vector<RedThresholds> red_;  // per port
  std::vector<uint64_t> marked_;    // per (port, priority)
  uint64_t total_ = 0;
};

}  // namespace rdmasim
