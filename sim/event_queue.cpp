#include "sim/event_queue.h"

#include <algorithm>
#include <cassert>

namespace rdmasim {
namespace {

// Buckets are kept sorted with the earliest entry last, so popping is
// pop_back; as a heap comparator it makes the top the earliest. A function
// object, so that sort and the heap operations inline it.
struct Later {
  bool operator()(const auto& a, const auto& b) const { return b < a; }
};

}  // namespace

EventQueue::EventQueue()
    : buckets_(kBuckets),
      bucket_bits_(kBuckets / 64, 0),
      slots_(kSlots, nullptr),
      slot_bits_(kSlots / 64, 0) {}

size_t EventQueue::next_set(const std::vector<uint64_t>& bits, size_t from, size_t n) {
  if (from >= n) return n;
  size_t w = from >> 6;
  uint64_t word = bits[w] & (~uint64_t{0} << (from & 63));
  for (;;) {
    if (word != 0) return (w << 6) | static_cast<size_t>(__builtin_ctzll(word));
    if (++w == n / 64) return n;
    word = bits[w];
  }
}

void EventQueue::push(Event& e, Time t) {
  assert(!e.scheduled());
  e.when_ = t;
  e.live_seq_ = ++next_seq_;
  ++count_;
  top_ = nullptr;  // the new event may be the earliest: ready() decides again
  insert(e);
}

void EventQueue::link(Event*& head, Event& e) {
  e.next_ = head;
  if (head != nullptr) head->pprev_ = &e.next_;
  e.pprev_ = &head;
  head = &e;
}

void EventQueue::insert(Event& e) {
  const uint64_t epoch = epoch_of(e.when_);
  // At or before the cursor: the current bucket's. Before it only when a run
  // stopped (time limit, stop request) after the queue had moved on to the
  // next event, and something is then scheduled earlier than that event: it
  // is then the earliest of all, which the side heap handles as well.
  if (epoch < epoch_ || (epoch == epoch_ && bucket_of(e.when_) <= cursor_)) {
    if (current_sorted_) {
      // Sorted insertion moves the entries due before it; where those are
      // many (large fabrics: thousands of events per 8 ns bucket), the side
      // heap takes it instead, which costs a little more per pop.
      const Entry x = entry_of(e);
      const auto at = std::upper_bound(current_.begin(), current_.end(), x, Later{});
      if (current_.end() - at <= kMaxMove) {
        current_.insert(at, x);
      } else {
        side_push(x);
      }
    } else {
      current_.push_back(entry_of(e));  // sorted before anything pops
    }
    return;
  }
  if (epoch == epoch_) {
    const size_t idx = bucket_of(e.when_);
    std::vector<Entry>& b = buckets_[idx];
    e.slot_ = static_cast<uint32_t>(b.size());
    b.push_back(entry_of(e));
    mark(bucket_bits_, idx);
    ++in_buckets_;
  } else if (epoch - epoch_ < kSlots) {
    const size_t idx = static_cast<size_t>(epoch) & (kSlots - 1);
    link(slots_[idx], e);
    mark(slot_bits_, idx);
    ++in_slots_;
  } else {
    heap_push(entry_of(e));
  }
}

void EventQueue::take_bucket() {
  assert(current_.empty());
  // A swap, not a copy: the arrays' capacities circulate between the buckets.
  current_.swap(buckets_[cursor_]);
  in_buckets_ -= current_.size();
  unmark(bucket_bits_, cursor_);
}

void EventQueue::start_epoch(uint64_t epoch) {
  assert(in_buckets_ == 0 && current_.empty() && side_.empty());
  epoch_ = epoch;
  cursor_ = 0;
  const size_t idx = static_cast<size_t>(epoch) & (kSlots - 1);
  Event* e = slots_[idx];
  slots_[idx] = nullptr;
  unmark(slot_bits_, idx);
  while (e != nullptr) {
    Event* next = e->next_;
    e->pprev_ = nullptr;
    --in_slots_;
    insert(*e);
    e = next;
  }
  // Heap events that level 2 now reaches; stale ones go.
  while (!overflow_.empty() && epoch_of(overflow_.front().time) - epoch_ < kSlots) {
    const Entry x = heap_pop();
    if (!x.live()) {
      --count_;
      --stale_;
      continue;
    }
    assert(x.event->when_ == x.time);
    insert(*x.event);
  }
}

bool EventQueue::advance() {
  assert(side_.empty());
  for (;;) {
    if (!current_.empty()) {
      if (!current_sorted_) {
        // Appended mostly in time order: reversed, they are nearly sorted
        // the way the array is kept, which the sort's final insertion pass
        // finishes cheaply.
        std::reverse(current_.begin(), current_.end());
        std::sort(current_.begin(), current_.end(), Later{});
        current_sorted_ = true;
        // The first few events; prefetch_ahead() keeps ahead from here.
        const size_t n = current_.size();
        for (size_t i = n > kAhead ? n - kAhead : 0; i < n; ++i) {
          __builtin_prefetch(current_[i].event);
        }
      }
      return true;
    }
    current_sorted_ = false;
    const size_t next = in_buckets_ == 0 ? kBuckets : next_set(bucket_bits_, cursor_ + 1, kBuckets);
    if (next < kBuckets) {
      cursor_ = next;
    } else {
      // The epoch is over: on to the next one that holds anything.
      uint64_t epoch = 0;
      if (in_slots_ > 0) {
        const size_t from = static_cast<size_t>(epoch_ + 1) & (kSlots - 1);
        size_t idx = next_set(slot_bits_, from, kSlots);
        if (idx == kSlots) idx = next_set(slot_bits_, 0, from);
        epoch = epoch_ + ((idx - static_cast<size_t>(epoch_)) & (kSlots - 1));
      } else if (!overflow_.empty()) {
        epoch = epoch_of(overflow_.front().time);
      } else {
        return false;
      }
      start_epoch(epoch);
      if (!current_.empty()) continue;  // bucket 0 was filled directly
      if (in_buckets_ == 0) continue;   // only stale heap entries were due
      cursor_ = next_set(bucket_bits_, 0, kBuckets);
    }
    take_bucket();
  }
}

bool EventQueue::ready_slow() {
  for (;;) {
    while (!side_.empty() && !side_.front().live()) {
      side_pop();
      --count_;
      --stale_;
    }
    if (current_sorted_) {
      while (!current_.empty() && !current_.back().live()) {
        current_.pop_back();
        --count_;
        --stale_;
      }
    }
    const bool have_current = current_sorted_ && !current_.empty();
    if (!side_.empty()) {
      from_side_ = !have_current || side_.front() < current_.back();
      top_ = from_side_ ? &side_.front() : &current_.back();
      return true;
    }
    if (have_current) {
      top_ = &current_.back();
      from_side_ = false;
      return true;
    }
    if (!advance()) {
      top_ = nullptr;
      return false;
    }
  }
}

void EventQueue::erase(Event& e) {
  assert(e.scheduled());
  e.live_seq_ = 0;
  top_ = nullptr;
  // Where it waits follows from its time (insert's rule; start_epoch keeps
  // the heap beyond level 2's reach).
  const uint64_t epoch = epoch_of(e.when_);
  const size_t idx = bucket_of(e.when_);
  if (epoch == epoch_ && idx > cursor_) {
    // In a level-1 array: the last entry takes its place.
    std::vector<Entry>& b = buckets_[idx];
    assert(b[e.slot_].event == &e);
    b[e.slot_] = b.back();
    b[e.slot_].event->slot_ = e.slot_;
    b.pop_back();
    if (b.empty()) unmark(bucket_bits_, idx);
    --in_buckets_;
    --count_;
    return;
  }
  if (epoch > epoch_ && epoch - epoch_ < kSlots) {
    // In a level-2 list: unlink it; nothing stale is left behind.
    *e.pprev_ = e.next_;
    if (e.next_ != nullptr) e.next_->pprev_ = e.pprev_;
    const size_t slot = slot_of(e.when_);
    if (slots_[slot] == nullptr) unmark(slot_bits_, slot);
    --in_slots_;
    e.pprev_ = nullptr;
    e.next_ = nullptr;
    --count_;
    return;
  }
  ++stale_;
}

void EventQueue::side_push(const Entry& e) {
  side_.push_back(e);
  std::push_heap(side_.begin(), side_.end(), Later{});
}

void EventQueue::side_pop() {
  std::pop_heap(side_.begin(), side_.end(), Later{});
  side_.pop_back();
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
