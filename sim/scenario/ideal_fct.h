// Ideal FCT: a flow's completion time alone on the idle fabric, in closed
// form from the model (docs/scenario.md, "Ideal FCT and slowdown", states
// the formula and when it is exact).
//
// Contract:
//  1. The ideal is computed, never simulated: it follows the model's own
//     timing rules (sim/link.h: each frame's serialisation rounded down with
//     the remainder carried, cut-through heads rounded up; the switch's
//     pipeline latency; the NIC's per-QP pacing and acknowledgements) for
//     the flow's own path (sim/scenario/flow_route.h), from the start of
//     its first packet to its requester's completion.
//  2. One QP (`qps` 1), WRITE, SEND or READ: equal to the simulated FCT of
//     the flow run alone, to the picosecond, under the conditions the docs
//     give. Several QPs: the parts are taken to share the first part's path
//     and the port round robin (exact when they do, unpaced); with a rate,
//     paced in rounds (documented difference).
//  3. Cost: O(hops x candidates) per flow, candidates being a few packets
//     per run of equal packets (first, second, second to last, last, and
//     those whose rounding decides), not the packets of the flow.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "models/nic/nic_config.h"
#include "models/proto/roce_v2.h"
#include "models/switch/switch_config.h"
#include "models/traffic/flow_generator.h"
#include "sim/scenario/flow_route.h"
#include "sim/units.h"
#include "topologies/topology.h"

namespace rdmasim {

// ---- the closed form on one path, for any stream of packets (testable alone) ----

// One link direction of a path.
struct PathHop {
  BitRate rate;
  Time delay;
};

// What every switch on a path does to a frame.
struct SwitchTiming {
  Time latency;  // pipeline latency
  bool cut_through = false;
  Bytes cut_through_bytes = Bytes(64);
};

// Packets that leave one source in order: runs of equal wire sizes.
class PacketStream {
 public:
  void append(uint32_t wire_bytes, uint64_t count);
  uint64_t size() const { return total_; }
  // Wire bytes of packet k (1-based).
  uint32_t wire(uint64_t k) const;
  // Wire bytes of packets 1..k.
  int64_t bytes_through(uint64_t k) const;
  struct Run {
    uint32_t wire;
    uint64_t first;  // index of its first packet (1-based)
    uint64_t count;
  };
  const std::vector<Run>& runs() const { return runs_; }

 private:
  std::vector<Run> runs_;
  std::vector<int64_t> bytes_before_;  // per run
  uint64_t total_ = 0;
};

// How the source releases the stream's packets onto its first link.
struct Pacing {
  // 0: line rate. Otherwise each QP may start a packet only wire bytes / rate
  // (rounded up) after its previous one started (RdmaNic's rate limiter).
  BitRate rate;
  // QPs sharing the port round robin, one packet per turn, each paced at
  // `rate`: packet k of the stream belongs to round (k-1)/qps.
  uint32_t qps = 1;
};

// Arrival (last bit, at the host beyond the path) of stream packets `want`
// (1-based), the first packet starting at time 0.
std::vector<Time> stream_arrivals(std::span<const PathHop> path, const SwitchTiming& sw,
                                  const PacketStream& stream, const Pacing& pacing,
                                  std::span<const uint64_t> want,
                                  std::span<const uint64_t> extra_candidates = {});

// A few frames of one size class each sent into a path at given release
// times: frame i is the `ordinal[i]`-th frame of its size on every link of
// the path (its serialisation's rounding carry follows from that). Exact,
// frame by frame. Returns arrivals at the far host.
struct ShortFrame {
  Time release;
  uint32_t wire;
  uint64_t ordinal;  // 1-based
};
std::vector<Time> short_arrivals(std::span<const PathHop> path, const SwitchTiming& sw,
                                 std::span<const ShortFrame> frames);

// ---- a scenario's flows ----

class IdealFct {
 public:
  // `format` frames the network's ports, `nvlink` the GPUs' NVLink ports
  // (whose switches, NVSwitches, are configured by `nvswitch`).
  IdealFct(const Topology& topo, const Routes& routes, const NicConfig& nic, const SwitchConfig& sw,
           const TransportFormat& format, uint64_t seed, const TransportFormat& nvlink,
           const SwitchConfig& nvswitch);

  // The ideal FCT of flow `f`, whose parts run on the QP pairs `parts`
  // ((requester QPN, responder QPN), in posting order).
  Time of(const FlowSpec& f, std::span<const std::pair<uint32_t, uint32_t>> parts) const;

 private:
  std::vector<PathHop> hops(const std::vector<uint32_t>& rows) const;

  const Topology& topo_;
  const NicConfig& nic_;
  const TransportFormat& format_;
  const TransportFormat& nvlink_;
  FlowRouter router_;
  SwitchTiming timing_;
  SwitchTiming nvswitch_timing_;
};

}  // namespace rdmasim
