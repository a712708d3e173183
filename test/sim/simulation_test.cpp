#include "test/support/catch_units.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sim/simulation.h"

using namespace rdmasim;

namespace {

// A component that fires a timer n times, every `period`, logging the times.
class Ticker : public Component {
 public:
  Ticker(Simulation& sim, std::string name, Time period, int n, std::vector<std::string>* log)
      : Component(sim, std::move(name)),
        period_(period),
        left_(n),
        log_(log),
        tick_(this, EventClass::kTimer, id()) {}
  void setup() override { sim().schedule_in(tick_, period_); }
  void on_tick() {
    log_->push_back(name() + "@" + to_string(sim().now()));
    if (--left_ > 0) sim().schedule_in(tick_, period_);
  }

 private:
  Time period_;
  int left_;
  std::vector<std::string>* log_;
  MemberEvent<Ticker, &Ticker::on_tick> tick_;
};

}  // namespace

TEST_CASE("simulation dispatches member events in time and id order", "[quick][simulation]") {
  std::vector<std::string> log;
  Simulation sim;
  sim.add<Ticker>("a", Time::ns(10), 3, &log);
  sim.add<Ticker>("b", Time::ns(15), 2, &log);
  CHECK(sim.run() == RunEnd::kIdle);
  // At 30ns both fire; "a" was created first, so it has the smaller tag.
  CHECK(log == std::vector<std::string>{"a@10ns", "b@15ns", "a@20ns", "a@30ns", "b@30ns"});
  CHECK(sim.now() == Time::ns(30));
  CHECK(sim.events_dispatched() == 5);
}

TEST_CASE("run stops at the stop time and can continue", "[quick][simulation]") {
  std::vector<std::string> log;
  Simulation sim;
  sim.add<Ticker>("a", Time::ns(10), 5, &log);
  CHECK(sim.run(Time::ns(25)) == RunEnd::kTimeLimit);
  CHECK(sim.now() == Time::ns(25));
  CHECK(log.size() == 2);
  CHECK(sim.run() == RunEnd::kIdle);
  CHECK(log.size() == 5);
}

namespace {
// Fires once when told to, logging the time.
class Once : public Component {
 public:
  Once(Simulation& sim, std::string name, std::vector<std::string>* log)
      : Component(sim, std::move(name)), log_(log), fire_(this, EventClass::kTimer, id()) {}
  void at(Time t) { sim().schedule(fire_, t); }
  void on_fire() { log_->push_back(name() + "@" + to_string(sim().now())); }

 private:
  std::vector<std::string>* log_;
  MemberEvent<Once, &Once::on_fire> fire_;
};
}  // namespace

TEST_CASE("an event scheduled between runs ahead of the queued next one runs first",
          "[quick][simulation]") {
  // The queue has already looked ahead to the next event (another bucket,
  // another epoch, beyond the second wheel) when run() returns at its limit.
  for (const Time next : {Time::us(5), Time::us(100), Time::ms(50)}) {
    INFO("next event at " << to_string(next));
    std::vector<std::string> log;
    Simulation sim;
    auto& late = sim.add<Once>("late", &log);
    auto& early = sim.add<Once>("early", &log);
    sim.setup();
    late.at(next);
    CHECK(sim.run(Time::us(1)) == RunEnd::kTimeLimit);
    early.at(Time::us(2));
    CHECK(sim.run() == RunEnd::kIdle);
    CHECK(log == std::vector<std::string>{"early@2us", "late@" + to_string(next)});
    CHECK(sim.pending_events() == 0);
  }
}

TEST_CASE("two simulations in one process do not interact", "[quick][simulation]") {
  std::vector<std::string> log1, log2;
  Simulation s1(1), s2(2);
  s1.add<Ticker>("x", Time::ns(7), 4, &log1);
  s2.add<Ticker>("x", Time::ns(7), 4, &log2);
  s1.run(Time::ns(14));
  s2.run();
  s1.run();
  CHECK(log1 == log2);
  CHECK(s1.fingerprint() == s2.fingerprint());
  CHECK(s1.fingerprint() != 0);
}

