#include "sim/event_queue.h"

#include <algorithm>
#include <cassert>

namespace rdmasim {
namespace {

// Buckets are kept sorted with the earliest entry last, so popping is
// pop_back; as a heap comparator it puts the earliest on top. A function
// object, so that sort and the heap operations inline it.
struct Later {
  bool operator()(const auto& a, const auto& b) const { return b < a; }
};

}  // namespace

EventQueue::EventQueue()
    : buckets_(kBuckets, nullptr),
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
  reserve(e, t);
  insert(e);
}

void EventQueue::link(Event*& head, Event& e, uint8_t level) {
  e.next_ = head;
  if (head != nullptr) head->pprev_ = &e.next_;
  e.pprev_ = &head;
  e.level_ = level;
  head = &e;
}

void EventQueue::insert(Event& e) {
  const uint64_t epoch = epoch_of(e.when_);
  // At or before the cursor: into the sorted current bucket. Before it only
  // when a run stopped (time limit, stop request) after the queue had moved
  // on to the next event, and something is then scheduled earlier than that
  // event: it is then the earliest of all, which the side heap handles too.
  if (epoch < epoch_ || (epoch == epoch_ && bucket_of(e.when_) <= cursor_)) {
    insert_current(entry_of(e));
    return;
  }
  if (epoch == epoch_) {
    const size_t idx = bucket_of(e.when_);
    link(buckets_[idx], e, 1);
    mark(bucket_bits_, idx);
    ++in_buckets_;
  } else if (epoch - epoch_ < kSlots) {
    const size_t idx = static_cast<size_t>(epoch) & (kSlots - 1);
    link(slots_[idx], e, 2);
    mark(slot_bits_, idx);
    ++in_slots_;
  } else {
    heap_push(entry_of(e));
  }
}

// Out of line, so that linking into a later bucket (most inserts) does not
// pay for this path's registers.
__attribute__((noinline)) void EventQueue::insert_current(const Entry& x) {
  if (!current_sorted_) {
    current_.push_back(x);
    return;
  }
  // Earliest last: the entries earlier than x are a suffix. A scan from the
  // end finds where x goes in as few compares as it moves entries (about 4
  // at k = 8; a binary search over the whole bucket took about 9 compares,
  // on W4 a quarter of the queue's instructions).
  size_t at = current_.size();
  const size_t stop = at > static_cast<size_t>(kMaxMove) ? at - kMaxMove : 0;
  while (at > stop && current_[at - 1] < x) --at;
  if (at == stop && stop > 0 && current_[at - 1] < x) {
    side_push(x);  // it would move more than kMaxMove entries
  } else {
    current_.insert(current_.begin() + static_cast<ptrdiff_t>(at), x);
  }
}

void EventQueue::take_bucket() {
  Event*& head = buckets_[cursor_];
  for (Event* e = head; e != nullptr;) {
    Event* next = e->next_;
    e->pprev_ = nullptr;
    e->level_ = 0;
    __builtin_prefetch(e->hint_);
    current_.push_back(entry_of(*e));
    --in_buckets_;
    e = next;
  }
  head = nullptr;
  unmark(bucket_bits_, cursor_);
}

void EventQueue::start_epoch(uint64_t epoch) {
  assert(in_buckets_ == 0 && current_.empty());
  epoch_ = epoch;
  cursor_ = 0;
  const size_t idx = static_cast<size_t>(epoch) & (kSlots - 1);
  Event* e = slots_[idx];
  slots_[idx] = nullptr;
  unmark(slot_bits_, idx);
  while (e != nullptr) {
    Event* next = e->next_;
    e->pprev_ = nullptr;
    e->level_ = 0;
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
    assert(x.event->level_ == 0 && x.event->when_ == x.time);
    insert(*x.event);
  }
}

bool EventQueue::advance() {
  assert(side_.empty());
  for (;;) {
    if (!current_.empty()) {
      if (!current_sorted_) {
        std::sort(current_.begin(), current_.end(), Later{});
        current_sorted_ = true;
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
  if (!side_.empty()) [[unlikely]] {
    // The side heap holds something (current_ is sorted then: side_push
    // happens only once it is). Both fronts without their stale entries;
    // the earlier of the two is the top.
    while (!side_.empty() && !side_.front().live()) {
      side_pop();
      --count_;
      --stale_;
    }
    while (!current_.empty() && !current_.back().live()) {
      current_.pop_back();
      --count_;
      --stale_;
    }
    if (!side_.empty()) {
      from_side_ = current_.empty() || side_.front() < current_.back();
      return true;
    }
  }
  from_side_ = false;
  for (;;) {
    if (!advance()) return false;
    const Entry& e = current_.back();
    if (e.live()) return true;
    current_.pop_back();
    --count_;
    --stale_;
  }
}

void EventQueue::side_push(const Entry& e) {
  side_.push_back(e);
  std::push_heap(side_.begin(), side_.end(), Later{});
}

void EventQueue::side_pop() {
  std::pop_heap(side_.begin(), side_.end(), Later{});
  side_.pop_back();
}

void EventQueue::erase(Event& e) {
  assert(e.scheduled());
  e.live_seq_ = 0;
  if (e.level_ != 0) {
    // In a list: unlink it; nothing stale is left behind.
    *e.pprev_ = e.next_;
    if (e.next_ != nullptr) e.next_->pprev_ = e.pprev_;
    if (e.level_ == 1) {
      const size_t idx = bucket_of(e.when_);
      if (buckets_[idx] == nullptr) unmark(bucket_bits_, idx);
      --in_buckets_;
    } else {
      const size_t idx = slot_of(e.when_);
      if (slots_[idx] == nullptr) unmark(slot_bits_, idx);
      --in_slots_;
    }
    e.pprev_ = nullptr;
    e.next_ = nullptr;
    e.level_ = 0;
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
