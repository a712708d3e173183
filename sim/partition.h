// Partition: a share of a simulation that one thread runs at a time (its own,
// or one whose partitions take turns). It has its own clock, future
// event set and packet pool; the components assigned to it schedule through
// it (Component::ctx()), so running partitions side by side needs no locks.
//
// Contract:
//  1. A simulation has one partition unless Simulation::set_partitions() asked
//     for more; with one, the partition is the whole simulation and runs it
//     exactly as before partitioning existed (same events, same order).
//  2. A component schedules only its own events, on its own partition, and
//     touches other components only through links (or, for observers, in a
//     serial step: see simulation.h). Link::transmit onto a link whose
//     receiver is in another partition appends to a Channel; the receiver
//     hands the frames to the link before it runs anything they could
//     precede.
//  3. A packet is released by the pool of the partition that holds it (a
//     packet that crosses into another partition is handed to its pool),
//     which sends it back to the pool that made it (sim/packet.h).
//  4. Holds end the run: hold() (before the run) for each thing whose end
//     ends it, release() from the event that ends it; run() returns
//     (kStopped) right after the event that releases the last hold of the
//     simulation. A partitioned run stops after the very same event: a
//     partition holding nothing runs only what certainly precedes it
//     (simulation.cpp). That happens once: run() called again goes on with
//     whatever events remain, as without holds.
#pragma once

#include <atomic>
#include <cassert>
#include <cstdint>
#include <memory>
#include <vector>

#include "sim/event_queue.h"
#include "sim/hash.h"
#include "sim/packet.h"
#include "sim/units.h"
#include "sim/wait_list.h"

namespace rdmasim {

class Link;
class Simulation;
enum class Phase : uint8_t;

class Partition {
 public:
  Partition(Simulation& sim, uint32_t index, const Phase* phase, WaitList* waits)
      : sim_(sim), index_(index), phase_(phase), waits_(waits) {}
  Partition(const Partition&) = delete;
  Partition& operator=(const Partition&) = delete;

  Simulation& sim() const { return sim_; }
  uint32_t index() const { return index_; }
  Phase phase() const { return *phase_; }

  Time now() const { return now_; }
  void schedule(Event& e, Time t) {
    assert(!e.scheduled() && "event already scheduled");
    // event_in_past, at its cause: assertions only (Debug, the sanitizer
    // trees), nothing in Release; dispatch_one() checks it for --check.
    assert(t >= now_ && "event scheduled in the past (invariant event_in_past)");
    push(e, t);
  }
  void schedule_in(Event& e, Time delay) { schedule(e, now_ + delay); }
  void reschedule(Event& e, Time t) {
    assert(t >= now_ && "event rescheduled into the past (invariant event_in_past)");
    cancel(e);
    push(e, t);
  }
  void cancel(Event& e) {
    if (e.scheduled()) {
      if (&e == deferred_) [[unlikely]] {
        deferred_ = nullptr;
        queue_.take_reserved(e);
      } else {
        queue_.erase(e);
      }
      if (e.event_class() < EventClass::kSample) --model_pending_;
    }
  }
  PacketHandle make_packet() { return pool_.make(now_); }
  // The extension area of a packet this partition holds (sim/packet.h
  // contract 4).
  PacketExt& packet_ext(Packet& p) { return pool_.ext(p); }
  const PacketPool& packet_pool() const { return pool_; }

  // Contract 4 (e.g. one hold per flow: the run ends when the last flow
  // completes).
  void hold();
  void release();

  uint64_t events_dispatched() const { return events_; }
  uint64_t fingerprint() const { return fingerprint_; }
  size_t pending_events() const { return queue_.size(); }
  size_t model_events_pending() const { return model_pending_; }

 private:
  friend class Simulation;
  friend class Link;
  friend struct PartitionTestAccess;  // tests: schedule past the assertion

  void push(Event& e, Time t) {
    // One comparison more than the queue's own push for an event later than
    // now (most: deliveries, frame ends, timers), which stays inline.
    if (t == now_ && deferred_ == nullptr) [[unlikely]] {
      defer(e, t);
      return;
    }
    queue_.push(e, t);
    if (e.event_class() < EventClass::kSample) ++model_pending_;
  }
  // Probably the next event: kept aside until the handler returns
  // (run_deferred).
  [[gnu::noinline]] void defer(Event& e, Time t) {
    queue_.reserve(e, t);
    deferred_ = &e;
    if (e.event_class() < EventClass::kSample) ++model_pending_;
  }

