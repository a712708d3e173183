// Partitioned runs (sim/simulation.h contract 5): the same network run on
// one, two and three partitions must dispatch the same events, so every
// node sees the same packets at the same picoseconds in the same order.
#include "test/support/catch_units.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "sim/cable.h"
#include "sim/simulation.h"

using namespace rdmasim;

namespace {

// Forwards each packet it receives `hops` more times, choosing the out port
// from the packet's token, and logs every arrival as "time:port:token". At
// setup it injects a burst of packets, several at the same picosecond.
class Relay : public Node {
 public:
  Relay(Simulation& sim, std::string name, int burst, uint64_t quota = 0)
      : Node(sim, std::move(name)),
        burst_(burst),
        quota_(quota),
        inject_(this, EventClass::kTraffic, id()) {}
  void setup() override {
    queues_.resize(num_ports());
    if (burst_ > 0) ctx().schedule(inject_, Time::ns(100 * (id() % 3)));
    // A hold (sim/partition.h contract 4), released at the quota-th arrival.
    if (quota_ > 0) ctx().hold();
  }
  void receive(uint32_t port, PacketHandle p) override {
    log.push_back(to_string(ctx().now()) + ":" + std::to_string(port) + ":" +
                  std::to_string(p->psn));
    if (++received == quota_) ctx().release();
    if (p->msn == 0) return;
    --p->msn;
    p->psn = p->psn * 31 + id();
    send(std::move(p));
  }
  PacketHandle next_packet(uint32_t port) override {
    auto& q = queues_[port];
    if (q.empty()) return {};
    PacketHandle p = std::move(q.front());
    q.pop_front();
    return p;
  }

  std::vector<std::string> log;
  uint64_t received = 0;

 private:
  void on_inject() {
    for (int i = 0; i < burst_; ++i) {
      PacketHandle p = ctx().make_packet();
      p->wire_bytes = 64 + 100 * static_cast<uint32_t>(i % 7);
      p->psn = id() * 1000 + static_cast<uint32_t>(i);
      p->msn = 12;
      send(std::move(p));
    }
  }
  void send(PacketHandle p) {
    const uint32_t out = p->psn % num_ports();
    queues_[out].push_back(std::move(p));
    port(out).wake();
  }

  int burst_;
  uint64_t quota_;
  std::vector<std::deque<PacketHandle>> queues_;
  MemberEvent<Relay, &Relay::on_inject> inject_;
};

// Reads every relay's count every 3 us (an observer: it spans partitions),
// and asks to stop once `stop_after` packets have been received, if given.
class Counter : public Component {
 public:
  Counter(Simulation& sim, std::string name, std::vector<Relay*> relays, uint64_t stop_after)
      : Component(sim, std::move(name)),
        relays_(std::move(relays)),
        stop_after_(stop_after),
        tick_(this, EventClass::kSample, id()) {}
  void setup() override { ctx().schedule(tick_, Time::us(3)); }
  std::vector<uint64_t> samples;

