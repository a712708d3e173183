#include "sim/simulation.h"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <chrono>
#include <exception>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "sim/cpus.h"
#include "sim/hash.h"
#include "sim/link.h"

namespace rdmasim {

Component::Component(Simulation& sim, std::string name)
    : sim_(sim),
      part_(&sim.partition(0)),
      name_(std::move(name)),
      id_(sim.register_component(this)) {}

// The threads of a partitioned run: one per partition but the first, which
// the caller's thread runs. The main thread starts a phase by moving
// `generation` on; each partition ends it by setting its `quiet` to that
// generation. A thread that waits spins, then yields (more threads than
// cores), then sleeps on the atomic, saying so first, so that the other
// side makes the system call only then.
struct Simulation::Workers {
  explicit Workers(Simulation& owner) : sim(owner), tids(owner.threads()) {
    tids[0].store(current_thread_id());
    for (uint32_t i = 1; i < sim.threads(); ++i) threads.emplace_back([this, i] { work(i); });
  }
  // The kernel ids of the run's threads (this one first), once each has
  // started: what the starvation policy watches.
  std::vector<int> thread_ids() const {
    std::vector<int> out;
    for (const std::atomic<int>& t : tids) {
      int v = 0;
      while ((v = t.load(std::memory_order_acquire)) == 0) std::this_thread::yield();
      out.push_back(v);
    }
    return out;
  }
  ~Workers() {
    start.quit = true;
    start.generation.fetch_add(1);
    start.generation.notify_all();
    for (std::thread& t : threads) t.join();
  }
  void work(uint32_t i) {
    tids[i].store(current_thread_id(), std::memory_order_release);
    uint64_t seen = 0;
    for (;;) {
      for (int spin = 0;; ++spin) {
        const uint64_t g = start.generation.load(std::memory_order_acquire);
        if (g != seen) {
          seen = g;
          break;
        }
        backoff(spin, [&] { sleep_on(start.generation, g, start.sleepers); });
      }
      if (start.quit) return;
      sim.run_group_phase(i, seen, start.cap, start.cap_class_tag);
      if (start.main_sleeping.load() != 0) sim.groups_[i].back()->shared_.quiet.notify_one();
    }
  }
  // Runs partition 0 here and the others on the workers, to the cap.
  void run_phase(Time cap, uint64_t cap_class_tag) {
    start.cap = cap;
    start.cap_class_tag = cap_class_tag;
    const uint64_t g = ++sim.generation_;
    start.generation.store(g);
    if (start.sleepers.load() != 0) start.generation.notify_all();
    sim.run_group_phase(0, g, cap, cap_class_tag);
    // Each thread's partitions go quiet in turn; its last one, last.
    for (uint32_t i = 1; i < sim.threads(); ++i) {
      std::atomic<uint64_t>& q = sim.groups_[i].back()->shared_.quiet;
      uint64_t v = q.load(std::memory_order_acquire);
      for (int spin = 0; v != g; ++spin) {
        backoff(spin, [&] { sleep_on(q, v, start.main_sleeping); });
        v = q.load(std::memory_order_acquire);
      }
    }
    if (sim.aborted_.load()) std::rethrow_exception(sim.error_);
  }
  template <class Sleep>
  static void backoff(int spin, Sleep sleep) {
    if (spin < 2048) {
      __builtin_ia32_pause();
    } else if (spin < 2112) {
      std::this_thread::yield();
    } else {
      sleep();
    }
  }
  template <class T, class U>
  static void sleep_on(std::atomic<T>& a, T old, std::atomic<U>& sleeping) {
    sleeping.fetch_add(1);
    a.wait(old);
    sleeping.fetch_sub(1);
  }

