// Faults: links going down and coming back, rerouting after reconvergence,
// QPs ending in error when a destination stays unreachable, PFC storms and
// the watchdog that contains them.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <utility>

#include "test/support/catch_units.h"
#include "test/support/run_helpers.h"

using namespace rdmasim;
using namespace rdmasim::testing;

namespace {

const char* kTwoPaths = R"({
  "fabric": {"link": {"rate": "100Gbps", "delay": "1us"}, "nic": {"retransmit_timeout": "200us"}},
  "topology": {"kind": "fat_tree", "leaves": 2, "spines": 2, "hosts_per_leaf": 2,
               "reconvergence_delay": "500us"},
  "traffic": [{"kind": "flow", "src": "leaf0.h0", "dst": "leaf1.h0", "size": "20MB"}]
})";

int64_t payload_into(const Ran& r, const std::string& host) {
  int64_t b = 0;
  for (const LinkResult& l : r.result.links) {
    if (r.scenario.topology.node(l.to).name == host) b += l.payload_bytes;
  }
  return b;
}

// The same scenario on one thread whole, on two threads in two partitions
// and on one thread in two taking turns (threads forced): results must be
// the same (faults run between phases).
constexpr std::pair<uint32_t, uint32_t> kLayouts[] = {{1, 1}, {2, 2}, {1, 2}};
RunResult run_laid_out(const Scenario& sc, std::pair<uint32_t, uint32_t> layout) {
  RunOptions o = checked();
  o.threads = layout.first;
  o.partitions = layout.second;
  o.force_threads = true;
  return run_scenario(sc, o);
}

}  // namespace

TEST_CASE("a failed uplink: routes reconverge to the other spine and the flow completes",
          "[faults]") {
  // Take down whichever uplink the flow hashes to (both, in two runs).
  for (const char* spine : {"spine0", "spine1"}) {
    LoadOptions o;
    o.overrides = {std::string(R"(faults=[{"kind":"link_down","a":"leaf0","b":")") + spine +
                   R"(","at":"300us"}])"};
    const Ran r = run_text(kTwoPaths, o);
    INFO(spine);
    REQUIRE(r.result.status == RunStatus::kComplete);
    CHECK(payload_into(r, "leaf1.h0") >= 20'000'000);
    // 20 MB at 100G take 1.63 ms of wire time; losing traffic for at most the
    // reconvergence delay and a few timeouts keeps the flow under 5 ms.
    CHECK(r.result.flows[0].fct() < Time::ms(5));
  }
}

TEST_CASE("both uplinks down for a while: the flow waits, then recovers", "[faults]") {
  LoadOptions o;
  o.overrides = {
      R"(faults=[{"kind":"link_down","a":"leaf0","b":"spine0","at":"300us","until":"10ms"},)"
      R"({"kind":"link_down","a":"leaf0","b":"spine1","at":"300us","until":"10ms"}])"};
  const Ran r = run_text(kTwoPaths, o);
  REQUIRE(r.result.status == RunStatus::kComplete);
  CHECK(r.result.link_lost_down > 0);
  CHECK(r.result.retransmissions > 0);
  CHECK(r.result.flows[0].finish > Time::ms(10));
  CHECK(payload_into(r, "leaf1.h0") >= 20'000'000);
}

TEST_CASE("a destination that stays unreachable ends the QP in error", "[faults]") {
  // retry_cnt 2 with a 100 us timeout doubling each time: the QP gives up
  // 100 + 200 + 400 = 700 us after the first unanswered packet was sent.
  LoadOptions o;
  o.overrides = {"fabric.nic.retransmit_timeout=\"100us\"", "fabric.nic.retry_cnt=2",
                 R"(faults=[{"kind":"node_down","node":"leaf1","at":"100us"}])"};
  const Ran r = run_text(kTwoPaths, o);
  CHECK(r.result.status == RunStatus::kQpError);
  CHECK(exit_code(r.result.status) == 4);
  CHECK(r.result.flows[0].failed);
  CHECK(r.result.sim_time < Time::ms(2));
}

