// Invariant checks made at the end of a run (sim/invariants.h, contract 4):
// the QPs' end states and the bytes of every flow. Each check takes plain
// records, so a test can feed it a corrupted one; gather_* read them from a
// built and run fabric.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/scenario/run_result.h"
#include "sim/units.h"

namespace rdmasim {

struct Fabric;
class FlowGenerator;
class Collective;

// One QP at the end of a run.
struct QpEnd {
  std::string where;     // e.g. "flow 3 (name) part 0 sender host 5 QP 2"
  bool error = false;    // in the error state
  bool open = false;     // work posted or sent and not done
  bool reported = true;  // its error is reported (its flow failed, its NIC counted it)
};

// qp_end_state: every QP ends complete, in a reported error, or still open
// in a run that did not complete (time_limit, stalled, deadlock, or
// qp_error, which reports a failure). Throws InvariantViolation.
void check_qp_end_states(RunStatus status, const std::vector<QpEnd>& qps, Time now);

// One direction of one flow part: payload bytes of the data packets its
// sending QP put on the wire, and where they went.
struct FlowBytes {
  std::string where;
  int64_t sent = 0;
  int64_t delivered = 0;  // arrived at the receiving NIC
  int64_t in_flight = 0;  // on links, in switch pipelines and queues
  int64_t dropped = 0;    // by switches and links
};

// flow_bytes: sent = delivered + in flight + dropped. Throws
// InvariantViolation.
void check_flow_bytes(const std::vector<FlowBytes>& flows, Time now);

// The QPs of every flow part, then of every collective's connections (a
// collective's QP is open if it has work not yet sent, or sent work not yet
// arrived at its peer: the acknowledgements of a completed collective's last
// elements may still be on their way; its error is reported if the
// collective failed).
std::vector<QpEnd> gather_qp_ends(const Fabric& fabric, const FlowGenerator& traffic,
                                  const std::vector<Collective*>& collectives = {});
// Both directions of every flow part (data one way, ACKs' none; a READ's
// responses the other), then of every collective connection (elements one
// way, FIFO entries the other): needs a run with checks on.
std::vector<FlowBytes> gather_flow_bytes(const Fabric& fabric, const FlowGenerator& traffic,
                                         const std::vector<Collective*>& collectives = {});

}  // namespace rdmasim
