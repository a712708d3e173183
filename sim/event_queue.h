// The future event set: a two-level calendar queue (timing wheels) for the
// near future, a 4-ary heap for the far future.
//
// Contract:
//  1. Events pop in the total order (time, EventClass, tag, sequence) of
//     event.h, exactly as a heap would pop them: the order, and therefore
//     every run's fingerprint, does not depend on the queue's structure.
//  2. Time is cut into epochs of kBuckets x kBucketWidth picoseconds (8.4 us).
//     Level 1 holds the current epoch in kBuckets buckets; level 2 holds the
//     next kSlots - 1 epochs (8.6 ms), one list per epoch; later events go to
//     the overflow heap. A bucket (and a level-2 slot) is an intrusive doubly
//     linked list through the events themselves, so scheduling writes only to
//     the event (which the caller has just touched) and to a list head, and
//     cancelling unlinks. When a bucket becomes current its events are copied
//     into a vector and sorted once; an event scheduled into the current
//     bucket is inserted in order when that moves at most kMaxMove entries,
//     and otherwise goes to a small side heap (on a k = 32 fat-tree a bucket
//     holds thousands of events and a sorted insert moved 230 on average);
//     a pop takes the earlier of the two. When the epoch ends, the next non-empty
//     epoch's slot is spread over the buckets, and heap events that come
//     within level 2's reach move into it. Scheduling and popping are O(1)
//     amortised for everything but events more than 8.6 ms ahead (timeouts),
//     which cost O(log n), and nothing allocates once the vectors have
//     reached their peak sizes.
//  3. erase (cancel) is O(1): an event in a list is unlinked; one in the
//     current bucket's vector or in the heap is marked unscheduled and its
//     entry becomes stale (an entry is live iff its sequence number is its
//     event's live_seq_); stale entries are dropped when they come up.
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
    // The common case inline: no side entry, and the current bucket's
    // earliest entry is live.
    if (side_.empty() && current_sorted_ && !current_.empty() && current_.back().live()) {
      from_side_ = false;
      return true;
    }
    return ready_slow();
  }
  bool empty() { return !ready(); }
  // Live events (stale entries not counted).
  size_t size() const { return count_ - stale_; }
  // Call ready() first, with no push or erase since: top_time(),
  // top_class_tag() and pop() use the choice ready() made between the
  // current bucket and the side heap.
  Time top_time() const { return top().time; }
  // (EventClass << 32) | tag of the earliest event. Call ready() first.
  uint64_t top_class_tag() const { return top().class_tag; }

  void push(Event& e, Time t);
  // push() in two halves, for an event that will most likely be the next
  // to run (Partition's deferred event): reserve() makes it scheduled (its
  // time and sequence number, counted) without placing it; insert_reserved()
  // places it, or take_reserved() takes it, as pop() or erase() would.
  void reserve(Event& e, Time t) {
    assert(!e.scheduled());
    e.when_ = t;
    e.live_seq_ = ++next_seq_;
    ++count_;
  }
  void insert_reserved(Event& e) { insert(e); }
  void take_reserved(Event& e) {
    --count_;
    e.live_seq_ = 0;
  }
  // Removes and returns the earliest live event. Call ready() first.
  Event* pop() {
    assert(top().live());
    Event* e = top().event;
    if (from_side_) [[unlikely]] {
      side_pop();
    } else {
      current_.pop_back();
      prefetch_ahead();
    }
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
  // The most entries a sorted insert into the current bucket moves; beyond,
  // the side heap takes the event. (At k = 8 inserts move about 4.)
  static constexpr ptrdiff_t kMaxMove = 32;

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
  // A large fabric's bucket holds thousands of events, each of which reads
  // a few cold lines; what take_bucket() prefetched for all of them at once
  // is evicted long before most run. So each pop also fetches, from the
  // entries' independent addresses, the event record kRecordAhead events
  // ahead and the hint of the one kHintAhead ahead (its record fetched
  // earlier). Entries, live or stale, point at events that exist.
  static constexpr size_t kRecordAhead = 8;
  static constexpr size_t kHintAhead = 4;
  void prefetch_ahead() const {
    const size_t n = current_.size();
    if (n > kRecordAhead) __builtin_prefetch(current_[n - 1 - kRecordAhead].event);
    if (n > kHintAhead) __builtin_prefetch(current_[n - 1 - kHintAhead].event->hint_);
  }
  static Entry entry_of(const Event& e) {
    return Entry{e.when_, e.class_tag(), e.live_seq_, const_cast<Event*>(&e)};
  }
  static uint64_t epoch_of(Time t) { return static_cast<uint64_t>(t.in_ps()) >> kEpochShift; }
  static size_t bucket_of(Time t) {
    return static_cast<size_t>(t.in_ps() >> kBucketShift) & (kBuckets - 1);
  }
  static size_t slot_of(Time t) { return static_cast<size_t>(epoch_of(t)) & (kSlots - 1); }

  // Makes current_ hold the first non-empty bucket (sorted, earliest last);
  // false if the queue holds nothing.
  bool advance();
  bool ready_slow();
  // The earliest live entry, as ready() found it.
  const Entry& top() const { return from_side_ ? side_.front() : current_.back(); }
  void side_push(const Entry& e);
  void side_pop();
  void insert(Event& e);
  void insert_current(const Entry& x);
  static void link(Event*& head, Event& e, uint8_t level);
  // Moves the events of level-1 bucket cursor_ into current_.
  void take_bucket();
  // Starts epoch `epoch`: spreads its slot over the buckets, pulls heap events.
  void start_epoch(uint64_t epoch);
  void heap_push(const Entry& e);
  Entry heap_pop();

  static void mark(std::vector<uint64_t>& bits, size_t i) {
    bits[i >> 6] |= uint64_t{1} << (i & 63);
  }
  static void unmark(std::vector<uint64_t>& bits, size_t i) {
    bits[i >> 6] &= ~(uint64_t{1} << (i & 63));
  }
  // The first set bit at or after `from` (no wrap-around); `n` if none.
  static size_t next_set(const std::vector<uint64_t>& bits, size_t from, size_t n);

  std::vector<Event*> buckets_;  // level 1: the current epoch; bucket cursor_'s is empty
  std::vector<uint64_t> bucket_bits_;
  std::vector<Event*> slots_;  // level 2: one list per epoch, by epoch mod kSlots
  std::vector<uint64_t> slot_bits_;
  std::vector<Entry> current_;  // bucket cursor_, sorted descending once current_sorted_
  std::vector<Entry> side_;     // min-heap: events scheduled into bucket cursor_ (or before) late
  bool from_side_ = false;      // ready() found the earliest in side_
  bool current_sorted_ = false;
  uint64_t epoch_ = 0;           // the epoch level 1 holds
  size_t cursor_ = 0;            // the current bucket
  size_t in_buckets_ = 0;        // events in level-1 lists (all live)
  size_t in_slots_ = 0;          // events in level-2 lists (all live)
  std::vector<Entry> overflow_;  // 4-ary min-heap of events beyond level 2
  size_t count_ = 0;             // entries and listed events, stale ones included
  size_t stale_ = 0;
  uint64_t next_seq_ = 0;
};

}  // namespace rdmasim
