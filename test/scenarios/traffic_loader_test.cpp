// Traffic items in scenarios (docs/traffic.md): every kind expands at load
// into the flows of its pattern, drawing from the stream keyed by the seed
// and the item's position; host sets, names, across levels, CDF forms and
// the resolved scenario; and the errors, each naming its JSON path.
#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include "test/support/flow_common.h"

#include "models/traffic/patterns.h"
#include "sim/scenario/scenario.h"
#include "sim/scenario/scenario_error.h"
#include "test/support/run_helpers.h"

using namespace rdmasim;
using namespace rdmasim::testing;
using nlohmann::json;

namespace {

// A scenario of `topology` with the given traffic items.
std::string with(const std::string& topology, const std::string& traffic) {
  return R"({"name": "t", "seed": 5, "topology": )" + topology + R"(, "traffic": [)" + traffic +
         "]}";
}
const std::string kStar8 = R"({"kind": "star", "hosts": 8})";
const std::string kTwoTier =
    R"({"kind": "fat_tree", "leaves": 4, "spines": 2, "hosts_per_leaf": 4})";
const std::string kK4 = R"({"kind": "fat_tree", "k": 4})";

Scenario load(const std::string& text, const LoadOptions& o = {}) {
  return load_scenario_text(text, "t", o);
}

std::string error_of(const std::string& text) {
  try {
    load(text);
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "no error";
}

std::vector<FlowSpec> slice(const std::vector<FlowSpec>& v, size_t from, size_t n) {
  return std::vector<FlowSpec>(v.begin() + static_cast<long>(from),
                               v.begin() + static_cast<long>(from + n));
}

// A pattern's flows as the loader tags them: with the traffic item they came from.
std::vector<FlowSpec> of_item(std::vector<FlowSpec> v, uint32_t item) {
  for (FlowSpec& f : v) f.item = item;
  return v;
}

std::string host_name(const Scenario& sc, uint32_t h) {
  return sc.topology.node(sc.topology.hosts()[h]).name;
}
// "leaf2.h3" -> "leaf2"; "pod1.leaf0.h1" -> "pod1.leaf0" (up to the last dot).
std::string prefix(const std::string& name) { return name.substr(0, name.rfind('.')); }

}  // namespace

TEST_CASE("every traffic kind expands into its pattern's flows, in item order",
          "[quick][traffic][loader]") {
  const Scenario sc = load(with(kStar8, R"(
    {"kind": "flow", "src": "h0", "dst": "h1", "size": 1000},
    {"kind": "incast", "senders": ["h1", "h2", 3, "h4"], "dst": "h0", "size": "1MiB",
     "jitter": "1us", "start": "5us", "op": "send"},
    {"kind": "permutation", "size": "64KiB"},
    {"kind": "permutation", "pattern": "shift", "shift": 3, "size": "64KiB"},
    {"kind": "all_to_all", "hosts": 3, "size": 4096, "stagger": "2us"},
    {"kind": "background", "load": 0.5, "cdf": "websearch", "duration": "1ms"})"));
  const auto& flows = sc.flows;
  size_t at = 0;
  CHECK(flows[at].src == 0);
  CHECK(flows[at].dst == 1);
  CHECK(flows[at].name.empty());
  CHECK(flows[at].item == 0);
  ++at;

  IncastParams in;
  in.senders = {1, 2, 3, 4};
  in.dst = 0;
  in.bytes = 1 << 20;
  in.jitter = Time::us(1);
  in.common = rdmasim::testing::common("incast[1]", Time::us(5), Verb::kSend);
  RngStream r1(5, "traffic[1]");
  CHECK(slice(flows, at, 4) == of_item(incast(in, r1), 1));
  at += 4;

  PermutationParams pr;
  pr.hosts = {0, 1, 2, 3, 4, 5, 6, 7};
  pr.bytes = 65536;
  pr.common = rdmasim::testing::common("permutation[2]", Time::zero(), Verb::kWrite);
  RngStream r2(5, "traffic[2]");
  CHECK(slice(flows, at, 8) == of_item(permutation(pr, r2), 2));
  at += 8;

  PermutationParams ps = pr;
  ps.pattern = PermutationParams::Pattern::kShift;
  ps.shift = 3;
  ps.common.name = "permutation[3]";
  RngStream r3(5, "traffic[3]");
  CHECK(slice(flows, at, 8) == of_item(permutation(ps, r3), 3));
  for (uint32_t i = 0; i < 8; ++i) CHECK(flows[at + i].dst == (i + 3) % 8);
  at += 8;

  AllToAllParams aa;
  aa.hosts = {0, 1, 2};
  aa.bytes = 4096;
  aa.stagger = Time::us(2);
  aa.common = rdmasim::testing::common("all_to_all[4]", Time::zero(), Verb::kWrite);
  CHECK(slice(flows, at, 6) == of_item(all_to_all(aa), 4));
  at += 6;

  const FlowSizeCdf ws = FlowSizeCdf::parse(find_builtin_cdf("websearch")->text);
  BackgroundParams bg;
  bg.hosts = {0, 1, 2, 3, 4, 5, 6, 7};
  bg.rates.assign(8, BitRate::gbps(400));  // fabric.link.rate's default
  bg.load = 0.5;
  bg.sizes = &ws;
  bg.duration = Time::ms(1);
  bg.max_flows = 1'000'000;
  bg.common = rdmasim::testing::common("background[5]", Time::zero(), Verb::kWrite);
  RngStream r5(5, "traffic[5]");
  const auto expected = of_item(background(bg, r5), 5);
  REQUIRE(flows.size() == at + expected.size());
  CHECK(slice(flows, at, expected.size()) == expected);
}

TEST_CASE("host sets: all, a count or a list, and incast senders leave out dst",
          "[quick][traffic][loader]") {
  auto srcs = [](const Scenario& sc) {
    std::vector<uint32_t> v;
    for (const FlowSpec& f : sc.flows) v.push_back(f.src);
    return v;
  };
  const auto incast_of = [&](const std::string& senders) {
    return load(
        with(kStar8, R"({"kind": "incast", "dst": "h1", "size": 1, "senders": )" + senders + "}"));
  };
  CHECK(srcs(incast_of("3")) == std::vector<uint32_t>{0, 2, 3});
  CHECK(srcs(incast_of("\"all\"")) == std::vector<uint32_t>{0, 2, 3, 4, 5, 6, 7});
  CHECK(srcs(incast_of(R"(["h7", 0, "h5"])")) == std::vector<uint32_t>{7, 0, 5});
  for (const FlowSpec& f : incast_of("\"all\"").flows) CHECK(f.dst == 1);
  const Scenario a2a = load(with(kStar8, R"({"kind": "all_to_all", "hosts": 4, "size": 1})"));
  CHECK(a2a.flows.size() == 12);
  for (const FlowSpec& f : a2a.flows) CHECK((f.src < 4 && f.dst < 4));
  const Scenario all = load(with(kStar8, R"({"kind": "all_to_all", "size": 1})"));
  CHECK(all.flows.size() == 56);
}

TEST_CASE("flows are named <kind>[i].<suffix>, or <name>.<suffix>", "[quick][traffic][loader]") {
  const Scenario sc = load(with(kStar8, R"(
    {"kind": "incast", "senders": 2, "dst": 7, "size": 1},
    {"kind": "incast", "senders": 2, "dst": 7, "size": 1, "name": "hot"})"));
  REQUIRE(sc.flows.size() == 4);
  CHECK(sc.flows[0].name == "incast[0].s0");
  CHECK(sc.flows[1].name == "incast[0].s1");
  CHECK(sc.flows[2].name == "hot.s0");
  CHECK(sc.flows[3].name == "hot.s1");
}

TEST_CASE("permutation across leaf and group keeps every flow out of its own",
          "[quick][traffic][loader]") {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    LoadOptions o;
    o.overrides = {"seed=" + std::to_string(seed)};
    // Two tiers: hosts "leafL.hN"; leaf = the name up to the last dot.
    const Scenario two =
        load(with(kTwoTier, R"({"kind": "permutation", "across": "leaf", "size": 1})"), o);
    REQUIRE(two.flows.size() == 16);
    std::set<uint32_t> dsts;
    for (const FlowSpec& f : two.flows) {
      CHECK(prefix(host_name(two, f.src)) != prefix(host_name(two, f.dst)));
      dsts.insert(f.dst);
    }
    CHECK(dsts.size() == 16);
    // k = 4: hosts "podP.leafL.hN"; group = the pod.
    const Scenario k4 = load(with(kK4, R"({"kind": "permutation", "across": "leaf", "size": 1},
                          {"kind": "permutation", "across": "group", "size": 1})"),
                             o);
    REQUIRE(k4.flows.size() == 32);
    for (size_t i = 0; i < 16; ++i) {
      const FlowSpec& f = k4.flows[i];
      CHECK(prefix(host_name(k4, f.src)) != prefix(host_name(k4, f.dst)));
    }
    for (size_t i = 16; i < 32; ++i) {
      const FlowSpec& f = k4.flows[i];
      const std::string a = host_name(k4, f.src), b = host_name(k4, f.dst);
      CHECK(a.substr(0, a.find('.')) != b.substr(0, b.find('.')));
    }
  }
  // GPUs sharing a NIC port through a PCIe switch: the leaf is the rail leaf
  // above the NIC switch. 4 GPUs, 2 rails: GPU g is on rail g / 2.
  const Scenario rail = load(with(
      R"({"kind": "rail_optimized", "sus": 1, "nodes_per_su": 4, "gpus_per_node": 4,
          "rails": 2, "spines": 2, "ufm": false})",
      R"({"kind": "permutation", "across": "leaf", "size": 1})"));
  REQUIRE(rail.flows.size() == 16);
  for (const FlowSpec& f : rail.flows) {
    const std::string a = host_name(rail, f.src), b = host_name(rail, f.dst);
    CHECK((a.back() - '0') / 2 != (b.back() - '0') / 2);
  }
}