  // A frame on its way to another partition (contract 2).
  struct Transfer {
    Link* link;
    Time due;
    Packet* packet;
  };
  // The frames one partition sends another: a single-producer,
  // single-consumer ring. The sender appends while it runs; the receiver
  // takes frames in whenever its safe bound moves, when `blocked` is set,
  // and while it waits for room itself (run_phase, send).
  struct Channel {
    // Frames it holds (a power of two): on threads, enough that a sender
    // rarely waits for its receiver; with partitions that take turns, a full
    // ring is emptied by the sender's thread when the receiver is one of its
    // (Partition::send), else by the receiver's, and a fabric split for
    // locality has a channel for nearly every pair of partitions (a thousand
    // at 32), so each holds about one pass's frames.
    static constexpr uint64_t kCapacity = uint64_t{1} << 15;
    static constexpr uint64_t kTurnsCapacity = uint64_t{1} << 10;
    explicit Channel(uint64_t cap = kCapacity) : ring(new Transfer[cap]), capacity(cap) {}
    // False if full: the sender must let the receiver catch up.
    bool push(const Transfer& x) {
      const uint64_t t = tail.load(std::memory_order_relaxed);
      if (t - seen_head == capacity) {
        // Sequentially consistent: the look before a sleep in send()
        // (wait_list.h).
        seen_head = head.load(std::memory_order_seq_cst);
        if (t - seen_head == capacity) return false;
      }
      ring[t & (capacity - 1)] = x;
      tail.store(t + 1, std::memory_order_release);
      return true;
    }
    // Hands every frame in the ring to its link; false if it held none.
    bool drain();
    // After a drain that made room: whether the sender waits for it (it
    // may sleep in send(); the caller wakes the sleepers).
    bool sender_waits() const;
    uint64_t size() const {
      return tail.load(std::memory_order_acquire) - head.load(std::memory_order_acquire);
    }

    std::unique_ptr<Transfer[]> ring;
    uint64_t capacity;
    Time lookahead = Time::infinite();  // the shortest delay of its links
    const Partition* from = nullptr;
    alignas(64) std::atomic<uint64_t> tail{0};  // written by the sender
    uint64_t seen_head = 0;                     // the sender's last look at head
    alignas(64) std::atomic<uint64_t> head{0};  // written by the receiver
    // Set by a sender that found the ring full, until it could push: its
    // receiver then takes frames in even if its bound has not moved (a line
    // of its own, written rarely, so that watching it costs nothing).
    alignas(64) std::atomic<bool> blocked{false};
  };

  // Invariant event_in_past (sim/invariants.h): checked where events are
  // taken, not where they are scheduled (one comparison per event in one
  // place, instead of one in every inlined schedule() of the models): an
  // event due before the clock was scheduled in the past. Throws
  // InvariantViolation when checks are on; off, it runs as before (a bug
  // all the same). Debug builds check by default.
  [[gnu::cold]] void scheduled_in_past(const Event& e, Time t) const;

  // Dispatches the next event; call queue_.ready() first. kCheckPast false
  // leaves the comparison out, for a loop that knows checks are off (where
  // scheduled_in_past() would do nothing): the sequential loop, one
  // comparison and branch per event less (sim/invariants.h contract 2).
  template <bool kCheckPast = true>
  void dispatch_one() {
    const Time t = queue_.top_time();
    Event* e = queue_.pop();
    if constexpr (kCheckPast) {
      if (t < now_) [[unlikely]]
        scheduled_in_past(*e, t);
    }
    if (e->cls_ < EventClass::kSample) --model_pending_;
    run(*e, t);
  }
  void run(Event& e, Time t) {
    now_ = t;
    now_class_tag_ = e.class_tag();
    ++events_;
    fingerprint_ = mix64(fingerprint_ ^ static_cast<uint64_t>(t.in_ps())) ^ now_class_tag_;
    e.handler_(e);
  }
  // The sequential loop's deferred event (docs/architecture.md, "The
  // deferred event"): while the sequential loop runs a handler, the first event it
  // schedules at the current time is reserved, not placed. After the
  // handler, run_deferred() runs that event at once if it precedes
  // everything queued (as it usually does: the pull of an idle port that
  // the arrival just handled woke), exactly as if popped: same order,
  // fingerprint and counts. Otherwise, or if `stop` (a stop request) is
  // set, it places it. True if it ran the event (whose handler may have
  // deferred another).
  bool run_deferred(bool stop) {
    Event& e = *deferred_;
    deferred_ = nullptr;
    // A queued event with an equal (time, class, tag) was scheduled earlier:
    // its lower sequence number goes first.
    if (stop || (queue_.ready() &&
                 (queue_.top_time() < now_ ||
                  (queue_.top_time() == now_ && queue_.top_class_tag() <= e.class_tag())))) {
      queue_.insert_reserved(e);
      return false;
    }
    queue_.take_reserved(e);
    if (e.cls_ < EventClass::kSample) --model_pending_;
    run(e, now_);
    return true;
  }
  void start_deferring() { deferred_ = nullptr; }
  // Defers from construction to destruction (a handler may throw).
  struct Deferring {
    Partition& p;
    explicit Deferring(Partition& part) : p(part) { p.start_deferring(); }
    ~Deferring() { p.stop_deferring(); }
    Deferring(const Deferring&) = delete;
    Deferring& operator=(const Deferring&) = delete;
  };
  // Places the deferred event, if any, deferring on.
  void place_deferred() {
    if (deferred_ != nullptr && deferred_ != not_deferring()) {
      queue_.insert_reserved(*deferred_);
      deferred_ = nullptr;
    }
  }
  // Places a deferred event (the loop is left, or a handler threw).
  void stop_deferring() {
    place_deferred();
    deferred_ = not_deferring();
  }
  // The deferred event, reserved and not yet placed; null if none.
  const Event* deferred_event() const {
    return deferred_ != nullptr && deferred_ != not_deferring() ? deferred_ : nullptr;
  }
  // deferred_ outside the sequential loop: an address no event has.
  Event* not_deferring() const { return reinterpret_cast<Event*>(const_cast<Event**>(&deferred_)); }

