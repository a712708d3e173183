// The future event set: a calendar queue (a timing wheel of buckets for the
// near future, a 4-ary heap for the far future).
//
// Contract:
//  1. Events pop in the total order (time, EventClass, tag, sequence) of
//     event.h, exactly as a heap would pop them: the order, and therefore
//     every run's fingerprint, does not depend on the queue's structure.
//  2. The wheel has kBuckets buckets of kBucketWidth picoseconds each, from
//     `base_`. A bucket is an intrusive doubly linked list through the events
//     themselves, so scheduling writes only to the event (which the caller
//     has just touched) and to a bucket head: no entry is copied anywhere.
//     When a bucket becomes current its events are copied into a vector and
//     sorted once; an event scheduled into the current bucket is inserted in
//     order. An event due at or after base_ + horizon goes into the overflow
//     heap; as the wheel turns, overflow events that come within the horizon
//     move into buckets. Scheduling and popping are O(1) amortised for the
//     near-future events that dominate a packet simulation (a packet's next
//     event is a serialization or a propagation delay away), O(log n) for the
//     rest, and never allocate once the vectors have reached their peak sizes.
//  3. erase (cancel) is O(1): an event in a bucket list is unlinked; one in
//     the current bucket's vector or in the heap is marked unscheduled and
//     its entry becomes stale (an entry is live iff its sequence number is its
//     event's live_seq_); stale entries are dropped when they come up.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/event.h"

namespace rdmasim {

class EventQueue {
 public:
  EventQueue();

  // Discards stale entries at the front; true if a live event remains.
  bool ready();
  bool empty() { return !ready(); }
  // Live events (stale entries not counted).
  size_t size() const { return count_ - stale_; }
  // Call ready() first.
  Time top_time() const { return current_.back().time; }

  void push(Event& e, Time t);
  // Removes and returns the earliest live event. Call ready() first.
  Event* pop();
  void erase(Event& e);

  // 8.2 ns buckets, 1024 of them: an 8.4 us horizon, longer than a typical
  // link's propagation delay plus a frame. (Measured on W1: 1 ns to 130 ns
  // buckets all run within noise of each other.)
  static constexpr int64_t kBucketWidth = 8192;
  static constexpr size_t kBuckets = 1024;

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
    return Entry{e.when_, (static_cast<uint64_t>(e.cls_) << 32) | e.tag_, e.live_seq_,
                 const_cast<Event*>(&e)};
  }

  // Makes current_ hold the first non-empty bucket (sorted, earliest last);
  // false if the queue holds nothing.
  bool advance();
  void insert(Event& e);
  // Moves bucket cursor_'s list into current_.
  void take_bucket();
  void heap_push(const Entry& e);
  Entry heap_pop();

  void mark(size_t idx) { nonempty_[idx >> 6] |= uint64_t{1} << (idx & 63); }
  void unmark(size_t idx) { nonempty_[idx >> 6] &= ~(uint64_t{1} << (idx & 63)); }
  // Buckets after cursor_ (circularly) to the next non-empty one.
  size_t steps_to_next() const;

  std::vector<Event*> heads_;       // bucket lists; bucket cursor_'s is always empty
  std::vector<uint64_t> nonempty_;  // one bit per bucket list
  std::vector<Entry> current_;      // bucket cursor_, sorted descending once current_sorted_
  bool current_sorted_ = false;
  int64_t base_ = 0;  // start time (ps) of bucket cursor_
  size_t cursor_ = 0;
  size_t in_lists_ = 0;          // events in bucket lists (all live)
  std::vector<Entry> overflow_;  // 4-ary min-heap of events beyond the horizon
  size_t count_ = 0;             // entries and listed events, stale ones included
  size_t stale_ = 0;
  uint64_t next_seq_ = 0;
};

}  // namespace rdmasim