TEST_CASE("the fingerprint changes when the event order changes", "[quick][simulation]") {
  std::vector<std::string> log;
  Simulation a, b;
  a.add<Ticker>("x", Time::ns(10), 2, &log);
  a.add<Ticker>("y", Time::ns(10), 2, &log);
  b.add<Ticker>("x", Time::ns(10), 2, &log);
  b.add<Ticker>("y", Time::ns(11), 2, &log);
  a.run();
  b.run();
  CHECK(a.fingerprint() != b.fingerprint());
}

TEST_CASE("components cannot be added once the simulation is set up", "[quick][simulation]") {
  std::vector<std::string> log;
  Simulation sim;
  sim.setup();
  CHECK_THROWS_AS(sim.add<Ticker>("late", Time::ns(1), 1, &log), std::logic_error);
}

namespace rdmasim {
// Schedules without schedule()'s assertion (sim/partition.h), so that the
// check where events are taken can be tested in builds with assertions on.
struct PartitionTestAccess {
  static void push(Partition& p, Event& e, Time t) { p.push(e, t); }
};
}  // namespace rdmasim

namespace {
// At 10 ns schedules a second event for 5 ns: in the past (past
// schedule()'s assertion, which would stop a Debug build right here).
class PastScheduler : public Component {
 public:
  explicit PastScheduler(Simulation& sim) : Component(sim, "past") {}
  void setup() override { ctx().schedule(first_, Time::ns(10)); }
  void on_first() { PartitionTestAccess::push(ctx(), second_, Time::ns(5)); }
  void on_second() {}

 private:
  MemberEvent<PastScheduler, &PastScheduler::on_first> first_{this, EventClass::kTimer, id()};
  MemberEvent<PastScheduler, &PastScheduler::on_second> second_{this, EventClass::kTimer, id()};
};
}  // namespace

TEST_CASE("event_in_past: an event scheduled before now is reported, with checks on",
          "[quick][simulation][invariants]") {
  Simulation sim;
  sim.set_checks(true);
  sim.add<PastScheduler>();
  sim.setup();
  CHECK_THROWS_WITH(sim.run(),
                    "invariant event_in_past violated at past, t=10ns: an event "
                    "scheduled for t=5ns, before now");
}

namespace {
// At 10 ns schedules a second event for now, then one rescheduled to now:
// not in the past (the assertions in schedule() and reschedule() let both
// through).
class NowScheduler : public Component {
 public:
  explicit NowScheduler(Simulation& sim) : Component(sim, "now") {}
  void setup() override { ctx().schedule(first_, Time::ns(10)); }
  void on_first() {
    ctx().schedule(second_, ctx().now());
    ctx().schedule(third_, Time::ns(20));
    ctx().reschedule(third_, ctx().now());
  }
  void on_second() { ++ran; }
  void on_third() { ++ran; }
  int ran = 0;

 private:
  MemberEvent<NowScheduler, &NowScheduler::on_first> first_{this, EventClass::kTimer, id()};
  MemberEvent<NowScheduler, &NowScheduler::on_second> second_{this, EventClass::kTimer, id()};
  MemberEvent<NowScheduler, &NowScheduler::on_third> third_{this, EventClass::kTimer, id()};
};
}  // namespace

TEST_CASE("event_in_past: an event scheduled for now is not in the past",
          "[quick][simulation][invariants]") {
  Simulation sim;
  sim.set_checks(true);
  NowScheduler& c = sim.add<NowScheduler>();
  sim.setup();
  sim.run();
  CHECK(c.ran == 2);
  CHECK(sim.now() == Time::ns(10));
}

TEST_CASE("checks are on by default exactly in Debug builds, and set before setup",
          "[quick][simulation][invariants]") {
  Simulation sim;
  CHECK(sim.checks() == kChecksByDefault);
  sim.set_checks(true);
  CHECK(sim.checks());
  sim.setup();
  CHECK_THROWS_AS(sim.set_checks(false), std::logic_error);
}

