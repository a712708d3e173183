// ECMP at the packet level: per-flow hashing keeps every packet of a flow on
// one path; per-packet spraying spreads one flow over all equal-cost ports.
#include "test/support/catch_units.h"
#include "test/support/run_helpers.h"

#include <algorithm>
#include <map>

using namespace rdmasim;
using namespace rdmasim::testing;

namespace {

// One flow from each of leaves 0..3 to leaf 4..7 of a two-tier tree whose
// leaves have four uplinks (one per spine).
const char* kTree = R"({
  "fabric": {"link": {"rate": "100Gbps", "delay": "1us"}},
  "topology": {"kind": "fat_tree", "leaves": 8, "spines": 4, "hosts_per_leaf": 4},
  "traffic": [
    {"kind": "flow", "src": "leaf0.h0", "dst": "leaf4.h0", "size": "4MB"},
    {"kind": "flow", "src": "leaf1.h0", "dst": "leaf5.h0", "size": "3MB"},
    {"kind": "flow", "src": "leaf2.h0", "dst": "leaf6.h0", "size": "2MB"},
    {"kind": "flow", "src": "leaf3.h0", "dst": "leaf7.h0", "size": "1MB"}
  ]
})";

// Payload bytes each source leaf sent up each of its uplinks.
std::map<std::string, std::vector<int64_t>> uplink_payload(const Ran& r) {
  std::map<std::string, std::vector<int64_t>> out;
  const Topology& t = r.scenario.topology;
  for (const LinkResult& l : r.result.links) {
    if (t.node(l.from).tier == Tier::kLeaf && t.node(l.to).tier == Tier::kSpine) {
      out[t.node(l.from).name].push_back(l.payload_bytes);
    }
  }
  return out;
}

}  // namespace

TEST_CASE("ECMP hashing keeps each flow on one path", "[quick][ecmp]") {
  for (int seed = 1; seed <= 5; ++seed) {
    LoadOptions o;
    o.overrides = {"seed=" + std::to_string(seed)};
    const Ran r = run_text(kTree, o);
    REQUIRE(r.result.status == RunStatus::kComplete);
    const auto up = uplink_payload(r);
    const int64_t sizes[4] = {4'000'000, 3'000'000, 2'000'000, 1'000'000};
    for (int leaf = 0; leaf < 4; ++leaf) {
      const auto& v = up.at("leaf" + std::to_string(leaf));
      int used = 0;
      for (int64_t b : v) {
        if (b > 0) {
          ++used;
          CHECK(b == sizes[leaf]);  // the whole flow, on one uplink
        }
      }
      CHECK(used == 1);
    }
  }
}

TEST_CASE("packet spraying spreads one flow over every equal-cost uplink", "[quick][ecmp]") {
  LoadOptions o;
  o.overrides = {"fabric.switch.ecmp.mode=spray", "fabric.nic.loss_recovery=selective_repeat"};
  const Ran r = run_text(kTree, o);
  REQUIRE(r.result.status == RunStatus::kComplete);
  const auto up = uplink_payload(r);
  const auto& v = up.at("leaf0");  // 4 MB = 977 packets over 4 uplinks
  int64_t total = 0;
  for (int64_t b : v) {
    total += b;
    // Each uplink gets a quarter, within 5 binomial standard deviations.
    const double n = 4e6 / 4096, p = 0.25;
    CHECK(std::abs(static_cast<double>(b) / 4096 - n * p) < 5 * std::sqrt(n * p * (1 - p)) + 1);
  }
  CHECK(total == 4'000'000);
}

