#include "sim/wait_list.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>
#include <ctime>
#include <thread>

namespace rdmasim {
namespace {

// std::atomic<uint32_t> is the 32-bit word the kernel's futex takes (its
// wait() has no timeout, which contract 2 needs).
uint32_t* word(std::atomic<uint32_t>& a) { return reinterpret_cast<uint32_t*>(&a); }

}  // namespace

void WaitList::wake_all() {
  seq_.fetch_add(1, std::memory_order_seq_cst);
  syscall(SYS_futex, word(seq_), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}

void WaitList::idle(Waiter& w, bool spin) {
  if (w.idle++ == 0) w.since = std::chrono::steady_clock::now();
  // The clock every step (a vDSO call, tens of ns): once past kSpin, and
  // after every nap, the waiter flags itself at once rather than spinning on.
  if (spin && std::chrono::steady_clock::now() - w.since < kSpin) {
    __builtin_ia32_pause();
    return;
  }
  if (!w.flagged) {
    // Flag first, then read seq: the caller's next look (before the next
    // step) sees whatever was published before a wake-up that missed us.
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
    w.seen = seq_.load(std::memory_order_seq_cst);
    w.flagged = true;
    return;
  }
  const timespec nap{0, std::chrono::nanoseconds(kNap).count()};
  syscall(SYS_futex, word(seq_), FUTEX_WAIT_PRIVATE, w.seen, &nap, nullptr, 0);
  sleeps_.fetch_add(1, std::memory_order_relaxed);
  unflag(w);  // the next step flags again at once, and looks once more
}

}  // namespace rdmasim