namespace {
// Events of chosen classes whose handlers log and then run a script step:
// the deferred event of the sequential loop (an event a handler schedules
// for now) against the order of contract 3 of sim/event.h.
class Actor : public Component {
 public:
  using Step = std::function<void(Actor&)>;
  Actor(Simulation& sim, std::string name, std::vector<std::string>* log)
      : Component(sim, std::move(name)), log_(log) {}
  // Event i (of class `cls`), whose handler logs "name.i" and runs `step`.
  size_t add(EventClass cls, Step step = {}) {
    events_.push_back(std::make_unique<Ev>(this, cls, events_.size(), std::move(step)));
    return events_.size() - 1;
  }
  Event& ev(size_t i) { return *events_[i]; }

 private:
  struct Ev final : Event {
    Ev(Actor* a, EventClass cls, size_t i, Step s)
        : Event(cls, a->id(), &Ev::thunk), actor(a), index(i), step(std::move(s)) {}
    static void thunk(Event& e) {
      Ev& x = static_cast<Ev&>(e);
      x.actor->log_->push_back(x.actor->name() + "." + std::to_string(x.index) + "@" +
                               to_string(x.actor->sim().now()));
      if (x.step) x.step(*x.actor);
    }
    Actor* actor;
    size_t index;
    Step step;
  };
  std::vector<std::string>* log_;
  std::vector<std::unique_ptr<Ev>> events_;
};
using Log = std::vector<std::string>;
}  // namespace

TEST_CASE("an event scheduled for the current time runs in the total order",
          "[quick][simulation]") {
  Log log;
  Simulation sim;
  Actor& a = sim.add<Actor>("a", &log);  // the smaller tag
  Actor& b = sim.add<Actor>("b", &log);
  sim.setup();
  const Time t = Time::ns(10);
  SECTION("a delivery and a transmit scheduled for now, in either order: the delivery first") {
    // Transmit first: it is reserved and placed behind the delivery. Delivery
    // first: it is reserved and runs at once.
    const bool transmit_first = GENERATE(true, false);
    INFO("transmit scheduled first: " << transmit_first);
    const size_t pull = a.add(EventClass::kTransmit);
    const size_t deliv = b.add(EventClass::kDelivery);
    const size_t timer = a.add(EventClass::kTimer, [&](Actor&) {
      Event& first = transmit_first ? a.ev(pull) : b.ev(deliv);
      Event& second = transmit_first ? b.ev(deliv) : a.ev(pull);
      sim.schedule(first, sim.now());
      sim.schedule(second, sim.now());
    });
    sim.schedule(a.ev(timer), t);
    CHECK(sim.run() == RunEnd::kIdle);
    CHECK(log == Log{"a.1@10ns", "b.0@10ns", "a.0@10ns"});
    CHECK(sim.events_dispatched() == 3);
  }
  SECTION("an event queued earlier for now with an equal key runs before the one scheduled now") {
    const size_t first = a.add(EventClass::kTransmit);   // queued before the run
    const size_t second = a.add(EventClass::kTransmit);  // scheduled for now by the timer
    const size_t timer =
        b.add(EventClass::kDelivery, [&](Actor&) { sim.schedule(a.ev(second), sim.now()); });
    sim.schedule(b.ev(timer), t);
    sim.schedule(a.ev(first), t);
    CHECK(sim.run() == RunEnd::kIdle);
    CHECK(log == Log{"b.0@10ns", "a.0@10ns", "a.1@10ns"});
  }
  SECTION("an event queued for now by another component with a smaller tag goes first") {
    const size_t queued = a.add(EventClass::kTransmit);
    const size_t now_b = b.add(EventClass::kTransmit);
    const size_t timer =
        b.add(EventClass::kTimer, [&](Actor&) { sim.schedule(b.ev(now_b), sim.now()); });
    sim.schedule(b.ev(timer), t);
    sim.schedule(a.ev(queued), t);
    CHECK(sim.run() == RunEnd::kIdle);
    CHECK(log == Log{"b.1@10ns", "a.0@10ns", "b.0@10ns"});
  }
  SECTION("a chain of events each scheduled for now by the one before") {
    size_t next = 0;
    next = a.add(EventClass::kTransmit, [&](Actor&) {
      if (log.size() < 4) sim.schedule(a.ev(next), sim.now());
    });
    const size_t later = b.add(EventClass::kDelivery);
    sim.schedule(a.ev(next), t);
    sim.schedule(b.ev(later), t + Time::ps(1));
    CHECK(sim.run() == RunEnd::kIdle);
    CHECK(log == Log{"a.0@10ns", "a.0@10ns", "a.0@10ns", "a.0@10ns", "b.0@10001ps"});
  }
  SECTION("an event scheduled for now and cancelled, or moved later, in the same handler") {
    const size_t cancelled = a.add(EventClass::kTransmit);
    const size_t moved = a.add(EventClass::kTransmit);
    const size_t timer = b.add(EventClass::kTimer, [&](Actor&) {
      sim.schedule(a.ev(cancelled), sim.now());
      sim.cancel(a.ev(cancelled));
      CHECK_FALSE(a.ev(cancelled).scheduled());
      sim.schedule(a.ev(moved), sim.now());
      CHECK(a.ev(moved).scheduled());
      CHECK(a.ev(moved).when() == sim.now());
      sim.reschedule(a.ev(moved), sim.now() + Time::ns(5));
    });
    sim.schedule(b.ev(timer), t);
    CHECK(sim.pending_events() == 1);
    CHECK(sim.run() == RunEnd::kIdle);
    CHECK(log == Log{"b.0@10ns", "a.1@15ns"});
    CHECK(sim.pending_events() == 0);
  }
  SECTION("a stop requested by the handler leaves the event for the next run") {
    const size_t pull = a.add(EventClass::kTransmit);
    const size_t timer = b.add(EventClass::kTimer, [&](Actor&) {
      sim.schedule(a.ev(pull), sim.now());
      sim.request_stop();
    });
    sim.schedule(b.ev(timer), t);
    CHECK(sim.run() == RunEnd::kStopped);
    CHECK(log == Log{"b.0@10ns"});
    CHECK(sim.pending_events() == 1);
    CHECK(sim.run() == RunEnd::kIdle);
    CHECK(log == Log{"b.0@10ns", "a.0@10ns"});
  }
}