 private:
  void on_tick() {
    uint64_t n = 0;
    for (const Relay* r : relays_) n += r->received;
    samples.push_back(n);
    if (stop_after_ > 0 && n >= stop_after_) {
      sim().request_stop();
      return;
    }
    if (sim().model_events_pending() > 0) ctx().schedule_in(tick_, Time::us(3));
  }
  std::vector<Relay*> relays_;
  uint64_t stop_after_;
  MemberEvent<Counter, &Counter::on_tick> tick_;
};

struct Outcome {
  std::vector<std::vector<std::string>> logs;
  std::vector<uint64_t> samples;
  std::vector<uint64_t> frames;  // per link
  uint64_t events = 0;
  RunEnd end = RunEnd::kIdle;
  Time now;
  Time lookahead;
  uint64_t phases = 0;
  uint32_t threads_used = 1;
  // At the first stop (Options::first_stop): events so far, arrivals per
  // relay, frames per link.
  uint64_t events_at_stop = 0;
  std::vector<size_t> arrivals_at_stop;
  std::vector<uint64_t> frames_at_stop;
  // After the hold stop, run() again (Options::run_again).
  RunEnd end_again = RunEnd::kIdle;
  uint64_t events_again = 0;
  uint64_t starved_windows = 0;
  double starved_turns_seconds = 0;
};

struct Options {
  uint64_t stop_after = 0;             // the observer stops the run after so many arrivals
  std::vector<uint64_t> quota;         // per relay: a hold released at that arrival (0: none)
  Time first_stop = Time::infinite();  // run(first_stop), then run() again
  bool run_again = false;              // run() once more after the run ends
  // Simulation::set_min_events_per_lookahead: 0 keeps the threads, a huge
  // value makes the partitions take turns on one thread after the first
  // phase with events (kTurns).
  double min_events = 0;
  // Watch the threads for starvation through this probe (with min_events
  // above 0; sim/starvation.h).
  ThreadProbe* probe = nullptr;
  // Simulation::set_threads: run the partitions on this many threads, each
  // taking turns with a group of them (0: one thread per partition).
  uint32_t threads = 0;
};
constexpr double kTurns = 1e300;
// Turns from the first phase on.
constexpr double kTurnsFromStart = std::numeric_limits<double>::infinity();
Options in_mode(Options o, double min_events) {
  o.min_events = min_events;
  return o;
}
Options stop_after(uint64_t n) {
  Options o;
  o.stop_after = n;
  return o;
}
Options holds(std::vector<uint64_t> quota) {
  Options o;
  o.quota = std::move(quota);
  return o;
}
Options stop_at_then_continue(Time t) {
  Options o;
  o.first_stop = t;
  return o;
}

// Six relays in a ring with chords, links of different rates and delays;
// relay i runs in partition part[i].
Outcome run_network(uint32_t parts, const std::vector<uint32_t>& part, const Options& opt = {}) {
  Simulation sim(7);
  std::vector<Relay*> relays;
  for (size_t i = 0; i < 6; ++i) {
    relays.push_back(&sim.add<Relay>("r" + std::to_string(i), i % 2 == 0 ? 40 : 25,
                                     opt.quota.empty() ? 0 : opt.quota[i]));
  }
  std::vector<Cable> cables;
  const Time delays[] = {Time::ns(1000), Time::ns(1500), Time::ns(700), Time::ns(2000),
                         Time::ns(900),  Time::ns(1200), Time::ns(800), Time::ns(1100)};
  const std::pair<int, int> pairs[] = {{0, 1}, {1, 2}, {2, 3}, {3, 4},
                                       {4, 5}, {5, 0}, {0, 3}, {1, 4}};
  for (int k = 0; k < 8; ++k) {
    const BitRate rate = k % 2 == 0 ? BitRate::gbps(100) : BitRate::gbps(40);
    cables.push_back(
        connect(sim, *relays[pairs[k].first], *relays[pairs[k].second], rate, delays[k]));
  }
  auto& counter = sim.add<Counter>("counter", relays, opt.stop_after);
  sim.set_min_events_per_lookahead(opt.min_events);
  // The counter's ticks (every 3 us) cut the phases short, and the run is
  // shorter than a whole first phase: decide after the first.
  sim.set_density_sample_lookaheads(1);
  if (opt.probe) sim.set_thread_probe(*opt.probe);
  if (parts > 1) {
    sim.set_partitions(parts);
    if (opt.threads != 0) sim.set_threads(opt.threads);
    for (size_t i = 0; i < 6; ++i) relays[i]->assign(sim.partition(part[i]));
    for (int k = 0; k < 8; ++k) {
      place(cables[k], sim.partition(part[pairs[k].first]), sim.partition(part[pairs[k].second]));
    }
    sim.set_observer(counter);
  }
  Outcome o;
  const auto frames = [&cables] {
    std::vector<uint64_t> f;
    for (const Cable& c : cables) {
      f.push_back(c.a_to_b->counters().frames);
      f.push_back(c.b_to_a->counters().frames);
    }
    return f;
  };
  if (!opt.first_stop.is_infinite()) {
    REQUIRE(sim.run(opt.first_stop) == RunEnd::kTimeLimit);
    REQUIRE(sim.now() == opt.first_stop);
    // Nothing after the stop time ran, in any partition.
    for (uint32_t i = 0; i < sim.partitions(); ++i) CHECK(sim.partition(i).now() <= opt.first_stop);
    o.events_at_stop = sim.events_dispatched();
    for (const Relay* r : relays) o.arrivals_at_stop.push_back(r->log.size());
    o.frames_at_stop = frames();
  }
  o.end = sim.run();
  o.now = sim.now();
  o.events = sim.events_dispatched();
  if (opt.run_again) {
    o.end_again = sim.run();
    o.events_again = sim.events_dispatched();
  }
  o.lookahead = sim.lookahead();
  o.phases = sim.phases();
  o.threads_used = sim.threads_used();
  o.starved_windows = sim.starved_windows();
  o.starved_turns_seconds = sim.starved_turns_seconds();
  for (const Relay* r : relays) o.logs.push_back(r->log);
  o.samples = counter.samples;
  o.frames = frames();
  return o;
}

// A partitioned run that ended idle with the sequential run's events,
// frames, samples and arrivals.
void check_same_run(const Outcome& many, const Outcome& one) {
  CHECK(many.end == RunEnd::kIdle);
  CHECK(many.events == one.events);
  CHECK(many.now == one.now);
  CHECK(many.frames == one.frames);
  CHECK(many.samples == one.samples);
  for (size_t i = 0; i < one.logs.size(); ++i) CHECK(many.logs[i] == one.logs[i]);
}

}  // namespace

