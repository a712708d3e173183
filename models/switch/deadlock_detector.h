// DeadlockDetector: finds PFC deadlocks — cycles of paused lossless queues
// that have all stopped sending (Hu et al., HotNets 2016: a cyclic buffer
// dependency with every queue of the cycle paused).
//
// Every `interval` it looks at the switches' egress queues:
//  - a queue is *stuck* when it holds packets, is paused by its downstream
//    neighbour, and has not started a frame for `timeout`;
//  - a stuck queue at switch A towards switch B waits for B's ingress queue
//    (the A-facing port, same priority) to drain, i.e. for every egress queue
//    of B that holds packets which came from A on that priority: those are
//    its successors;
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
  uint8_t priority;
};

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