TEST_CASE("a PFC storm spreads by head-of-line blocking; the watchdog contains it", "[faults]") {
  // h1 storms from 100 us. h0 sends to h1 (stuck behind the storm) and to h3
  // (innocent, but from the same ingress port); h2 sends to h3 (untouched).
  const char* json = R"({
    "fabric": {"link": {"rate": "100Gbps", "delay": "1us"},
               "switch": {"pfc": {"threshold": "static", "xoff": "100KB", "xon": "80KB"}}},
    "topology": {"kind": "star", "hosts": 4},
    "traffic": [{"kind": "flow", "src": "h0", "dst": "h1", "size": "20MB"},
                {"kind": "flow", "src": "h0", "dst": "h3", "size": "20MB"},
                {"kind": "flow", "src": "h2", "dst": "h3", "size": "20MB"}],
    "faults": [{"kind": "pfc_storm", "host": "h1", "priority": 3, "at": "100us"}],
    "stop": {"time": "30ms"}
  })";
  SECTION("without a watchdog the storm holds back h0's other flow") {
    const Ran r = run_text(json);
    CHECK(r.result.status == RunStatus::kTimeLimit);
    CHECK_FALSE(r.result.flows[0].done);
    CHECK_FALSE(r.result.flows[1].done);  // the innocent flow from the same host
    CHECK(r.result.flows[2].done);        // a flow not behind the storm
  }
  SECTION("with a watchdog the stormed queue is drained and the innocent flow finishes") {
    LoadOptions o;
    o.overrides = {R"(fabric.switch.watchdog={"enabled":true,"timeout":"1ms","restore":"100ms"})"};
    const Ran r = run_text(json, o);
    CHECK(r.result.flows[1].done);
    CHECK(r.result.flows[2].done);
    uint64_t watchdog_drops = 0;
    for (const auto& [reason, n] : r.result.switch_drops) {
      if (reason == "watchdog") watchdog_drops = n;
    }
    CHECK(watchdog_drops > 0);
  }
}

TEST_CASE("a PFC storm from a host set: each storming host holds back the flow into it",
          "[faults]") {
  // h0 -> h1 and h2 -> h3 share no port; h1 and h3 storm from 100 us. A flow
  // of 20 MB needs 1.6 ms at 100 Gb/s, so by 5 ms it is done unless held.
  const auto run = [](const char* storm) {
    const std::string json = std::string(R"({
      "fabric": {"link": {"rate": "100Gbps", "delay": "1us"}},
      "topology": {"kind": "star", "hosts": 4},
      "traffic": [{"kind": "flow", "src": "h0", "dst": "h1", "size": "20MB"},
                  {"kind": "flow", "src": "h2", "dst": "h3", "size": "20MB"}],
      "faults": [{"kind": "pfc_storm", )") +
                             storm + R"(, "priority": 3, "at": "100us"}],
      "stop": {"time": "5ms"}
    })";
    return run_text(json);
  };
  const Ran both = run(R"("hosts": {"of": {"range": [1, 3]}, "except": [2]})");
  CHECK_FALSE(both.result.flows[0].done);
  CHECK_FALSE(both.result.flows[1].done);
  // The resolved scenario names who stormed.
  CHECK(nlohmann::json::parse(both.scenario.resolved_json)["faults"][0]["hosts"] ==
        nlohmann::json{"h1", "h3"});
  const Ran one = run(R"("host": 3)");  // a host index, as everywhere a host is named
  CHECK(one.result.flows[0].done);
  CHECK_FALSE(one.result.flows[1].done);
  CHECK(nlohmann::json::parse(one.scenario.resolved_json)["faults"][0]["host"] == "h3");
}

