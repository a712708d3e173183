// The future event set: a two-level calendar queue (timing wheels) for the
// near future, a 4-ary heap for the far future.
//
// Contract:
//  1. Events pop in the total order (time, EventClass, tag, sequence) of
//     event.h, exactly as a heap would pop them: the order, and therefore
//     every run's fingerprint, does not depend on the queue's structure.
//  2. Time is cut into epochs of kBuckets x kBucketWidth picoseconds (8.4 us).
//     Level 1 holds the current epoch in kBuckets buckets, each an array of
//     entries (time, class, tag, sequence, event): scheduling appends one, and
//     taking a bucket is a swap and one sort of contiguous entries, with no
//     pointer chase through the events. Level 2 holds the next kSlots - 1
//     epochs (8.6 ms), one intrusive doubly linked list per epoch through the
//     events themselves, so that the long timers which are rescheduled often
//     (retransmission, congestion control) are unlinked when cancelled rather
//     than left behind as stale entries; later events go to the overflow heap.
//     An event scheduled into the current bucket (at or before the cursor)
//     goes to a small side heap, not into the sorted array, so no insert moves
//     entries: at 8,192 hosts a bucket holds thousands. Popping takes the
//     earlier of the sorted array's last entry and the side heap's top. When
//     the epoch ends, the next non-empty epoch's slot is spread over the
//     buckets, and heap events that come within level 2's reach move into it.
//     Scheduling and popping are O(1) amortised (the side heap is O(log n) in
//     the few events due within one bucket's 8 ns) for everything but events
//     more than 8.6 ms ahead (timeouts), which cost O(log n); nothing
//     allocates once the arrays have reached their peak sizes.
//  3. erase (cancel) is O(1): an event in a level-2 list is unlinked; any
//     other is marked unscheduled and its entry becomes stale (an entry is
//     live iff its sequence number is its event's live_seq_); stale entries
//     are dropped when they come up.
//  4. While the sorted array is consumed, the event a few entries ahead is
//     prefetched, and the memory its handler reads first (its hint) a few
//     entries later: the simulation is bound by memory latency, and these are
//     independent addresses the processor can fetch in parallel.
#pragma once

#include <cassert>
#include <cstdint>
#include <vector>

#include "sim/event.h"

namespace rdmasim {

class EventQueue {
 public:
  EventQueue();

  // Discards stale entries at the front; true if a live event remains.
  bool ready() {
    // The common case inline: no side entry, and the sorted bucket's earliest
    // entry is live.
    if (side_.empty() && current_sorted_ && !current_.empty() && current_.back().live()) {
      top_ = &current_.back();
      from_side_ = false;
      return true;
    }
    return ready_slow();
  }
  bool empty() { return !ready(); }
  // Live events (stale entries not counted).
  size_t size() const { return count_ - stale_; }
  // Call ready() first.
  Time top_time() const { return top_->time; }
  // (EventClass << 32) | tag of the earliest event. Call ready() first.
  uint64_t top_class_tag() const { return top_->class_tag; }

  void push(Event& e, Time t);
  // Removes and returns the earliest live event. Call ready() first.
  Event* pop() {
    assert(top_ != nullptr && top_->live());
    Event* e = top_->event;
    if (from_side_) {
      side_pop();
    } else {
      current_.pop_back();
      prefetch_ahead();
    }
    top_ = nullptr;
    --count_;
    e->live_seq_ = 0;
    return e;
  }
  void erase(Event& e);

  // 8.2 ns buckets, 1024 of them: 8.4 us epochs, longer than a typical link's
  // propagation delay plus a frame. (Measured on W1: 1 ns to 130 ns buckets
  // all run within noise of each other.) 1024 epochs ahead: 8.6 ms, beyond
  // PFC pauses and congestion-control timers.
  static constexpr int kBucketShift = 13;
  static constexpr int64_t kBucketWidth = int64_t{1} << kBucketShift;
  static constexpr size_t kBuckets = 1024;
  static constexpr int kEpochShift = kBucketShift + 10;
  static_assert(kBuckets == size_t{1} << (kEpochShift - kBucketShift),
                "an epoch is kBuckets buckets");
  static constexpr size_t kSlots = 1024;

