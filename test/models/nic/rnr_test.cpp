// Receive queues and RNR (IBA Vol 1 §9.7.5.2.8): a SEND whose first packet
// finds no posted receive WQE gets an RNR NAK carrying the responder's RNR
// timer; the requester waits that long and resends, up to rnr_retry times (7:
// forever).
#include <vector>

#include "models/nic/ib_timers.h"
#include "test/models/nic/nic_fixture.h"
#include "test/support/catch_units.h"

using namespace rdmasim;
using namespace rdmasim::testing;

TEST_CASE("the RNR timer encoding follows IBA table 45", "[quick][nic][rnr]") {
  CHECK(rnr_timer(0) == Time::us(655'360));
  CHECK(rnr_timer(1) == Time::us(10));
  CHECK(rnr_timer(12) == Time::us(640));
  CHECK(rnr_timer(14) == Time::us(1'280));
  CHECK(rnr_timer(31) == Time::us(491'520));
  CHECK(ib_ack_timeout(0) == Time::infinite());
  CHECK(ib_ack_timeout(1) == Time::ns(8192));
  CHECK(ib_ack_timeout(14) == Time::ps(67'108'864'000));
}

TEST_CASE("a SEND consumes a receive WQE; WRITE does not", "[quick][nic][rnr]") {
  NicConfig cfg;
  cfg.receive_queue_depth = 2;
  cfg.rnr_retry = 0;
  Pair p(cfg);
  p.sim.setup();
  p.a.post(p.qa, WorkRequest{1, Verb::kSend, 10'000});
  p.a.post(p.qa, WorkRequest{2, Verb::kWrite, 10'000});
  p.a.post(p.qa, WorkRequest{3, Verb::kSend, 10});
  p.sim.run();
  REQUIRE(p.log.sent.size() == 3);
  for (const Completion& c : p.log.sent) CHECK(c.status == WcStatus::kSuccess);
  CHECK(p.b.receives_available(p.qb) == 0);
  CHECK(p.b.counters().rnr_naks_sent == 0);
  // A third SEND finds the receive queue empty; with rnr_retry 0 the first
  // RNR NAK ends the QP.
  p.a.post(p.qa, WorkRequest{4, Verb::kSend, 10});
  p.sim.run();
  REQUIRE(p.log.sent.size() == 4);
  CHECK(p.log.sent[3].status == WcStatus::kRnrRetryExceeded);
  CHECK(p.b.counters().rnr_naks_sent == 1);
  CHECK(p.b.counters().payload_bytes_delivered == 20'010);
}

TEST_CASE("RNR retries wait the RNR timer until a receive is posted", "[quick][nic][rnr]") {
  const int code = GENERATE(1, 3, 13);  // 10 us, 30 us, 960 us
  NicConfig cfg;
  cfg.receive_queue_depth = 0;
  cfg.receive_replenish = Time::us(100);  // the first receive appears at 100 us
  cfg.min_rnr_timer = code;
  Pair p(cfg);
  p.sim.setup();
  p.a.post(p.qa, WorkRequest{1, Verb::kSend, 4096});
  p.sim.run();

  // Each attempt: the SEND ONLY (4178 bytes) crosses, an RNR NAK (86 bytes)
  // returns, the requester waits the timer. The first attempt to arrive at
  // or after 100 us is accepted.
  const Time send = Bytes(4178) / p.rate;
  const Time ack = Bytes(86) / p.rate;
  Time start = Time::zero();
  int naks = 0;
  while (start + send + p.delay < Time::us(100)) {
    start = start + send + p.delay + ack + p.delay + rnr_timer(code);
    ++naks;
  }
  REQUIRE(p.log.sent.size() == 1);
  CHECK(p.log.sent[0].status == WcStatus::kSuccess);
  CHECK(p.b.counters().rnr_naks_sent == static_cast<uint64_t>(naks));
  CHECK(p.log.sent[0].completed == start + send + p.delay + ack + p.delay);
  CHECK(p.a.counters().retransmitted_packets == static_cast<uint64_t>(naks));
  CHECK(p.b.counters().payload_bytes_delivered == 4096);
}

TEST_CASE("rnr_retry RNR NAKs without progress put the QP in error", "[quick][nic][rnr]") {
  const int rnr_retry = GENERATE(0, 2, 6);
  NicConfig cfg;
  cfg.receive_queue_depth = 0;
  cfg.min_rnr_timer = 1;  // 10 us
  cfg.rnr_retry = rnr_retry;
  Pair p(cfg);
  p.sim.setup();
  p.a.post(p.qa, WorkRequest{1, Verb::kSend, 5000});  // SEND FIRST + LAST
  p.sim.run();
  const Time rtt = Bytes(4178) / p.rate + p.delay + Bytes(86) / p.rate + p.delay;
  REQUIRE(p.log.sent.size() == 1);
  CHECK(p.log.sent[0].status == WcStatus::kRnrRetryExceeded);
  // rnr_retry + 1 RNR NAKs; the last one arrives after rnr_retry waits.
  CHECK(p.b.counters().rnr_naks_sent == static_cast<uint64_t>(rnr_retry + 1));
  CHECK(p.log.sent[0].completed == rtt * (rnr_retry + 1) + rnr_timer(1) * rnr_retry);
  // The SEND LAST behind each refused FIRST is dropped without a NAK.
  CHECK(p.b.counters().naks_sent == 0);
}

TEST_CASE("rnr_retry 7 retries forever", "[quick][nic][rnr]") {
  NicConfig cfg;
  cfg.receive_queue_depth = 0;
  cfg.min_rnr_timer = 1;
  Pair p(cfg);
  p.sim.setup();
  p.a.post(p.qa, WorkRequest{1, Verb::kSend, 100});
  p.sim.run(Time::ms(1));
  CHECK(p.log.sent.empty());
  CHECK(p.b.counters().rnr_naks_sent > 50);
  // Receives posted by the application let it through.
  p.b.post_receives(p.qb, 1);
  p.sim.run();
  REQUIRE(p.log.sent.size() == 1);
  CHECK(p.log.sent[0].status == WcStatus::kSuccess);
}

TEST_CASE("selective repeat: RNR NAK and retry deliver the SEND", "[quick][nic][rnr]") {
  NicConfig cfg;
  cfg.loss_recovery = LossRecovery::kSelectiveRepeat;
  cfg.receive_queue_depth = 0;
  cfg.receive_replenish = Time::us(50);
  cfg.min_rnr_timer = 1;
  Pair p(cfg);
  p.sim.setup();
  p.a.post(p.qa, WorkRequest{1, Verb::kSend, 20 * 4096});
  p.sim.run();
  REQUIRE(p.log.sent.size() == 1);
  CHECK(p.log.sent[0].status == WcStatus::kSuccess);
  CHECK(p.b.counters().rnr_naks_sent > 0);
  REQUIRE(p.log.received.size() == 1);
  CHECK(p.log.received[0].bytes == 20 * 4096);
}
