// Traffic patterns (models/traffic/patterns.h): incast, permutations (shift,
// random derangement, across groups) and all-to-all make exactly the flows
// their definitions say; random ones are deterministic per stream.
#include "models/traffic/patterns.h"
#include "test/support/flow_common.h"

#include <catch2/catch.hpp>
#include <map>
#include <numeric>
#include <set>

using namespace rdmasim;

namespace {

std::vector<uint32_t> iota_hosts(uint32_t n, uint32_t first = 0) {
  std::vector<uint32_t> v(n);
  std::iota(v.begin(), v.end(), first);
  return v;
}

bool is_permutation_of_iota(const std::vector<uint32_t>& perm) {
  std::vector<uint32_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  return sorted == iota_hosts(static_cast<uint32_t>(perm.size()));
}

}  // namespace

TEST_CASE("incast: one flow per sender, all to dst", "[quick][traffic][patterns]") {
  IncastParams p;
  p.senders = {7, 2, 5, 0, 9};
  p.dst = 3;
  p.bytes = 1 << 20;
  p.common = rdmasim::testing::common("incast[2]", Time::us(10), Verb::kSend);
  RngStream rng(1, "traffic[2]");
  const auto flows = incast(p, rng);
  REQUIRE(flows.size() == p.senders.size());
  for (size_t k = 0; k < flows.size(); ++k) {
    CHECK(flows[k].src == p.senders[k]);
    CHECK(flows[k].dst == 3);
    CHECK(flows[k].bytes == 1 << 20);
    CHECK(flows[k].start == Time::us(10));  // no jitter: all at start
    CHECK(flows[k].op == Verb::kSend);
    CHECK(flows[k].name == "incast[2].s" + std::to_string(k));
  }
  // Preconditions (the loader reports them with the JSON path first).
  p.senders = {1, 3};
  CHECK_THROWS_AS(incast(p, rng), std::invalid_argument);
  p.senders = {};
  CHECK_THROWS_AS(incast(p, rng), std::invalid_argument);
  p.senders = {1, 1};
  CHECK_THROWS_AS(incast(p, rng), std::invalid_argument);
}

TEST_CASE("incast jitter: starts uniform over [start, start + jitter]",
          "[quick][traffic][patterns]") {
  IncastParams p;
  p.senders = iota_hosts(4000, 1);
  p.dst = 0;
  p.bytes = 100;
  p.jitter = Time::ns(1);  // 1000 ps: 1001 equally likely offsets
  p.common = rdmasim::testing::common("x", Time::us(5), Verb::kWrite);
  RngStream rng(3, "traffic[0]");
  const auto flows = incast(p, rng);
  double sum = 0;
  Time lo = Time::infinite(), hi = Time::zero();
  for (const FlowSpec& f : flows) {
    lo = std::min(lo, f.start);
    hi = std::max(hi, f.start);
    sum += static_cast<double>((f.start - Time::us(5)).in_ps());
  }
  CHECK(lo >= Time::us(5));
  CHECK(hi <= Time::us(5) + Time::ns(1));
  // Discrete uniform on 0..1000: mean 500, sd sqrt((1001^2 - 1) / 12) ~ 289.
  const double sd = std::sqrt((1001.0 * 1001.0 - 1) / 12);
  CHECK(std::abs(sum / 4000 - 500) < 5 * sd / std::sqrt(4000.0));
  // The same stream state gives the same starts; another seed others.
  RngStream again(3, "traffic[0]"), other(4, "traffic[0]");
  CHECK(incast(p, again) == flows);
  CHECK_FALSE(incast(p, other) == flows);
}