TEST_CASE("a switch-to-switch storm under the forward watchdog: its lossless drops are counted",
          "[faults][invariants]") {
  // h1 storms from 50 us; before that its 1 Gb/s cable already holds s1's
  // queue, so s1 pauses s0 for longer than the 50 us timeout. s0's watchdog
  // then sends on ignoring the pause (action forward), and s1's ingress
  // queue from s0 overflows its headroom: the configured outcome of a storm
  // (docs/switch.md), not a violated invariant (it was one: exit 8, "invariant
  // lossless_drop violated at s1 port 0 priority 3").
  const char* json = R"({
    "fabric": {"link": {"rate": "100Gbps", "delay": "1us"},
               "switch": {"pfc": {"threshold": "static", "xoff": "100KB", "xon": "80KB"},
                          "watchdog": {"enabled": true, "timeout": "50us", "restore": "100ms",
                                       "action": "forward"}}},
    "topology": {"kind": "graph", "hosts": ["h0", "h1"], "switches": ["s0", "s1"],
                 "links": [{"a": "h0", "b": "s0"}, {"a": "s0", "b": "s1"},
                           {"a": "s1", "b": "h1", "rate": "1Gbps"}]},
    "traffic": [{"kind": "flow", "src": "h0", "dst": "h1", "size": "4MB"}],
    "faults": [{"kind": "pfc_storm", "host": "h1", "priority": 3, "at": "50us"}],
    "stop": {"time": "3ms"}
  })";
  const Ran r = run_text(json);
  CHECK(r.result.status == RunStatus::kTimeLimit);
  CHECK(r.result.invariant.empty());
  uint64_t headroom_drops = 0;
  for (const auto& [reason, n] : r.result.switch_drops) {
    if (reason == "headroom") headroom_drops = n;
  }
  CHECK(headroom_drops > 0);
  // Every one of them follows the neighbour's forwarding.
  CHECK(r.result.lossless_drops_watchdog_forward == headroom_drops);
  CHECK(r.result.lossless_drops_headroom_below_automatic == 0);
}

// A cable of an InfiniBand fabric that fails and comes back is initialised
// again (a link brought up exchanges flow-control packets before it carries
// data). Before this, the credits of the packets lost on it stayed lost:
// the sender's VL waited for credits for the rest of the run and the QP
// ended in error. One path (one spine), so the flow must wait for the link.
TEST_CASE("InfiniBand: a link that fails and comes back starts its credits over",
          "[faults][infiniband]") {
  const char* kIbFlap = R"({
    "fabric": {"transport": "infiniband", "mtu": 4096,
               "link": {"rate": "100Gbps", "delay": "1us"}, "nic": {"retransmit_timeout": "200us"}},
    "topology": {"kind": "fat_tree", "leaves": 2, "spines": 1, "hosts_per_leaf": 1,
                 "reconvergence_delay": "100us"},
    "traffic": [{"kind": "flow", "src": 0, "dst": 1, "size": "4MB"}],
    "faults": [{"kind": "link_down", "a": "leaf0", "b": "spine0", "at": "100us",
                "until": "150us"}]
  })";
  const Scenario sc = load_scenario_text(kIbFlap, "ib_flap");
  // The flow's wire time (4 MB in 4096-byte payloads of 4122 wire bytes at
  // 100 Gb/s), the outage and one retransmission timeout bound its end.
  const Time wire = Time::ps(4'000'000LL * 4122 / 4096 * 80);
  const Time bound = wire + Time::us(50) + Time::us(200);
  Time first;
  uint64_t events = 0;
  for (const auto& layout : kLayouts) {
    const RunResult r = run_laid_out(sc, layout);
    INFO(layout.first << " threads, " << layout.second << " partitions");
    REQUIRE(r.status == RunStatus::kComplete);
    CHECK(r.link_lost_down > 0);
    REQUIRE(r.flows.size() == 1);
    CHECK(r.flows[0].fct() < bound);
    // The same run whichever thread runs which partition.
    if (events == 0) {
      first = r.flows[0].finish;
      events = r.events;
    }
    CHECK(r.flows[0].finish == first);
    CHECK(r.events == events);
  }
}

// A port busy sending into the dead cable when it comes back still holds the
// flow-control packets it made before: sent after the new grants, their
// old absolute counts gave the other end thousands of blocks of credit it
// did not have, and the switch buffer overflowed (a lossless drop under
// the checks). The restart discards them.
TEST_CASE("InfiniBand: flow-control packets queued before a link restart are not sent after it",
          "[faults][infiniband]") {
  const char* kStale = R"({
    "fabric": {"transport": "infiniband", "mtu": 4096,
               "link": {"rate": "100Gbps", "delay": "1us"},
               "nic": {"retransmit_timeout": "200us"},
               "switch": {"buffer": 401440}, "infiniband": {"op_vls": 1}},
    "topology": {"kind": "fat_tree", "leaves": 2, "spines": 1, "hosts_per_leaf": 2,
                 "reconvergence_delay": "100us"},
    "traffic": [{"kind": "flow", "src": 0, "dst": 2, "size": "2MB"},
                {"kind": "flow", "src": 3, "dst": 2, "size": "2MB"},
                {"kind": "flow", "src": 2, "dst": 3, "size": "2MB"}],
    "faults": [{"kind": "link_down", "a": "leaf1", "b": "leaf1.h1", "at": "100us",
                "until": "100.537us"}]
  })";
  const Ran r = run_text(kStale);
  REQUIRE(r.result.status == RunStatus::kComplete);
  CHECK(r.result.link_lost_down > 0);
  // Lost only on the cable, or discarded for it while it was down (the
  // switch's port to leaf1.h1): credits let nothing in that the buffers lack.
  uint64_t port_down = 0;
  for (const auto& [reason, n] : r.result.switch_drops) {
    if (reason == "port_down") port_down = n;
  }
  CHECK(r.result.total_drops() == r.result.link_lost_down + port_down);
}

