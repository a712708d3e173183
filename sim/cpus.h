// The CPUs this process may use: what a thread count should be checked
// against, rather than the machine's (std::thread::hardware_concurrency).
#pragma once

#include <cstdint>

namespace rdmasim {

// The smaller of the CPUs in the affinity mask (sched_getaffinity: taskset,
// cpusets) and the cgroup's CPU quota rounded up (cgroup v2 cpu.max, or v1
// cpu.cfs_quota_us / cpu.cfs_period_us: containers, systemd slices); at
// least 1.
uint32_t usable_cpus();

}  // namespace rdmasim
