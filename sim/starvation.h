// Starvation of a partitioned run's threads on a shared machine: a thread
// that is ready to run but kept off its CPU by another process holds every
// other thread back at the next barrier, so two threads can run far slower
// than one. The kernel counts that time per thread, as run-queue wait: the
// second field of /proc/<pid>/task/<tid>/schedstat, in nanoseconds (Linux
// Documentation/scheduler/sched-stats.rst; present with CONFIG_SCHED_INFO,
// which every distribution kernel enables).
//
// StarvationPolicy turns that into a choice between the partitions' own
// threads and the partitions taking turns on one thread (which gives the
// same results): in windows of wall time, a window on threads in which some
// thread waited on a run queue for more than a tenth of it is followed by a
// trial window taking turns; whichever ran more events per wall-second
// stays for the next kHoldWindows windows, and then threads are tried again
// (the other process may have gone).
#pragma once

#include <cstdint>
#include <vector>

namespace rdmasim {

struct ThreadTimes {
  int64_t cpu_ns = 0;   // time on a CPU
  int64_t wait_ns = 0;  // time ready to run, waiting on a run queue
};

// The calling thread's kernel id (gettid).
int current_thread_id();

// Where the policy reads the time and the threads' times; tests replace it.
class ThreadProbe {
 public:
  virtual ~ThreadProbe() = default;
  // A monotonic wall clock, in nanoseconds.
  virtual int64_t wall_ns();
  // The thread's times from /proc/self/task/<tid>/schedstat; false if they
  // cannot be read (then that thread is never found starved).
  virtual bool times(int tid, ThreadTimes& out);
};

class StarvationPolicy {
 public:
  // Short enough to act within a run of a tenth of a second (a choice
  // made only between phases; Simulation::kFirstPhaseLookaheads).
  static constexpr int64_t kWindowNs = 20'000'000;  // 20 ms of wall time
  static constexpr double kStarvedWait = 0.10;      // of a window, on a run queue
  // A window ends at the first phase boundary after kWindowNs, so the hold
  // is 0.4 s while phases are shorter than a window, longer with long ones.
  static constexpr int kHoldWindows = 20;

  explicit StarvationPolicy(ThreadProbe& probe) : probe_(&probe) {}

  // Starts a window on threads (the kernel ids of all the run's threads, the
  // calling one included) or taking turns (tids unused), at `events`
  // dispatched so far.
  void begin(bool turns, const std::vector<int>& tids, uint64_t events);
  // Called between phases with the events dispatched so far: whether the
  // next phase should take turns. Reads the clock once; the threads' times
  // only once a window is over.
  bool next(uint64_t events);

  // Windows on threads that found a thread starved (each began a trial of
  // turns), and the wall time spent taking turns because of them.
  uint64_t starved_windows() const { return starved_windows_; }
  double turns_seconds() const { return static_cast<double>(turns_ns_) * 1e-9; }

 private:
  void reset_window(uint64_t events, int64_t now);

  ThreadProbe* probe_;
  bool turns_ = false;
  bool trial_ = false;       // this turns window is a trial against threads_rate_
  int hold_ = 0;             // windows left before the other mode is tried
  double threads_rate_ = 0;  // events per ns in the last window on threads
  std::vector<int> tids_;
  std::vector<int64_t> wait_start_;
  int64_t start_ns_ = 0;
  uint64_t start_events_ = 0;
  uint64_t starved_windows_ = 0;
  int64_t turns_ns_ = 0;
};

}  // namespace rdmasim
