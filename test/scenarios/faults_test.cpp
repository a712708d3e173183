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
  // Lost only on the cable: credits let nothing in that the buffers lack.
  CHECK(r.result.total_drops() == r.result.link_lost_down);
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