TEST_CASE("a partitioned run dispatches the events of a sequential one", "[quick][partition]") {
  // On threads, and taking turns on one thread.
  const double mode = GENERATE(0.0, kTurns);
  INFO((mode == 0 ? "threads" : "turns on one thread"));
  const Outcome one = run_network(1, {});
  REQUIRE(one.events > 1000);
  CHECK(one.phases == 0);
  for (const auto& [parts, part] :
       std::vector<std::pair<uint32_t, std::vector<uint32_t>>>{{2, {0, 0, 0, 1, 1, 1}},
                                                               {2, {0, 0, 0, 0, 1, 1}},
                                                               {2, {0, 1, 0, 1, 0, 1}},
                                                               {3, {0, 1, 2, 0, 1, 2}}}) {
    INFO(parts << " partitions, relay 1 in " << part[1]);
    const Outcome many = run_network(parts, part, in_mode({}, mode));
    CHECK(many.threads_used == (mode == 0 ? parts : 1));
    check_same_run(many, one);
    CHECK(many.phases > 0);
  }
}

TEST_CASE("partitions in groups on fewer threads dispatch the events of a sequential one",
          "[quick][partition]") {
  const Outcome one = run_network(1, {});
  for (const auto& [threads, parts, part] :
       std::vector<std::tuple<uint32_t, uint32_t, std::vector<uint32_t>>>{
           {1, 2, {0, 0, 0, 1, 1, 1}},
           {2, 3, {0, 1, 2, 0, 1, 2}},
           {2, 4, {0, 1, 2, 3, 0, 1}},
           {2, 6, {0, 1, 2, 3, 4, 5}},
           {3, 6, {5, 4, 3, 2, 1, 0}}}) {
    INFO(threads << " threads, " << parts << " partitions");
    Options o;
    o.threads = threads;
    const Outcome many = run_network(parts, part, o);
    CHECK(many.threads_used == threads);
    check_same_run(many, one);
  }
}

TEST_CASE("a thread takes frames in for its partitions that are done with the phase",
          "[quick][partition]") {
  // n2 (partition 2) sends 2,000 frames over a 1 ms cable to n0 (partition
  // 0), which is done with the first phase at once: nothing can reach it
  // sooner. n3 and n1 (partitions 3 and 1) share a 1 us cable, the
  // lookahead. On two threads, {0, 1} and {2, 3}: the channel into n0
  // (1,024 frames when partitions take turns) fills while the second thread
  // is inside n2's pass, and n1, on the first, waits for n3, on the second.
  // Only the first thread may empty that channel (found in review: it hung).
  const auto run = [](uint32_t threads) {
    Simulation sim(3);
    std::vector<Relay*> r;
    for (int i = 0; i < 4; ++i)
      r.push_back(&sim.add<Relay>("n" + std::to_string(i), i == 2 ? 2000 : 0));
    Cable c20 = connect(sim, *r[2], *r[0], BitRate::gbps(100), Time::us(1000));
    Cable c31 = connect(sim, *r[3], *r[1], BitRate::gbps(100), Time::us(1));
    if (threads > 0) {
      sim.set_min_events_per_lookahead(0);
      sim.set_partitions(4);
      sim.set_threads(threads);
      for (int i = 0; i < 4; ++i) r[i]->assign(sim.partition(i));
      place(c20, sim.partition(2), sim.partition(0));
      place(c31, sim.partition(3), sim.partition(1));
    }
    CHECK(sim.run() == RunEnd::kIdle);
    return std::pair{sim.events_dispatched(), r[0]->log};
  };
  const auto one = run(0);
  REQUIRE(one.second.size() >= 2000);
  for (const uint32_t threads : {1u, 2u, 3u, 4u}) {
    INFO(threads << " threads");
    CHECK(run(threads) == one);
  }
}

