#include "sim/simulation.h"

#include <cassert>
#include <stdexcept>

#include "sim/hash.h"

namespace rdmasim {

Component::Component(Simulation& sim, std::string name)
    : sim_(sim), name_(std::move(name)), id_(sim.register_component(this)) {}

Simulation::Simulation(uint64_t seed) : seed_(seed) {}

Simulation::~Simulation() {
  // Destroy in reverse creation order: later components may refer to earlier.
  while (!owned_.empty()) owned_.pop_back();
}

uint32_t Simulation::register_component(Component* c) {
  if (phase_ != Phase::kBuild) throw std::logic_error("components must be added before setup()");
  components_.push_back(c);
  return static_cast<uint32_t>(components_.size() - 1);
}

void Simulation::setup() {
  if (phase_ != Phase::kBuild) throw std::logic_error("setup() called twice");
  phase_ = Phase::kSetup;
  for (Component* c : components_) c->setup();
}

void Simulation::schedule(Event& e, Time t) {
  assert(!e.scheduled() && "event already scheduled");
  assert(t >= now_ && "event scheduled in the past");
  queue_.push(e, t);
  if (e.cls_ < EventClass::kSample) ++model_pending_;
}

void Simulation::reschedule(Event& e, Time t) {
  assert(t >= now_);
  if (e.scheduled()) {
    queue_.erase(e);
    if (e.cls_ < EventClass::kSample) --model_pending_;
  }
  queue_.push(e, t);
  if (e.cls_ < EventClass::kSample) ++model_pending_;
}

void Simulation::cancel(Event& e) {
  if (e.scheduled()) {
    queue_.erase(e);
    if (e.cls_ < EventClass::kSample) --model_pending_;
  }
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
  uint64_t next_progress = progress_hook_ ? events_ + progress_every_ : UINT64_MAX;
  while (!queue_.empty()) {
    if (stop_requested_) return RunEnd::kStopped;
    const Time t = queue_.top_time();
    if (t > stop_at) {
      now_ = stop_at;
      return RunEnd::kTimeLimit;
    }
    Event* e = queue_.pop();
    if (e->cls_ < EventClass::kSample) --model_pending_;
    now_ = t;
    ++events_;
    fingerprint_ = mix64(fingerprint_ ^ static_cast<uint64_t>(t.in_ps())) ^ e->class_tag();
    e->handler_(*e);
    if (events_ >= next_progress) {
      progress_hook_(*this);
      next_progress = events_ + progress_every_;
    }
  }
  return stop_requested_ ? RunEnd::kStopped : RunEnd::kIdle;
}

void Simulation::finish() {
  if (phase_ == Phase::kFinished) return;
  phase_ = Phase::kFinished;
  for (Component* c : components_) c->finish();
}

}  // namespace rdmasim
