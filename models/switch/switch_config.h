// Parameters of the switch model (scenario key `fabric.switch`; every field is
// documented with its default and source in docs/switch.md).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "models/flow_control/link_flow_control.h"
#include "sim/units.h"

namespace rdmasim {

enum class Forwarding : uint8_t { kStoreAndForward, kCutThrough };
enum class Trust : uint8_t { kDscp, kPcp };
enum class EcnPoint : uint8_t { kEnqueue, kDequeue };
enum class EcmpMode : uint8_t {
  kHash,      // per-flow: a hash of the 5-tuple picks one equal-cost port
  kSpray,     // per-packet: a random equal-cost port for every packet
  kAdaptive,  // per-packet: the equal-cost port with the least queued bytes
};
enum class PfcThreshold : uint8_t { kDynamic, kStatic };
enum class WatchdogAction : uint8_t { kDrop, kForward };

// RED-style ECN marking of one egress queue (DCQCN paper §3),
// done by models/switch/ecn_marker.h.
struct EcnConfig {
  bool enabled = false;
  Bytes kmin = Bytes::kb(5);
  Bytes kmax = Bytes::kb(200);
  double pmax = 0.01;
  // Thresholds for ports of one link rate, instead of the three above (as
  // ns-3 users set KMIN_MAP / KMAX_MAP / PMAX_MAP), so that one fabric can
  // mix 100G and 400G links.
  struct ByRate {
    BitRate rate;
    Bytes kmin;
    Bytes kmax;
    double pmax = 0;
  };
  std::vector<ByRate> by_rate;
};

// Priority flow control (IEEE 802.1Qbb) at the switch's ingress.
struct PfcConfig {
  // Priorities that are lossless (PFC on): bit p set = priority p.
  uint8_t lossless_mask = 1 << 3;
  PfcThreshold threshold = PfcThreshold::kDynamic;
  // Dynamic: pause when an ingress queue's shared use reaches
  // (buffer - headroom - reserve - shared in use) >> alpha_shift (HPCC MMU).
  int alpha_shift = 3;
  Bytes resume_offset = Bytes(3072);
  // Static: pause at xoff bytes of ingress occupancy, resume below xon.
  Bytes xoff = Bytes::kb(100);
  Bytes xon = Bytes::kb(80);
  // Headroom per ingress port and lossless priority; 0 = the worst-case
  // formula (Cisco white paper c11-542809), from the port's link.
  Bytes headroom = Bytes(0);
  // Share (percent) of the headroom's wire time that the automatic value
  // takes to be minimum-size frames, each charged a whole cell (SONiC's
  // LOSSLESS_TRAFFIC_PATTERN small_packet_percentage).
  int small_packet_percentage = 100;
  // Pause time sent in each PFC frame, and when to refresh it while the
  // queue stays congested (fraction of the pause time elapsed).
  uint16_t quanta = 0xFFFF;
  double refresh = 0.5;
  // How long this switch's MAC takes to act on a PFC frame it receives.
  Time response_delay = Time::zero();
};

// PFC watchdog, as switch vendors implement it: a queue that stays paused
// with packets waiting longer than `timeout` is treated as stormed; for
// `restore` it drops (or forwards ignoring pauses) that queue's packets.
struct WatchdogConfig {
  bool enabled = false;
  Time timeout = Time::ms(100);
  Time restore = Time::ms(100);
  WatchdogAction action = WatchdogAction::kDrop;
};

// A priority rewrite rule (as Tagger installs at each bounce): a packet that
// arrives on one of `in_ports` with priority `from`, and leaves by one of
// `out_ports` (empty: any), leaves on priority `to`.
struct PriorityRewrite {
  std::vector<uint32_t> in_ports;
  std::vector<uint32_t> out_ports;
  uint8_t from = 0;
  uint8_t to = 0;
};

struct SwitchConfig {
  // ---- forwarding ----
  // Pipeline latency from a packet's arrival (its last bit; its header for
  // cut-through) to its enqueue at the egress port.
  Time latency = Time::zero();
  Forwarding forwarding = Forwarding::kStoreAndForward;
  // Cut-through: bytes of a frame (from the preamble) that must have arrived
  // before the switch acts on it: enough for the Ethernet, IP and UDP headers.
  Bytes cut_through_bytes = Bytes(64);
  EcmpMode ecmp = EcmpMode::kHash;
  // Include the BTH destination QP in the ECMP hash (spreads the QPs of one
  // host pair, as NVIDIA Spectrum can).
  bool hash_dest_qp = false;
  // Every switch salts its ECMP hash with its own seed (true), or all use the
  // same hash (false), which reproduces hash polarisation: a flow's choice at
  // one tier predicts its choice at the next.
  bool per_switch_hash_seed = true;