TEST_CASE("threads are at least one and at most the partitions", "[quick][partition]") {
  Simulation sim;
  sim.set_partitions(3);
  CHECK(sim.threads() == 3);
  CHECK_THROWS_AS(sim.set_threads(0), std::invalid_argument);
  CHECK_THROWS_AS(sim.set_threads(4), std::invalid_argument);
  sim.set_threads(2);
  CHECK(sim.threads() == 2);
}

namespace {
// A machine on which every thread waits on a run queue half the time, each
// reading of the clock is a window later, and taking turns is slow: a
// window in which no thread's times were read (one taking turns) lasts ten.
struct StarvedMachine : ThreadProbe {
  int64_t now = 0;
  bool read = true;       // a thread's times were read since the last reading of the clock
  std::set<int> threads;  // every thread whose times were read
  int64_t wall_ns() override {
    now += (read ? 1 : 10) * StarvationPolicy::kWindowNs;
    read = false;
    return now;
  }
  bool times(int tid, ThreadTimes& out) override {
    read = true;
    threads.insert(tid);
    out.wait_ns = now / 2;
    return true;
  }
};
}  // namespace

TEST_CASE("starved threads hand the partitions to one thread, and results stay the same",
          "[quick][partition]") {
  const Outcome one = run_network(1, {});
  StarvedMachine machine;
  for (const auto& [parts, part] : std::vector<std::pair<uint32_t, std::vector<uint32_t>>>{
           {2, {0, 0, 0, 1, 1, 1}}, {3, {0, 1, 2, 0, 1, 2}}}) {
    INFO(parts << " partitions");
    machine.threads.clear();
    Options o;
    o.min_events = 1e-9;  // the first phase keeps the threads
    o.probe = &machine;
    const Outcome many = run_network(parts, part, o);
    // A window on threads found a starved thread, a trial window took
    // turns and was slower, so threads again: the
    // run switched both ways (new worker threads), and gave the same results.
    CHECK(many.starved_windows >= 1);
    // The trial: one turns window, which lasts ten on this machine.
    CHECK(many.starved_turns_seconds ==
          Approx(10 * StarvationPolicy::kWindowNs * 1e-9).epsilon(1e-12));
    CHECK(machine.threads.size() == 2 * parts - 1);  // this thread runs partition 0 both times
    CHECK(many.threads_used == parts);               // not the first phase's choice
    CHECK(many.events == one.events);
    CHECK(many.now == one.now);
    CHECK(many.frames == one.frames);
    for (size_t i = 0; i < one.logs.size(); ++i) CHECK(many.logs[i] == one.logs[i]);
  }
}

TEST_CASE("the lookahead is the shortest delay of a link between partitions",
          "[quick][partition]") {
  // Split {0,1,2,3} | {4,5}: the links 3-4 (2000 ns), 5-0 (1200 ns) and
  // 1-4 (1100 ns) cross; the shortest of them, not 2-3's 700 ns inside.
  CHECK(run_network(2, {0, 0, 0, 0, 1, 1}).lookahead == Time::ns(1100));
  // Split {0,2,4} | {1,3,5}: every ring link crosses (700 ns is 2-3's);
  // the chords 0-3 and 1-4 too.
  CHECK(run_network(2, {0, 1, 0, 1, 0, 1}).lookahead == Time::ns(700));
  CHECK(run_network(1, {}).lookahead.is_infinite());
}

TEST_CASE("an observer's stop ends a partitioned run at the time it gives", "[quick][partition]") {
  // On threads, and taking turns on one thread.
  const double mode = GENERATE(0.0, kTurns);
  INFO((mode == 0 ? "threads" : "turns on one thread"));
  const Outcome one = run_network(1, {}, stop_after(500));
  const Outcome two = run_network(2, {0, 1, 0, 1, 0, 1}, in_mode(stop_after(500), mode));
  CHECK(one.end == RunEnd::kStopped);
  CHECK(two.end == RunEnd::kStopped);
  CHECK(two.now == one.now);
  CHECK(two.samples == one.samples);
  // The observer ran between phases: nothing after its time was dispatched.
  CHECK(two.events == one.events);
  CHECK(two.frames == one.frames);
}