  Simulation& sim;
  std::vector<std::atomic<int>> tids;
  std::vector<std::thread> threads;
  // What the main thread writes to start a phase, in one cache line. The
  // plain fields are written before `generation` moves on and read after.
  struct alignas(64) Start {
    std::atomic<uint64_t> generation{0};
    std::atomic<uint32_t> sleepers{0};       // workers asleep on generation
    std::atomic<uint32_t> main_sleeping{0};  // the main thread asleep on a worker
    bool quit = false;
    Time cap;
    uint64_t cap_class_tag = 0;
  } start;
};

Simulation::Simulation(uint64_t seed) : seed_(seed) {
  parts_.push_back(std::make_unique<Partition>(*this, 0, &phase_, &waits_));
  control_ = parts_[0].get();
  all_parts_ = {control_};
  groups_ = {all_parts_};
}

Simulation::~Simulation() {
  workers_.reset();
  // Destroy in reverse creation order: later components may refer to earlier.
  while (!owned_.empty()) owned_.pop_back();
}

uint32_t Simulation::register_component(Component* c) {
  if (phase_ != Phase::kBuild) throw std::logic_error("components must be added before setup()");
  components_.push_back(c);
  return static_cast<uint32_t>(components_.size() - 1);
}

void Simulation::set_checks(bool on) {
  if (phase_ != Phase::kBuild) throw std::logic_error("set_checks() after setup()");
  checks_ = on;
}

void Partition::scheduled_in_past(const Event& e, Time t) const {
  if (!sim_.checks()) return;
  const auto& all = sim_.components();
  const std::string who =
      e.tag() < all.size() ? all[e.tag()]->name() : "event tag " + std::to_string(e.tag());
  throw InvariantViolation("event_in_past", who, now_,
                           "an event scheduled for t=" + to_string(t) + ", before now");
}

void Simulation::set_partitions(uint32_t n) {
  if (phase_ != Phase::kBuild) throw std::logic_error("set_partitions() after setup()");
  if (n < 1) throw std::invalid_argument("a simulation needs at least one partition");
  if (n == partitions()) return;
  if (partitions() != 1) throw std::logic_error("set_partitions() called twice");
  for (uint32_t i = 1; i < n; ++i)
    parts_.push_back(std::make_unique<Partition>(*this, i, &phase_, &waits_));
  for (const auto& p : parts_) p->out_.resize(n);
  std::vector<PacketPool*> pools;
  for (const auto& p : parts_) pools.push_back(&p->pool_);
  PacketPool::connect(pools);
  own_control_ = std::make_unique<Partition>(*this, n, &phase_, &waits_);
  control_ = own_control_.get();
  all_parts_.clear();
  for (const auto& p : parts_) all_parts_.push_back(p.get());
  set_threads(n);
}

void Simulation::set_threads(uint32_t t) {
  if (phase_ != Phase::kBuild) throw std::logic_error("set_threads() after setup()");
  if (t < 1 || t > partitions())
    throw std::invalid_argument("threads must be from 1 to the number of partitions");
  // Contiguous groups, as even as they go: partition i on thread i * t / n.
  const uint32_t n = partitions();
  groups_.assign(t, {});
  for (uint32_t i = 0; i < n; ++i) {
    const auto g = static_cast<uint32_t>(uint64_t{i} * t / n);
    parts_[i]->group_ = g;
    groups_[g].push_back(parts_[i].get());
  }
}

void Simulation::setup() {
  if (phase_ != Phase::kBuild) throw std::logic_error("setup() called twice");
  phase_ = Phase::kSetup;
  for (Component* c : components_) c->setup();
}

uint64_t Simulation::packets_created() const {
  uint64_t n = 0;
  for (const auto& p : parts_) n += p->packet_pool().created();
  if (own_control_) n += own_control_->packet_pool().created();
  return n;
}

uint64_t Simulation::events_dispatched() const {
  uint64_t n = 0;
  for (const auto& p : parts_) n += p->events_;
  if (own_control_) n += own_control_->events_;
  return n;
}

uint64_t Simulation::fingerprint() const {
  if (parts_.size() == 1) return parts_[0]->fingerprint_;
  uint64_t f = 0;
  for (const auto& p : parts_) f = mix64(f ^ p->fingerprint_);
  return mix64(f ^ own_control_->fingerprint_);
}

size_t Simulation::pending_events() const {
  size_t n = 0;
  for (const auto& p : parts_) {
    n += p->pending_events();
    for (const Partition::Channel* c : p->in_) n += c->size();
  }
  if (own_control_) n += own_control_->pending_events();
  return n;
}

size_t Simulation::model_events_pending() const {
  // A frame in a channel is a delivery still to come.
  size_t n = 0;
  for (const auto& p : parts_) {
    n += p->model_pending_;
    for (const Partition::Channel* c : p->in_) n += c->size();
  }
  if (own_control_) n += own_control_->model_pending_;
  return n;
}

Time Simulation::next_event_time() {
  Time t = Time::infinite();
  for (const auto& p : parts_) {
    // Frames between partitions (observers run between phases, when no
    // partition touches its rings): each is a delivery due at its time, as
    // it would be in the receiving link's queue in a sequential run.
    for (const Partition::Channel* c : p->in_) {
      const uint64_t tail = c->tail.load(std::memory_order_acquire);
      for (uint64_t i = c->head.load(std::memory_order_acquire); i != tail; ++i) {
        t = std::min(t, c->ring[i & (c->capacity - 1)].due);
      }
    }
    // ready() may move the queue's cursor on; an event scheduled earlier
    // afterwards is still placed first (EventQueue::insert).
    if (p->queue_.ready()) t = std::min(t, p->queue_.top_time());
    // An event the running handler scheduled for now (run_deferred).
    if (const Event* d = p->deferred_event()) t = std::min(t, d->when());
  }
  if (own_control_ && own_control_->queue_.ready()) {
    t = std::min(t, own_control_->queue_.top_time());
  }
  return t;
}

void Simulation::set_progress_hook(std::function<void(const Simulation&)> hook, uint64_t every) {
  progress_hook_ = std::move(hook);
  progress_every_ = every;
}

RunEnd Simulation::run(Time stop_at) {
  // A partitioned run that failed cannot go on: its partitions left a
  // phase half done.
  if (aborted_.load()) std::rethrow_exception(error_);
  if (phase_ == Phase::kBuild) setup();
  if (phase_ == Phase::kFinished) throw std::logic_error("run() after finish()");
  phase_ = Phase::kRunning;
  stop_requested_ = false;
  stopped_sparse_ = false;
  return parts_.size() == 1 ? run_sequential(stop_at) : run_partitioned(stop_at);
}

RunEnd Simulation::run_sequential(Time stop_at) {
  return checks_ ? run_sequential_loop<true>(stop_at) : run_sequential_loop<false>(stop_at);
}

template <bool kChecks>
RunEnd Simulation::run_sequential_loop(Time stop_at) {
  Partition& p = *parts_[0];
  uint64_t next_progress = progress_hook_ ? p.events_ + progress_every_ : UINT64_MAX;
  // An event scheduled for now by the handler that just ran, and due before
  // anything queued, runs without passing through the queue (run_deferred);
  // the progress hook still sees every event count, and a stop request is
  // seen before any further event.
  const Partition::Deferring deferring(p);
  for (;;) {
    if (p.deferred_ == nullptr || !p.run_deferred(stop_requested_)) {
      if (!p.queue_.ready()) break;
      if (stop_requested_) return RunEnd::kStopped;
      if (p.queue_.top_time() > stop_at) {
        p.now_ = stop_at;
        return RunEnd::kTimeLimit;
      }
      p.dispatch_one<kChecks>();
    }
    if (p.events_ >= next_progress) {
      // The hook may look at what is pending (next_event_time, a flush of
      // the time series): it sees the deferred event in the queue.
      p.place_deferred();
      progress_hook_(*this);
      next_progress = p.events_ + progress_every_;
    }
  }
  return stop_requested_ ? RunEnd::kStopped : RunEnd::kIdle;
}

void Partition::hold() {
  ++holds_;
  ++sim_.holds_;
  shared_.open.fetch_add(1);
}

void Partition::release() {
  const int64_t left = shared_.open.load(std::memory_order_relaxed) - 1;
  assert(left >= 0 && "release() without hold()");
  // The key first: whoever sees `open` at zero reads the final key.
  shared_.last_time.store(now_.in_ps());
  shared_.last_class_tag.store(now_class_tag_);
  shared_.open.store(left);
  waits_->wake();
  if (left == 0) {
    if (sim_.partitions() == 1) sim_.request_stop();
    interrupt_ = true;  // run_phase: from now on this partition is guarded
  }
}

bool Partition::Channel::drain() {
  uint64_t h = head.load(std::memory_order_relaxed);
  const uint64_t t = tail.load(std::memory_order_acquire);
  if (h == t) return false;
  for (; h != t; ++h) {
    const Transfer& x = ring[h & (capacity - 1)];
    x.link->hand_over(x.due, x.packet);
  }
  head.store(h, std::memory_order_release);
  return true;
}

bool Partition::Channel::sender_waits() const {
  // The fence orders the drain's store of `head` before this look, as a
  // sequentially consistent store would (wait_list.h, contract 1): either
  // the sender's look after it flagged itself sees the room, or this sees
  // `blocked`.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return blocked.load(std::memory_order_relaxed);
}

void Partition::drain_all() {
  for (Channel* c : in_) c->drain();
}

bool Partition::take_in_all(const Channel* own) {
  bool moved = false;
  for (Channel* c : in_) moved = (c->drain() && c != own) || moved;
  // Taking turns on one thread, nobody sleeps in send(); otherwise one
  // fence for all the channels (sender_waits), then their flags. (A
  // channel flagged but not drained here was drained earlier and its
  // sender has been woken, or is about to push: one wake-up too many.)
  if (!moved || sim_.serial_) return false;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  for (const Channel* c : in_) {
    if (c != own && c->blocked.load(std::memory_order_relaxed)) return true;
  }
  return false;
}

Partition::Channel& Partition::channel_to(Partition& to, Time delay) {
  std::unique_ptr<Channel>& c = out_[to.index_];
  if (!c) {
    c = std::make_unique<Channel>(sim_.partitions_take_turns() ? Channel::kTurnsCapacity
                                                               : Channel::kCapacity);
    c->from = this;
    to.in_.push_back(c.get());
  }
  c->lookahead = std::min(c->lookahead, delay);
  return *c;
}

void Partition::send(Channel& c, const Transfer& x) {
  if (c.push(x)) [[likely]]
    return;
  c.blocked.store(true, std::memory_order_seq_cst);
  waits_->wake();  // its receiver may be asleep
  // Waits as a partition waits for clocks (wait_a_little): a short spin,
  // none with more threads than CPUs, then a sleep until someone
  // publishes. A receiver that makes room in a blocked channel wakes the
  // sleepers (take_in_all, take_in_blocked). Spinning on alone took the
  // CPU of a receiver that shares it.
  WaitList::Waiter w;
  const WaitList::Unflag unflag{*waits_, w};  // on every way out, a throw included
  for (;;) {
    // Another partition failed and will not take frames in any more.
    if (sim_.aborted_.load(std::memory_order_relaxed)) throw Simulation::Aborted{};
    // Its receiver may be blocked on a channel to this one, or to another
    // partition of this thread, which runs only after this pass; and if the
    // receiver takes turns on this thread, it too runs only after this pass.
    // Take their frames in (they are due at or after their clocks, and when
    // frames are taken in never changes a result), waking a sender on
    // another thread that waits for room in one of them (not for `c`: this
    // sender is its own).
    bool freed = false;
    for (Partition* p : sim_.turn_mates(*this)) freed = p->take_in_all(&c) || freed;
    if (freed) waits_->wake();
    // The receiver may be one of them: look before waiting.
    if (c.push(x)) break;
    wait_a_little(w);
  }
  c.blocked.store(false, std::memory_order_relaxed);
}

void Partition::take_in_blocked(Channel& c) {
  if (c.drain() && c.sender_waits()) waits_->wake();
}

namespace {

// How often a partition publishes its clock while it runs (events).
constexpr uint32_t kClockEvery = 32;

// a + b, or infinite if that is beyond the largest time.
Time plus(Time a, Time b) { return a >= Time::infinite() - b ? Time::infinite() : a + b; }

// (time, class << 32 | tag): the order of events (event.h contract 3).
struct Key {
  Time time = Time::infinite();
  uint64_t class_tag = UINT64_MAX;
  bool operator<(const Key& o) const {
    return time != o.time ? time < o.time : class_tag < o.class_tag;
  }
  bool operator>=(const Key& o) const { return !(*this < o); }
};

}  // namespace

// One phase on this partition's thread: the Chandy-Misra-Bryant scheme with
// published clocks instead of null messages. Each pass reads the clocks of
// the partitions that send to this one (before taking their frames in, so
// that every frame due before clock + lookahead is in), runs what is safe,
// and publishes its own clock: a lower bound on anything it will still run.
// Frames between partitions take at least the lookahead, so the partition
// furthest behind can always run, and none waits for more than that.
//
// Holds (release()) make the stop exact: the run ends right after the event
// that releases the last hold, K. A partition that holds nothing open runs
// only events that come before K for sure: those before the clock of a
// partition that still holds something (its release is at or after its
// clock), or, once every hold is released, before K itself.
void Partition::wait_a_little(WaitList::Waiter& w) const {
  // More partitions than CPUs: the one this waits for may need this CPU.
  waits_->idle(w, !sim_.oversubscribed_);
}

void Partition::run_phase(uint64_t generation, Time cap_time, uint64_t cap_class_tag) {
  try {
    run_passes(generation, cap_time, cap_class_tag);
  } catch (...) {
    // An event threw: every partition leaves the phase, and the main
    // thread rethrows the first exception once all are quiet.
    sim_.fail(std::current_exception());
  }
  shared_.done.store(generation);
  waits_->wake();
  // Frames may still come from partitions that are not done: take them in
  // until every sender is (they are due after the end).
  WaitList::Waiter w;
  try {
    for (;;) {
      bool all = true;
      for (const Channel* c : in_) all = all && c->from->shared_.done.load() == generation;
      if (take_in_all()) waits_->wake();  // a sender may sleep in send()
      if (all || sim_.aborted_.load(std::memory_order_relaxed)) break;
      wait_a_little(w);
    }
  } catch (...) {
    sim_.fail(std::current_exception());
  }
  waits_->progress(w);
  shared_.quiet.store(generation);
}

void Partition::run_passes(uint64_t generation, Time cap_time, uint64_t cap_class_tag) {
  WaitList::Waiter w;
  const WaitList::Unflag unflag{*waits_, w};  // on every way out of the loop
  Time drained_for = Time::ps(-1);
  for (;;) {
    if (sim_.aborted_.load(std::memory_order_relaxed)) return;
    bool ran = false;
    if (pass(generation, cap_time, cap_class_tag, drained_for, ran)) return;
    if (ran) {
      waits_->progress(w);
    } else {
      wait_a_little(w);
    }
  }
}

bool Partition::pass(uint64_t generation, Time cap_time, uint64_t cap_class_tag, Time& drained_for,
                     bool& ran) {
  const Key cap{cap_time, cap_class_tag};
  const auto& parts = sim_.parts_;
  const bool holds = sim_.holds_ > 0 && !sim_.holds_spent_;
  {
    Time safe = Time::infinite();
    for (const Channel* c : in_) safe = std::min(safe, plus(c->from->clock(), c->lookahead));
    // Frames pushed since the last drain were sent at or after the clocks
    // read then: due at or after that `safe`. So only a new bound needs a
    // drain (and the senders' ring lines stay put while this one waits).
    if (safe != drained_for) {
      if (take_in_all()) waits_->wake();  // a sender may sleep in send()
      drained_for = safe;
    }
    Key end = cap;  // where this phase ends for this partition
    Key limit = std::min(cap, Key{safe, 0});
    if (holds && shared_.open.load(std::memory_order_relaxed) == 0) {
      Key guard{Time::zero(), 0};
      bool open = false;
      for (const auto& q : parts) {
        // A partition done with this phase releases nothing before its
        // end; one still running, nothing before its clock. (Read the
        // clock before `open`: a release is stored before any later clock.)
        const bool done = q->shared_.done.load() == generation;
        const int64_t c = q->shared_.clock.load();
        if (q->shared_.open.load() > 0) {
          guard = std::max(guard, done ? cap : Key{Time::ps(c), 0});
          open = true;
        }
      }
      if (open) {
        limit = std::min(limit, guard);
      } else {
        Key last{Time::zero(), 0};
        for (const auto& q : parts) {
          if (q->holds_ == 0) continue;
          last = std::max(
              last, Key{Time::ps(q->shared_.last_time.load()), q->shared_.last_class_tag.load()});
        }
        end = std::min(end, last);
        limit = std::min(limit, last);
      }
    }
    const uint64_t before = events_;
    // Run what is safe, publishing the clock every few events: the other
    // partitions may go on as this one does, not only when its pass ends.
    // An event the last handler scheduled for now runs at once if it is
    // the next of all and below the limit (run_deferred), as in the
    // sequential loop; a release() that ends the run places it.
    interrupt_ = false;
    // Every kClockEvery events: nothing this partition still runs is
    // before `t`, the next one's time.
    const auto publish = [&](uint32_t n, Time t) {
      if (n % kClockEvery != 0) return;
      const Time c = std::min({t, safe, end.time});
      if (c > clock()) set_clock(c);
    };
    {
      const Deferring deferring(*this);
      for (uint32_t n = 1; !interrupt_; ++n) {
        if (deferred_ != nullptr) {
          publish(n, now_);
          if (run_deferred(Key{now_, deferred_->class_tag()} >= limit)) continue;
        }
        if (!queue_.ready()) break;
        const Key top{queue_.top_time(), queue_.top_class_tag()};
        if (top >= limit) break;
        publish(n, top.time);
        dispatch_one();
      }
    }
    Key next;
    if (queue_.ready()) next = Key{queue_.top_time(), queue_.top_class_tag()};
    const Time clock_now = std::min({next.time, safe, end.time});
    if (clock_now > clock()) set_clock(clock_now);
    // Done: nothing left before the end, and nothing can still arrive
    // before it.
    if (next >= end && (safe > end.time || end.time.is_infinite())) return true;
    ran = events_ != before || interrupt_;
    if (!ran) {
      // A sender blocked on a full channel cannot move its clock, and a
      // partition holding nothing may be waiting for that clock: take its
      // frames in even though the bound has not moved (found in review).
      for (Channel* c : in_) {
        // Sequentially consistent: the look before a sleep (wait_list.h).
        if (c->blocked.load(std::memory_order_seq_cst)) take_in_blocked(*c);
      }
    }
  }
  return false;
}

void Simulation::fail(std::exception_ptr e) {
  {
    const std::lock_guard<std::mutex> lock(error_mutex_);
    if (!error_) error_ = std::move(e);
  }
  aborted_.store(true);
  waits_.wake();
}

void Simulation::run_phase_serial(Time cap, uint64_t cap_class_tag) {
  // The partitions take turns, one pass each, on this thread: the one
  // furthest behind can always run, so every round moves a clock or runs an
  // event. The same events run in the same order per partition as on
  // threads (results never depend on how the partitions interleave).
  const uint64_t g = ++generation_;
  const size_t n = parts_.size();
  std::vector<Time> drained_for(n, Time::ps(-1));
  std::vector<char> done(n, 0);
  size_t left = n;
  try {
    while (left > 0 && !aborted_.load()) {
      for (size_t i = 0; i < n; ++i) {
        if (done[i]) continue;
        bool ran = false;
        if (parts_[i]->pass(g, cap, cap_class_tag, drained_for[i], ran)) {
          done[i] = 1;
          parts_[i]->shared_.done.store(g);
          --left;
        }
      }
    }
    for (const auto& part : parts_) part->drain_all();
  } catch (...) {
    fail(std::current_exception());  // as on threads: the run cannot go on
  }
  for (const auto& part : parts_) part->shared_.quiet.store(g);
  if (aborted_.load()) std::rethrow_exception(error_);
}

void Simulation::run_group_phase(uint32_t t, uint64_t g, Time cap, uint64_t cap_class_tag) {
  const std::vector<Partition*>& group = groups_[t];
  if (group.size() == 1) {
    group[0]->run_phase(g, cap, cap_class_tag);
    return;
  }
  // As run_phase_serial, for this thread's partitions, waiting when none of
  // them can run (their inputs from other threads are behind), and then as
  // Partition::run_phase: done, taking frames in until every sender is.
  const size_t n = group.size();
  std::vector<Time> drained_for(n, Time::ps(-1));
  std::vector<char> done(n, 0);
  size_t left = n;
  WaitList::Waiter w;
  try {
    while (left > 0 && !aborted_.load(std::memory_order_relaxed)) {
      bool moved = false;
      for (size_t i = 0; i < n; ++i) {
        if (done[i]) {
          // Senders on other threads may still fill its channels (frames due
          // after the end), and only this thread may empty them.
          for (Partition::Channel* c : group[i]->in_) {
            // Sequentially consistent: the look before a sleep (wait_list.h).
            if (c->blocked.load(std::memory_order_seq_cst)) group[i]->take_in_blocked(*c);
          }
          continue;
        }
        bool ran = false;
        if (group[i]->pass(g, cap, cap_class_tag, drained_for[i], ran)) {
          done[i] = 1;
          group[i]->shared_.done.store(g);
          waits_.wake();
          --left;
          ran = true;
        }
        moved = moved || ran;
      }
      if (moved) {
        waits_.progress(w);
      } else {
        group[0]->wait_a_little(w);
      }
    }
  } catch (...) {
    fail(std::current_exception());
  }
  for (Partition* p : group) p->shared_.done.store(g);
  waits_.wake();
  try {
    for (;;) {
      bool all = true;
      bool freed = false;
      for (Partition* p : group) {
        for (const Partition::Channel* c : p->in_) all = all && c->from->shared_.done.load() == g;
        freed = p->take_in_all() || freed;
      }
      if (freed) waits_.wake();  // a sender may sleep in send()
      if (all || aborted_.load(std::memory_order_relaxed)) break;
      group[0]->wait_a_little(w);
    }
  } catch (...) {
    fail(std::current_exception());
  }
  waits_.progress(w);
  for (Partition* p : group) p->shared_.quiet.store(g);
}

RunEnd Simulation::run_partitioned(Time stop_at) {
  if (!decided_ && min_events_per_lookahead_ == std::numeric_limits<double>::infinity()) {
    decided_ = serial_ = density_serial_ = true;  // turns from the start
  }
  if (!workers_ && !serial_) workers_ = std::make_unique<Workers>(*this);
  oversubscribed_ = threads() > usable_cpus();
  // Threads kept off their CPUs by other processes: take turns while that
  // pays (sim/starvation.h). Not once the first phase chose turns, nor when
  // the threads are forced.
  const bool adapt = adapt_to_starvation_ && min_events_per_lookahead_ > 0;
  if (adapt && !starvation_) starvation_ = std::make_unique<StarvationPolicy>(*probe_);
  if (adapt && !serial_) starvation_->begin(false, workers_->thread_ids(), events_dispatched());
  // Between phases only this thread runs, and every frame is in its link.
  for (const auto& part : parts_) part->drain_all();
  const auto released = [this](Key* last) {
    if (holds_ == 0 || holds_spent_) return false;
    for (const auto& part : parts_) {
      if (part->shared_.open.load() > 0) return false;
      if (part->holds_ > 0) {
        *last = std::max(*last, Key{Time::ps(part->shared_.last_time.load()),
                                    part->shared_.last_class_tag.load()});
      }
    }
    return true;
  };
  uint64_t next_progress = progress_hook_ ? events_dispatched() + progress_every_ : UINT64_MAX;
  RunEnd end = RunEnd::kIdle;
  Time end_time;
  for (;;) {
    Key last{Time::zero(), 0};
    if (stop_requested_) {
      // Stopped between phases (a signal, the wall-clock limit, an event
      // budget): the run has simulated as far as its partitions got, which
      // the control clock (moved only by observers) may be far behind.
      end = RunEnd::kStopped;
      end_time = control_->now_;
      for (const auto& part : parts_) end_time = std::max(end_time, part->now_);
      break;
    }
    if (released(&last)) {
      // The last hold was released: the run ends right after that event.
      // (Once: a run() after this goes on, as a sequential one does.)
      holds_spent_ = true;
      end = RunEnd::kStopped;
      end_time = last.time;
      break;
    }
    if (progress_hook_ && events_dispatched() >= next_progress) {
      progress_hook_(*this);
      next_progress = events_dispatched() + progress_every_;
      if (stop_requested_) continue;  // seen now, not after one more phase
    }
    Key first;  // the earliest event of any partition
    for (const auto& part : parts_) {
      if (part->queue_.ready()) {
        first = std::min(first, Key{part->queue_.top_time(), part->queue_.top_class_tag()});
      }
    }
    Key observer;
    if (control_->queue_.ready()) {
      observer = Key{control_->queue_.top_time(), control_->queue_.top_class_tag()};
    }
    const Time next = std::min(first.time, observer.time);
    if (next.is_infinite()) {
      end_time = control_->now_;
      for (const auto& part : parts_) end_time = std::max(end_time, part->now_);
      break;  // idle
    }
    if (next > stop_at) {
      end = RunEnd::kTimeLimit;
      end_time = stop_at;
      for (const auto& part : parts_) part->now_ = stop_at;
      break;
    }
    if (observer < first) {
      // Observers run alone, with every clock at their event.
      for (const auto& part : parts_) {
        part->now_ = observer.time;
        part->now_class_tag_ = observer.class_tag;
      }
      control_->dispatch_one();
      continue;
    }
    // A phase: to the next observer event, the stop time, or a horizon far
    // enough for many lookaheads (phases are barriers; keep them rare).
    Key cap = std::min(observer, Key{stop_at, UINT64_MAX});
    if (!lookahead_.is_infinite()) {
      int64_t lookaheads = kFirstPhaseLookaheads;
      if (turns_from_start()) {
        // No threads to keep apart, so barriers cost little: short phases,
        // between which stops, progress and flushes are looked at.
        lookaheads = kTurnsPhaseLookaheads;
      } else if (decided_) {
        phase_lookaheads_ = phase_lookaheads_ == 0
                                ? kGrowFromLookaheads
                                : std::min(2 * phase_lookaheads_, kPhaseLookaheads);
        phase_lookaheads_ = std::min(phase_lookaheads_, phase_cap_);
        lookaheads = phase_lookaheads_;
      }
      const Time horizon = std::min(lookahead_, Time::infinite() / (2 * kPhaseLookaheads));
      cap = std::min(cap, Key{plus(first.time, horizon * lookaheads), 0});
    }
    // Clocks to start from: a partition's next event, or the earliest
    // anything could reach it from another, whichever is sooner.
    for (const auto& part : parts_) {
      const Time c = part->queue_.ready() ? part->queue_.top_time() : Time::infinite();
      part->set_clock(std::min({c, plus(first.time, lookahead_), cap.time}));
    }
    ++phases_;
    const uint64_t before = events_dispatched();
    if (adapt && decided_ && !density_serial_) {
      const bool turns = starvation_->next(before);
      if (turns != serial_) {
        serial_ = turns;
        if (turns) {
          workers_.reset();
          starvation_->begin(true, {}, before);
        } else {
          workers_ = std::make_unique<Workers>(*this);
          starvation_->begin(false, workers_->thread_ids(), before);
        }
      }
    }
    const auto started = std::chrono::steady_clock::now();
    if (serial_) {
      run_phase_serial(cap.time, cap.class_tag);
    } else {
      workers_->run_phase(cap.time, cap.class_tag);
    }
    const uint64_t ran = events_dispatched() - before;
    if (!lookahead_.is_infinite() && !turns_from_start()) {
      const std::chrono::duration<double> took = std::chrono::steady_clock::now() - started;
      phase_cap_ = phase_cap(static_cast<double>((cap.time - first.time).in_ps()) /
                                 static_cast<double>(lookahead_.in_ps()),
                             took.count(), phase_wall_seconds_);
    }
    if (!serial_ && !decided_ && (ran > 0 || sample_events_ > 0) && !lookahead_.is_infinite()) {
      // The first phase that ran anything decides: too few events per
      // thread per lookahead, and each thread spends more time waiting for
      // the others than running (one pass per few events): the rest of the
      // run goes on one thread, the same partitions taking turns. Observers'
      // events (a sampler's) cut phases short, so the decision takes the
      // phases after it too, until together they span what a first phase
      // spans uncut (kFirstPhaseLookaheads; tests may set fewer), or reach
      // the stop time: the first lookaheads of a run, while the fabric
      // fills, are sparser than the rest (a sampler every 5 lookaheads once
      // restarted W5 at 128 hosts, on 639 events per thread per lookahead
      // against 1,937 over 64), and the events of one instant (a sampler's
      // at time 0) are no rate.
      sample_events_ += ran;
      sample_span_ += cap.time - first.time;
      const bool whole =
          sample_span_ >= lookahead_ * density_sample_lookaheads_ || cap.time >= stop_at;
      if (sample_span_ < lookahead_ || !whole) continue;
      decided_ = true;
      measure_density();
      if (events_per_thread_lookahead() < min_events_per_lookahead_) {
        serial_ = density_serial_ = true;
        density_phase_ = phases_;
        workers_.reset();
        if (stop_when_sparse_) {
          stopped_sparse_ = true;
          end = RunEnd::kStopped;
          end_time = control_->now_;
          for (const auto& part : parts_) end_time = std::max(end_time, part->now_);
          break;
        }
      }
    }
  }
  // Ended (idle, or stopped by an observer: the workloads are done) before
  // the density sample was whole, observers having cut its phases short:
  // report the density of what ran (a later run() may still decide).
  if (!serial_ && !decided_ && sample_span_ >= lookahead_) measure_density();
  control_->now_ = end_time;
  return end;
}

void Simulation::measure_density() {
  const double lookaheads =
      static_cast<double>(sample_span_.in_ps()) / static_cast<double>(lookahead_.in_ps());
  per_lookahead_ = static_cast<double>(sample_events_) / (partitions() * lookaheads);
}

uint64_t Simulation::starved_windows() const {
  return starvation_ ? starvation_->starved_windows() : 0;
}

double Simulation::starved_turns_seconds() const {
  return starvation_ ? starvation_->turns_seconds() : 0.0;
}

void Simulation::finish() {
  if (phase_ == Phase::kFinished) return;
  workers_.reset();
  phase_ = Phase::kFinished;
  for (Component* c : components_) c->finish();
}

}  // namespace rdmasim
