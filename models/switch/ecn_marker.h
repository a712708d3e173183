// EcnMarker: RED-style ECN marking of egress queues, the congestion point of
// DCQCN (Zhu et al., SIGCOMM 2015, §3; NVIDIA DOCA "DCQCN"). A packet that
// finds q bytes in its queue (as the MMU counts them, itself excluded) is
// marked with probability 0 for q <= kmin, pmax (q - kmin) / (kmax - kmin)
// for kmin < q <= kmax, and 1 above kmax. Only ECN-capable packets (ECT(0),
// ECT(1)) are marked; a mark sets the IP ECN field to CE (RFC 3168 §5).
//
// Contract:
//  1. The switch owns one when fabric.switch.ecn is enabled and calls it
//     directly (not through the egress hooks' table and virtual call: it
//     runs on every packet of a marking fabric) at the point `ecn.mark`
//     names (enqueue or dequeue), before any egress hook; it marks only the
//     queues of `ecn.priorities`.
//  2. It draws from the switch's own stream, which per-packet spraying shares:
//     one uniform draw per ECT packet with kmin < q <= kmax, in the order the
//     switch sees them, and none otherwise.
//  3. Thresholds are per port, fixed at setup from the port's link rate
//     (red_for): the `ecn.by_rate` entry of that rate if there is one (ns-3's
//     KMIN_MAP / KMAX_MAP / PMAX_MAP, as the HPCC simulator sets them), else
//     ecn's own kmin, kmax, pmax.
//  4. The common outcome needs no call: the switch keeps priorities() and
//     each port's floor() (kmin, or below every queue while the probe
//     listens, as it does at setup) in lines a hop reads anyway, and calls
//     decide() only for an ECT packet of a marking priority whose queue is
//     above the floor. The probe is attached before the run.
#pragma once

#include <cstdint>
#include <vector>

#include "models/switch/mmu.h"
#include "models/switch/switch_config.h"
#include "sim/packet.h"
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

class EcnMarker {
 public:
  // `probe` reports every decision on an ECN-capable packet: (q, marked).
  EcnMarker(const SwitchConfig& cfg, RngStream& rng, const Probe<int64_t, bool>& probe)
      : priorities_(cfg.ecn_mask), cfg_(cfg.ecn), rng_(rng), probe_(probe) {}
  EcnMarker(const EcnMarker&) = delete;
  EcnMarker& operator=(const EcnMarker&) = delete;

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

  // Bit p: priority p's queues mark (contract 4).
  uint8_t priorities() const { return priorities_; }
  // The queue length at or below which a packet of `port` is left unmarked
  // with no draw and nothing to report (contract 4).
  int64_t floor(uint32_t port) const { return probe_.attached() ? INT64_MIN : red_[port].kmin; }
  // Whether `p`, ECT and of a marking priority, bound for egress port
  // `port` whose queue holds `q` bytes as the MMU counts them (`p`'s own
  // charge excluded), is marked: RED on q, reported to the probe.
  [[gnu::noinline]] void decide(uint32_t port, Packet& p, int64_t q) {
    const bool m = red(red_[port], q);
    probe_.emit(q, m);
    if (m) {
      p.ecn = 3;
      ++marked_[size_t{port} * kEthernetPriorities + p.priority];
      ++total_;
    }
  }

  const RedThresholds& thresholds(uint32_t port) const { return red_[port]; }
  // Packets marked, in all and per egress queue.
  uint64_t marked() const { return total_; }
  uint64_t marked(uint32_t port, uint8_t prio) const {
    return marked_[size_t{port} * kEthernetPriorities + prio];
  }

 private:
  bool red(const RedThresholds& r, int64_t q) {
    if (q > r.kmax) return true;
    if (q <= r.kmin) return false;
    const double prob =
        r.pmax * static_cast<double>(q - r.kmin) / static_cast<double>(r.kmax - r.kmin);
    return rng_.uniform01() < prob;
  }

  uint8_t priorities_;              // bit p: priority p's queues mark
  std::vector<RedThresholds> red_;  // per port
  const EcnConfig& cfg_;
  RngStream& rng_;
  const Probe<int64_t, bool>& probe_;
  std::vector<uint64_t> marked_;  // per (port, priority)
  uint64_t total_ = 0;
};

}  // namespace rdmasim
