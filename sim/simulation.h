// Simulation: the clock, the future event set, the packet pool, the RNG seed
// and every component. There is no global state: two Simulations can run side
// by side in one process, and a test builds its own.
//
// Contract:
//  1. Lifecycle: components are added (kBuild), then setup() runs each
//     component's setup() once (kSetup), run() dispatches events (kRunning),
//     and finish() runs each component's finish() once (kFinished). Events
//     may be scheduled from setup() on; links refuse to send outside kRunning.
//  2. schedule(e, t) requires t >= now() and e not already scheduled.
//  3. Components are owned by the Simulation, destroyed in reverse order of
//     creation, and get dense ids in creation order; an id is the component's
//     event tag, so the tie order depends on the (deterministic) build order
//     and not on addresses.
//  4. Every dispatched event is folded into a fingerprint (time, class, tag),
//     so two runs that dispatch the same events in the same order have the
//     same fingerprint, and any divergence changes it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sim/event_queue.h"
#include "sim/packet.h"
#include "sim/rng.h"
#include "sim/units.h"

namespace rdmasim {

class Simulation;

// Anything the simulation owns: a node, a link, a traffic generator, a sampler.
class Component {
 public:
  Component(Simulation& sim, std::string name);
  Component(const Component&) = delete;
  Component& operator=(const Component&) = delete;
  virtual ~Component() = default;

  const std::string& name() const { return name_; }
  uint32_t id() const { return id_; }
  Simulation& sim() const { return sim_; }

  // Called once after the whole network is built, before the first event.
  virtual void setup() {}
  // Called once after the run ends, whatever the reason.
  virtual void finish() {}

 private:
  Simulation& sim_;
  std::string name_;
  uint32_t id_;
};

enum class Phase : uint8_t { kBuild, kSetup, kRunning, kFinished };

// Why run() returned.
enum class RunEnd : uint8_t {
  kIdle,       // the event queue emptied
  kTimeLimit,  // the next event lies beyond the stop time
  kStopped,    // a component called request_stop()
};

class Simulation {
 public:
  explicit Simulation(uint64_t seed = 1);
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;
  ~Simulation();

  // ---- building ----
  template <class T, class... Args>
  T& add(Args&&... args) {
    auto owned = std::make_unique<T>(*this, std::forward<Args>(args)...);
    T& ref = *owned;
    owned_.push_back(std::move(owned));
    return ref;
  }
  const std::vector<Component*>& components() const { return components_; }
  uint64_t seed() const { return seed_; }
  // The random stream of the component named `name` (see sim/rng.h).
  RngStream rng_stream(std::string_view name) const { return RngStream(seed_, name); }

  // ---- running ----
  void setup();
  // Dispatches events until the queue empties, stop_at is passed, or a
  // component asks to stop. May be called again to continue.
  RunEnd run(Time stop_at = Time::infinite());
  void finish();

  Time now() const { return now_; }
  Phase phase() const { return phase_; }
  void schedule(Event& e, Time t);
  void schedule_in(Event& e, Time delay) { schedule(e, now_ + delay); }
  void reschedule(Event& e, Time t);
  void cancel(Event& e);
  void request_stop() { stop_requested_ = true; }

  PacketHandle make_packet() { return pool_.make(now_); }
  const PacketPool& packet_pool() const { return pool_; }

  // ---- statistics ----
  uint64_t events_dispatched() const { return events_; }
  uint64_t fingerprint() const { return fingerprint_; }
  size_t pending_events() const { return queue_.size(); }
  // Pending events of the models themselves (classes below kSample): when
  // there are none, nothing can change any more, and observers (samplers,
  // detectors, in kSample and kControl) stop rescheduling themselves.
  size_t model_events_pending() const { return model_pending_; }
  // Called from run() about every `every` events, e.g. to print progress.
  void set_progress_hook(std::function<void(const Simulation&)> hook, uint64_t every = 1 << 16);

 private:
  friend class Component;
  uint32_t register_component(Component* c);

  uint64_t seed_;
  Time now_;
  Phase phase_ = Phase::kBuild;
  bool stop_requested_ = false;
  EventQueue queue_;
  PacketPool pool_;
  uint64_t events_ = 0;
  size_t model_pending_ = 0;
  uint64_t fingerprint_ = 0;
  std::function<void(const Simulation&)> progress_hook_;
  uint64_t progress_every_ = 0;
  std::vector<Component*> components_;
  // Declared last: components hold packets, which must return to pool_ first.
  std::vector<std::unique_ptr<Component>> owned_;
};

}  // namespace rdmasim