namespace {
const std::vector<std::pair<uint32_t, std::vector<uint32_t>>> kSplits = {
    {2, {0, 0, 0, 1, 1, 1}}, {2, {0, 1, 0, 1, 0, 1}}, {3, {0, 1, 2, 0, 1, 2}}};
}  // namespace

TEST_CASE("the run stops after the event that releases the last hold, partitioned or not",
          "[quick][partition]") {
  // On threads, and taking turns on one thread.
  const double mode = GENERATE(0.0, kTurns);
  INFO((mode == 0 ? "threads" : "turns on one thread"));
  // Holds in some partitions only, released at different times: partitions
  // that hold nothing may run ahead only as far as the release is certain.
  for (const std::vector<uint64_t>& quota :
       {std::vector<uint64_t>{60, 0, 0, 45, 0, 0}, std::vector<uint64_t>{0, 0, 0, 0, 0, 90},
        std::vector<uint64_t>{30, 120, 75, 0, 200, 10}}) {
    const Outcome one = run_network(1, {}, holds(quota));
    REQUIRE(one.end == RunEnd::kStopped);
    REQUIRE(one.events < run_network(1, {}).events);  // it did stop early
    for (const auto& [parts, part] : kSplits) {
      INFO(parts << " partitions, relay 1 in " << part[1] << ", quota of r0 " << quota[0]);
      const Outcome many = run_network(parts, part, in_mode(holds(quota), mode));
      CHECK(many.end == RunEnd::kStopped);
      CHECK(many.now == one.now);
      CHECK(many.events == one.events);
      CHECK(many.frames == one.frames);
      for (size_t i = 0; i < one.logs.size(); ++i) CHECK(many.logs[i] == one.logs[i]);
    }
  }
}

TEST_CASE("a partitioned run stopped at a time continues as a sequential one does",
          "[quick][partition]") {
  // On threads, and taking turns on one thread.
  const double mode = GENERATE(0.0, kTurns);
  INFO((mode == 0 ? "threads" : "turns on one thread"));
  const Outcome whole = run_network(1, {});
  for (const Time first_stop : {whole.now / 7, whole.now / 2, whole.now - Time::ps(1)}) {
    const Outcome one = run_network(1, {}, stop_at_then_continue(first_stop));
    CHECK(one.events == whole.events);
    for (const auto& [parts, part] : kSplits) {
      INFO(parts << " partitions, first stop at " << to_string(first_stop));
      const Outcome many =
          run_network(parts, part, in_mode(stop_at_then_continue(first_stop), mode));
      CHECK(many.events_at_stop == one.events_at_stop);
      CHECK(many.arrivals_at_stop == one.arrivals_at_stop);
      CHECK(many.frames_at_stop == one.frames_at_stop);
      CHECK(many.end == RunEnd::kIdle);
      CHECK(many.events == one.events);
      CHECK(many.samples == one.samples);
      for (size_t i = 0; i < one.logs.size(); ++i) CHECK(many.logs[i] == one.logs[i]);
    }
  }
}

TEST_CASE("after the last hold stops a run, run() again goes on as a sequential one does",
          "[quick][partition]") {
  // On threads, and taking turns on one thread.
  const double mode = GENERATE(0.0, kTurns);
  INFO((mode == 0 ? "threads" : "turns on one thread"));
  Options opt = holds({30, 120, 75, 0, 200, 10});
  opt.run_again = true;
  const Outcome one = run_network(1, {}, opt);
  REQUIRE(one.end == RunEnd::kStopped);
  REQUIRE(one.end_again == RunEnd::kIdle);
  REQUIRE(one.events_again == run_network(1, {}).events);
  for (const auto& [parts, part] : kSplits) {
    INFO(parts << " partitions, relay 1 in " << part[1]);
    const Outcome many = run_network(parts, part, in_mode(opt, mode));
    CHECK(many.end == RunEnd::kStopped);
    CHECK(many.events == one.events);
    CHECK(many.end_again == RunEnd::kIdle);
    CHECK(many.events_again == one.events_again);
  }
}

namespace {

// Sends 64-byte frames at line rate for `on` out of every `period`, for
// `cycles` periods, holding the run open until then.
class Burster : public Node {
 public:
  Burster(Simulation& sim, std::string name, Time on, Time period, int cycles)
      : Node(sim, std::move(name)),
        on_(on),
        period_(period),
        cycles_(cycles),
        kick_(this, EventClass::kTraffic, id()) {}
  void setup() override {
    ctx().hold();
    ctx().schedule(kick_, Time::zero());
  }
  void receive(uint32_t, PacketHandle) override {}
  PacketHandle next_packet(uint32_t) override {
    if (ctx().now() >= burst_end_) return {};
    PacketHandle p = ctx().make_packet();
    p->wire_bytes = 64;
    return p;
  }