TEST_CASE("shift permutation maps i to (i + k) mod n", "[quick][traffic][patterns]") {
  for (uint32_t n : {2u, 3u, 5u, 16u, 17u}) {
    for (uint32_t k = 1; k < n; ++k) {
      const auto perm = shift_permutation(n, k);
      REQUIRE(perm.size() == n);
      for (uint32_t i = 0; i < n; ++i) CHECK(perm[i] == (i + k) % n);
    }
    CHECK_THROWS_AS(shift_permutation(n, 0), std::invalid_argument);
    CHECK_THROWS_AS(shift_permutation(n, n), std::invalid_argument);
  }
  // Through permutation(): hosts[i] -> hosts[(i + k) mod n], no draws.
  PermutationParams p;
  p.hosts = {10, 11, 12, 13, 14, 15};
  p.pattern = PermutationParams::Pattern::kShift;
  p.shift = 4;
  p.bytes = 4096;
  p.common = rdmasim::testing::common("permutation[0]", Time::zero(), Verb::kWrite);
  RngStream rng(1, "traffic[0]");
  const auto flows = permutation(p, rng);
  REQUIRE(flows.size() == 6);
  for (uint32_t i = 0; i < 6; ++i) {
    CHECK(flows[i].src == p.hosts[i]);
    CHECK(flows[i].dst == p.hosts[(i + 4) % 6]);
    CHECK(flows[i].name == "permutation[0].s" + std::to_string(i));
  }
}

TEST_CASE("random derangement: a permutation without fixed points", "[quick][traffic][patterns]") {
  for (uint32_t n = 2; n <= 40; ++n) {
    for (uint64_t seed = 1; seed <= 20; ++seed) {
      RngStream rng(seed, "traffic[0]");
      const auto perm = random_cross_group_permutation(iota_hosts(n), rng);
      REQUIRE(perm.size() == n);
      CHECK(is_permutation_of_iota(perm));
      for (uint32_t i = 0; i < n; ++i) CHECK(perm[i] != i);
    }
  }
}

TEST_CASE("random derangement is uniform among derangements", "[traffic][patterns]") {
  // n = 4 has 9 derangements; each should come out 1/9 of the time: within
  // 5 binomial standard errors over 90,000 draws.
  RngStream rng(11, "uniform");
  std::map<std::vector<uint32_t>, int> counts;
  const int draws = 90'000;
  for (int i = 0; i < draws; ++i) ++counts[random_cross_group_permutation(iota_hosts(4), rng)];
  REQUIRE(counts.size() == 9);
  const double p = 1.0 / 9, sd = std::sqrt(draws * p * (1 - p));
  for (const auto& [perm, c] : counts) CHECK(std::abs(c - draws * p) < 5 * sd);
}

TEST_CASE("random permutation across groups: no flow stays in its group",
          "[quick][traffic][patterns]") {
  // Group sizes up to half of n (the limit at which it is still possible).
  const std::vector<std::vector<uint32_t>> layouts = {
      {4, 4, 4, 4}, {8, 4, 4}, {1, 2, 3, 6}, {5, 5}, {16, 16}, {2, 1, 1}, {3, 3, 3, 3, 3}};
  for (const auto& sizes : layouts) {
    std::vector<uint32_t> group;
    for (uint32_t g = 0; g < sizes.size(); ++g) group.insert(group.end(), sizes[g], g);
    for (uint64_t seed = 1; seed <= 50; ++seed) {
      RngStream rng(seed, "traffic[0]");
      const auto perm = random_cross_group_permutation(group, rng);
      REQUIRE(is_permutation_of_iota(perm));
      for (size_t i = 0; i < perm.size(); ++i) CHECK(group[perm[i]] != group[i]);
    }
  }
  // Impossible: a group of more than half.
  RngStream rng(1, "x");
  CHECK_THROWS_AS(random_cross_group_permutation({0, 0, 0, 1, 2}, rng), std::invalid_argument);
  CHECK_THROWS_AS(random_cross_group_permutation({0}, rng), std::invalid_argument);
}

