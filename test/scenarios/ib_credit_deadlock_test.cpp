// Credit-loop deadlock on InfiniBand (issue 12, item 7): V8's cyclic route
// (CASES.md V8, scenarios/pfc_deadlock.json) with every port running credits
// (IBA §7.9) instead of PFC, scenarios/ib_credit_deadlock.json. The cycle
// L0 -> S0 -> L2 -> S1 -> L0 of V8 is a cycle of VL buffers: a VL of A
// towards B can send its head packet only when B's ingress VL buffer from A
// has room for it, and that buffer drains only into B's egress queues.
#include "test/support/catch_units.h"
#include "test/support/run_helpers.h"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "models/switch/switch.h"

using namespace rdmasim;
using namespace rdmasim::testing;

namespace {

const char* kScenario = "scenarios/ib_credit_deadlock.json";
const std::set<std::pair<std::string, std::string>> kCycle = {
    {"L0", "S0"}, {"S0", "L2"}, {"L2", "S1"}, {"S1", "L0"}};
const char* kTwoFlows =
    R"(traffic=[{"kind":"flow","name":"F1","src":"h0","dst":"h3","size":"30MB"},)"
    R"({"kind":"flow","name":"F2","src":"h2","dst":"h1","size":"30MB"}])";

// Cumulative wire bytes from `from` to `to` at the last link sample at or
// before t.
int64_t bytes_at(const Ran& r, const std::string& from, const std::string& to, Time t) {
  const Topology& topo = r.scenario.topology;
  int64_t b = -1;
  for (const LinkSample& s : r.result.link_samples.all()) {
    const LinkResult& l = r.result.links[s.link];
    if (topo.node(l.from).name == from && topo.node(l.to).name == to && s.time <= t)
      b = s.wire_bytes;
  }
  REQUIRE(b >= 0);
  return b;
}

// At the run's end: the switch ports whose VL `vl` cannot send its head
// packet for want of credits (read from the switches, apart from the
// detector).
class CreditBlocked : public Component {
 public:
  CreditBlocked(Simulation& sim, std::vector<Switch*> switches, uint8_t vl,
                std::vector<std::string>& out)
      : Component(sim, "credit_blocked"), switches_(std::move(switches)), vl_(vl), out_(out) {}
  void finish() override {
    for (const Switch* s : switches_) {
      for (uint32_t p = 0; p < s->num_ports(); ++p) {
        if (s->egress_blocked(p, vl_) == BlockedBy::kCredits)
          out_.push_back(s->name() + ":" + std::to_string(p));
      }
    }
  }

 private:
  std::vector<Switch*> switches_;
  uint8_t vl_;
  std::vector<std::string>& out_;
};

}  // namespace

TEST_CASE("InfiniBand credit loop on V8's cyclic route: deadlock, reported with its cycle",
          "[scenario][infiniband]") {
  LoadOptions o;
  o.overrides = {"fabric.switch.deadlock_detection.stop=false", "stop.time=\"5ms\""};
  // The four cycle queues as the switches hold them when the run ends: each
  // head packet needs more blocks than the next switch's VL buffer grants.
  std::vector<std::string> blocked;
  Ran r{load_scenario_file(source_path(kScenario), o), {}};
  RunOptions ro = checked();
  ro.on_built = [&](Simulation& sim, const std::vector<Switch*>& switches) {
    sim.set_observer(
        sim.add<CreditBlocked>(switches, r.scenario.fabric.nic.data_priority, blocked));
  };
  r.result = run_scenario(r.scenario, ro);
  REQUIRE(r.result.deadlock.detected);
  CHECK(r.result.status == RunStatus::kDeadlock);
  // Exactly the four cycle queues, as egress queues towards the next switch
  // of the cycle, all on the data VL, all waiting for credits.
  const Topology& t = r.scenario.topology;
  std::set<std::pair<std::string, std::string>> named;
  for (const DeadlockQueue& q : r.result.deadlock.cycle) {
    CHECK(q.priority == r.scenario.fabric.nic.data_priority);
    CHECK(q.blocked_by == BlockedBy::kCredits);
    named.insert({q.name, t.node(t.adjacency()[*t.find(q.name)][q.port].neighbor).name});
    const std::string key = q.name + ":" + std::to_string(q.port);
    CHECK(std::find(blocked.begin(), blocked.end(), key) != blocked.end());
  }
  CHECK(r.result.deadlock.cycle.size() == 4);
  CHECK(named == kCycle);
  // No packet is ever dropped for want of buffer (checked: lossless_drop),
  // and from the detection on nothing crosses a cycle link: the samples
  // every ms from the first after it to the run's end are equal.
  CHECK(r.result.deadlock.at < Time::ms(2));
  for (const auto& [from, to] : kCycle) {
    INFO(from << " -> " << to);
    CHECK(bytes_at(r, from, to, Time::ms(5)) == bytes_at(r, from, to, Time::ms(2)));
  }
  for (const FlowResult& f : r.result.flows) CHECK_FALSE(f.done);
}

TEST_CASE("InfiniBand V8 route with two flows: congested, no deadlock", "[scenario][infiniband]") {
  // As V8a: F1 and F2 share the links L0 -> S0 and L2 -> S1 and each gets
  // half of them; without F3 the cycle's buffers fill but drain.
  LoadOptions o;
  o.overrides = {kTwoFlows};
  const Ran r = run_file(kScenario, o);
  CHECK(r.result.status == RunStatus::kComplete);
  CHECK_FALSE(r.result.deadlock.detected);
  for (const FlowResult& f : r.result.flows) CHECK(f.done);
}

TEST_CASE("InfiniBand credit loop with a finite head-of-queue lifetime: discards break it",
          "[scenario][infiniband]") {
  // head_of_queue_lifetime 0 (4.096 us) on the switch-to-switch ports: a
  // head packet that cannot get credits for that long is discarded, which
  // frees its blocks at the ingress port upstream, so every queue of the
  // cycle moves again (as on real switches, which is why OpenSM sets a
  // finite lifetime). The losses are recovered by the QPs' retransmissions.
  LoadOptions o;
  o.overrides = {"fabric.infiniband.head_of_queue_lifetime=0",
                 "fabric.switch.deadlock_detection.stop=false"};
  const Ran r = run_file(kScenario, o);
  CHECK(r.result.status == RunStatus::kComplete);
  CHECK_FALSE(r.result.deadlock.detected);
  CHECK(r.result.hoq_discards > 0);
  for (const FlowResult& f : r.result.flows) {
    CHECK(f.done);
    CHECK(f.retransmissions > 0);
  }
}

TEST_CASE("InfiniBand incast through two switch tiers: stuck queues, no cycle reported",
          "[scenario][infiniband]") {
  // Mere congestion: scenarios/ib_incast.json (15 senders of a k=4 fat-tree
  // to one host) with the detector's timeout at its minimum, 1 us, so that
  // the VLs waiting for credits behind the bottleneck are stuck queues for
  // it. They wait on each other as a tree towards the receiver, never in a
  // cycle: the run completes with no deadlock.
  LoadOptions o;
  o.overrides = {"fabric.switch.deadlock_detection.timeout=\"1us\""};
  const Ran r = run_file("scenarios/ib_incast.json", o);
  CHECK(r.result.status == RunStatus::kComplete);
  CHECK_FALSE(r.result.deadlock.detected);
}