// A cable that comes back at 150 us, and goes down again at once or soon
// after. At once, it never came up, so its ends do not start over (their
// first flow-control packets went into it). Soon after, the restart's first
// flow-control packets must leave from an event of their partition: sent
// from the fault injector (between phases) into the channel to another
// partition, they waited there unseen while the next fault ran, then came
// in with a due time in the past (an event_in_past violation) or over the
// cable while it was down. Results differed by thread count in both.
TEST_CASE("InfiniBand: a cable that comes back and goes down again, at once or soon after",
          "[faults][infiniband]") {
  for (const char* again : {"150us", "151us", "160us"}) {
    const std::string text = std::string(R"({
      "fabric": {"transport": "infiniband", "mtu": 4096,
                 "link": {"rate": "100Gbps", "delay": "1us"}, "infiniband": {"op_vls": 1},
                 "nic": {"retransmit_timeout": "200us"}},
      "topology": {"kind": "fat_tree", "leaves": 2, "spines": 1, "hosts_per_leaf": 2,
                   "reconvergence_delay": "100us"},
      "traffic": [{"kind": "flow", "src": 0, "dst": 2, "size": "2MB"},
                  {"kind": "flow", "src": 3, "dst": 1, "size": "2MB"}],
      "faults": [{"kind": "node_down", "node": "spine0", "at": "100us", "until": "150us"},
                 {"kind": "node_down", "node": "spine0", "at": ")") +
                             again + R"(", "until": "200us"}]
    })";
    const Scenario sc = load_scenario_text(text, "ib_down_again");
    uint64_t lost = 0, events = 0;
    for (const auto& layout : kLayouts) {
      const RunResult r = run_laid_out(sc, layout);
      INFO("down again at " << again << ", " << layout.first << " threads, " << layout.second
                            << " partitions");
      REQUIRE(r.status == RunStatus::kComplete);
      if (events == 0) {
        lost = r.link_lost_down;
        events = r.events;
      }
      CHECK(r.link_lost_down == lost);
      CHECK(r.events == events);
    }
  }
}

// IBA §7.2: a port whose link is down sends no data packets, so a switch
// discards those for it. Before, they waited there for their head-of-queue
// lifetime (1 s by default), holding their credits at the ingress: a cable
// down for good stopped 8 of ib_link_flap's 16 flows, most of which never
// cross it.
TEST_CASE("InfiniBand: a cable that stays down: packets for it are discarded, every flow ends",
          "[faults][infiniband]") {
  LoadOptions o;
  o.overrides = {R"(faults=[{"kind":"link_down","a":"leaf0","b":"spine0","at":"300us"}])",
                 R"(stop={"time":"40ms"})"};
  const Ran r = run_file("scenarios/ib_link_flap.json", o);
  REQUIRE(r.result.status == RunStatus::kComplete);
  for (const FlowResult& f : r.result.flows) CHECK(f.done);
  uint64_t port_down = 0;
  for (const auto& [reason, n] : r.result.switch_drops) {
    if (reason == "port_down") port_down = n;
  }
  CHECK(port_down > 0);
  CHECK(r.result.hoq_discards == 0);
}

