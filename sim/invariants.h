// Invariants: what the simulator checks of its own state when checks are on
// (docs/reliability.md, "Invariants"). A violation is a bug of the simulator,
// never of the input: the run stops (or, for the checks made at its end,
// ends) with status `invariant_violated`, one line naming the invariant, the
// component and the simulated time, and exit code 8.
//
// Contract:
//  1. Checks are a switch of the run, not global state: RunOptions::check
//     (`rdmasim run --check`) turns them on for one Simulation
//     (Simulation::set_checks), which hands the flag to its partitions; a
//     component reads sim().checks() when it is set up and keeps a bool.
//  2. Off, a check costs at most a predictable branch on a member bool on
//     the hot path (or nothing: the checks made at the end of a run).
//  3. On by default in Debug builds (NDEBUG undefined) and in the tests
//     (test/support), off by default in Release.
//  4. What is checked, and where the state lives:
//     - event_in_past: no event is scheduled before its partition's clock
//       (checked as events are taken, Partition::dispatch_one: an event due
//       before the clock was scheduled in the past; and asserted in
//       Partition::schedule/reschedule where assertions are on);
//     - buffer_accounting: a switch's MMU counts are never negative and never
//       above its buffer (models/switch/mmu.h, after every admit and release);
//     - lossless_drop: a lossless priority drops only when its headroom is
//       below the worst-case automatic value (every frame minimum-size;
//       models/switch/switch.cpp, and a NIC's
//       receive buffer, models/nic/rdma_nic.cpp; such drops are counted, not
//       violations), when a pause may have been lost (its cable went down or
//       has bit errors), or after the neighbour's PFC watchdog forwarded
//       ignoring the pause (kFlagPauseIgnored; counted); on InfiniBand,
//       where credits admit every packet, any drop for want of buffer at a
//       switch or at a NIC's receive buffer (RdmaNic::receive);
//     - flow_bytes: per flow and direction, payload bytes sent = delivered +
//       in flight + dropped (sim/scenario/invariant_checks.h, end of run);
//     - qp_end_state: every QP, of flows and of collectives' connections,
//       ends complete, in a reported error, or still open in a run that did
//       not complete (end of run); flow_bytes covers collectives too.
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>

#include "sim/packet.h"
#include "sim/units.h"

namespace rdmasim {

#ifdef NDEBUG
inline constexpr bool kChecksByDefault = false;
#else
inline constexpr bool kChecksByDefault = true;
#endif

// Exit code of a run that violated an invariant (docs/reliability.md).
inline constexpr int kInvariantExitCode = 8;

class InvariantViolation : public std::logic_error {
 public:
  // `invariant`: its name (above); `where`: the component (node, port,
  // priority, flow or QP); `at`: the simulated time; `detail`: the values.
  InvariantViolation(const std::string& invariant, const std::string& where, Time at,
                     const std::string& detail)
      : std::logic_error("invariant " + invariant + " violated at " + where +
                         ", t=" + to_string(at) + ": " + detail),
        invariant_(invariant) {}
  const std::string& invariant() const { return invariant_; }

 private:
  std::string invariant_;
};

// Payload bytes of the data packets one component lost (dropped, or
// discarded as a link does a corrupted frame), by the QP that sent them:
// the "dropped" of flow_bytes. Kept only with checks on, and written only on
// the paths that lose a packet, which are off the hot path.
class LossLedger {
 public:
  static uint64_t key(uint32_t host, uint32_t qpn) { return (uint64_t{host} << 32) | qpn; }
  void add(const Packet& p) {
    if (p.kind == PacketKind::kData) bytes_[key(p.src, p.src_qpn)] += p.payload_bytes;
  }
  // Into `to`, by key.
  void add_to(std::map<uint64_t, int64_t>& to) const {
    for (const auto& [k, b] : bytes_) to[k] += b;
  }

 private:
  std::map<uint64_t, int64_t> bytes_;
};

}  // namespace rdmasim
