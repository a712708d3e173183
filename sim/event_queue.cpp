#include "sim/event_queue.h"

#include <cassert>

namespace rdmasim {

void EventQueue::push(Event& e, Time t) {
  assert(!e.scheduled());
  e.when_ = t;
  Entry entry{t, (static_cast<uint64_t>(e.cls_) << 32) | e.tag_, next_seq_++, &e};
  heap_.push_back(entry);
  sift_up(heap_.size() - 1);
}

Event* EventQueue::pop() {
  assert(!heap_.empty());
  Event* e = heap_.front().event;
  e->heap_index_ = -1;
  Entry last = heap_.back();
  heap_.pop_back();
  if (!heap_.empty()) {
    place(0, last);
    sift_down(0);
  }
  return e;
}

void EventQueue::erase(Event& e) {
  assert(e.scheduled());
  size_t i = static_cast<size_t>(e.heap_index_);
  e.heap_index_ = -1;
  Entry last = heap_.back();
  heap_.pop_back();
  if (i == heap_.size()) return;  // it was the last entry
  place(i, last);
  sift_up(i);
  sift_down(static_cast<size_t>(last.event->heap_index_));
}

void EventQueue::sift_up(size_t i) {
  Entry e = heap_[i];
  while (i > 0) {
    size_t parent = (i - 1) / 2;
    if (!(e < heap_[parent])) break;
    place(i, heap_[parent]);
    i = parent;
  }
  place(i, e);
}

void EventQueue::sift_down(size_t i) {
  Entry e = heap_[i];
  const size_t n = heap_.size();
  for (;;) {
    size_t child = 2 * i + 1;
    if (child >= n) break;
    if (child + 1 < n && heap_[child + 1] < heap_[child]) ++child;
    if (!(heap_[child] < e)) break;
    place(i, heap_[child]);
    i = child;
  }
  place(i, e);
}

}  // namespace rdmasim
