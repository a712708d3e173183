// DeadlockDetector: finds link-level flow-control deadlocks — cycles of
// lossless queues that have all stopped sending because each waits for the
// buffer of the next (Hu et al., HotNets 2016: a cyclic buffer dependency
// with every queue of the cycle paused). PFC queues wait for a resume;
// InfiniBand VLs wait for credits (IBA §7.9: the credit loop of a cyclic
// route, the same cyclic buffer dependency).
//
// Every `interval` it looks at the switches' egress queues:
//  - a queue is *stuck* when it holds packets, cannot send its head packet
//    (PFC: paused by its downstream neighbour; credits: the head packet
//    needs more blocks than the neighbour's VL buffer has granted,
//    Switch::egress_blocked), and has not started a frame for `timeout`;
//  - a stuck queue at switch A towards switch B waits for B's ingress queue
//    (the A-facing port, same priority or VL) to drain, i.e. for every
//    egress queue of B that holds packets which came from A on that lane:
//    those are its successors;
//  - a cycle of stuck queues is a deadlock: nothing in it can ever move
//    again. The detector records the cycle and stops the run.
// It only reads the switches' state (like a sampler); it never changes it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/switch/switch.h"
#include "sim/simulation.h"

namespace rdmasim {

struct DeadlockQueue {
  uint32_t node;  // switch node id (Component id)
  std::string name;
  uint32_t port;
  uint8_t priority;                         // the lane: priority (PFC) or VL (credits)
  BlockedBy blocked_by = BlockedBy::kNone;  // kPause or kCredits
};

// How a report names what stops a queue: "paused" (PFC) or "credits".
inline const char* blocked_by_name(BlockedBy b) {
  switch (b) {
    case BlockedBy::kPause:
      return "paused";
    case BlockedBy::kCredits:
      return "credits";
    case BlockedBy::kNone:
      break;
  }
  return "none";
}

class DeadlockDetector : public Component {
 public:
  // With `stop`, a detected deadlock ends the run; without, it is recorded
  // (the first one) and the run goes on.
  DeadlockDetector(Simulation& sim, std::string name, std::vector<const Switch*> switches,
                   Time timeout, Time interval, bool stop = true);

  bool detected() const { return !cycle_.empty(); }
  Time detected_at() const { return detected_at_; }
  // The queues of the cycle, each waiting on the next (the last on the first).
  const std::vector<DeadlockQueue>& cycle() const { return cycle_; }

  void setup() override;

 private:
  void check();

  std::vector<const Switch*> switches_;
  Time timeout_;
  Time interval_;
  bool stop_;
  std::vector<DeadlockQueue> cycle_;
  Time detected_at_;
  MemberEvent<DeadlockDetector, &DeadlockDetector::check> tick_;
};

}  // namespace rdmasim