 private:
  struct Entry {
    Time time;
    uint64_t class_tag;  // (EventClass << 32) | tag
    uint64_t seq;
    Event* event;
    bool operator<(const Entry& o) const {
      if (time != o.time) return time < o.time;
      if (class_tag != o.class_tag) return class_tag < o.class_tag;
      return seq < o.seq;
    }
    bool live() const { return seq == event->live_seq_; }
  };
  static Entry entry_of(const Event& e) {
    return Entry{e.when_, e.class_tag(), e.live_seq_, const_cast<Event*>(&e)};
  }
  static uint64_t epoch_of(Time t) { return static_cast<uint64_t>(t.in_ps()) >> kEpochShift; }
  static size_t bucket_of(Time t) {
    return static_cast<size_t>(t.in_ps() >> kBucketShift) & (kBuckets - 1);
  }
  static size_t slot_of(Time t) { return static_cast<size_t>(epoch_of(t)) & (kSlots - 1); }

  // Makes current_ hold the first non-empty bucket (sorted, earliest last);
  // false if the queue holds nothing. Call with the side heap empty.
  bool advance();
  bool ready_slow();
  void insert(Event& e);
  static void link(Event*& head, Event& e);
  // Moves the entries of level-1 bucket cursor_ into current_.
  void take_bucket();
  // Starts epoch `epoch`: spreads its slot over the buckets, pulls heap events.
  void start_epoch(uint64_t epoch);
  void heap_push(const Entry& e);
  Entry heap_pop();
  void side_push(const Entry& e);
  void side_pop();
  // Prefetches the event kAhead entries before the end of current_, and the
  // hint of the one kAhead / 2 before it (prefetched kAhead / 2 pops ago).
  void prefetch_ahead() const {
    const size_t n = current_.size();
    if (n > kAhead) __builtin_prefetch(current_[n - kAhead].event);
    if (n > kAhead / 2) __builtin_prefetch(current_[n - kAhead / 2].event->hint_);
  }
  static constexpr size_t kAhead = 8;
  // The most entries a sorted insertion into the current bucket moves.
  static constexpr ptrdiff_t kMaxMove = 32;

  static void mark(std::vector<uint64_t>& bits, size_t i) {
    bits[i >> 6] |= uint64_t{1} << (i & 63);
  }
  static void unmark(std::vector<uint64_t>& bits, size_t i) {
    bits[i >> 6] &= ~(uint64_t{1} << (i & 63));
  }
  // The first set bit at or after `from` (no wrap-around); `n` if none.
  static size_t next_set(const std::vector<uint64_t>& bits, size_t from, size_t n);

  std::vector<std::vector<Entry>> buckets_;  // level 1: the current epoch
  std::vector<uint64_t> bucket_bits_;
  std::vector<Event*> slots_;  // level 2: one list per epoch, by epoch mod kSlots
  std::vector<uint64_t> slot_bits_;
  std::vector<Entry> current_;  // bucket cursor_, sorted descending once current_sorted_
  std::vector<Entry> side_;     // min-heap: entries scheduled into bucket cursor_ or before
  const Entry* top_ = nullptr;  // set by ready(): the earliest live entry
  bool from_side_ = false;      // top_ is side_'s
  bool current_sorted_ = false;
  uint64_t epoch_ = 0;           // the epoch level 1 holds
  size_t cursor_ = 0;            // the current bucket
  size_t in_buckets_ = 0;        // events in level-1 arrays (all live)
  size_t in_slots_ = 0;          // events in level-2 lists (all live)
  std::vector<Entry> overflow_;  // 4-ary min-heap of events beyond level 2
  size_t count_ = 0;             // entries and listed events, stale ones included
  size_t stale_ = 0;
  uint64_t next_seq_ = 0;
};

}  // namespace rdmasim
