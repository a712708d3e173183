#include "sim/starvation.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace rdmasim {

int current_thread_id() { return static_cast<int>(::syscall(SYS_gettid)); }

int64_t ThreadProbe::wall_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

bool ThreadProbe::times(int tid, ThreadTimes& out) {
  // "<cpu ns> <run-queue wait ns> <timeslices>\n": read with plain system
  // calls (this runs between phases, on the simulation's thread).
  char path[64];
  std::snprintf(path, sizeof path, "/proc/self/task/%d/schedstat", tid);
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[128];
  const ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return false;
  buf[n] = '\0';
  char* end = nullptr;
  const long long cpu = std::strtoll(buf, &end, 10);
  if (end == buf) return false;
  char* end2 = nullptr;
  const long long wait = std::strtoll(end, &end2, 10);
  if (end2 == end) return false;
  out.cpu_ns = cpu;
  out.wait_ns = wait;
  return true;
}

void StarvationPolicy::reset_window(uint64_t events, int64_t now) {
  start_ns_ = now;
  start_events_ = events;
  wait_start_.assign(tids_.size(), -1);
  if (turns_) return;
  for (size_t i = 0; i < tids_.size(); ++i) {
    ThreadTimes t;
    if (probe_->times(tids_[i], t)) wait_start_[i] = t.wait_ns;
  }
}

void StarvationPolicy::begin(bool turns, const std::vector<int>& tids, uint64_t events) {
  turns_ = turns;
  tids_ = tids;
  reset_window(events, probe_->wall_ns());
}

bool StarvationPolicy::next(uint64_t events) {
  const int64_t now = probe_->wall_ns();
  const int64_t dt = now - start_ns_;
  if (dt < kWindowNs) return turns_;
  const double rate = static_cast<double>(events - start_events_) / static_cast<double>(dt);
  bool turns = turns_;
  if (!turns_) {
    double starved = 0;  // the largest share of the window a thread waited
    for (size_t i = 0; i < tids_.size(); ++i) {
      ThreadTimes t;
      if (wait_start_[i] >= 0 && probe_->times(tids_[i], t)) {
        starved = std::max(
            starved, static_cast<double>(t.wait_ns - wait_start_[i]) / static_cast<double>(dt));
      }
    }
    threads_rate_ = rate;
    if (hold_ > 0) {
      --hold_;
    } else if (starved > kStarvedWait) {
      ++starved_windows_;
      turns = trial_ = true;
    }
  } else {
    turns_ns_ += dt;
    if (trial_) {
      // Keep the faster: turns for a while, or threads without trials.
      trial_ = false;
      hold_ = kHoldWindows;
      turns = rate >= threads_rate_;
    } else if (--hold_ <= 0) {
      hold_ = 0;
      turns = false;  // try threads again
    }
  }
  turns_ = turns;
  reset_window(events, now);
  return turns_;
}

}  // namespace rdmasim
