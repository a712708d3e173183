// The future event set: an indexed binary min-heap of Event pointers.
//
// Contract:
//  1. Ordered by (time, EventClass, tag, sequence) as documented in event.h;
//     the keys are copied into the heap entry so comparisons touch only the
//     heap array, never the events themselves.
//  2. push/pop/erase are O(log n) and never allocate once the heap has grown
//     to its peak size (the entry vector keeps its capacity).
//  3. Each event records its heap position, so erase (cancel) and update
//     (reschedule) need no search.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/event.h"

namespace rdmasim {

class EventQueue {
 public:
  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  Time top_time() const { return heap_.front().time; }
  Event* top() const { return heap_.front().event; }

  void push(Event& e, Time t);
  // Removes and returns the earliest event.
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

  void sift_up(size_t i);
  void sift_down(size_t i);
  void place(size_t i, const Entry& e) {
    heap_[i] = e;
    e.event->heap_index_ = static_cast<int32_t>(i);
  }

  std::vector<Entry> heap_;
  uint64_t next_seq_ = 0;
};

}  // namespace rdmasim