 private:
  void on_kick() {
    if (cycle_ == cycles_) {
      ctx().release();
      return;
    }
    burst_end_ = ctx().now() + on_;
    ++cycle_;
    for (uint32_t i = 0; i < num_ports(); ++i) port(i).wake();
    ctx().schedule_in(kick_, period_);
  }
  Time on_, period_;
  int cycles_;
  int cycle_ = 0;
  Time burst_end_;
  MemberEvent<Burster, &Burster::on_kick> kick_;
};

// Counts what arrives; fires a timer at `timer` if given.
class Sink : public Node {
 public:
  Sink(Simulation& sim, std::string name, Time timer)
      : Node(sim, std::move(name)), timer_at_(timer), timer_(this, EventClass::kTraffic, id()) {}
  void setup() override {
    if (!timer_at_.is_infinite()) ctx().schedule(timer_, timer_at_);
  }
  void receive(uint32_t, PacketHandle) override { ++got; }
  PacketHandle next_packet(uint32_t) override { return {}; }
  uint64_t got = 0;

 private:
  void on_timer() {}
  Time timer_at_;
  MemberEvent<Sink, &Sink::on_timer> timer_;
};

struct BlastOutcome {
  uint64_t events = 0;
  uint64_t got = 0;
  Time now;
  int64_t capacity = 0;  // packets the pools have room for, all partitions
  uint64_t phases = 0;
};

// Q blasts P over `qp_delay`; R, idle, is cabled to P by `rp_delay`; P has a
// timer at `timer`. parts: Q, P and R in 0, 1 and parts - 1.
// `phase_wall`: Simulation::set_phase_wall_seconds (no cap by default, so
// that the phases depend on simulated time alone).
BlastOutcome blast(uint32_t parts, Time until, Time qp_delay, Time rp_delay, Time timer,
                   double mode = 0, double phase_wall = std::numeric_limits<double>::infinity()) {
  Simulation sim(1);
  sim.set_min_events_per_lookahead(mode);
  sim.set_phase_wall_seconds(phase_wall);
  auto& q = sim.add<Burster>("q", until, until, 1);
  auto& p = sim.add<Sink>("p", timer);
  auto& r = sim.add<Sink>("r", Time::infinite());
  Cable qp = connect(sim, q, p, BitRate::gbps(100), qp_delay);
  Cable rp = connect(sim, r, p, BitRate::gbps(100), rp_delay);
  if (parts > 1) {
    sim.set_partitions(parts);
    q.assign(sim.partition(0));
    p.assign(sim.partition(1));
    r.assign(sim.partition(parts - 1));
    place(qp, sim.partition(0), sim.partition(1));
    place(rp, sim.partition(parts - 1), sim.partition(1));
  }
  REQUIRE(sim.run() == RunEnd::kStopped);
  BlastOutcome o{sim.events_dispatched(), p.got, sim.now(), 0, sim.phases()};
  for (uint32_t i = 0; i < sim.partitions(); ++i)
    o.capacity += sim.partition(i).packet_pool().capacity();
  return o;
}

}  // namespace

TEST_CASE("a partitioned run's phases: 64 lookaheads, then 32, each later twice the last up to 256",
          "[quick][partition]") {
  // Q sends 64-byte frames back to back (5.12 ns each) for 1 ms over 1 us
  // links, so every phase starts where the last ended: they end at 64, 96,
  // 160, 288, 544 and 800 us, and the run stops at 1 ms within the seventh
  // (with 256-lookahead phases throughout it would have had four).
  const BlastOutcome two = blast(2, Time::ms(1), Time::us(1), Time::us(1), Time::infinite());
  CHECK(two.phases == 7);
  CHECK(two.events == blast(1, Time::ms(1), Time::us(1), Time::us(1), Time::infinite()).events);
}

