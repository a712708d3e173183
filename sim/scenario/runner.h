// Runner: builds a Scenario into a Simulation, runs it, and collects a
// RunResult, in four steps (runner.cpp): build (the fabric,
// sim/scenario/fabric_builder.h, and the workloads,
// sim/scenario/workloads.h), placement (partitions, weighed by the
// workloads), recorders (observers and probes as `output` asks) and
// collection. The run's status and progress come from the workloads.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sim/invariants.h"
#include "sim/scenario/run_result.h"
#include "sim/scenario/scenario.h"
#include "sim/simulation.h"

namespace rdmasim {

class RdmaNic;
class Switch;
class Workload;

struct Progress {
  Time now;
  Time stop;  // Time::infinite() if none
  uint64_t events = 0;
  double fraction_done = 0;  // payload delivered / payload of all workloads
};

struct RunOptions {
  // Called about every 65536 events while running (e.g. a progress line).
  std::function<void(const Progress&)> progress;
  // Threads: the network's partitions (topologies/partition.h), at least
  // one per thread, run side by side (sim/simulation.h contract 5).
  uint32_t threads = 1;
  // The network is split into this many partitions (at least `threads`);
  // the partitions of a thread take turns (each runs a lookahead's worth of
  // its events, then the next), so that a large fabric's state is touched a
  // part at a time and stays in the caches; the results are the whole
  // network's, the fingerprint is the partitions'. 0: chosen by
  // locality_partitions() (at least one per thread); 1: whole. A restart on
  // one thread ignores it (it takes the default, as with 0).
  uint32_t partitions = 0;
  // Keep the threads even when the first phase shows too few events per
  // thread per lookahead for them to pay (Simulation::threads_used).
  bool force_threads = false;
  // When it shows that (and threads are not forced): start the run again
  // from the beginning on one thread, whose results it has anyway, rather
  // than go on with the partitions taking turns (unless the run has ended
  // or is to stop). The callbacks here (progress, on_built, add_workloads)
  // then run for both starts: the CLI's choice, off for tests whose
  // workloads keep state outside the run.
  bool restart_when_sparse = false;
  // Called once the devices are built, before setup(): tests attach their
  // own observers (sim.add, then sim.set_observer) that read the switches.
  std::function<void(Simulation&, const std::vector<Switch*>&)> on_built;
  // Called once the scenario's workloads are built, before placement:
  // tests add workloads of their own on the NICs (by host index), which
  // then count in the run's status, progress and thread weights.
  std::function<void(Simulation&, const std::vector<RdmaNic*>&, std::vector<Workload*>&)>
      add_workloads;
  // Stops the run (status stalled) once about this many events have been
  // dispatched, checked every 4096 events; 0: no limit. For the fuzz target
  // that runs mutated scenarios (test/fuzz/), where a run must stay short.
  uint64_t max_events = 0;
  // Read every 4096 events (between phases in a partitioned run): once it
  // is non-zero (a signal handler sets it to the signal's number) the run
  // stops at that point with status interrupted. Null: never.
  const std::atomic<int>* stop_signal = nullptr;
  // Checks the invariants (sim/invariants.h) while running and at the end;
  // a violation ends the run with status invariant_violated. On by default
  // in Debug builds; the tests turn it on (test/support).
  bool check = kChecksByDefault;
  // The time series (RunResult's pfc_events ... cc_samples) are flushed
  // from the recorders about every this many events (checked every 4096),
  // into spools (sim/row_spool.h) that keep about spool_chunk_rows rows
  // each in memory (0: about 1 MiB) and the rest in an unlinked temporary
  // file in spool_dir; with spool_dir empty, all of them in memory. The
  // rows are the same either way.
  std::string spool_dir;
  size_t spool_chunk_rows = 0;
  uint64_t trace_flush_events = uint64_t{1} << 18;
  // Move the heap onto huge pages once the network is built and as it grows
  // (sim/huge_pages.h, HeapHugePages): the CLI's choice unless
  // --no-huge-pages; off for tests and the fuzz target, which run many
  // scenarios in one process.
  bool heap_huge_pages = false;
};

RunResult run_scenario(const Scenario& scenario, const RunOptions& options = {});

// The partitions a run takes turns with (on one thread, or spread over its
// threads) when RunOptions::partitions is 0, from the bytes each host sends and receives
// (Workload::host_bytes): 1 (the network whole) below kLocalityMinHosts
// hosts, or when fewer than half of them send or receive anything (a sparse
// run would pay a pass per partition per lookahead for little work); else
// one per kHostsPerLocalityPartition hosts, at most kMaxLocalityPartitions.
// Measured on fat-trees of 1,024 and 8,192 hosts (docs/performance.md).
inline constexpr uint32_t kLocalityMinHosts = 1024;
inline constexpr uint32_t kHostsPerLocalityPartition = 128;
inline constexpr uint32_t kMaxLocalityPartitions = 32;
uint32_t locality_partitions(const std::vector<int64_t>& host_bytes);

}  // namespace rdmasim