TEST_CASE("the progress hook sees every event count, events scheduled for now included",
          "[quick][simulation]") {
  Log log;
  Simulation sim;
  Actor& a = sim.add<Actor>("a", &log);
  sim.setup();
  size_t step = 0;
  step = a.add(EventClass::kTransmit, [&](Actor&) {
    if (log.size() < 6) sim.schedule(a.ev(step), sim.now());
  });
  std::vector<uint64_t> seen;
  sim.set_progress_hook(
      [&](const Simulation& s) {
        seen.push_back(s.events_dispatched());
        if (s.events_dispatched() == 3) sim.request_stop();
      },
      1);
  sim.schedule(a.ev(step), Time::ns(1));
  // Stopped after exactly the third event, as --max-events needs.
  CHECK(sim.run() == RunEnd::kStopped);
  CHECK(seen == std::vector<uint64_t>{1, 2, 3});
  CHECK(log.size() == 3);
  CHECK(sim.run() == RunEnd::kIdle);
  CHECK(log.size() == 6);
  CHECK(seen == std::vector<uint64_t>{1, 2, 3, 4, 5, 6});
}

TEST_CASE("between a handler and the event it scheduled for now, the hook sees it pending",
          "[quick][simulation]") {
  Log log;
  Simulation sim;
  Actor& a = sim.add<Actor>("a", &log);
  sim.setup();
  const size_t pull = a.add(EventClass::kTransmit);
  const size_t timer =
      a.add(EventClass::kTimer, [&](Actor&) { sim.schedule(a.ev(pull), sim.now()); });
  std::vector<std::string> seen;
  sim.set_progress_hook(
      [&](const Simulation& s) {
        seen.push_back(std::to_string(s.events_dispatched()) + ":" +
                       to_string(sim.next_event_time()) + "/" + std::to_string(s.pending_events()) +
                       "/" + std::to_string(s.model_events_pending()));
      },
      1);
  sim.schedule(a.ev(timer), Time::ns(3));
  CHECK(sim.run() == RunEnd::kIdle);
  CHECK(log == Log{"a.1@3ns", "a.0@3ns"});
  // After the timer: the pull, due now, is pending; after the pull, nothing.
  CHECK(seen == std::vector<std::string>{"1:3ns/1/1", "2:inf/0/0"});
}

