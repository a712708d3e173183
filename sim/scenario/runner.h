// Runner: builds the devices of a Scenario into a Simulation, runs it, and
// collects a RunResult. The one place that knows which model class each
// topology node becomes.
#pragma once

#include <functional>
#include <vector>

#include "sim/scenario/run_result.h"
#include "sim/scenario/scenario.h"
#include "sim/simulation.h"

namespace rdmasim {

class Switch;

struct Progress {
  Time now;
  Time stop;  // Time::infinite() if none
  uint64_t events = 0;
  double fraction_done = 0;  // payload delivered / payload posted by all flows
};

struct RunOptions {
  // Called about every 65536 events while running (e.g. a progress line).
  std::function<void(const Progress&)> progress;
  // Threads: the network is split into this many partitions
  // (topologies/partition.h), run side by side (sim/simulation.h contract 5).
  uint32_t threads = 1;
  // Called once the devices are built, before setup(): tests attach their
  // own observers (sim.add, then sim.set_observer) that read the switches.
  std::function<void(Simulation&, const std::vector<Switch*>&)> on_built;
  // Stops the run (status stalled) once about this many events have been
  // dispatched, checked every 4096 events; 0: no limit. For the fuzz target
  // that runs mutated scenarios (test/fuzz/), where a run must stay short.
  uint64_t max_events = 0;
};

RunResult run_scenario(const Scenario& scenario, const RunOptions& options = {});

}  // namespace rdmasim
