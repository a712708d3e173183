// Workload: what drives a run's hosts (flows today; collectives later). The
// runner sees every workload through this interface only: it builds them,
// weighs the hosts for partitioning by them, shows their progress and takes
// the run's status from them.
//
// Contract:
//  1. A workload builds at construction, on the NICs of the hosts it uses:
//     it creates and connects its own QPs and is their CompletionHandler
//     (models/nic/rdma_nic.h contract 4), so it receives the completions of
//     its QPs and only those; other workloads share the NICs freely.
//  2. It is a Component: the runner makes it an observer in a partitioned run
//     (sim/simulation.h contract 5), so it may post into NICs of any
//     partition; what it writes from completions belongs to the QP's own
//     partition.
//  3. While work is outstanding it holds (sim/partition.h) the partitions it
//     waits on and releases each hold when that work completes or fails, so
//     the run stops after the same event on any number of threads.
//  4. host_bytes(), bytes_total() and the counts are fixed by the scenario
//     (known before setup); progress(), finished() and failed() may be read
//     between phases, as the progress hook does.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/simulation.h"

namespace rdmasim {

class Workload : public Component {
 public:
  using Component::Component;

  // Payload bytes each host sends and receives in total, added to `bytes`
  // (indexed by host index): the partitioner's weight of each host.
  virtual void host_bytes(std::vector<int64_t>& bytes) const = 0;
  // Payload bytes the workload moves in all, and those delivered so far.
  virtual int64_t bytes_total() const = 0;
  virtual int64_t bytes_delivered() const = 0;
  // Units of work (flows, collective iterations): in all, completed
  // successfully, and ended with an error (a QP in error).
  virtual size_t units() const = 0;
  virtual size_t completed() const = 0;
  virtual size_t failed() const = 0;
  bool finished() const { return completed() == units(); }
};

}  // namespace rdmasim
