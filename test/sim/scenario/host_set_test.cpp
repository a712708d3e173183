// The host-set grammar (sim/scenario/host_set.h, docs/traffic.md#host-sets)
// on small topologies whose host numbering docs/topologies.md fixes: every
// expected list below is derived by hand from that numbering.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "sim/scenario/host_set.h"
#include "sim/scenario/scenario.h"
#include "sim/scenario/scenario_error.h"
#include "test/support/built_topology.h"
#include "topologies/generators.h"

using namespace rdmasim;
using nlohmann::json;

namespace {
using Hosts = std::vector<uint32_t>;

// k = 4: pod p holds hosts 4p … 4p+3; leaf L (pod<L/2>.leaf<L%2>) hosts 2L, 2L+1.
Topology k4() {
  Topology t;
  build_fat_tree(k_ary_fat_tree(4, LinkSpec{}), t);
  return t;
}

// 2 SUs of 3 slots, 4 GPUs and rails: GPUs 0-11 in SU0 (node n: 4n … 4n+3),
// 12-19 in SU1, the UFM (SU1's last slot) host 20. Rail r: r, r+4, …, r+16.
Topology rail() { return rdmasim::testing::build(rdmasim::testing::rail_config(2, 3, 4, 4, 1)).t; }

Hosts set(const Topology& t, const std::string& text, HostSetRules rules = {},
          RngStream* rng = nullptr) {
  return parse_host_set(json::parse(text), "x", t, rules, rng);
}

std::string error(const Topology& t, const std::string& text, HostSetRules rules = {},
                  RngStream* rng = nullptr) {
  try {
    set(t, text, rules, rng);
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "no error";
}

Hosts iota(uint32_t from, uint32_t to) {
  Hosts v;
  for (uint32_t h = from; h <= to; ++h) v.push_back(h);
  return v;
}
}  // namespace

TEST_CASE("host sets: the forms of today, unchanged", "[quick][host_set]") {
  const Topology t = k4();
  CHECK(set(t, R"("all")") == iota(0, 15));
  CHECK(set(t, "3") == Hosts{0, 1, 2});
  CHECK(set(t, R"(["pod3.leaf1.h1", 0, "pod1.leaf0.h0"])") == Hosts{15, 0, 4});
  // An incast's dst is left out of "all" and of a count.
  CHECK(set(t, R"("all")", HostSetRules::senders(1, 2)) ==
        Hosts{0, 1, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15});
  CHECK(set(t, "3", HostSetRules::senders(1, 1)) == Hosts{0, 2, 3});
}

TEST_CASE("host sets: ranges and groups, in host-index order", "[quick][host_set]") {
  const Topology t = k4();
  CHECK(set(t, R"({"range": [5, 9]})") == Hosts{5, 6, 7, 8, 9});
  CHECK(set(t, R"({"range": [7, 7]})") == Hosts{7});
  CHECK(set(t, R"({"leaf": 3})") == Hosts{6, 7});
  CHECK(set(t, R"({"leaf": [1, 3]})") == Hosts{2, 3, 4, 5, 6, 7});
  CHECK(set(t, R"({"pod": 2})") == Hosts{8, 9, 10, 11});
  CHECK(set(t, R"({"pod": [0, 1]})") == iota(0, 7));

  const Topology r = rail();
  CHECK(set(r, R"({"rail": 3})") == Hosts{3, 7, 11, 15, 19});
  // Rails [first, last]: rail by rail, each in host-index order.
  CHECK(set(r, R"({"rail": [0, 1]})") == Hosts{0, 4, 8, 12, 16, 1, 5, 9, 13, 17});
  CHECK(set(r, R"({"su": 1})") == iota(12, 19));
  CHECK(set(r, R"({"leaf": 5})") == Hosts{13, 17});  // su1.rail1: SU s, rail r is leaf 4s + r
  // Servers: su<s>.node<n> is node 3s + n (3 slots per SU).
  CHECK(set(r, R"({"node": 3})") == iota(12, 15));  // su1.node0
  CHECK(set(r, R"({"node": [1, 2]})") == iota(4, 11));
  CHECK(error(r, R"({"node": 5})") ==
        "x.node: 5 is out of range (expected a node from 0 to 4, or [first, last])");
}

TEST_CASE("host sets: the UFM only where a list names it", "[quick][host_set]") {
  const Topology r = rail();
  CHECK(set(r, R"("all")") == iota(0, 19));
  CHECK(set(r, "20") == iota(0, 19));
  CHECK(error(r, "21").starts_with("x: 21 is out of range (expected a count from 1 to 20"));
  CHECK(set(r, R"({"range": [18, 20]})") == Hosts{18, 19});
  CHECK(set(r, R"({"su": [0, 1]})") == iota(0, 19));
  CHECK(set(r, R"({"except": {"rail": [1, 3]}})") == Hosts{0, 4, 8, 12, 16});
  CHECK(set(r, R"(["ufm", 0])") == Hosts{20, 0});
  CHECK(set(r, R"({"union": [{"su": 1}, ["ufm"]]})") == Hosts{12, 13, 14, 15, 16, 17, 18, 19, 20});
}

TEST_CASE("host sets: union keeps its members' order; except keeps the base's",
          "[quick][host_set]") {
  const Topology t = k4();
  CHECK(set(t, R"({"union": [{"pod": 3}, [0], {"range": [5, 6]}]})") ==
        Hosts{12, 13, 14, 15, 0, 5, 6});
  CHECK(set(t, R"({"of": ["pod2.leaf0.h1", 3, 14, 1], "except": {"pod": 0}})") == Hosts{9, 14});
  CHECK(set(t, R"({"except": {"range": [2, 13]}})") == Hosts{0, 1, 14, 15});
  // `except` may name hosts the base does not hold.
  CHECK(set(t, R"({"of": {"leaf": 0}, "except": {"pod": [1, 3]}})") == Hosts{0, 1});
  CHECK(set(t, R"({"of": {"pod": 1}})") == Hosts{4, 5, 6, 7});
}

TEST_CASE("host sets: a count drawn at random, a partial Fisher-Yates shuffle in draw order",
          "[quick][host_set]") {
  const Topology t = k4();
  RngStream rng(7, "traffic[3]");
  const Hosts drawn = set(t, R"({"count": 5, "of": {"pod": [1, 2]}})", {}, &rng);
  // The documented draw: pool = hosts 4 … 11; for k = 0 … 4, swap pool[k]
  // with pool[k + uniform(8 - k)] and take pool[k].
  RngStream again(7, "traffic[3]");
  Hosts pool = iota(4, 11);
  for (size_t k = 0; k < 5; ++k) std::swap(pool[k], pool[k + again.uniform(8 - k)]);
  pool.resize(5);
  CHECK(drawn == pool);
  // Deterministic: same seed and item, same draw; the rest of the stream
  // is where the item's own draws (jitter, permutation) continue.
  CHECK(rng.next_u64() == again.next_u64());
  // Another seed, another draw (for this seed pair).
  RngStream other(8, "traffic[3]");
  CHECK(set(t, R"({"count": 5, "of": {"pod": [1, 2]}})", {}, &other) != drawn);
  // A draw of the whole pool is a permutation of it.
  RngStream all(7, "traffic[3]");
  Hosts perm = set(t, R"({"count": 16})", {}, &all);
  std::sort(perm.begin(), perm.end());
  CHECK(perm == iota(0, 15));
  // Nested draws are made in evaluation order: the union's first member
  // first, so it equals a draw of its own from a fresh stream.
  RngStream n1(7, "traffic[3]"), n2(7, "traffic[3]");
  const Hosts two =
      set(t, R"({"union": [{"count": 5, "of": {"pod": [1, 2]}}, {"count": 1}]})", {}, &n1);
  CHECK(Hosts(two.begin(), two.begin() + 5) ==
        set(t, R"({"count": 5, "of": {"pod": [1, 2]}})", {}, &n2));
}

TEST_CASE("host sets: a draw does not depend on the other traffic items", "[quick][host_set]") {
  const auto ranks = [](const std::string& first_item) {
    const std::string text =
        R"({"name": "t", "seed": 3, "topology": {"kind": "fat_tree", "k": 4}, "traffic": [)" +
        first_item +
        R"(, {"kind": "collective", "op": "all_gather", "size": "64KiB",
               "ranks": {"count": 4, "of": {"pod": [2, 3]}}}]})";
    return load_scenario_text(text, "t", {}).collectives.at(0).ranks;
  };
  const Hosts a = ranks(R"({"kind": "incast", "dst": 0, "size": 1, "senders": 3})");
  const Hosts b =
      ranks(R"({"kind": "incast", "dst": 0, "size": 1, "jitter": "1us", "senders": {"count": 6}})");
  CHECK(a == b);
  CHECK(a.size() == 4);
  for (uint32_t h : a) CHECK((h >= 8 && h <= 15));
  // The key's own stream, seeded by the first value of traffic[1]'s (the
  // item's stream, as for flows) without advancing it.
  RngStream item(3, "traffic[1]");
  RngStream rng(item.next_u64(), "ranks");
  const Topology t = k4();
  CHECK(a == set(t, R"({"count": 4, "of": {"pod": [2, 3]}})", {}, &rng));
}

