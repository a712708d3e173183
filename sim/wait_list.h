// WaitList: where the partitions of a threaded run sleep while they wait for
// one another, and how whoever makes progress wakes them.
//
// Contract:
//  1. A waiting partition spins for kSpin of wall time (waits between
//     partitions are usually shorter), then flags itself (sleepers), looks at
//     what it waits for once more, and only then sleeps on `seq` (a futex).
//     A publisher stores what it publishes (a clock, a release, the end of a
//     phase, a blocked channel, room in a full one) and then calls wake():
//     while nobody sleeps that is one load of a line nobody writes;
//     otherwise it moves `seq` on and wakes the sleepers. With sequentially
//     consistent stores and loads on both sides (or, where a drain makes
//     room, a release store and then a sequentially consistent fence),
//     either the waiter's last look sees the publication or the publisher
//     sees the flag, so no wake-up is lost.
//  2. A sleep also ends after kNap, so a bug in the protocol costs time, not
//     a hang.
//  3. Where it sleeps does not change what a partition runs: results are the
//     same whoever waits how long.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace rdmasim {

class WaitList {
 public:
  // One waiting loop's state: idle steps since the last progress.
  struct Waiter {
    uint32_t idle = 0;
    bool flagged = false;
    uint32_t seen = 0;
    std::chrono::steady_clock::time_point since;
  };

  // Spinning for longer than this on a busy machine takes the core from the
  // thread it waits for; shorter, and the cheap waits become system calls.
  static constexpr std::chrono::microseconds kSpin{20};
  static constexpr std::chrono::milliseconds kNap{2};

  // After publishing: wakes the sleepers, if any.
  void wake() {
    if (sleepers_.load(std::memory_order_seq_cst) != 0) wake_all();
  }
  // One idle step of a waiting loop: spin, flag, or sleep. The caller looks
  // at what it waits for between two steps.
  void idle(Waiter& w, bool spin);
  // The loop made progress (or ends): unflags the waiter.
  void progress(Waiter& w) {
    if (w.flagged) unflag(w);
    w.idle = 0;
  }
  // Unflags a waiter on every way out of its loop (progress() at scope end).
  struct Unflag {
    WaitList& list;
    Waiter& w;
    Unflag(WaitList& l, Waiter& waiter) : list(l), w(waiter) {}
    Unflag(const Unflag&) = delete;
    Unflag& operator=(const Unflag&) = delete;
    ~Unflag() { list.progress(w); }
  };
  uint64_t sleeps() const { return sleeps_.load(std::memory_order_relaxed); }

 private:
  void wake_all();
  void unflag(Waiter& w) {
    sleepers_.fetch_sub(1, std::memory_order_seq_cst);
    w.flagged = false;
  }

  alignas(64) std::atomic<uint32_t> seq_{0};
  std::atomic<uint32_t> sleepers_{0};
  std::atomic<uint64_t> sleeps_{0};  // statistics
};

}  // namespace rdmasim