namespace {
// A random mix of events, each of which schedules up to two more, for now
// or a little later, of random classes, and sometimes cancels or moves one:
// the run's log and fingerprint.
std::pair<Log, uint64_t> random_run(uint64_t seed, bool hook_every_event) {
  Log log;
  Simulation sim(seed);
  RngStream rng(seed, "events");
  std::vector<Actor*> actors;
  for (int i = 0; i < 4; ++i) actors.push_back(&sim.add<Actor>("n" + std::to_string(i), &log));
  sim.setup();
  constexpr EventClass kClasses[] = {EventClass::kDelivery, EventClass::kTimer,
                                     EventClass::kTransmit, EventClass::kTraffic};
  int budget = 3000;
  for (Actor* a : actors) {
    for (int k = 0; k < 6; ++k) {
      a->add(kClasses[rng.next_u64() % 4], [&](Actor&) {
        for (int n = 1 + static_cast<int>(rng.next_u64() % 3); n > 0 && budget > 0; --n) {
          Actor& to = *actors[rng.next_u64() % actors.size()];
          Event& e = to.ev(rng.next_u64() % 6);
          const uint64_t r = rng.next_u64() % 8;
          const Time at = sim.now() + (r < 4 ? Time::zero() : Time::ps(static_cast<int64_t>(r)));
          if (!e.scheduled()) {
            sim.schedule(e, at);
            --budget;
          } else if (r == 7) {
            sim.cancel(e);
          } else {
            sim.reschedule(e, at);
          }
        }
      });
    }
  }
  for (Actor* a : actors) sim.schedule(a->ev(0), Time::ns(1));
  // A hook after every event places each deferred event before the next one
  // runs: the queue's own order, the reference.
  if (hook_every_event) sim.set_progress_hook([](const Simulation&) {}, 1);
  CHECK(sim.run() == RunEnd::kIdle);
  return {log, sim.fingerprint()};
}
}  // namespace

TEST_CASE("events run at once for the current time keep the queue's order, fingerprint and log",
          "[quick][simulation]") {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    INFO("seed " << seed);
    const auto direct = random_run(seed, false);
    const auto queued = random_run(seed, true);
    CHECK(direct.first.size() > 100);
    CHECK(direct.first == queued.first);
    CHECK(direct.second == queued.second);
  }
}

// Stops are looked at between phases, so a phase long in wall time keeps a
// signal waiting (up to 25 s for 256 lookaheads of W5 at 8,192 hosts on two
// threads): the next phase reaches only what a quarter of a second takes at
// the last one's pace, at least one lookahead; a quick phase sets no cap.
TEST_CASE("a phase long in wall time caps the next at a quarter second's lookaheads",
          "[quick][partition]") {
  CHECK(Simulation::phase_cap(256, 25.0) == 2);  // 256 x 0.25 / 25 = 2.56
  CHECK(Simulation::phase_cap(64, 8.0) == 2);
  CHECK(Simulation::phase_cap(16, 0.5) == 8);
  CHECK(Simulation::phase_cap(4, 10.0) == 1);  // never below one lookahead
  CHECK(Simulation::phase_cap(256, Simulation::kPhaseWallSeconds) == Simulation::kPhaseLookaheads);
  CHECK(Simulation::phase_cap(1, 0.001) == Simulation::kPhaseLookaheads);
}
