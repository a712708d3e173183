// Validation case V8 (docs/validation.md): PFC deadlock on a leaf-spine fabric whose
// static routes bounce two flows (scenarios/pfc_deadlock.json): the cycle
// L0 -> S0 -> L2 -> S1 -> L0.
#include "test/support/catch_units.h"
#include "test/support/run_helpers.h"

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>

#include "models/switch/switch.h"

using namespace rdmasim;
using namespace rdmasim::testing;

namespace {

const char* kTwoFlows =
    R"(traffic=[{"kind":"flow","name":"F1","src":"h0","dst":"h3","size":"300MB"},)"
    R"({"kind":"flow","name":"F2","src":"h2","dst":"h1","size":"300MB"}])";
const char* kTagger =
    R"(topology.priority_rewrite=[{"at":"L2","from_neighbors":["S0"],"to_neighbors":["S1"],"from":3,"to":4},)"
    R"({"at":"L0","from_neighbors":["S1"],"to_neighbors":["S0"],"from":3,"to":4}])";

const std::vector<std::pair<std::string, std::string>> kCycle = {
    {"L0", "S0"}, {"S0", "L2"}, {"L2", "S1"}, {"S1", "L0"}};

// The /links rows of the four cycle link directions.
std::vector<uint32_t> cycle_rows(const Ran& r) {
  std::vector<uint32_t> rows;
  const Topology& t = r.scenario.topology;
  for (const auto& [from, to] : kCycle) {
    for (uint32_t i = 0; i < r.result.links.size(); ++i) {
      const LinkResult& l = r.result.links[i];
      if (t.node(l.from).name == from && t.node(l.to).name == to) rows.push_back(i);
    }
  }
  REQUIRE(rows.size() == 4);
  return rows;
}

// Cumulative wire bytes of `row` at the last sample at or before t.
int64_t bytes_at(const Ran& r, uint32_t row, Time t) {
  int64_t b = 0;
  for (const LinkSample& s : r.result.link_samples.all()) {
    if (s.link == row && s.time <= t) b = s.wire_bytes;
  }
  return b;
}

// The four cycle queues: the priority-3 ingress queues at S0 from L0, at L2
// from S0, at S1 from L2 and at L0 from S1 (CASES.md V8), read from the
// switches' MMUs every 100 us and once more when the run ends: an observation
// of the buffer itself, apart from the PFC decisions and the deadlock
// detector. Bytes are the MMU's (reserve + shared + headroom), what the static
// XOFF and XON are compared with, of priority 3 and of priority 4 (only (c)'s
// rewritten bounces use 4; in (a) and (b) it stays empty).
constexpr int64_t kXoff = 100'000, kXon = 80'000;  // scenarios/pfc_deadlock.json

struct QueueSample4 {
  Time time;
  std::array<int64_t, 4> bytes{};  // in kCycle order
};

struct Observed {
  Ran ran;
  std::vector<QueueSample4> samples;
  QueueSample4 end;
};

class CycleQueues : public Component {
 public:
  CycleQueues(Simulation& sim, const Topology& t, const std::vector<Switch*>& switches,
              Observed& out)
      : Component(sim, "cycle_queues"), out_(out), tick_(this, EventClass::kSample, id()) {
    for (const auto& [from, at] : kCycle) {
      // The queue at `at` of what arrives from `from`.
      const uint32_t node = *t.find(at);
      const Switch* sw = nullptr;
      for (const Switch* s : switches) {
        if (s->name() == at) sw = s;
      }
      uint32_t port = UINT32_MAX;
      for (uint32_t i = 0; i < t.adjacency()[node].size(); ++i) {
        if (t.node(t.adjacency()[node][i].neighbor).name == from) port = i;
      }
      if (sw == nullptr || port == UINT32_MAX) throw std::logic_error("no cycle queue " + at);
      queues_.emplace_back(sw, port);
    }
  }
  void setup() override { sim().schedule(tick_, Time::zero()); }
  void finish() override { out_.end = read(); }

