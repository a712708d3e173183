// The future event set: a 4-ary min-heap of entries that carry their keys,
// with lazy cancellation.
//
// Contract:
//  1. Ordered by (time, EventClass, tag, sequence) as documented in event.h;
//     the keys are copied into the heap entry so comparisons touch only the
//     heap array, never the events themselves.
//  2. push/pop are O(log4 n) and never allocate once the heap has grown to
//     its peak size (the entry vector keeps its capacity).
//  3. erase (cancel) is O(1): it marks the event unscheduled, and its entry
//     becomes stale; a stale entry is discarded when it reaches the top. An
//     entry is live iff its sequence number is the event's live_seq_, so
//     moving entries never writes to the events (no cache misses on them).
//  4. Why 4-ary: half the levels of a binary heap, and the four children of a
//     node share two cache lines.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/event.h"

namespace rdmasim {

class EventQueue {
 public:
  // Discards stale entries at the top; true if a live event remains.
  bool ready() {
    while (!heap_.empty() && heap_.front().seq != heap_.front().event->live_seq_)
      discard_stale_top();
    return !heap_.empty();
  }
  bool empty() { return !ready(); }
  // Live events (stale entries not counted).
  size_t size() const { return heap_.size() - stale_; }
  // Call ready() first.
  Time top_time() const { return heap_.front().time; }

  void push(Event& e, Time t);
  // Removes and returns the earliest live event. Call ready() first.
  Event* pop();
  void erase(Event& e);

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
  };

  void remove_top();
  void discard_stale_top();
  void sift_up(size_t i);
  void sift_down(size_t i);

  std::vector<Entry> heap_;
  uint64_t next_seq_ = 0;
  size_t stale_ = 0;
};

}  // namespace rdmasim