  // ---- classification (trust map) ----
  Trust trust = Trust::kDscp;
  // DSCP -> priority; default the class selector (DSCP >> 3): 26 -> 3, 48 -> 6.
  std::array<uint8_t, 64> dscp_to_priority = [] {
    std::array<uint8_t, 64> m{};
    for (int d = 0; d < 64; ++d) m[d] = static_cast<uint8_t>(d >> 3);
    return m;
  }();
  // The DSCP a packet gets when a rewrite moves it to priority p.
  std::array<uint8_t, kEthernetPriorities> priority_to_dscp = {0, 8, 16, 26, 34, 40, 48, 56};

  // ---- scheduling ----
  // Strict priorities are served first, highest first; the others share the
  // port by deficit weighted round robin with these weights (x the quantum).
  uint8_t strict_mask = (1 << 6) | (1 << 7);
  std::array<uint32_t, kEthernetPriorities> dwrr_weight = {1, 1, 1, 1, 1, 1, 1, 1};
  Bytes dwrr_quantum = Bytes(9216);

  // ---- buffer (MMU) ----
  Bytes buffer = Bytes::mb(32);
  uint32_t cell = 1;  // bytes per cell; a packet is charged whole cells
  // The largest Ethernet frame (fabric.ethernet_mtu), for the headroom formula.
  uint32_t max_frame = 9216;
  Bytes reserve = Bytes::kib(4);  // per ingress port and priority
  // Lossy queues: drop when an egress queue's bytes exceed
  // lossy_alpha x (free shared buffer), or when the buffer is full.
  double lossy_alpha = 1.0;

  PfcConfig pfc;
  EcnConfig ecn;
  uint8_t ecn_mask = 1 << 3;  // priorities whose queues mark
  EcnPoint ecn_point = EcnPoint::kEnqueue;
  WatchdogConfig watchdog;
  // Deadlock detection (models/switch/deadlock_detector.h): a cycle of paused
  // queues none of which has sent for `deadlock_timeout` stops the run.
  bool deadlock_detection = true;
  Time deadlock_timeout = Time::ms(1);
  bool deadlock_stop = true;  // stop the run when found (false: report and run on)

  bool lossless(uint8_t priority) const { return (pfc.lossless_mask >> priority) & 1; }
};

// The NVSwitch inside a GPU server, from the fabric's switch: NVLink ports
// only, so no PFC (no lossless priority: no pause frame is ever sent), no
// ECN marking, no watchdog, store-and-forward, and a buffer it never fills
// (2^50 bytes): lossless by construction, standing for NVLink's credits,
// which hold data back in the GPU instead (models/proto/nvlink.h). The
// queue it builds is bounded by what the GPUs have in flight. Pipeline
// latency, scheduling and ECMP are the fabric switch's.
inline SwitchConfig nvswitch_config(SwitchConfig c) {
  c.pfc.lossless_mask = 0;
  c.ecn.enabled = false;
  c.watchdog.enabled = false;
  c.forwarding = Forwarding::kStoreAndForward;
  c.buffer = Bytes(int64_t{1} << 50);
  c.lossy_alpha = 1.0;
  return c;
}

}  // namespace rdmasim