 private:
  QueueSample4 read() const {
    QueueSample4 x{sim().now(), {}};
    for (size_t i = 0; i < 4; ++i)
      x.bytes[i] = queues_[i].first->mmu().ingress_bytes(queues_[i].second, 3) +
                   queues_[i].first->mmu().ingress_bytes(queues_[i].second, 4);
    return x;
  }
  void on_tick() {
    out_.samples.push_back(read());
    sim().schedule_in(tick_, Time::us(100));
  }
  Observed& out_;
  std::vector<std::pair<const Switch*, uint32_t>> queues_;
  MemberEvent<CycleQueues, &CycleQueues::on_tick> tick_;
};

Observed run_observed(const LoadOptions& o) {
  Observed out{{load_scenario_file(source_path("scenarios/pfc_deadlock.json"), o), {}}, {}, {}};
  RunOptions ro = testing::checked();
  ro.on_built = [&](Simulation& sim, const std::vector<Switch*>& switches) {
    sim.set_observer(sim.add<CycleQueues>(out.ran.scenario.topology, switches, out));
  };
  out.ran.result = run_scenario(out.ran.scenario, ro);
  return out;
}

// (a), (c): every queue is empty within 5 ms of the sources' stop (their
// last flow's completion) and at the end; in (a) they have all filled first
// (in (c) the queue at S1 from L2 never does: the rewritten F1 and F2 leave
// S1 on different links).
void check_cycle_queues_drain(const Observed& ob, bool all_filled) {
  Time stop;
  for (const FlowResult& f : ob.ran.result.flows) stop = std::max(stop, f.finish);
  std::array<int64_t, 4> peak{};
  Time last_nonempty;
  for (const QueueSample4& x : ob.samples) {
    for (size_t i = 0; i < 4; ++i) {
      peak[i] = std::max(peak[i], x.bytes[i]);
      if (x.bytes[i] > 0) last_nonempty = x.time;
    }
  }
  for (size_t i = 0; i < 4; ++i) {
    INFO("cycle queue " << i);
    if (all_filled) CHECK(peak[i] > 0);
    CHECK(ob.end.bytes[i] == 0);
  }
  CHECK(last_nonempty <= stop + Time::ms(5));
}

void check_cycle_links_busy_every_ms(const Ran& r, int until_ms) {
  for (uint32_t row : cycle_rows(r)) {
    for (int ms = 1; ms <= until_ms; ++ms) {
      INFO("link row " << row << ", window ending at " << ms << " ms");
      CHECK(bytes_at(r, row, Time::ms(ms)) > bytes_at(r, row, Time::ms(ms - 1)));
    }
  }
}

}  // namespace

TEST_CASE("V8a two bouncing flows: no deadlock", "[validation][V8]") {
  LoadOptions o;
  o.overrides = {kTwoFlows};
  const Observed ob = run_observed(o);
  const Ran& r = ob.ran;
  CHECK(r.result.status == RunStatus::kComplete);
  CHECK_FALSE(r.result.deadlock.detected);
  CHECK(r.result.pfc_frames_sent > 0);  // the cycle is congested, but drains
  check_cycle_links_busy_every_ms(r, 45);
  check_cycle_queues_drain(ob, true);
}

TEST_CASE("V8b a third flow closes the cycle: deadlock, reported", "[validation][V8]") {
  LoadOptions o;
  o.overrides = {"fabric.switch.deadlock_detection.stop=false", "stop.time=\"60ms\""};
  const Observed ob = run_observed(o);
  const Ran& r = ob.ran;
  REQUIRE(r.result.deadlock.detected);
  CHECK(r.result.status == RunStatus::kDeadlock);
  // The report names exactly the four cycle queues (as egress queues towards
  // the next switch of the cycle), all on priority 3.
  const Topology& t = r.scenario.topology;
  std::set<std::pair<std::string, std::string>> named;
  for (const DeadlockQueue& q : r.result.deadlock.cycle) {
    CHECK(q.priority == 3);
    const uint32_t node = *t.find(q.name);
    named.insert({q.name, t.node(t.adjacency()[node][q.port].neighbor).name});
  }
  CHECK(named == std::set<std::pair<std::string, std::string>>(kCycle.begin(), kCycle.end()));
  // From the moment it is detected, nothing crosses the cycle links, and the
  // flows never finish (60 ms is 10 ms past when they would have).
  for (uint32_t row : cycle_rows(r)) {
    CHECK(bytes_at(r, row, Time::ms(60)) == bytes_at(r, row, r.result.deadlock.at));
  }
  for (const FlowResult& f : r.result.flows) CHECK_FALSE(f.done);
  // The four queues, as the MMUs hold them: at some instant all at or above
  // XOFF; from then on all at or above XON (frozen: nothing leaves), and so
  // at 60 ms, 10 ms after the sources would have stopped.
  std::optional<Time> all_xoff;
  for (const QueueSample4& x : ob.samples) {
    if (std::all_of(x.bytes.begin(), x.bytes.end(), [](int64_t b) { return b >= kXoff; })) {
      all_xoff = x.time;
      break;
    }
  }
  REQUIRE(all_xoff.has_value());
  CHECK(*all_xoff <= r.result.deadlock.at);
  for (const QueueSample4& x : ob.samples) {
    if (x.time < *all_xoff) continue;
    INFO("at " << to_string(x.time));
    for (size_t i = 0; i < 4; ++i) CHECK(x.bytes[i] >= kXon);
  }
  CHECK(ob.end.time == Time::ms(60));
  for (size_t i = 0; i < 4; ++i) {
    INFO("cycle queue " << i);
    CHECK(ob.end.bytes[i] >= kXon);
  }
  // Frozen: what each held when the deadlock was detected it still holds.
  for (const QueueSample4& x : ob.samples) {
    if (x.time >= r.result.deadlock.at) CHECK(x.bytes == ob.end.bytes);
  }
}

TEST_CASE("V8c priority rewrite at each bounce (Tagger): no deadlock", "[validation][V8]") {
  LoadOptions o;
  o.overrides = {kTagger};
  const Observed ob = run_observed(o);
  const Ran& r = ob.ran;
  CHECK(r.result.status == RunStatus::kComplete);
  CHECK_FALSE(r.result.deadlock.detected);
  check_cycle_links_busy_every_ms(r, 45);
  check_cycle_queues_drain(ob, false);
}
