// Validation case V8 (docs/validation.md): PFC deadlock on a leaf-spine fabric whose
// static routes bounce two flows (scenarios/pfc_deadlock.json): the cycle
// L0 -> S0 -> L2 -> S1 -> L0.
#include "test/support/catch_units.h"
#include "test/support/run_helpers.h"

#include <map>
#include <set>

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
  for (const LinkSample& s : r.result.link_samples) {
    if (s.link == row && s.time <= t) b = s.wire_bytes;
  }
  return b;
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
  const Ran r = run_file("scenarios/pfc_deadlock.json", o);
  CHECK(r.result.status == RunStatus::kComplete);
  CHECK_FALSE(r.result.deadlock.detected);
  CHECK(r.result.pfc_frames_sent > 0);  // the cycle is congested, but drains
  check_cycle_links_busy_every_ms(r, 45);
}

TEST_CASE("V8b a third flow closes the cycle: deadlock, reported", "[validation][V8]") {
  LoadOptions o;
  o.overrides = {"fabric.switch.deadlock_detection.stop=false", "stop.time=\"60ms\""};
  const Ran r = run_file("scenarios/pfc_deadlock.json", o);
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
}

TEST_CASE("V8c priority rewrite at each bounce (Tagger): no deadlock", "[validation][V8]") {
  LoadOptions o;
  o.overrides = {kTagger};
  const Ran r = run_file("scenarios/pfc_deadlock.json", o);
  CHECK(r.result.status == RunStatus::kComplete);
  CHECK_FALSE(r.result.deadlock.detected);
  check_cycle_links_busy_every_ms(r, 45);
}
