#include "sim/cpus.h"

#include <sched.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>
#include <thread>

namespace rdmasim {
namespace {

// quota / period, rounded up; 0 if unlimited or unreadable.
uint32_t quota_cpus(double quota, double period) {
  if (!(quota > 0) || !(period > 0)) return 0;
  return static_cast<uint32_t>(std::max(1.0, std::ceil(quota / period)));
}

uint32_t cgroup_cpus() {
  // cgroup v2: "max 100000" or "200000 100000", in the process's cgroup
  // (which a container sees as the root).
  {
    std::ifstream f("/sys/fs/cgroup/cpu.max");
    std::string quota;
    double period = 0;
    if (f >> quota >> period) return quota == "max" ? 0 : quota_cpus(std::stod(quota), period);
  }
  std::ifstream q("/sys/fs/cgroup/cpu/cpu.cfs_quota_us");
  std::ifstream p("/sys/fs/cgroup/cpu/cpu.cfs_period_us");
  double quota = 0, period = 0;
  if (q >> quota && p >> period) return quota_cpus(quota, period);
  return 0;
}

}  // namespace

uint32_t usable_cpus() {
  uint32_t n = std::max(1U, std::thread::hardware_concurrency());
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    n = std::max(1, CPU_COUNT(&set));
  }
  try {
    const uint32_t c = cgroup_cpus();
    if (c > 0) n = std::min(n, c);
  } catch (...) {  // a malformed file: the affinity count stands
  }
  return n;
}

}  // namespace rdmasim