TEST_CASE("a partitioned run's phases after a long one are capped by its pace, with the same run",
          "[quick][partition]") {
  // A wall-time target of 0 (Simulation::phase_cap): every phase after the
  // first reaches one lookahead. The first ends at 64 us, each later one
  // 1 us on ([64 + i, 65 + i) us for i = 0 .. 935), and the run stops in the
  // last of those, [999, 1000) us, the 937th, as Q's frames end before 1 ms.
  const BlastOutcome capped =
      blast(2, Time::ms(1), Time::us(1), Time::us(1), Time::infinite(), 0, 0.0);
  CHECK(capped.phases == 1 + 936);
  const BlastOutcome free = blast(2, Time::ms(1), Time::us(1), Time::us(1), Time::infinite());
  CHECK(capped.events == free.events);
  CHECK(capped.got == free.got);
  CHECK(capped.now == free.now);
}

TEST_CASE("a partition that waits on a hold still takes in frames from a full channel",
          "[quick][partition]") {
  // P holds nothing and waits (its timer at 1 ms) for Q's clock; Q, still
  // holding, fills the channel to P (over 32 k frames in flight on the 1 ms
  // cable) and blocks until P takes them in. Three partitions: R keeps P's
  // bound from moving. (A hang before the fix.)
  const BlastOutcome one = blast(1, Time::us(1500), Time::ms(1), Time::us(20), Time::ms(1));
  // On threads, and taking turns (where the sender takes the frames in
  // for its receiver: a hang before the fix, found in review).
  for (const double mode : {0.0, kTurnsFromStart}) {
    INFO((mode == 0 ? "threads" : "turns on one thread"));
    const BlastOutcome three =
        blast(3, Time::us(1500), Time::ms(1), Time::us(20), Time::ms(1), mode);
    CHECK(three.events == one.events);
    CHECK(three.got == one.got);
    CHECK(three.now == one.now);
  }
}

TEST_CASE("packets go back to the partition that made them", "[quick][partition]") {
  // Q makes every packet and P releases it: without returns, Q's pool
  // would grow by every packet sent (about 390 k in 2 ms). The pools hold
  // what is in flight (a 1 us cable: about 200 frames) and what the rings
  // and the lag between the threads hold, a few chunks.
  const BlastOutcome one = blast(1, Time::ms(2), Time::us(1), Time::us(1), Time::infinite());
  const BlastOutcome two = blast(2, Time::ms(2), Time::us(1), Time::us(1), Time::infinite());
  REQUIRE(one.got > 350000);
  CHECK(two.got == one.got);
  CHECK(two.capacity <= 4 * PacketPool::kChunk);  // 65,536 packets
}