TEST_CASE("the resolved scenario holds every traffic default and the CDF that ran",
          "[quick][traffic][loader]") {
  const std::string path = std::string(RDMASIM_BINARY_DIR) + "/traffic_loader_test_cdf.txt";
  {
    std::ofstream out(path);
    out << "# mine\n0 0\n1000 50\n5000 100\n";
  }
  const Scenario sc = load(with(kStar8, R"(
    {"kind": "incast", "senders": "all", "dst": "h0", "size": "1MiB"},
    {"kind": "permutation", "hosts": ["h1", 2], "size": 1},
    {"kind": "background", "load": 0.25, "cdf": ")" +
                                            path + R"(", "duration": "10us"},
    {"kind": "background", "load": 0.25, "cdf": [[0, 0], [100, 100]], "duration": "10us"},
    {"kind": "background", "load": 0.25, "cdf": "fb_hadoop", "duration": "10us"})"));
  const json r = json::parse(sc.resolved_json)["traffic"];
  CHECK(r[0] == json::parse(R"({"kind": "incast", "senders": "all", "dst": "h0",
      "size": "1MiB", "start": "0s", "op": "write", "name": "incast[0]", "jitter": "0s",
      "qps": 1})"));
  CHECK(r[1] == json::parse(R"({"kind": "permutation", "hosts": ["h1", "h2"], "pattern": "random",
      "across": "none", "size": 1, "start": "0s", "op": "write", "name": "permutation[1]",
      "qps": 1})"));
  CHECK(r[2]["cdf"] == json::parse("[[0, 0.0], [1000, 50.0], [5000, 100.0]]"));
  CHECK(r[2]["max_flows"] == 1000000);
  CHECK(r[2]["hosts"] == "all");
  CHECK(r[3]["cdf"] == json::parse("[[0, 0], [100, 100]]"));
  CHECK(r[4]["cdf"] == "fb_hadoop");
  // The resolved scenario loads again and makes the same flows.
  json again = json::parse(sc.resolved_json);
  CHECK(load(again.dump()).flows == sc.flows);
  std::remove(path.c_str());
}

TEST_CASE("traffic is deterministic: same seed same flows, another seed others",
          "[quick][traffic][loader]") {
  const std::string text = with(kTwoTier, R"(
    {"kind": "incast", "senders": 8, "dst": 0, "size": 1, "jitter": "10us"},
    {"kind": "permutation", "across": "leaf", "size": 1},
    {"kind": "background", "load": 0.7, "cdf": "google_rpc", "duration": "20us"})");
  const Scenario a = load(text), b = load(text);
  CHECK(a.flows == b.flows);
  LoadOptions o;
  o.overrides = {"seed=6"};
  CHECK_FALSE(load(text, o).flows == a.flows);
}

TEST_CASE("malformed traffic items: one error naming the path", "[quick][traffic][loader]") {
  auto err = [](const std::string& item, const std::string& topo = kStar8) {
    return error_of(with(topo, item));
  };
  CHECK(
      err(R"({"kind": "background", "load": 0.5, "cdf": "websearh", "duration": "1ms"})") ==
      R"(traffic[0].cdf: "websearh" is not a known CDF, did you mean "websearch"? (expected one of "websearch", "fb_hadoop", "alistorage", "google_rpc", a path to a CDF file, or [[bytes, percent], ...]))");
  CHECK(err(R"({"kind": "background", "load": 0.5, "cdf": "no/such.txt", "duration": "1ms"})")
            .starts_with(R"(traffic[0].cdf: cannot read the file "no/such.txt")"));
  CHECK(
      err(R"({"kind": "background", "load": 0.5, "cdf": [[0, 0], [10, 50]], "duration": "1ms"})") ==
      "traffic[0].cdf[1]: the last percent is 50, not 100 (expected [[bytes, cumulative "
      "percent], ...], sizes and percents not decreasing, from 0% to 100%)");
  CHECK(
      err(R"({"kind": "background", "load": 0.5, "cdf": [[0, 0], [1.5, 100]], "duration": "1ms"})")
          .starts_with("traffic[0].cdf[1]: [1.5,100] is not a point"));
  CHECK(err(R"({"kind": "background", "load": 1.5, "cdf": "websearch", "duration": "1ms"})") ==
        "traffic[0].load: 1.5 is out of range (expected a number > 0 and <= 1)");
  CHECK(err(R"({"kind": "background", "load": 0, "cdf": "websearch", "duration": "1ms"})")
            .starts_with("traffic[0].load: 0 is out of range"));
  CHECK(err(R"({"kind": "background", "load": "50%", "cdf": "websearch", "duration": "1ms"})")
            .starts_with("traffic[0].load: \"50%\" is a string (expected a number"));
  CHECK(err(R"({"kind": "background", "load": 0.5, "cdf": "websearch"})")
            .starts_with("traffic[0].duration: missing"));
  CHECK(err(R"({"kind": "background", "load": 1, "cdf": "google_rpc", "duration": "1ms",
                "max_flows": 1000})")
            .starts_with("traffic[0].max_flows: 1000 is exceeded: the item makes more than 1000 "
                         "flows (about "));
  CHECK(err(R"({"kind": "incast", "senders": ["h1", "h0"], "dst": "h0", "size": 1})") ==
        R"(traffic[0].senders[1]: "h0" is the dst (expected hosts other than dst))");
  CHECK(err(R"({"kind": "incast", "senders": ["h1", "h1"], "dst": "h0", "size": 1})") ==
        R"(traffic[0].senders[1]: "h1" is listed twice (expected distinct hosts))");
  CHECK(err(R"({"kind": "incast", "senders": 8, "dst": "h0", "size": 1})")
            .starts_with("traffic[0].senders: 8 is out of range (expected a count from 1 to 7, "
                         "or another host set: \"all\""));
  CHECK(err(R"({"kind": "incast", "senders": [], "dst": "h0", "size": 1})")
            .starts_with("traffic[0].senders: [] has 0 host(s)"));
  CHECK(err(R"({"kind": "incast", "senders": ["h9"], "dst": "h0", "size": 1})")
            .starts_with(R"(traffic[0].senders[0]: "h9" is not a host)"));
  CHECK(err(R"({"kind": "permutation", "hosts": [], "size": 1})") ==
        "traffic[0].hosts: [] has 0 host(s) (expected a host set of at least 2 hosts)");
  CHECK(err(R"({"kind": "permutation", "pattern": "shift", "shift": 0, "size": 1})") ==
        "traffic[0].shift: 0 is out of range (expected an integer from 1 to 7)");
  CHECK(err(R"({"kind": "permutation", "pattern": "shift", "shift": 8, "size": 1})") ==
        "traffic[0].shift: 8 is out of range (expected an integer from 1 to 7)");
  CHECK(err(R"({"kind": "permutation", "pattern": "shift", "size": 1})")
            .starts_with("traffic[0].shift: missing"));
  CHECK(err(R"({"kind": "permutation", "pattern": "rotate", "size": 1})") ==
        R"(traffic[0].pattern: "rotate" is not valid (expected one of "random", "shift"))");
  CHECK(
      err(R"({"kind": "permutation", "pattern": "shift", "shift": 1, "across": "leaf", "size": 1})")
          .starts_with("traffic[0].across: applies to pattern \"random\" only"));
  CHECK(err(R"({"kind": "permutation", "shift": 1, "size": 1})")
            .starts_with("traffic[0].shift: applies to pattern \"shift\" only"));
  CHECK(
      err(R"({"kind": "permutation", "across": "leaf", "size": 1})") ==
      R"(traffic[0].across: leaf "sw0" holds 8 of the 8 hosts, so some must send within it (expected no leaf with more than half of the hosts))");
  CHECK(err(R"({"kind": "permutation", "across": "group", "size": 1})")
            .starts_with(R"(traffic[0].across: host "h0" has no group in this topology)"));
  CHECK(
      err(R"({"kind": "permutation", "across": "rack", "size": 1})")
          .starts_with(
              R"(traffic[0].across: "rack" is not valid (expected one of "none", "leaf", "group"))"));
  CHECK(err(R"({"kind": "all_to_all", "size": 1, "stager": "1us"})") ==
        R"(traffic[0].stager: unknown key (did you mean "stagger"?))");
  CHECK(err(R"({"kind": "all_to_all", "hosts": 1, "size": 1})")
            .starts_with("traffic[0].hosts: 1 is out of range"));
  CHECK(
      err(R"({"kind": "multicast"})") ==
      R"(traffic[0].kind: "multicast" is not valid (expected one of "flow", "incast", "permutation", "all_to_all", "background", "collective"))");
}
