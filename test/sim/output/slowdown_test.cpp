// Slowdown statistics (sim/output/slowdown.h) against a hand-computed
// example: nearest-rank percentiles, per traffic item, per size bucket with
// the edges' own sizes in the bucket above them.
#include "sim/output/slowdown.h"

#include "test/support/catch_units.h"

using namespace rdmasim;

namespace {

FlowResult flow(uint32_t item, int64_t bytes, int64_t fct_ps, int64_t ideal_ps, bool done = true) {
  FlowResult f;
  f.item = item;
  f.bytes = bytes;
  f.first_tx = Time::ps(1000);
  f.finish = Time::ps(1000 + fct_ps);
  f.ideal_fct = Time::ps(ideal_ps);
  f.done = done;
  f.started = true;
  return f;
}

}  // namespace

TEST_CASE("nearest-rank percentiles", "[quick][slowdown]") {
  const std::vector<double> v = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  // ceil(p/100 * 10)-th smallest.
  CHECK(nearest_rank(v, 50) == 5);
  CHECK(nearest_rank(v, 95) == 10);
  CHECK(nearest_rank(v, 99) == 10);
  CHECK(nearest_rank(v, 10) == 1);
  CHECK(nearest_rank(v, 11) == 2);
  CHECK(nearest_rank(v, 0) == 1);
  CHECK(nearest_rank(std::vector<double>{}, 50) == 0);
  std::vector<double> hundred;
  for (int i = 1; i <= 100; ++i) hundred.push_back(i);
  CHECK(nearest_rank(hundred, 95) == 95);
  CHECK(nearest_rank(hundred, 99) == 99);
}

TEST_CASE("slowdown overall, per item and per size bucket", "[quick][slowdown]") {
  // Slowdowns chosen as exact binary fractions: FCT = ideal x slowdown.
  const std::vector<FlowResult> flows = {
      flow(0, 100, 4000, 1000),      // 4    <10KB
      flow(0, 9999, 1000, 1000),     // 1    <10KB
      flow(0, 10000, 2000, 1000),    // 2    10KB-100KB (an edge goes above)
      flow(1, 99999, 3000, 2000),    // 1.5  10KB-100KB
      flow(1, 100000, 5000, 1000),   // 5    100KB-1MB
      flow(1, 1000000, 8000, 1000),  // 8    >=1MB
      flow(1, 5000000, 2500, 2000),  // 1.25 >=1MB
      flow(2, 50, 0, 1000, false),   // not done: left out
  };
  const std::vector<Bytes> edges = {Bytes::kb(10), Bytes::kb(100), Bytes::mb(1)};
  const SlowdownSummary s = summarize_slowdown(flows, 3, edges);
  // Overall: sorted 1, 1.25, 1.5, 2, 4, 5, 8 (7 values): p50 = 4th, p95 = p99 = 7th.
  CHECK(s.overall.count == 7);
  CHECK(s.overall.p50 == 2.0);
  CHECK(s.overall.p95 == 8.0);
  CHECK(s.overall.p99 == 8.0);
  CHECK(s.overall.max == 8.0);
  CHECK(s.overall.mean == Approx((1 + 1.25 + 1.5 + 2 + 4 + 5 + 8) / 7.0));
  REQUIRE(s.by_item.size() == 3);
  // Item 0: 1, 2, 4: p50 = 2nd.
  CHECK(s.by_item[0].count == 3);
  CHECK(s.by_item[0].p50 == 2.0);
  CHECK(s.by_item[0].p99 == 4.0);
  // Item 1: 1.25, 1.5, 5, 8: p50 = 2nd, p95 = 4th.
  CHECK(s.by_item[1].count == 4);
  CHECK(s.by_item[1].p50 == 1.5);
  CHECK(s.by_item[1].p95 == 8.0);
  CHECK(s.by_item[2].count == 0);
  REQUIRE(s.by_size.size() == 4);
  CHECK(s.by_size[0].label == "<10KB");
  CHECK(s.by_size[1].label == "10KB-100KB");
  CHECK(s.by_size[2].label == "100KB-1MB");
  CHECK(s.by_size[3].label == ">=1MB");
  CHECK(s.by_size[0].min_bytes == 0);
  CHECK(s.by_size[1].min_bytes == 10000);
  CHECK(s.by_size[1].max_bytes == 100000);
  CHECK(s.by_size[3].max_bytes == -1);
  CHECK(s.by_size[0].stats.count == 2);
  CHECK(s.by_size[0].stats.p50 == 1.0);
  CHECK(s.by_size[0].stats.p95 == 4.0);
  CHECK(s.by_size[1].stats.count == 2);
  CHECK(s.by_size[1].stats.p50 == 1.5);
  CHECK(s.by_size[1].stats.p99 == 2.0);
  CHECK(s.by_size[2].stats.count == 1);
  CHECK(s.by_size[2].stats.p50 == 5.0);
  CHECK(s.by_size[3].stats.count == 2);
  CHECK(s.by_size[3].stats.p50 == 1.25);
  CHECK(s.by_size[3].stats.p99 == 8.0);

  // Other edges: binary and odd sizes name themselves shortest; no edges is
  // one bucket.
  CHECK(summarize_slowdown(flows, 3, std::vector<Bytes>{Bytes(1500), Bytes::kib(4)})
            .by_size[1]
            .label == "1500B-4KiB");
  const SlowdownSummary one = summarize_slowdown(flows, 3, {});
  REQUIRE(one.by_size.size() == 1);
  CHECK(one.by_size[0].label == "all");
  CHECK(one.by_size[0].stats.count == 7);
}
