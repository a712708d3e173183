#include "models/switch/ecn_marker.h"

#include <vector>

#include "models/switch/switch.h"
#include "test/support/burst.h"
#include "test/support/catch_units.h"

using namespace rdmasim;
using rdmasim::testing::Burst;

TEST_CASE("ECN marks at enqueue and at dequeue follow the queue each point sees",
          "[quick][switch][ecn]") {
  // With kmin = kmax = K, RED is a step: a packet is marked exactly when the
  // queue it sees (the MMU's count, itself excluded) exceeds K, and nothing
  // is drawn. The burst's queue (test/support/burst.h) grows as the packets
  // arrive, so a packet sees a short queue when it joins and a long one when
  // it leaves: the two points mark different packets.
  const EcnPoint point = GENERATE(EcnPoint::kEnqueue, EcnPoint::kDequeue);
  const uint32_t pipeline = GENERATE(0u, 3u);
  SwitchConfig sc;
  sc.ecn.enabled = true;
  sc.ecn_point = point;
  sc.ecn.kmin = sc.ecn.kmax = Bytes(Burst::charged() * 11 / 2);  // 5.5 packets
  sc.ecn.pmax = 0.5;
  Burst s(sc, 16, pipeline);
  // Every fifth packet is not ECN-capable: never marked, never reported.
  for (uint32_t i = 0; i < s.n; ++i) s.ecn.push_back(i % 5 == 4 ? 0 : 2);
  std::vector<std::pair<int64_t, bool>> probed;
  s.sw->ecn_probe.attach([&](int64_t q, bool m) { probed.emplace_back(q, m); });
  s.run();
  REQUIRE(s.b->received().size() == s.n);

  const int64_t k = sc.ecn.kmax.count();
  std::vector<std::pair<int64_t, bool>> expected_probe;
  uint64_t marks = 0;
  for (const testing::TestHost::Received& r : s.b->received()) {
    const uint32_t i = r.packet.psn;
    INFO("packet " << i);
    if (s.ecn[i] == 0) {
      CHECK(r.packet.ecn == 0);
      continue;
    }
    const int64_t q =
        (point == EcnPoint::kEnqueue ? s.charged_at_enqueue(i) : s.charged_at_dequeue(i)) *
        Burst::charged();
    const bool marked = q > k;
    CHECK(r.packet.ecn == (marked ? 3 : 2));  // CE, or ECT(0) as sent
    expected_probe.emplace_back(q, marked);
    marks += marked ? 1 : 0;
  }
  CHECK(probed == expected_probe);  // one report per ECT packet, in order
  CHECK(marks > 0);
  CHECK(marks < 13);  // not every ECT packet
  CHECK(s.sw->counters().ecn_marked == marks);
  CHECK(s.sw->queue_counters(s.cb.b_port, 3).ecn_marked == marks);
  CHECK(s.sw->queue_counters(s.ca.b_port, 3).ecn_marked == 0);
  REQUIRE(s.sw->ecn_marker() != nullptr);
  CHECK(s.sw->ecn_marker()->marked(s.cb.b_port, 3) == marks);
  // Every port, whatever its rate (400 and 100 Gb/s here), has the
  // configured curve.
  for (const uint32_t port : {s.ca.b_port, s.cb.b_port}) {
    const RedThresholds& r = s.sw->ecn_marker()->thresholds(port);
    CHECK(r.kmin == k);
    CHECK(r.kmax == k);
    CHECK(r.pmax == 0.5);
  }
}

TEST_CASE("ECN marking at the two points marks the packets the formulas say",
          "[quick][switch][ecn]") {
  // The queue each packet sees, and so which are marked, written out for the
  // burst with no pipeline: at enqueue packet i finds i - ceil(i/4) packets,
  // at dequeue packet j leaves min(4j, 15) - j behind. Marked when > 5.5.
  const std::vector<uint32_t> at_enqueue = {8, 9, 10, 11, 12, 13, 14, 15};
  const std::vector<uint32_t> at_dequeue = {2, 3, 4, 5, 6, 7, 8, 9};
  for (const EcnPoint point : {EcnPoint::kEnqueue, EcnPoint::kDequeue}) {
    SwitchConfig sc;
    sc.ecn.enabled = true;
    sc.ecn_point = point;
    sc.ecn.kmin = sc.ecn.kmax = Bytes(Burst::charged() * 11 / 2);
    Burst s(sc);
    s.ecn.assign(s.n, 1);  // ECT(1)
    s.run();
    std::vector<uint32_t> marked;
    for (const testing::TestHost::Received& r : s.b->received()) {
      if (r.packet.ecn == 3) marked.push_back(r.packet.psn);
    }
    CHECK(marked == (point == EcnPoint::kEnqueue ? at_enqueue : at_dequeue));
  }
}

TEST_CASE("ECN marking is only on the configured priorities", "[quick][switch][ecn]") {
  SwitchConfig sc;
  sc.ecn.enabled = true;
  sc.ecn.kmin = sc.ecn.kmax = Bytes(0);  // mark whatever finds a queue
  sc.ecn_mask = 1 << 5;                  // not the burst's priority 3
  Burst s(sc);
  s.ecn.assign(s.n, 2);
  s.run();
  for (const testing::TestHost::Received& r : s.b->received()) CHECK(r.packet.ecn == 2);
  CHECK(s.sw->counters().ecn_marked == 0);
}

TEST_CASE("ECN thresholds keyed by link rate: each port gets its rate's entry",
          "[quick][switch][ecn]") {
  EcnConfig e;
  e.kmin = Bytes::kb(5);
  e.kmax = Bytes::kb(200);
  e.pmax = 0.01;
  e.by_rate.push_back({BitRate::gbps(100), Bytes::kb(400), Bytes::kb(1600), 0.2});
  e.by_rate.push_back({BitRate::gbps(400), Bytes::kb(1600), Bytes::kb(6400), 0.2});
  const RedThresholds r100 = EcnMarker::red_for(e, BitRate::gbps(100));
  CHECK(r100.kmin == 400'000);
  CHECK(r100.kmax == 1'600'000);
  CHECK(r100.pmax == 0.2);
  const RedThresholds r400 = EcnMarker::red_for(e, BitRate::gbps(400));
  CHECK(r400.kmin == 1'600'000);
  CHECK(r400.kmax == 6'400'000);
  // A rate with no entry keeps the shared thresholds.
  const RedThresholds r25 = EcnMarker::red_for(e, BitRate::gbps(25));
  CHECK(r25.kmin == 5'000);
  CHECK(r25.kmax == 200'000);
  CHECK(r25.pmax == 0.01);
}