TEST_CASE("host sets: the resolved scenario of a drawn set reproduces the item's other draws",
          "[quick][host_set]") {
  // The resolved scenario holds the drawn senders as a list, which draws
  // nothing: the jitter drawn after the set must be the same either way.
  const Scenario drawn = load_scenario_text(
      R"({"name": "t", "seed": 5, "topology": {"kind": "fat_tree", "k": 4}, "traffic": [
          {"kind": "incast", "dst": 0, "size": 1, "jitter": "10us", "senders": {"count": 5}}]})",
      "t", {});
  const Scenario again = load_scenario_text(drawn.resolved_json, "t", {});
  REQUIRE(drawn.flows.size() == 5);
  REQUIRE(again.flows.size() == 5);
  for (size_t i = 0; i < 5; ++i) {
    CHECK(again.flows[i].src == drawn.flows[i].src);
    CHECK(again.flows[i].start == drawn.flows[i].start);
  }
  CHECK(again.resolved_json == drawn.resolved_json);
}

TEST_CASE("host sets: bad sets name the path, the value and what was expected",
          "[quick][host_set]") {
  const Topology t = k4();
  const Topology r = rail();
  RngStream rng(1, "x");
  CHECK(error(t, R"({"rail": 0})") ==
        "x.rail: this topology has no rails (expected a group it has: leaf, pod)");
  CHECK(error(r, R"({"pod": 0})") ==
        "x.pod: this topology has no pods (expected a group it has: leaf, rail, su, node)");
  CHECK(error(t, R"({"leaf": 8})") ==
        "x.leaf: 8 is out of range (expected a leaf from 0 to 7, or [first, last])");
  CHECK(error(t, R"({"pod": [1, 4]})") ==
        "x.pod[1]: 4 is out of range (expected a pod from 0 to 3, or [first, last])");
  CHECK(error(t, R"({"pod": [2, 1]})") ==
        "x.pod: [2,1] is backwards (expected [first, last] with first <= last)");
  CHECK(error(t, R"({"range": [3, 16]})") ==
        "x.range[1]: 16 is not a host index (expected 0 to 15)");
  CHECK(error(t, R"({"range": [3]})").starts_with("x.range: [3] is not a range"));
  CHECK(error(t, R"({"lief": 3})") == R"(x.lief: unknown key (did you mean "leaf"?))");
  CHECK(error(t, R"({"hosts": 3})") ==
        "x.hosts: unknown key (expected one of: count, except, leaf, node, of, pod, rail, range, "
        "su, union)");
  CHECK(error(t, R"({"leaf": 0, "except": [1]})")
            .starts_with(R"(x: {"except":[1],"leaf":0} mixes "leaf" with other keys)"));
  CHECK(error(t, "{}").starts_with("x: {} is an empty set object"));
  CHECK(error(t, R"(["pod0.leaf0.h1", 1])") ==
        R"(x[1]: 1 is listed twice (expected distinct hosts))");
  CHECK(
      error(t, R"({"union": [{"leaf": 0}, {"pod": 0}]})") ==
      R"(x.union[1]: {"pod":0} holds "pod0.leaf0.h0", which an earlier member holds too (expected disjoint sets))");
  CHECK(error(t, R"({"except": "all"})", HostSetRules::at_least(2)) ==
        R"(x: {"except":"all"} has 0 host(s) (expected a host set of at least 2 hosts))");
  CHECK(error(t, R"({"count": 5, "of": {"leaf": 0}})", {}, &rng) ==
        "x.count: 5 is out of range: the set it draws from has 2 host(s) (expected a count from 1 "
        "to 2)");
  CHECK(error(t, R"({"count": 1})").starts_with("x.count: 1 asks for a random draw"));
  CHECK(error(t, R"("some")").starts_with(R"(x: "some" is not a host set (expected "all")"));
  CHECK(error(t, R"(["pod9"])").starts_with(R"(x[0]: "pod9" is not a host)"));
  // The dst of an incast, inside its senders.
  const HostSetRules no_dst = HostSetRules::senders(1, 4);
  CHECK(error(t, R"([1, 4])", no_dst) == "x[1]: 4 is the dst (expected hosts other than dst)");
  CHECK(
      error(t, R"({"pod": 1})", no_dst) ==
      R"(x: {"pod":1} holds "pod1.leaf0.h0", the dst (expected hosts other than the dst: leave it out with {"of": ..., "except": ["pod1.leaf0.h0"]}))");
  CHECK(error(t, R"({"count": 1, "of": {"pod": 1}})", no_dst, &rng)
            .starts_with(
                R"(x: {"count":1,"of":{"pod":1}} draws from a set holding "pod1.leaf0.h0")"));
  CHECK(set(t, R"({"of": {"pod": 1}, "except": [4]})", no_dst) == Hosts{5, 6, 7});
  CHECK(set(t, R"({"except": {"pod": [0, 2]}})", no_dst) == Hosts{12, 13, 14, 15});
}

TEST_CASE("host sets: a static route's dst is one host or a set", "[quick][host_set]") {
  const auto dsts = [](const std::string& dst) {
    const std::string text =
        R"({"name": "t", "topology": {"kind": "fat_tree", "leaves": 4, "spines": 2,
              "hosts_per_leaf": 2, "routes": [{"at": "spine0", "dst": )" +
        dst + R"(, "via": ["leaf1"]}]}, "traffic": []})";
    Hosts out;
    for (const StaticRoute& r : load_scenario_text(text, "t", {}).static_routes) {
      out.push_back(r.dst);
    }
    return out;
  };
  CHECK(dsts("3") == Hosts{3});  // a number is a host index here, not a count
  CHECK(dsts(R"("leaf1.h0")") == Hosts{2});
  CHECK(dsts(R"({"leaf": 1})") == Hosts{2, 3});
  CHECK(dsts(R"([3, "leaf1.h0"])") == Hosts{3, 2});
}
