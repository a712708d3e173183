#include "sim/event_queue.h"

#include <cassert>

namespace rdmasim {

void EventQueue::push(Event& e, Time t) {
  assert(!e.scheduled());
  e.when_ = t;
  e.live_seq_ = ++next_seq_;
  heap_.push_back(Entry{t, (static_cast<uint64_t>(e.cls_) << 32) | e.tag_, e.live_seq_, &e});
  sift_up(heap_.size() - 1);
}

Event* EventQueue::pop() {
  assert(!heap_.empty() && heap_.front().seq == heap_.front().event->live_seq_);
  Event* e = heap_.front().event;
  e->live_seq_ = 0;
  remove_top();
  return e;
}

void EventQueue::discard_stale_top() {
  --stale_;
  remove_top();
}

void EventQueue::remove_top() {
  const Entry last = heap_.back();
  heap_.pop_back();
  if (!heap_.empty()) {
    heap_[0] = last;
    sift_down(0);
  }
}

void EventQueue::erase(Event& e) {
  assert(e.scheduled());
  e.live_seq_ = 0;
  ++stale_;
}

void EventQueue::sift_up(size_t i) {
  const Entry e = heap_[i];
  while (i > 0) {
    const size_t parent = (i - 1) / 4;
    if (!(e < heap_[parent])) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = e;
}

void EventQueue::sift_down(size_t i) {
  const Entry e = heap_[i];
  const size_t n = heap_.size();
  for (;;) {
    const size_t first = 4 * i + 1;
    if (first >= n) break;
    size_t best = first;
    const size_t end = first + 4 < n ? first + 4 : n;
    for (size_t c = first + 1; c < end; ++c) {
      if (heap_[c] < heap_[best]) best = c;
    }
    if (!(heap_[best] < e)) break;
    heap_[i] = heap_[best];
    i = best;
  }
  heap_[i] = e;
}

}  // namespace rdmasim