TEST_CASE("random permutation across groups reaches every valid permutation",
          "[quick][traffic][patterns]") {
  // Groups {0,1} and {2,3}: the valid permutations send 0,1 to 2,3 and 2,3 to
  // 0,1 in either order: 4 of them.
  RngStream rng(5, "reach");
  std::set<std::vector<uint32_t>> seen;
  for (int i = 0; i < 400; ++i) seen.insert(random_cross_group_permutation({0, 0, 1, 1}, rng));
  CHECK(seen.size() == 4);
  // Three groups of 2: every valid permutation (there are 8) shows up.
  std::set<std::vector<uint32_t>> seen3;
  for (int i = 0; i < 4000; ++i)
    seen3.insert(random_cross_group_permutation({0, 0, 1, 1, 2, 2}, rng));
  std::vector<uint32_t> perm = iota_hosts(6);
  const std::vector<uint32_t> g = {0, 0, 1, 1, 2, 2};
  size_t valid = 0;
  do {
    bool ok = true;
    for (size_t i = 0; i < 6; ++i) ok = ok && g[perm[i]] != g[i];
    valid += ok ? 1 : 0;
  } while (std::next_permutation(perm.begin(), perm.end()));
  CHECK(valid == 80);
  CHECK(seen3.size() == valid);
}

TEST_CASE("random permutation through permutation(): hosts and groups",
          "[quick][traffic][patterns]") {
  PermutationParams p;
  p.hosts = {3, 9, 4, 20, 7, 1, 12, 8};
  p.group = {0, 0, 1, 1, 2, 2, 3, 3};
  p.bytes = 1000;
  p.common = rdmasim::testing::common("permutation[1]", Time::us(1), Verb::kWrite);
  RngStream rng(42, "traffic[1]");
  const auto flows = permutation(p, rng);
  REQUIRE(flows.size() == 8);
  std::map<uint32_t, size_t> pos;
  for (size_t k = 0; k < 8; ++k) pos[p.hosts[k]] = k;
  std::set<uint32_t> dsts;
  for (size_t k = 0; k < 8; ++k) {
    CHECK(flows[k].src == p.hosts[k]);
    CHECK(p.group[pos.at(flows[k].dst)] != p.group[k]);
    CHECK(flows[k].start == Time::us(1));
    dsts.insert(flows[k].dst);
  }
  CHECK(dsts.size() == 8);  // every host receives exactly one flow
  RngStream again(42, "traffic[1]"), other(43, "traffic[1]");
  CHECK(permutation(p, again) == flows);
  CHECK_FALSE(permutation(p, other) == flows);
}

TEST_CASE("all-to-all: n(n-1) flows, every ordered pair once, round by round",
          "[quick][traffic][patterns]") {
  for (uint32_t n : {2u, 3u, 8u, 13u}) {
    AllToAllParams p;
    p.hosts = iota_hosts(n, 100);
    p.bytes = 65536;
    p.stagger = Time::us(3);
    p.common = rdmasim::testing::common("all_to_all[0]", Time::us(10), Verb::kWrite);
    const auto flows = all_to_all(p);
    REQUIRE(flows.size() == n * (n - 1));
    std::set<std::pair<uint32_t, uint32_t>> pairs;
    for (size_t i = 0; i < flows.size(); ++i) {
      const FlowSpec& f = flows[i];
      CHECK(f.src != f.dst);
      pairs.insert({f.src, f.dst});
      // Round r = i / n + 1: (k + r) mod n, posted at start + (r - 1) stagger.
      const uint32_t r = static_cast<uint32_t>(i / n) + 1, k = static_cast<uint32_t>(i % n);
      CHECK(f.src == 100 + k);
      CHECK(f.dst == 100 + (k + r) % n);
      CHECK(f.start == Time::us(10) + Time::us(3) * (r - 1));
      CHECK(f.name == "all_to_all[0].s" + std::to_string(k) + ".d" + std::to_string((k + r) % n));
    }
    CHECK(pairs.size() == n * (n - 1));
  }
}