// A dual-homed host: routes recomputed after its first cable fails move
// its QPs to the other port (before, they kept sending into the dead one
// until they ran out of retries).
TEST_CASE("a multi-port NIC moves its QPs off a failed port when routes reconverge", "[faults]") {
  const char* json = R"({
    "fabric": {"link": {"rate": "100Gbps", "delay": "1us"}, "nic": {"retransmit_timeout": "100us"}},
    "topology": {"kind": "graph", "hosts": ["h0", "h1"], "switches": ["L0", "L1"],
                 "links": [{"a": "h0", "b": "L0"}, {"a": "h0", "b": "L1"},
                           {"a": "h1", "b": "L0"}, {"a": "h1", "b": "L1"}],
                 "reconvergence_delay": "10us"},
    "traffic": [{"kind": "flow", "src": "h0", "dst": "h1", "size": "10MB", "qps": 4}],
    "faults": [{"kind": "link_down", "a": "h0", "b": "L0", "at": "100us"}],
    "stop": {"time": "50ms"}
  })";
  Time finish;
  uint64_t events = 0, lost = 0;
  for (const auto& layout : kLayouts) {
    Ran r{load_scenario_text(json, "dualhome"), {}};
    r.result = run_laid_out(r.scenario, layout);
    INFO("threads " << layout.first << ", partitions " << layout.second);
    REQUIRE(r.result.status == RunStatus::kComplete);
    CHECK(r.result.flows[0].done);
    CHECK(r.result.link_lost_down > 0);  // what was sent before the routes changed
    // The move runs between phases: the same results on every layout.
    if (events == 0) {
      finish = r.result.flows[0].finish;
      events = r.result.events;
      lost = r.result.link_lost_down;
    }
    CHECK(r.result.flows[0].finish == finish);
    CHECK(r.result.events == events);
    CHECK(r.result.link_lost_down == lost);
  }
}

// Each change is learnt reconvergence_delay after it, whatever came before:
// an unrelated cable failing earlier must not bring the routes around a later
// failure forward (it did: 303 frames lost instead of 1,500).
TEST_CASE("reconvergence: a second failure gets its own full delay", "[faults]") {
  const std::string json = R"({
    "fabric": {"link": {"rate": "100Gbps", "delay": "1us"}, "nic": {"retransmit_timeout": "50us"}},
    "topology": {"kind": "graph", "hosts": ["h0", "h1", "h2"], "switches": ["L0", "L1", "S0", "S1"],
                 "links": [{"a": "h0", "b": "L0"}, {"a": "h1", "b": "L1"}, {"a": "h2", "b": "L0"},
                           {"a": "L0", "b": "S0"}, {"a": "L0", "b": "S1"},
                           {"a": "L1", "b": "S0"}, {"a": "L1", "b": "S1"}],
                 "reconvergence_delay": "500us"},
    "traffic": [{"kind": "flow", "src": "h0", "dst": "h1", "size": "30MB"}],
    "stop": {"time": "5ms"}
  })";
  // The flow hashes to S0 (the links it lost show it); L0-S0 fails at 700 us.
  LoadOptions alone, after_other;
  alone.overrides = {R"(faults=[{"kind":"link_down","a":"L0","b":"S0","at":"700us"}])"};
  after_other.overrides = {R"(faults=[{"kind":"link_down","a":"h2","b":"L0","at":"300us"},)"
                           R"({"kind":"link_down","a":"L0","b":"S0","at":"700us"}])"};
  const Ran a = run_text(json, alone);
  const Ran b = run_text(json, after_other);
  REQUIRE(a.result.status == RunStatus::kComplete);
  REQUIRE(b.result.status == RunStatus::kComplete);
  // 500 us of a 100 Gb/s sender's frames (4,178 B of wire each at most,
  // 4,194 B for the first) go into the dead cable: about 1,500.
  CHECK(a.result.link_lost_down > 1400);
  CHECK(b.result.link_lost_down == a.result.link_lost_down);
  CHECK(b.result.flows[0].finish == a.result.flows[0].finish);
}

