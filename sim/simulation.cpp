#include "sim/simulation.h"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <stdexcept>
#include <thread>

#include "sim/hash.h"
#include "sim/link.h"

namespace rdmasim {

Component::Component(Simulation& sim, std::string name)
    : sim_(sim),
      part_(&sim.partition(0)),
      name_(std::move(name)),
      id_(sim.register_component(this)) {}

// The threads of a partitioned run: one per partition but the first, which
// the caller's thread runs. The main thread starts a window by moving
// `generation` on; a worker ends it by setting its partition's `finished_`
// to that generation, after publishing its next event in the same cache
// line. So a window costs two cache-line transfers each way and no system
// call: a thread that waits spins, then yields (more threads than cores),
// then sleeps on the atomic, and only then does the other side notify it.
struct Simulation::Workers {
  explicit Workers(Simulation& owner) : sim(owner) {
    for (uint32_t i = 1; i < sim.partitions(); ++i) threads.emplace_back([this, i] { work(i); });
  }
  ~Workers() {
    start.quit = true;
    start.generation.fetch_add(1);
    start.generation.notify_all();
    for (std::thread& t : threads) t.join();
  }
  void work(uint32_t i) {
    Partition& part = *sim.parts_[i];
    uint64_t seen = 0;
    for (;;) {
      seen = wait_change(start.generation, seen, start.sleepers);
      if (start.quit) return;
      part.run_window(start.parity, start.bound, start.bound_class_tag);
      part.finished_.store(seen);
      if (start.main_sleeping.load() != 0) part.finished_.notify_one();
    }
  }
  // Runs partition 0 here and the others on the workers, until the bound.
  void run_window(uint32_t parity, Time bound, uint64_t bound_class_tag) {
    start.parity = parity;
    start.bound = bound;
    start.bound_class_tag = bound_class_tag;
    const uint64_t g = start.generation.fetch_add(1) + 1;
    if (start.sleepers.load() != 0) start.generation.notify_all();
    sim.parts_[0]->run_window(parity, bound, bound_class_tag);
    for (uint32_t i = 1; i < sim.partitions(); ++i) {
      std::atomic<uint64_t>& f = sim.parts_[i]->finished_;
      uint64_t v = f.load(std::memory_order_acquire);
      for (int spin = 0; v != g; ++spin) {
        backoff(spin, [&] { sleep_on(f, v, start.main_sleeping); });
        v = f.load(std::memory_order_acquire);
      }
    }
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
  // Sleeps while `a` holds `old`, saying so in `sleeping` first, so that
  // the side that changes `a` (and then reads `sleeping`) wakes it.
  template <class T, class U>
  static void sleep_on(std::atomic<T>& a, T old, std::atomic<U>& sleeping) {
    sleeping.fetch_add(1);
    a.wait(old);
    sleeping.fetch_sub(1);
  }
  template <class T, class U>
  static T wait_change(std::atomic<T>& a, T old, std::atomic<U>& sleeping) {
    for (int spin = 0;; ++spin) {
      const T v = a.load(std::memory_order_acquire);
      if (v != old) return v;
      backoff(spin, [&] { sleep_on(a, old, sleeping); });
    }
  }

  Simulation& sim;
  std::vector<std::thread> threads;
  // What the main thread writes to start a window, in one cache line. The
  // plain fields are written before `generation` moves on and read after.
  struct alignas(64) Start {
    std::atomic<uint64_t> generation{0};
    std::atomic<uint32_t> sleepers{0};       // workers asleep on generation
    std::atomic<uint32_t> main_sleeping{0};  // the main thread asleep on a worker
    uint32_t parity = 0;
    bool quit = false;
    Time bound;
    uint64_t bound_class_tag = 0;
  } start;
};

Simulation::Simulation(uint64_t seed) : seed_(seed) {
  parts_.push_back(std::make_unique<Partition>(*this, 0, &phase_));
  control_ = parts_[0].get();
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

void Simulation::set_partitions(uint32_t n) {
  if (phase_ != Phase::kBuild) throw std::logic_error("set_partitions() after setup()");
  if (n < 1) throw std::invalid_argument("a simulation needs at least one partition");
  if (n == partitions()) return;
  if (partitions() != 1) throw std::logic_error("set_partitions() called twice");
  for (uint32_t i = 1; i < n; ++i) parts_.push_back(std::make_unique<Partition>(*this, i, &phase_));
  for (uint32_t from = 0; from < n; ++from) {
    parts_[from]->out_.resize(n);
    parts_[from]->in_.resize(n, nullptr);
  }
  for (uint32_t from = 0; from < n; ++from) {
    for (uint32_t to = 0; to < n; ++to) {
      if (from == to) continue;
      parts_[from]->out_[to] = std::make_unique<Partition::Channel>();
      parts_[to]->in_[from] = parts_[from]->out_[to].get();
    }
  }
  own_control_ = std::make_unique<Partition>(*this, n, &phase_);
  control_ = own_control_.get();
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
  for (const auto& p : parts_) n += p->pending_events() + p->in_flight();
  if (own_control_) n += own_control_->pending_events();
  return n;
}

size_t Simulation::model_events_pending() const {
  // A frame in a channel is a delivery still to come.
  size_t n = 0;
  for (const auto& p : parts_) n += p->model_pending_ + p->in_flight();
  if (own_control_) n += own_control_->model_pending_;
  return n;
}

void Simulation::set_progress_hook(std::function<void(const Simulation&)> hook, uint64_t every) {
  progress_hook_ = std::move(hook);
  progress_every_ = every;
}

RunEnd Simulation::run(Time stop_at) {
  if (phase_ == Phase::kBuild) setup();
  if (phase_ == Phase::kFinished) throw std::logic_error("run() after finish()");
  phase_ = Phase::kRunning;
  stop_requested_ = false;
  stop_time_ = Time::infinite();
  return parts_.size() == 1 ? run_sequential(stop_at) : run_partitioned(stop_at);
}

RunEnd Simulation::run_sequential(Time stop_at) {
  Partition& p = *parts_[0];
  uint64_t next_progress = progress_hook_ ? p.events_ + progress_every_ : UINT64_MAX;
  while (p.queue_.ready()) {
    if (stop_requested_) return RunEnd::kStopped;
    if (p.queue_.top_time() > stop_at) {
      p.now_ = stop_at;
      return RunEnd::kTimeLimit;
    }
    p.dispatch_one();
    if (p.events_ >= next_progress) {
      progress_hook_(*this);
      next_progress = p.events_ + progress_every_;
    }
  }
  return stop_requested_ ? RunEnd::kStopped : RunEnd::kIdle;
}

void Partition::run_until(Time bound, uint64_t bound_class_tag) {
  while (queue_.ready()) {
    const Time t = queue_.top_time();
    if (t > bound || (t == bound && queue_.top_class_tag() >= bound_class_tag)) return;
    dispatch_one();
  }
}

void Partition::run_window(uint32_t parity, Time bound, uint64_t bound_class_tag) {
  parity_ = parity;
  for (Channel* c : in_) {
    if (c == nullptr) continue;
    std::vector<Transfer>& sent = c->buffer[parity ^ 1];
    for (const Transfer& x : sent) x.link->hand_over(x.due, x.packet);
    sent.clear();
    c->min_due[parity ^ 1] = Time::infinite();
    c->min_class_tag[parity ^ 1] = UINT64_MAX;
  }
  run_until(bound, bound_class_tag);
  publish();
}

void Partition::take_in_all() {
  for (Channel* c : in_) {
    if (c == nullptr) continue;
    for (uint32_t b = 0; b < 2; ++b) {
      for (const Transfer& x : c->buffer[b]) x.link->hand_over(x.due, x.packet);
      c->buffer[b].clear();
      c->min_due[b] = Time::infinite();
      c->min_class_tag[b] = UINT64_MAX;
    }
  }
}

void Partition::publish() {
  next_time_ = Time::infinite();
  next_class_tag_ = UINT64_MAX;
  if (queue_.ready()) {
    next_time_ = queue_.top_time();
    next_class_tag_ = queue_.top_class_tag();
  }
  // Frames sent in this window are the receivers' events to come. (Those
  // of the window before are in the receivers' queues by now.)
  for (const auto& c : out_) {
    if (c == nullptr) continue;
    const Time t = c->min_due[parity_];
    if (t < next_time_ || (t == next_time_ && c->min_class_tag[parity_] < next_class_tag_)) {
      next_time_ = t;
      next_class_tag_ = c->min_class_tag[parity_];
    }
  }
}

size_t Partition::in_flight() const {
  size_t n = 0;
  for (const Channel* c : in_) {
    if (c != nullptr) n += c->buffer[0].size() + c->buffer[1].size();
  }
  return n;
}

RunEnd Simulation::run_partitioned(Time stop_at) {
  if (!workers_) workers_ = std::make_unique<Workers>(*this);
  struct Key {
    Time time = Time::infinite();
    uint64_t class_tag = UINT64_MAX;
    bool operator<(const Key& o) const {
      return time != o.time ? time < o.time : class_tag < o.class_tag;
    }
  };
  // Between windows only this thread runs. After a window each partition
  // has published its earliest event; frames sent in the window wait in
  // the channels (buffer `parity`) with their earliest due time.
  const auto settle = [this] {
    for (const auto& part : parts_) part->take_in_all();
    for (const auto& part : parts_) part->publish();
  };
  settle();
  uint64_t next_progress = progress_hook_ ? events_dispatched() + progress_every_ : UINT64_MAX;
  RunEnd end = RunEnd::kIdle;
  bool attention = true;
  for (;;) {
    for (const auto& part : parts_) {
      attention |= part->attention_;
      part->attention_ = false;
    }
    if (attention) {
      for (const auto& f : between_windows_) f();
      attention = false;
    }
    if (stop_requested_) {
      end = RunEnd::kStopped;
      break;
    }
    if (progress_hook_ && events_dispatched() >= next_progress) {
      progress_hook_(*this);
      next_progress = events_dispatched() + progress_every_;
    }
    Key first;  // the earliest event of any partition, frames in channels included
    for (const auto& part : parts_)
      first = std::min(first, Key{part->next_time_, part->next_class_tag_});
    Key observer;
    if (control_->queue_.ready()) {
      observer = Key{control_->queue_.top_time(), control_->queue_.top_class_tag()};
    }
    const Time next = std::min(first.time, observer.time);
    if (next.is_infinite()) break;  // idle
    if (next > stop_at) {
      end = RunEnd::kTimeLimit;
      break;
    }
    if (observer < first) {
      // Observers run alone, with every frame in its link and every clock
      // at their time.
      settle();
      for (const auto& part : parts_) part->now_ = observer.time;
      control_->dispatch_one();
      for (const auto& part : parts_) part->publish();
      attention = true;
      continue;
    }
    Key bound = observer;
    if (first.time < Time::infinite() - lookahead_) {
      bound = std::min(bound, Key{first.time + lookahead_, 0});
    }
    bound = std::min(bound, Key{stop_at, UINT64_MAX});
    workers_->run_window(static_cast<uint32_t>(windows_ & 1), bound.time, bound.class_tag);
    ++windows_;
  }
  settle();
  // The run's end: the last event of any partition, the stop time, or the
  // time a stop was requested for.
  Time last = control_->now_;
  for (const auto& part : parts_) last = std::max(last, part->now_);
  if (end == RunEnd::kTimeLimit) {
    last = stop_at;
    for (const auto& part : parts_) part->now_ = stop_at;
  }
  if (end == RunEnd::kStopped && !stop_time_.is_infinite()) last = stop_time_;
  control_->now_ = last;
  return end;
}

void Simulation::finish() {
  if (phase_ == Phase::kFinished) return;
  workers_.reset();
  phase_ = Phase::kFinished;
  for (Component* c : components_) c->finish();
}

}  // namespace rdmasim
