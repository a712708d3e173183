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
//  5. Partitions (sim/partition.h). By default everything is in one
//     partition and run() is the plain sequential loop. set_partitions(n)
//     adds partitions; each component is then assigned to one (nodes and the
//     links into them) or made an observer (set_observer: samplers,
//     detectors, traffic generators, fault injectors: anything that reads or
//     writes more than one node). run() then proceeds in phases, each up to
//     the next observer event, the stop time or a horizon. In a phase every
//     partition runs on a thread (its own, or one whose partitions take
//     turns: set_threads), conservatively (Chandy-Misra-Bryant):
//     it runs an event only once no other partition can still send it a
//     frame due earlier, which it knows from their published clocks plus the
//     lookahead, the shortest delay of a link between them. Between phases
//     observer events run alone, with every partition's clock at their time.
//     Each partition runs exactly the events, in exactly the order, that a
//     sequential run gives it, whatever the thread timing; and the run stops
//     after the same event (holds, partition.h). So results do not depend on
//     the number of threads, except the fingerprint: one chain per
//     partition, combined.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "sim/event_queue.h"
#include "sim/invariants.h"
#include "sim/packet.h"
#include "sim/partition.h"
#include "sim/rng.h"
#include "sim/starvation.h"
#include "sim/units.h"
#include "sim/wait_list.h"

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
  // The partition the component runs in: its clock, events and packets.
  Partition& ctx() const { return *part_; }
  // Moves it to another partition; before setup() (Simulation contract 5).
  void assign(Partition& p) { part_ = &p; }

  // Called once after the whole network is built, before the first event.
  virtual void setup() {}
  // Called once after the run ends, whatever the reason.
  virtual void finish() {}

 private:
  Simulation& sim_;
  Partition* part_;
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

  // ---- invariant checks (sim/invariants.h) ----
  // On by default in Debug builds; before setup(). Components read it in
  // setup() and keep their own bool.
  void set_checks(bool on);
  bool checks() const { return checks_; }

  // ---- partitioning (contract 5) ----
  // n >= 1 partitions, run on n threads; before setup().
  void set_partitions(uint32_t n);
  uint32_t partitions() const { return static_cast<uint32_t>(parts_.size()); }
  // Runs the partitions on t threads instead (1 <= t <= partitions()), each
  // thread taking turns with a contiguous group of them; before setup(),
  // after set_partitions(). Results are the same.
  void set_threads(uint32_t t);
  uint32_t threads() const { return static_cast<uint32_t>(groups_.size()); }
  Partition& partition(uint32_t i) { return *parts_[i]; }
  // Makes c an observer: it runs in the observers' partition (partition 0
  // when there is one, else its own, run between phases).
  void set_observer(Component& c) { c.assign(*control_); }
  // The shortest delay of a link between partitions (infinite if none);
  // known after setup().
  Time lookahead() const { return lookahead_; }
  // Called by links that cross partitions, from setup().
  void limit_lookahead(Time delay) { lookahead_ = std::min(lookahead_, delay); }

  // ---- running ----
  void setup();
  // Dispatches events until the queue empties, stop_at is passed, or a
  // component asks to stop. May be called again to continue.
  RunEnd run(Time stop_at = Time::infinite());
  void finish();

  // The control partition's clock: the simulation's time between phases
  // and after run(); what observers and tests see.
  Time now() const { return control_->now(); }
  Phase phase() const { return phase_; }
  void schedule(Event& e, Time t) { control_->schedule(e, t); }
  void schedule_in(Event& e, Time delay) { control_->schedule_in(e, delay); }
  void reschedule(Event& e, Time t) { control_->reschedule(e, t); }
  void cancel(Event& e) { control_->cancel(e); }
  // From a sequential run, or from an observer (which runs between
  // phases): run() returns after the current event. (Models that end the
  // run from a partition use holds: Partition::hold.)
  void request_stop() { stop_requested_ = true; }

  PacketHandle make_packet() { return control_->make_packet(); }
  // Partition 0's pool (the only one of a sequential run).
  const PacketPool& packet_pool() const { return parts_[0]->packet_pool(); }
  uint64_t packets_created() const;

  // ---- statistics ----
  uint64_t events_dispatched() const;
  uint64_t fingerprint() const;
  size_t pending_events() const;
  // Pending events of the models themselves (classes below kSample): when
  // there are none, nothing can change any more, and observers (samplers,
  // detectors, in kSample and kControl) stop rescheduling themselves.
  size_t model_events_pending() const;
  // For observers (which run alone): the time of the earliest pending event
  // of any partition and class, a frame between partitions counting at its
  // due time, so the answer does not depend on the partitioning;
  // Time::infinite() if nothing is pending. Lets a periodic observer skip an
  // idle stretch instead of ticking through it.
  Time next_event_time();
  // Phases a partitioned run has gone through (barriers between which
  // observers run).
  uint64_t phases() const { return phases_; }
  // A phase reaches at most this many lookaheads past the earliest event:
  // the first kFirstPhaseLookaheads (the density decision's sample), the
  // next kGrowFromLookaheads, and each later one twice the one before, up to
  // kPhaseLookaheads (with turns from the start there is no sample: see
  // kTurnsPhaseLookaheads). Short phases at the
  // start give the starvation policy early decision points (it can switch
  // only between phases); long ones later keep the barriers rare.
  static constexpr int64_t kFirstPhaseLookaheads = 64;
  static constexpr int64_t kGrowFromLookaheads = 32;
  static constexpr int64_t kPhaseLookaheads = 256;
  // Partitions taking turns from the start (turns_from_start()): every
  // phase is this many lookaheads, so that a large fabric on one thread
  // looks at its stops (a signal, the wall-clock limit) about as often as
  // it would whole (a wall second at 8,192 hosts is some 20 lookaheads).
  static constexpr int64_t kTurnsPhaseLookaheads = 8;
  // Stops (a signal, the wall-clock limit) are looked at between phases:
  // after a phase that took longer than this in wall time, the next one
  // reaches only as many lookaheads as this would take at that phase's pace
  // (at least one); a quicker phase lifts the cap, and the next doubles, so
  // phases stay under about twice this. W5's permutation at 8,192 hosts on
  // two threads took up to 25 s for a phase of kPhaseLookaheads on a busy
  // machine. Phase lengths do not change results.
  static constexpr double kPhaseWallSeconds = 0.25;
  // The most lookaheads the phase after one that ran `lookaheads` in
  // `wall_seconds` may reach, for phases of `target` wall seconds (0: one
  // lookahead whatever the time).
  static int64_t phase_cap(double lookaheads, double wall_seconds,
                           double target = kPhaseWallSeconds) {
    if (target <= 0) return 1;
    if (wall_seconds <= target) return kPhaseLookaheads;
    const double fit = lookaheads * target / wall_seconds;
    return fit < 1 ? 1 : static_cast<int64_t>(fit);
  }
  // Tests: the wall time phase_cap() aims at (infinity: no cap, the phase
  // lengths then depend on simulated time alone; 0: one lookahead after the
  // first phase).
  void set_phase_wall_seconds(double s) { phase_wall_seconds_ = s; }
  // A partitioned run whose first phase runs fewer events than this per
  // thread per lookahead goes on with its partitions taking turns on one
  // thread (set_min_events_per_lookahead(0) keeps the threads; infinity
  // takes turns from the start): the threads would wait for one another
  // more than they run.
  static constexpr double kMinEventsPerLookahead = 1000;
  void set_min_events_per_lookahead(double n) { min_events_per_lookahead_ = n; }
  // Tests: how many lookaheads of phases cut short by observers the
  // decision waits for (kFirstPhaseLookaheads, an uncut first phase's; 1
  // decides after the first phase with events that spans a lookahead, so
  // that a short run switches to turns within it).
  void set_density_sample_lookaheads(int64_t n) { density_sample_lookaheads_ = n; }
  // The partitions take turns on one thread from the start (set before
  // setup(): the channels between partitions are sized by it).
  bool turns_from_start() const {
    return min_events_per_lookahead_ == std::numeric_limits<double>::infinity();
  }
  // Some partitions take turns with others (on one thread, or in groups on
  // threads): channels hold about a pass's frames (Partition::Channel).
  bool partitions_take_turns() const { return turns_from_start() || threads() < partitions(); }
  // Instead of taking turns, a run that the first phase finds too sparse
  // stops there (RunEnd::kStopped, stopped_sparse()): the caller starts it
  // again on one thread, usually whole, which runs without the partitions'
  // overheads (two pools, channel rings, one queue each, a pass per
  // partition).
  void set_stop_when_sparse(bool on) { stop_when_sparse_ = on; }
  bool stopped_sparse() const { return stopped_sparse_; }
  // Threads a partitioned run uses now: threads(), or 1 once its
  // partitions took turns after the density decision (a run that ended in
  // the phase that decided ran on threads throughout).
  uint32_t threads_used() const {
    return density_serial_ && phases_ > density_phase_ ? 1 : threads();
  }
  // A partitioned run on threads watches them for starvation (a thread
  // ready to run but kept off its CPU by other processes) and takes turns
  // on one thread while that runs faster (sim/starvation.h); off: threads
  // always (as with set_min_events_per_lookahead(0)). The probe gives the
  // clock and the threads' times (tests replace it; it must outlive run()).
  void set_adapt_to_starvation(bool on) { adapt_to_starvation_ = on; }
  void set_thread_probe(ThreadProbe& probe) { probe_ = &probe; }
  // Windows on threads that found a thread starved, and the wall seconds
  // spent taking turns because of them (both timing-dependent).
  uint64_t starved_windows() const;
  double starved_turns_seconds() const;
  // Events per partition per lookahead in the first phase that ran any (0
  // before it, or with one partition).
  double events_per_partition_lookahead() const { return per_lookahead_; }
  // What the density decision compares with min_events_per_lookahead: a
  // thread waits once per pass over its group of partitions.
  double events_per_thread_lookahead() const { return per_lookahead_ * partitions() / threads(); }
  // Times a waiting thread slept (wait_list.h): how much of the run the
  // threads spent waiting for one another beyond a short spin.
  uint64_t thread_sleeps() const { return waits_.sleeps(); }
  // Called from run() about every `every` events, e.g. to print progress.
  void set_progress_hook(std::function<void(const Simulation&)> hook, uint64_t every = 1 << 16);

 private:
  // The density decision's measure: events per partition per lookahead over
  // the sample so far.
  void measure_density();
  friend class Component;
  friend class Partition;
  uint32_t register_component(Component* c);
  RunEnd run_sequential(Time stop_at);
  template <bool kChecks>
  RunEnd run_sequential_loop(Time stop_at);  // kChecks: checks_, as a constant
  RunEnd run_partitioned(Time stop_at);

  uint64_t seed_;
  bool checks_ = kChecksByDefault;
  Phase phase_ = Phase::kBuild;
  bool stop_requested_ = false;
  int64_t holds_ = 0;         // Partition::hold() calls, all partitions
  bool holds_spent_ = false;  // the last hold was released and the run stopped
  // An event of a partitioned run threw: the first exception, rethrown by
  // run() once every partition has left the phase. (The run cannot go on.)
  struct Aborted {};  // thrown to leave an event when another partition failed
  void fail(std::exception_ptr e);
  std::atomic<bool> aborted_{false};
  std::mutex error_mutex_;
  std::exception_ptr error_;
  bool oversubscribed_ = false;  // more threads than the CPUs it may use
  uint64_t generation_ = 0;      // phases run (threads and turns alike)
  bool decided_ = false;         // the density decision's sample is complete
  bool serial_ = false;          // partitions take turns on this thread
  bool density_serial_ = false;  // ... for good: the first phase had too few events
  uint64_t density_phase_ = 0;   // phases run when density_serial_ was decided
  bool adapt_to_starvation_ = true;
  ThreadProbe default_probe_;
  ThreadProbe* probe_ = &default_probe_;
  std::unique_ptr<StarvationPolicy> starvation_;
  double per_lookahead_ = 0;
  // The density decision's sample so far: events run, simulated time spanned.
  uint64_t sample_events_ = 0;
  Time sample_span_;
  double min_events_per_lookahead_ = kMinEventsPerLookahead;
  bool stop_when_sparse_ = false;
  bool stopped_sparse_ = false;
  void run_phase_serial(Time cap, uint64_t cap_class_tag);
  // One phase of thread `t`'s group of partitions, taking turns (a group of
  // one runs as Partition::run_phase).
  void run_group_phase(uint32_t t, uint64_t generation, Time cap, uint64_t cap_class_tag);
  // The partitions that run on the thread of `p`: on one thread, all.
  const std::vector<Partition*>& turn_mates(const Partition& p) const {
    return serial_ ? all_parts_ : groups_[p.group_];
  }
  WaitList waits_;  // where waiting partitions sleep
  Time lookahead_ = Time::infinite();
  uint64_t phases_ = 0;
  int64_t phase_lookaheads_ = 0;          // of the last phase after the first (0: none yet)
  int64_t phase_cap_ = kPhaseLookaheads;  // phase_cap() of the last phase
  double phase_wall_seconds_ = kPhaseWallSeconds;
  int64_t density_sample_lookaheads_ = kFirstPhaseLookaheads;
  std::vector<std::unique_ptr<Partition>> parts_;
  std::vector<Partition*> all_parts_;            // parts_, as the groups hold them
  std::vector<std::vector<Partition*>> groups_;  // by thread (set_threads)
  std::unique_ptr<Partition> own_control_;       // with more than one partition
  Partition* control_;
  struct Workers;
  std::unique_ptr<Workers> workers_;
  std::function<void(const Simulation&)> progress_hook_;
  uint64_t progress_every_ = 0;
  std::vector<Component*> components_;
  // Declared last: components hold packets, which must return to their pools first.
  std::vector<std::unique_ptr<Component>> owned_;
};

}  // namespace rdmasim
