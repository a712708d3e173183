#include "test/support/catch_units.h"

#include "sim/scenario/scenario.h"
#include "sim/scenario/scenario_error.h"

using namespace rdmasim;

namespace {
const char* kStar = R"({
  "topology": {"kind": "star", "hosts": 3},
  "traffic": [{"kind": "flow", "src": "h0", "dst": 2, "size": "1MiB"}]
})";
}

TEST_CASE("a minimal scenario takes every default", "[quick][scenario]") {
  const Scenario sc = load_scenario_text(kStar, "mini");
  CHECK(sc.name == "mini");
  CHECK(sc.seed == 1);
  CHECK(sc.fabric.nic.mtu == 4096);
  CHECK(sc.fabric.link.rate == BitRate::gbps(400));
  CHECK(sc.fabric.link.delay == Time::us(1));
  CHECK(sc.topology.num_hosts() == 3);
  CHECK(sc.topology.nodes().size() == 4);
  REQUIRE(sc.flows.size() == 1);
  CHECK(sc.flows[0].src == 0);
  CHECK(sc.flows[0].dst == 2);
  CHECK(sc.flows[0].bytes == 1 << 20);
  CHECK(sc.flows[0].op == Verb::kWrite);
  CHECK(sc.output.dir == "out/mini");
  CHECK(sc.stop.time.is_infinite());
  // The resolved scenario names every default.
  CHECK(sc.resolved_json.find("\"ack_interval\": 1") != std::string::npos);
  CHECK(sc.resolved_json.find("\"dst\": \"h2\"") != std::string::npos);
  CHECK(sc.hash.size() == 16);
}

TEST_CASE("overrides and --out change the scenario before validation", "[quick][scenario]") {
  LoadOptions o;
  o.overrides = {"fabric.mtu=1024", "seed=9", "traffic[0].op=send"};
  o.output_dir = "elsewhere";
  const Scenario sc = load_scenario_text(kStar, "mini", o);
  CHECK(sc.fabric.nic.mtu == 1024);
  CHECK(sc.seed == 9);
  CHECK(sc.flows[0].op == Verb::kSend);
  CHECK(sc.output.dir == "elsewhere");
  // Where the output goes is not part of what is simulated.
  LoadOptions o2 = o;
  o2.output_dir = "another";
  CHECK(load_scenario_text(kStar, "mini", o2).hash == sc.hash);
  CHECK(load_scenario_text(kStar, "mini").hash != sc.hash);
}

TEST_CASE("a graph topology with explicit links", "[quick][scenario]") {
  const Scenario sc = load_scenario_text(R"({
    "topology": {"kind": "graph", "hosts": ["a", "b"], "switches": ["s"],
                 "links": [{"a": "a", "b": "s", "rate": "100G"}, {"a": "s", "b": "b", "delay": "50ns"}]},
    "traffic": [{"kind": "flow", "src": "a", "dst": "b", "size": 1000}]
  })",
                                         "g");
  REQUIRE(sc.topology.links().size() == 2);
  CHECK(sc.topology.links()[0].rate == BitRate::gbps(100));
  CHECK(sc.topology.links()[0].delay == Time::us(1));
  CHECK(sc.topology.links()[1].rate == BitRate::gbps(400));
  CHECK(sc.topology.links()[1].delay == Time::ns(50));
}