TEST_CASE("spraying with selective repeat runs a colliding permutation at line rate", "[ecmp]") {
  // A shift permutation across pods of a k=4 fat-tree: per-flow ECMP puts two
  // flows on one core link for this seed, halving them; per-packet spraying
  // spreads every flow over all paths.
  const char* json = R"({
    "seed": 1,
    "fabric": {"link": {"rate": "100Gbps", "delay": "1us"}, "nic": {"loss_recovery": "selective_repeat"}},
    "topology": {"kind": "fat_tree", "k": 4},
    "traffic": [{"kind": "permutation", "pattern": "shift", "shift": 4, "size": "20MB"}]
  })";
  const double line = 100e9 * 4096.0 / 4178.0;  // after headers
  auto goodputs = [&](const Ran& r) {
    std::vector<double> g;
    for (const FlowResult& f : r.result.flows) g.push_back(f.bytes * 8.0 / f.fct().in_seconds());
    return g;
  };
  const Ran hashed = run_text(json);
  const auto gh = goodputs(hashed);
  CHECK(*std::min_element(gh.begin(), gh.end()) < 0.75 * line);  // ECMP collides

  // Per-packet routing fills the fabric: spraying, and adaptive routing
  // (least queued bytes per packet), which does at least as well.
  for (const char* mode : {"spray", "adaptive"}) {
    INFO("ecmp mode " << mode);
    LoadOptions o;
    o.overrides = {std::string("fabric.switch.ecmp.mode=") + mode};
    const Ran r = run_text(json, o);
    REQUIRE(r.result.status == RunStatus::kComplete);
    const auto g = goodputs(r);
    double mean = 0;
    for (double x : g) mean += x / g.size();
    CHECK(mean >= 0.95 * line);
    CHECK(*std::min_element(g.begin(), g.end()) >= 0.90 * line);
    CHECK(r.result.retransmissions == 0);  // reordering is not mistaken for loss
  }
}

TEST_CASE("one hash function in every switch polarises ECMP", "[ecmp]") {
  // In a three-tier tree, when every switch hashes alike, a flow's uplink
  // choice at the leaf predicts its choice at the aggregation switch, so
  // fewer core links carry traffic and flows collide more.
  const char* json = R"({
    "fabric": {"link": {"rate": "100Gbps", "delay": "1us"}},
    "topology": {"kind": "fat_tree", "k": 8},
    "traffic": [{"kind": "permutation", "pattern": "random", "across": "group", "size": "1MB"}]
  })";
  auto core_links_used = [](const Ran& r) {
    int n = 0;
    for (const LinkResult& l : r.result.links) {
      if (r.scenario.topology.node(l.to).tier == Tier::kCore && l.payload_bytes > 0) ++n;
    }
    return n;
  };
  LoadOptions same;
  same.overrides = {"fabric.switch.ecmp.per_switch_seed=false"};
  const Ran spread = run_text(json);
  const Ran polarised = run_text(json, same);
  CHECK(core_links_used(polarised) < core_links_used(spread));
}

TEST_CASE("a flow striped over several QPs spreads over several paths", "[quick][ecmp]") {
  // The same 8 MB flow on 1 QP takes one uplink; on 8 QPs (each with its own
  // UDP source port) it is spread over the leaf's uplinks by per-flow ECMP,
  // and completes when every part has.
  LoadOptions one, eight;
  one.overrides = {R"(traffic=[{"kind":"flow","src":"leaf0.h0","dst":"leaf4.h0","size":"8MB"}])"};
  eight.overrides = {
      R"(traffic=[{"kind":"flow","src":"leaf0.h0","dst":"leaf4.h0","size":"8MB","qps":8}])"};
  const Ran r1 = run_text(kTree, one);
  const Ran r8 = run_text(kTree, eight);
  REQUIRE(r8.result.status == RunStatus::kComplete);
  auto uplinks_used = [](const Ran& r) {
    int n = 0;
    int64_t total = 0;
    const auto up = uplink_payload(r);
    for (int64_t b : up.at("leaf0")) {
      n += b > 0 ? 1 : 0;
      total += b;
    }
    CHECK(total == 8'000'000);
    return n;
  };
  CHECK(uplinks_used(r1) == 1);
  CHECK(uplinks_used(r8) > 1);
  CHECK(r8.result.flows.size() == 1);
  CHECK(r8.result.flows[0].done);
}