namespace {
// Throws from its 1000th arrival.
class Thrower : public Node {
 public:
  Thrower(Simulation& sim, std::string name) : Node(sim, std::move(name)) {}
  void receive(uint32_t, PacketHandle) override {
    // About 510 us in: after the first phase (64 lookaheads of 1 us), so
    // taking turns it throws while the partitions take turns.
    if (++got_ == 100'000) throw std::runtime_error("boom in " + name());
  }
  PacketHandle next_packet(uint32_t) override { return {}; }

 private:
  uint64_t got_ = 0;
};
}  // namespace

TEST_CASE("an exception in a partition's event ends the run with it, on any thread",
          "[quick][partition]") {
  // The thrower on the main thread's partition (0) or on a worker's (1).
  for (const uint32_t where : {0u, 1u}) {
    INFO("thrower in partition " << where);
    Simulation sim(1);
    const double mode = GENERATE(0.0, kTurns);
    INFO((mode == 0 ? "threads" : "turns on one thread"));
    sim.set_min_events_per_lookahead(mode);
    auto& q = sim.add<Burster>("q", Time::ms(1), Time::ms(1), 1);
    auto& t = sim.add<Thrower>("t");
    Cable c = connect(sim, q, t, BitRate::gbps(100), Time::us(1));
    sim.set_partitions(2);
    q.assign(sim.partition(1 - where));
    t.assign(sim.partition(where));
    place(c, sim.partition(1 - where), sim.partition(where));
    CHECK_THROWS_WITH(sim.run(), "boom in t");
    CHECK(sim.threads_used() == (mode == 0 ? 2U : 1U));
    // It cannot go on: the partitions left a phase half done.
    CHECK_THROWS_WITH(sim.run(), "boom in t");
  }
}

namespace {
// Packets the pools have room for after `cycles` bursts over a 300 us cable.
int64_t burst_capacity(uint32_t parts, int cycles) {
  Simulation sim(1);
  sim.set_min_events_per_lookahead(0);  // about the threads
  auto& q = sim.add<Burster>("q", Time::us(400), Time::ms(1), cycles);
  auto& p = sim.add<Sink>("p", Time::infinite());
  Cable c = connect(sim, q, p, BitRate::gbps(100), Time::us(300));
  if (parts > 1) {
    sim.set_partitions(parts);
    p.assign(sim.partition(1));
    place(c, sim.partition(0), sim.partition(1));
  }
  REQUIRE(sim.run() == RunEnd::kStopped);
  int64_t capacity = 0;
  for (uint32_t i = 0; i < sim.partitions(); ++i)
    capacity += sim.partition(i).packet_pool().capacity();
  return capacity;
}
}  // namespace

TEST_CASE("bursts do not make a sending partition's pool grow", "[quick][partition]") {
  // Each 400 us burst leaves about 58 k packets on the cable at once: the
  // sender's pool must hold them, and get them back for the next burst (a
  // ring of single packets overflowed and grew it by some 45 k every
  // burst). Partitioned, the sender may also run up to a lookahead (300 us:
  // most of a burst) ahead of the receiver, whatever the threads' timing:
  // so at most twice the sequential pool, after one burst as after eight.
  const int64_t one = burst_capacity(1, 8);
  CHECK(burst_capacity(2, 1) <= 2 * one + PacketPool::kChunk);
  CHECK(burst_capacity(2, 8) <= 2 * one + PacketPool::kChunk);
}

namespace {
// One node per partition for the deferred event at the end of a run: its
// `first` event (a delivery, at 5 us) schedules `then` (a transmit) for the
// same instant; `releaser`'s hold ends with its timer at 5 us, between the
// two in the total order (delivery < timer < transmit).
class NowChain : public Node {
 public:
  NowChain(Simulation& sim, std::string name, std::vector<std::string>* log, bool releases)
      : Node(sim, std::move(name)),
        log_(log),
        releases_(releases),
        first_(this, EventClass::kDelivery, id()),
        then_(this, EventClass::kTransmit, id()),
        release_(this, EventClass::kTimer, id()) {}
  void setup() override {
    if (releases_) {
      ctx().hold();
      ctx().schedule(release_, Time::us(5));
    } else {
      ctx().schedule(first_, Time::us(5));
    }
  }
  void receive(uint32_t, PacketHandle) override {}
  PacketHandle next_packet(uint32_t) override { return {}; }

 private:
  void on_first() {
    log_->push_back(name() + ".first");
    ctx().schedule(then_, ctx().now());
  }
  void on_then() { log_->push_back(name() + ".then"); }
  void on_release() {
    log_->push_back(name() + ".release");
    ctx().release();
  }
  std::vector<std::string>* log_;
  bool releases_;
  MemberEvent<NowChain, &NowChain::on_first> first_;
  MemberEvent<NowChain, &NowChain::on_then> then_;
  MemberEvent<NowChain, &NowChain::on_release> release_;
};

std::vector<std::string> now_chain_run(uint32_t parts, double min_events, RunEnd& end) {
  std::vector<std::string> log;
  Simulation sim(3);
  auto& a = sim.add<NowChain>("a", &log, false);
  auto& b = sim.add<NowChain>("b", &log, true);
  const Cable c = connect(sim, a, b, BitRate::gbps(100), Time::us(1));
  sim.set_min_events_per_lookahead(min_events);
  if (parts > 1) {
    sim.set_partitions(parts);
    a.assign(sim.partition(0));
    b.assign(sim.partition(1));
    place(c, sim.partition(0), sim.partition(1));
  }
  end = sim.run();
  std::sort(log.begin(), log.end());  // the partitions' order between them is their threads'
  return log;
}
}  // namespace

TEST_CASE("a partitioned run does not run an event for now that comes after the last release",
          "[quick][partition]") {
  // The sequential order at 5 us: a.first, b.release (the end), a.then.
  // Partitioned, a.first's partition may run on only to the release: the
  // event it schedules for now, which it would otherwise run at once, waits.
  const double mode = GENERATE(0.0, kTurns);
  INFO((mode == 0 ? "threads" : "turns on one thread"));
  RunEnd end1 = RunEnd::kIdle;
  RunEnd end2 = RunEnd::kIdle;
  const std::vector<std::string> one = now_chain_run(1, mode, end1);
  CHECK(end1 == RunEnd::kStopped);
  CHECK(one == std::vector<std::string>{"a.first", "b.release"});
  CHECK(now_chain_run(2, mode, end2) == one);
  CHECK(end2 == RunEnd::kStopped);
}