  // Takes in every frame sent to this partition so far.
  void drain_all();
  // drain_all(), and whether it made room in a channel (other than `own`)
  // whose sender waits for it: the caller wakes the sleepers.
  bool take_in_all(const Channel* own = nullptr);
  // Takes in the frames of a channel whose sender is blocked, and wakes the
  // sleepers if that made room and the sender still waits.
  void take_in_blocked(Channel& c);
  // The channel to partition `to` (created by the first link that needs it).
  Channel& channel_to(Partition& to, Time delay);
  // Appends to a channel; if it is full, takes in frames meanwhile (its
  // receiver may be waiting for room in a channel to this one) and waits
  // as wait_a_little() does.
  void send(Channel& c, const Transfer& x);
  // Waiting for other partitions: spin briefly (not at all when there are
  // more threads than CPUs), then sleep until one publishes (wait_list.h).
  void wait_a_little(WaitList::Waiter& w) const;
  // One phase of a partitioned run (simulation.cpp), and its passes.
  void run_phase(uint64_t generation, Time cap, uint64_t cap_class_tag);
  void run_passes(uint64_t generation, Time cap, uint64_t cap_class_tag);
  // One pass: drains what is due, runs what is safe, publishes its clock.
  // True when the partition is done with the phase; `ran`: whether it ran
  // an event (or was interrupted by a release).
  bool pass(uint64_t generation, Time cap, uint64_t cap_class_tag, Time& drained_for, bool& ran);
  Time clock() const { return Time::ps(shared_.clock.load(std::memory_order_acquire)); }
  // Release: a partition that reads a clock sees every store made before
  // it (a hold's release included).
  // Sequentially consistent, then wake(): see wait_list.h.
  void set_clock(Time t) {
    shared_.clock.store(t.in_ps(), std::memory_order_seq_cst);
    waits_->wake();
  }

  Simulation& sim_;
  uint32_t index_;
  uint32_t group_ = 0;  // the thread it runs on (Simulation::set_threads)
  const Phase* phase_;
  WaitList* waits_;
  Time now_;
  uint64_t now_class_tag_ = 0;  // of the event being dispatched
  EventQueue queue_;
  PacketPool pool_;
  uint64_t events_ = 0;
  size_t model_pending_ = 0;
  uint64_t fingerprint_ = 0;
  // The deferred event (run_deferred); null: none yet; not_deferring():
  // outside the sequential loop.
  Event* deferred_ = not_deferring();
  std::vector<std::unique_ptr<Channel>> out_;  // by receiving partition; null: none
  std::vector<Channel*> in_;                   // the channels into it
  // What the other threads read, in a cache line of its own.
  struct alignas(64) Shared {
    // A lower bound on the time of every event this partition will run from
    // now on (ps; monotone): what another partition may rely on.
    std::atomic<int64_t> clock{0};
    // Holds not yet released (see hold()); the last release's event key.
    std::atomic<int64_t> open{0};
    std::atomic<int64_t> last_time{0};
    std::atomic<uint64_t> last_class_tag{0};
    // The phase this partition has finished running, and finished taking
    // frames in for.
    std::atomic<uint64_t> done{0};
    std::atomic<uint64_t> quiet{0};
  } shared_;
  int64_t holds_ = 0;       // taken in total (setup)
  bool interrupt_ = false;  // a pass of run_passes ends after the current event
};

}  // namespace rdmasim
