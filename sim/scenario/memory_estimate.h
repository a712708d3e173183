// Memory estimate: the peak resident memory a run of a loaded scenario is
// expected to need, by part, computed from the Scenario alone (nothing is
// built), and the memory the machine offers, so that a run that cannot fit
// is refused after loading, before it starts (docs/reliability.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/scenario/scenario.h"

namespace rdmasim {

struct MemoryPart {
  std::string name;   // "devices: NICs", "packet pool", ...
  int64_t bytes = 0;  // expected resident bytes
  std::string basis;  // what it was counted from: "8192 NICs x 2.3 KiB"
};

struct MemoryEstimate {
  std::vector<MemoryPart> parts;
  int64_t total() const;
  const MemoryPart& largest() const;
};

// The run's parts. `loaded_bytes` is this process's resident memory with the
// scenario loaded (resident_bytes() after load): the program, its libraries
// and the Scenario (topology, routes, flows) as they are.
MemoryEstimate estimate_memory(const Scenario& sc, int64_t loaded_bytes);

// This process's resident memory now (VmRSS, /proc/self/statm); 0 if unknown.
int64_t resident_bytes();

struct MemoryLimit {
  int64_t bytes = 0;
  std::string source;  // "--memory-limit", "MemAvailable", "cgroup memory.max"
};

// What this process may use: the smaller of MemAvailable (/proc/meminfo)
// and its cgroup's limit less the cgroup's other use, both plus what the
// process holds already; nullopt if neither is known.
std::optional<MemoryLimit> machine_memory();

// "1.5 GiB", "320 MiB", "12 KiB".
std::string human_bytes(int64_t bytes);

// Throws ConfigError (exit 2) when the estimate is above the limit: one line
// naming the estimate, its largest part, the limit and where it came from.
void check_memory_limit(const MemoryEstimate& estimate, const MemoryLimit& limit);

// The breakdown `rdmasim validate --estimate` prints, one part a line.
std::string format_estimate(const MemoryEstimate& estimate,
                            const std::optional<MemoryLimit>& limit);

}  // namespace rdmasim