// topology.failed_links are down for the whole run: a static route that
// insists on one loses what it sends (before, the cable carried it).
TEST_CASE("a failed link carries nothing, even on a static route through it", "[faults]") {
  const char* json = R"({
    "fabric": {"link": {"rate": "100Gbps", "delay": "1us"},
               "nic": {"retransmit_timeout": "100us", "retry_cnt": 2}},
    "topology": {"kind": "graph", "hosts": ["h0", "h1"], "switches": ["L0", "L1", "S0", "S1"],
                 "links": [{"a": "h0", "b": "L0"}, {"a": "h1", "b": "L1"},
                           {"a": "L0", "b": "S0"}, {"a": "L0", "b": "S1"},
                           {"a": "L1", "b": "S0"}, {"a": "L1", "b": "S1"}],
                 "failed_links": [{"a": "L0", "b": "S0"}],
                 "routes": [{"at": "L0", "dst": "h1", "via": ["S0"]}]},
    "traffic": [{"kind": "flow", "src": "h0", "dst": "h1", "size": "1MB"}],
    "stop": {"time": "100ms"}
  })";
  const Ran r = run_text(json);
  CHECK(r.result.status == RunStatus::kQpError);
  CHECK(r.result.flows[0].failed);
  CHECK(r.result.link_lost_down > 0);
  for (const LinkResult& l : r.result.links) {
    const std::string from = r.scenario.topology.node(l.from).name;
    const std::string to = r.scenario.topology.node(l.to).name;
    // Every frame sent into it was lost; nothing came back.
    if (from == "L0" && to == "S0") CHECK(l.frames == r.result.link_lost_down);
    if (from == "S0" && to == "L0") CHECK(l.frames == 0);
  }
}

// Two storms of one host and priority that overlap: the lane is held until
// the later end (the shorter one used to end the longer).
TEST_CASE("overlapping PFC storms hold the priority until the last one ends", "[faults]") {
  const char* json = R"({
    "fabric": {"link": {"rate": "100Gbps", "delay": "1us"}},
    "topology": {"kind": "star", "hosts": 2},
    "traffic": [{"kind": "flow", "src": "h0", "dst": "h1", "size": "1MB", "start": "150us"}],
    "faults": [{"kind": "pfc_storm", "host": "h1", "priority": 3, "at": "100us", "until": "3ms"},
               {"kind": "pfc_storm", "host": "h1", "priority": 3, "at": "200us", "until": "300us"}],
    "stop": {"time": "10ms"}
  })";
  const Ran r = run_text(json);
  REQUIRE(r.result.flows[0].done);
  // 1 MB takes about 86 us at 100 Gb/s: it cannot end before the long storm.
  CHECK(r.result.flows[0].finish > Time::ms(3));
  CHECK(r.result.flows[0].finish < Time::ms(3) + Time::us(200));
}

// The watchdog's drop action also drops what was in the switch's pipeline
// (`latency`) when it triggered: the stormed queue then stays empty (six
// frames used to wait in it for the whole restore period).
TEST_CASE("watchdog drop: packets in the pipeline at the trigger are dropped too", "[faults]") {
  const char* json = R"({
    "fabric": {"link": {"rate": "100Gbps", "delay": "1us"},
               "switch": {"pfc": {"threshold": "static", "xoff": "20MB", "xon": "19MB"},
                          "watchdog": {"enabled": true, "timeout": "1ms", "restore": "100ms"},
                          "latency": "2us"}},
    "topology": {"kind": "star", "hosts": 2},
    "traffic": [{"kind": "flow", "src": "h0", "dst": "h1", "size": "50MB"}],
    "faults": [{"kind": "pfc_storm", "host": "h1", "priority": 3, "at": "100us"}],
    "output": {"window": {"start": "2ms"}},
    "stop": {"time": "4ms"}
  })";
  const Ran r = run_text(json);
  bool seen = false;
  for (const auto& q : r.result.queue_totals) {
    if (q.priority != 3 || r.scenario.topology.node(q.node).name != "sw0") continue;
    if (q.counters.drops[static_cast<size_t>(DropReason::kWatchdog)] == 0) continue;
    seen = true;
    CHECK(q.window_peak_bytes == 0);
    CHECK(q.window_mean_bytes == 0);  // the drops empty it for the averages too
  }
  CHECK(seen);
}