TEST_CASE("errors name the JSON path, the value and what was expected", "[quick][scenario]") {
  auto error_of = [](const std::string& text) {
    try {
      load_scenario_text(text, "bad");
    } catch (const ScenarioError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(error_of(R"({"topology": {"kind": "star", "hosts": 2},
                     "traffic": [{"kind": "flow", "src": 0, "dst": 1, "size": "12 MB"}]})") ==
        "traffic[0].size: \"12 MB\" is not a size (expected e.g. \"4096\", \"64KiB\" or \"12MB\")");
  CHECK(error_of(R"({"topology": {"kind": "star", "hosts": 2}, "fabric": {"mtuu": 1024}})") ==
        "fabric.mtuu: unknown key (did you mean \"mtu\"?)");
  CHECK(error_of(R"({"topology": {"kind": "star", "hosts": 2}, "fabric": {"mtu": 8192}})") ==
        "fabric.mtu: 8192 is out of range (expected an integer from 256 to 4096)");
  CHECK(
      error_of(R"({"topology": {"kind": "star", "hosts": 2}, "fabric": {"link": {"delay": 5}}})") ==
      "fabric.link.delay: 5 has no unit (expected a time with a unit, e.g. \"600ns\", \"1.5us\" or "
      "\"2ms\")");
  CHECK(error_of(R"({"topology": {"kind": "ring", "hosts": 2}})") ==
        "topology.kind: \"ring\" is not valid (expected one of \"star\", \"graph\", \"fat_tree\", "
        "\"rail_optimized\")");
  CHECK(error_of(R"({})") == "topology: missing (expected an object with a \"kind\")");
  CHECK(error_of(R"({"topology": {"kind": "star", "hosts": 2},
                     "traffic": [{"kind": "flow", "src": "h7", "dst": 1, "size": 1}]})") ==
        "traffic[0].src: \"h7\" is not a host (expected a host name such as \"h0\", or a host "
        "index from 0 to 1)");
  CHECK(error_of(R"({"topology": {"kind": "graph", "hosts": ["a", "b"], "switches": ["s", "t"],
                     "links": [{"a": "a", "b": "s"}, {"a": "b", "b": "t"}]}})") ==
        "topology: hosts \"a\" and \"b\" are not connected (expected a path between every pair of "
        "hosts)");
  CHECK(error_of("{\"topology\": \n {\"kind\": }").find("bad:2:") == 0);
}

TEST_CASE("event records follow the trace unless set", "[quick][scenario]") {
  const Scenario with = load_scenario_text(kStar, "mini");
  CHECK(with.output.trace);
  CHECK(with.output.pfc_events);
  CHECK(with.output.drop_events);
  CHECK(with.output.flow_paths);
  LoadOptions o;
  o.overrides = {"output.trace=false"};
  const Scenario without = load_scenario_text(kStar, "mini", o);
  CHECK_FALSE(without.output.pfc_events);
  CHECK_FALSE(without.output.drop_events);
  CHECK_FALSE(without.output.flow_paths);
  o.overrides = {"output.trace=false", "output.pfc_events=true"};
  const Scenario asked = load_scenario_text(kStar, "mini", o);
  CHECK(asked.output.pfc_events);
  CHECK_FALSE(asked.output.drop_events);
}

// The resolved scenario loads again to the same scenario: a collective
// sweep by step_bytes used to resolve with step_factor beside it, which the
// loader refuses ("is given with step_factor").
TEST_CASE("a sweep by step_bytes resolves to a scenario that loads again", "[quick][scenario]") {
  const Scenario sc = load_scenario_text(R"({
    "topology": {"kind": "star", "hosts": 4},
    "traffic": [{"kind": "collective", "op": "all_gather",
                 "sweep": {"min_bytes": 1024, "max_bytes": 4096, "step_bytes": 1024}}]
  })",
                                         "sweep");
  CHECK(sc.resolved_json.find("step_factor") == std::string::npos);
  const Scenario again = load_scenario_text(sc.resolved_json, "sweep");
  CHECK(again.hash == sc.hash);
}

// On InfiniBand a RoCE-only key set to null is absent, as null is
// everywhere in a scenario (it was refused as if given).
TEST_CASE("null RoCE-only keys are absent on InfiniBand", "[quick][scenario]") {
  const Scenario sc = load_scenario_text(R"({
    "fabric": {"transport": "infiniband", "switch": {"pfc": null, "ecn": null}},
    "topology": {"kind": "star", "hosts": 2}
  })",
                                         "ib_null");
  CHECK(sc.fabric.transport == Transport::kInfiniband);
}
