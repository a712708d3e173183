#include "sim/event_queue.h"

#include <algorithm>
#include <cassert>

namespace rdmasim {
namespace {

// Buckets are kept sorted with the earliest entry last, so popping is pop_back.
bool later(const auto& a, const auto& b) { return b < a; }

}  // namespace

EventQueue::EventQueue() : heads_(kBuckets, nullptr), nonempty_(kBuckets / 64, 0) {}

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
  return 0;  // unreachable while in_lists_ > 0
}

void EventQueue::push(Event& e, Time t) {
  assert(!e.scheduled());
  assert(t.in_ps() >= base_);
  e.when_ = t;
  e.live_seq_ = ++next_seq_;
  ++count_;
  insert(e);
}

void EventQueue::insert(Event& e) {
  const auto k = static_cast<uint64_t>(e.when_.in_ps() - base_) / kBucketWidth;
  if (k >= kBuckets) {
    heap_push(entry_of(e));
    return;
  }
  if (k == 0) {
    const Entry x = entry_of(e);
    if (current_sorted_) {
      current_.insert(std::upper_bound(current_.begin(), current_.end(), x, later<Entry, Entry>),
                      x);
    } else {
      current_.push_back(x);
    }
    return;
  }
  const size_t idx = (cursor_ + k) & (kBuckets - 1);
  Event*& head = heads_[idx];
  e.next_ = head;
  if (head != nullptr) head->pprev_ = &e.next_;
  e.pprev_ = &head;
  head = &e;
  mark(idx);
  ++in_lists_;
}

void EventQueue::take_bucket() {
  Event*& head = heads_[cursor_];
  for (Event* e = head; e != nullptr;) {
    Event* next = e->next_;
    e->pprev_ = nullptr;
    current_.push_back(entry_of(*e));
    --in_lists_;
    e = next;
  }
  head = nullptr;
  unmark(cursor_);
}

bool EventQueue::advance() {
  for (;;) {
    if (!current_.empty()) {
      if (!current_sorted_) {
        std::sort(current_.begin(), current_.end(), later<Entry, Entry>);
        current_sorted_ = true;
      }
      return true;
    }
    if (in_lists_ == 0) {
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
    current_sorted_ = false;
    take_bucket();
    // Far events that the turn brought within the horizon; stale ones go.
    const int64_t horizon = base_ + static_cast<int64_t>(kBuckets) * kBucketWidth;
    while (!overflow_.empty() && overflow_.front().time.in_ps() < horizon) {
      const Entry x = heap_pop();
      if (!x.live()) {
        --count_;
        --stale_;
        continue;
      }
      assert(x.event->pprev_ == nullptr && x.event->when_ == x.time);
      insert(*x.event);
    }
  }
}

bool EventQueue::ready() {
  for (;;) {
    if (!advance()) return false;
    const Entry& e = current_.back();
    if (e.live()) return true;
    current_.pop_back();
    --count_;
    --stale_;
  }
}

Event* EventQueue::pop() {
  assert(current_sorted_ && !current_.empty() && current_.back().live());
  Event* e = current_.back().event;
  current_.pop_back();
  --count_;
  e->live_seq_ = 0;
  return e;
}

void EventQueue::erase(Event& e) {
  assert(e.scheduled());
  e.live_seq_ = 0;
  if (e.pprev_ != nullptr) {
    // In a bucket list: unlink it; nothing stale is left behind.
    *e.pprev_ = e.next_;
    if (e.next_ != nullptr) e.next_->pprev_ = e.pprev_;
    const auto k = static_cast<uint64_t>(e.when_.in_ps() - base_) / kBucketWidth;
    const size_t idx = (cursor_ + k) & (kBuckets - 1);
    if (heads_[idx] == nullptr) unmark(idx);
    e.pprev_ = nullptr;
    e.next_ = nullptr;
    --in_lists_;
    --count_;
    return;
  }
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