// The watchdog times "nothing sent" from when the queue last filled, not
// from a send before it was empty: a flow that starts 5 ms into a storm is
// held a full timeout (1 ms) before its queue is dropped.
TEST_CASE("watchdog: a queue that filled after being empty is timed from then", "[faults]") {
  const char* json = R"({
    "fabric": {"link": {"rate": "100Gbps", "delay": "1us"},
               "switch": {"pfc": {"threshold": "static", "xoff": "100KB", "xon": "80KB"},
                          "watchdog": {"enabled": true, "timeout": "1ms", "restore": "100ms"}}},
    "topology": {"kind": "star", "hosts": 2},
    "traffic": [{"kind": "flow", "src": "h0", "dst": "h1", "size": "1MB", "start": "5ms"}],
    "faults": [{"kind": "pfc_storm", "host": "h1", "priority": 3, "at": "100us"}],
    "stop": {"time": "8ms"}
  })";
  const auto watchdog_drops = [&](const char* stop) {
    LoadOptions o;
    o.overrides = {std::string(R"(stop={"time":")") + stop + R"("})"};
    const Ran r = run_text(json, o);
    uint64_t n = 0;
    for (const auto& [reason, c] : r.result.switch_drops) {
      if (reason == "watchdog") n = c;
    }
    return n;
  };
  // The first packet is queued at about 5.001 ms and the check runs every
  // timeout/4 (250 us): none is dropped by 5.9 ms (they were from 5.25 ms),
  // all that waits is by 6.3 ms.
  CHECK(watchdog_drops("5.9ms") == 0);
  CHECK(watchdog_drops("6.3ms") > 0);
}

// A GPU whose only network cable fails reaches no other server: its QPs stay
// on that port when routes reconverge (they used to move to its NVLink port,
// whose NVSwitch dropped their packets as unroutable), and end in error.
TEST_CASE("a QP whose destination no port reaches stays on its port", "[faults]") {
  const char* json = R"({
    "fabric": {"link": {"rate": "100Gbps", "delay": "1us"},
               "nic": {"retransmit_timeout": "100us", "retry_cnt": 2}},
    "topology": {"kind": "rail_optimized", "sus": 1, "nodes_per_su": 2, "gpus_per_node": 2,
                 "rails": 2, "ufm": false, "reconvergence_delay": "10us"},
    "traffic": [{"kind": "flow", "src": "su0.node0.gpu0", "dst": "su0.node1.gpu0", "size": "4MB"}],
    "faults": [{"kind": "link_down", "a": "su0.node0.gpu0", "b": "su0.rail0", "at": "100us"}],
    "stop": {"time": "20ms"}
  })";
  const Ran r = run_text(json);
  CHECK(r.result.status == RunStatus::kQpError);
  CHECK(r.result.link_lost_down > 0);
  CHECK(r.result.drops_no_route == 0);
  CHECK(r.result.total_drops() == r.result.link_lost_down);
}

// IBA §7.2: a port whose link is down sends no data packets. h0's NIC used
// to keep sending into the dead cable until its credits ran out and then
// counted the rest of the 50 us outage as PortXmitWait (48.3 us); now it
// sends nothing while the cable is down, and waits only for the switch's
// first grant after it comes back (a cable's delay, 1 us, and a little).
TEST_CASE("InfiniBand: a NIC port whose cable is down sends nothing and counts no PortXmitWait",
          "[faults][infiniband]") {
  const char* json = R"({
    "fabric": {"transport": "infiniband", "mtu": 4096, "link": {"rate": "EDR", "delay": "1us"},
               "nic": {"retransmit_timeout": "100us"}},
    "topology": {"kind": "graph", "hosts": ["h0", "h1"], "switches": ["A"],
                 "links": [{"a": "h0", "b": "A"}, {"a": "A", "b": "h1"}]},
    "traffic": [{"kind": "flow", "src": "h0", "dst": "h1", "size": "4MB"}],
    "faults": [{"kind": "link_down", "a": "h0", "b": "A", "at": "100us", "until": "150us"}],
    "output": {"window": {"start": "100.001us", "end": "149.999us"}}
  })";
  const Ran r = run_text(json);
  REQUIRE(r.result.status == RunStatus::kComplete);
  Time h0_wait;
  for (const auto& w : r.result.ib_xmit_wait) {
    if (r.scenario.topology.node(w.node).name == "h0") h0_wait += w.wait;
  }
  CHECK(h0_wait < Time::us(2));
  // From just after the failure to just before the return, h0 sends nothing
  // (it sent until its credits ran out, about 104 us).
  bool seen = false;
  for (const LinkResult& l : r.result.links) {
    if (r.scenario.topology.node(l.from).name != "h0") continue;
    seen = true;
    CHECK(l.window_frames == 0);
  }
  CHECK(seen);
}
