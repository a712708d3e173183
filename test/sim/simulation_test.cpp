#include "test/support/catch_units.h"

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
