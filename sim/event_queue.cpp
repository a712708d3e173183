#include "sim/event_queue.h"

#include <algorithm>
#include <cassert>

namespace rdmasim {
namespace {

// Buckets are kept sorted with the earliest entry last, so popping is pop_back.
bool later(const auto& a, const auto& b) { return b < a; }

}  // namespace

EventQueue::EventQueue() : buckets_(kBuckets), nonempty_(kBuckets / 64, 0) {
  current_ = &buckets_[0];
}

size_t EventQueue::steps_to_next() const {
  const size_t words = kBuckets / 64;
  const size_t start = (cursor_ + 1) & (kBuckets - 1);
  size_t w = start >> 6;
  uint64_t bits = nonempty_[w] & (~uint64_t{0} << (start & 63));
  for (size_t n = 0; n <= words; ++n) {
    if (bits != 0) {
      const size_t idx = (w << 6) | static_cast<size_t>(__builtin_ctzll(bits));
      return (idx - cursor_) & (kBuckets - 1);
    }
    w = (w + 1) % words;
    bits = nonempty_[w];
  }
  return 0;  // unreachable while in_wheel_ > 0
}

void EventQueue::push(Event& e, Time t) {
  assert(!e.scheduled());
  assert(t.in_ps() >= base_);
  e.when_ = t;
  e.live_seq_ = ++next_seq_;
  ++count_;
  insert(Entry{t, (static_cast<uint64_t>(e.cls_) << 32) | e.tag_, e.live_seq_, &e});
}

void EventQueue::insert(const Entry& e) {
  const auto k = static_cast<uint64_t>(e.time.in_ps() - base_) / kBucketWidth;
  if (k >= kBuckets) {
    heap_push(e);
    return;
  }
  const size_t idx = (cursor_ + k) & (kBuckets - 1);
  std::vector<Entry>& b = buckets_[idx];
  if (idx == cursor_ && current_sorted_) {
    b.insert(std::upper_bound(b.begin(), b.end(), e, later<Entry, Entry>), e);
  } else {
    b.push_back(e);
  }
  mark(idx);
  ++in_wheel_;
}

bool EventQueue::advance() {
  for (;;) {
    if (!current_->empty()) {
      if (!current_sorted_) {
        std::sort(current_->begin(), current_->end(), later<Entry, Entry>);
        current_sorted_ = true;
      }
      return true;
    }
    unmark(cursor_);
    if (in_wheel_ == 0) {
      if (overflow_.empty()) return false;
      // Nothing near: jump the wheel to the next far event.
      base_ = overflow_.front().time.in_ps() / kBucketWidth * kBucketWidth;
      cursor_ = 0;
    } else {
      // Straight to the next non-empty bucket. Far events that this brings
      // within the horizon are later than everything in the wheel, so they
      // cannot belong to a skipped bucket.
      const size_t steps = steps_to_next();
      cursor_ = (cursor_ + steps) & (kBuckets - 1);
      base_ += static_cast<int64_t>(steps) * kBucketWidth;
    }
    current_ = &buckets_[cursor_];
    current_sorted_ = false;
    // Far events that the turn brought within the horizon.
    const int64_t horizon = base_ + static_cast<int64_t>(kBuckets) * kBucketWidth;
    while (!overflow_.empty() && overflow_.front().time.in_ps() < horizon) insert(heap_pop());
  }
}

bool EventQueue::ready() {
  for (;;) {
    if (!advance()) return false;
    const Entry& e = current_->back();
    if (e.live()) return true;
    current_->pop_back();
    --in_wheel_;
    --count_;
    --stale_;
  }
}

Event* EventQueue::pop() {
  assert(current_sorted_ && !current_->empty() && current_->back().live());
  Event* e = current_->back().event;
  current_->pop_back();
  --in_wheel_;
  --count_;
  e->live_seq_ = 0;
  return e;
}

void EventQueue::erase(Event& e) {
  assert(e.scheduled());
  e.live_seq_ = 0;
  ++stale_;
}

void EventQueue::heap_push(const Entry& e) {
  overflow_.push_back(e);
  size_t i = overflow_.size() - 1;
  while (i > 0) {
    const size_t parent = (i - 1) / 4;
    if (!(e < overflow_[parent])) break;
    overflow_[i] = overflow_[parent];
    i = parent;
  }
  overflow_[i] = e;
}

EventQueue::Entry EventQueue::heap_pop() {
  const Entry top = overflow_.front();
  const Entry last = overflow_.back();
  overflow_.pop_back();
  const size_t n = overflow_.size();
  if (n == 0) return top;
  size_t i = 0;
  for (;;) {
    const size_t first = 4 * i + 1;
    if (first >= n) break;
    size_t best = first;
    const size_t end = first + 4 < n ? first + 4 : n;
    for (size_t c = first + 1; c < end; ++c) {
      if (overflow_[c] < overflow_[best]) best = c;
    }
    if (!(overflow_[best] < last)) break;
    overflow_[i] = overflow_[best];
    i = best;
  }
  overflow_[i] = last;
  return top;
}

}  // namespace rdmasim
