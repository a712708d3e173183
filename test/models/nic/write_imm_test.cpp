// RDMA WRITE with immediate (IBA §9.3.4, §9.7.5): the last packet of the
// message (WRITE Last with Immediate 0x09, or WRITE Only with Immediate 0x0B)
// carries 4 bytes of ImmDt; it consumes a receive WQE at the responder (an
// RNR NAK if none is posted) and raises a receive completion carrying the
// immediate value. A plain WRITE consumes no receive WQE and completes only
// at the requester.
#include <vector>

#include "models/nic/ib_timers.h"
#include "test/models/nic/nic_fixture.h"
#include "test/support/catch_units.h"

using namespace rdmasim;
using namespace rdmasim::testing;

namespace {

// Wire bytes of a RoCE v2 packet over IPv4 without VLAN: preamble+SFD 8,
// Ethernet 14, IPv4 20, UDP 8, BTH 12, ICRC 4, FCS 4, inter-frame gap 12.
constexpr uint32_t kBase = 82;
constexpr uint32_t kReth = 16;
constexpr uint32_t kImmDt = 4;
constexpr uint32_t kAck = kBase + 4;  // + AETH

}  // namespace

TEST_CASE("WRITE with immediate: ImmDt makes its last packet 4 bytes longer",
          "[quick][nic][write_imm]") {
  Chain c;
  c.sim.setup();
  const int64_t size = 2 * 4096 + 100;  // FIRST, MIDDLE, LAST
  c.a.post(c.qa, WorkRequest{1, Verb::kWrite, size});
  c.a.post(c.qa, WorkRequest{2, Verb::kWriteImm, size, 0xCAFEF00D});
  c.a.post(c.qa, WorkRequest{3, Verb::kWriteImm, 100, 42});  // ONLY
  c.a.post(c.qa, WorkRequest{4, Verb::kWrite, 100});
  c.sim.run();
  const auto data = c.from(0, PacketKind::kData);
  REQUIRE(data.size() == 8);
  const uint32_t expected_wire[8] = {
      4096 + kBase + kReth,         4096 + kBase, 100 + kBase,           // WRITE
      4096 + kBase + kReth,         4096 + kBase, 100 + kBase + kImmDt,  // WRITE with immediate
      100 + kBase + kReth + kImmDt,  // WRITE Only with Immediate
      100 + kBase + kReth,           // WRITE Only
  };
  const RcOpcode expected_op[8] = {
      RcOpcode::kWriteFirst,   RcOpcode::kWriteMiddle, RcOpcode::kWriteLast,
      RcOpcode::kWriteFirst,   RcOpcode::kWriteMiddle, RcOpcode::kWriteLastImm,
      RcOpcode::kWriteOnlyImm, RcOpcode::kWriteOnly,
  };
  for (size_t i = 0; i < 8; ++i) {
    INFO("packet " << i);
    CHECK(data[i].wire_bytes == expected_wire[i]);
    CHECK(data[i].opcode == static_cast<uint8_t>(expected_op[i]));
  }
  CHECK(data[5].wire_bytes - data[2].wire_bytes == kImmDt);
  CHECK(data[6].wire_bytes - data[7].wire_bytes == kImmDt);
  // The immediate value travels in the packet carrying ImmDt.
  CHECK(data[5].read_length == 0xCAFEF00D);  // Packet::imm_data shares the field
  CHECK(data[6].read_length == 42);
}

TEST_CASE("WRITE with immediate completes at both ends; a plain WRITE only at the requester",
          "[quick][nic][write_imm]") {
  NicConfig cfg;
  cfg.receive_queue_depth = 10;
  Pair p(cfg);
  p.sim.setup();
  p.a.post(p.qa, WorkRequest{1, Verb::kWrite, 10'000});
  p.a.post(p.qa, WorkRequest{2, Verb::kWriteImm, 10'000, 0xDEADBEEF});
  p.a.post(p.qa, WorkRequest{3, Verb::kSend, 5'000});
  p.a.post(p.qa, WorkRequest{4, Verb::kWriteImm, 0, 7});  // zero length: one WRITE Only Imm
  p.sim.run();
  REQUIRE(p.log.sent.size() == 4);
  for (const Completion& c : p.log.sent) CHECK(c.status == WcStatus::kSuccess);
  CHECK(p.log.sent[1].verb == Verb::kWriteImm);
  // Three receive WQEs consumed (the two WRITEs with immediate and the SEND),
  // three receive completions, in order; the plain WRITE raises none.
  CHECK(p.b.receives_available(p.qb) == 7);
  REQUIRE(p.log.received.size() == 3);
  CHECK(p.log.received[0].verb == Verb::kWriteImm);
  CHECK(p.log.received[0].bytes == 10'000);
  CHECK(p.log.received[0].imm == 0xDEADBEEF);
  CHECK(p.log.received[1].verb == Verb::kSend);
  CHECK(p.log.received[1].bytes == 5'000);
  CHECK(p.log.received[2].verb == Verb::kWriteImm);
  CHECK(p.log.received[2].bytes == 0);
  CHECK(p.log.received[2].imm == 7);
  CHECK(p.b.counters().messages_completed == 4);
  CHECK(p.b.counters().payload_bytes_delivered == 25'000);
}

TEST_CASE("WRITE with immediate: wire time plus the ACK's return, 4 bytes more than a WRITE",
          "[quick][nic][write_imm]") {
  Pair p;
  const int64_t size = 1 << 20;  // 256 packets of 4096
  p.sim.setup();
  p.a.post(p.qa, WorkRequest{9, Verb::kWriteImm, size, 123});
  p.sim.run();
  REQUIRE(p.log.sent.size() == 1);
  REQUIRE(p.log.received.size() == 1);
  // 256 packets of 4096 + 82 bytes, RETH on the first, ImmDt on the last.
  const int64_t wire = 256 * (4096 + kBase) + kReth + kImmDt;
  const Time arrival = Bytes(wire) / p.rate + p.delay;
  CHECK(p.cable.a_to_b->counters().wire_bytes == wire);
  CHECK(p.log.received[0].completed == arrival);
  CHECK(p.log.received[0].imm == 123);
  CHECK(p.log.received[0].bytes == size);
  CHECK(p.log.sent[0].completed == arrival + Bytes(kAck) / p.rate + p.delay);
}

TEST_CASE("WRITE with immediate without a receive WQE: RNR NAKs, retries from its last packet",
          "[quick][nic][write_imm][rnr]") {
  const int code = GENERATE(1, 3);  // RNR timer 10 us, 30 us
  NicConfig cfg;
  cfg.receive_queue_depth = 0;
  cfg.receive_replenish = Time::us(100);  // the first receive WQE appears at 100 us
  cfg.min_rnr_timer = code;
  Pair p(cfg);
  p.sim.setup();
  // 5000 bytes: WRITE First (4096, RETH) and WRITE Last with Immediate (904, ImmDt).
  p.a.post(p.qa, WorkRequest{1, Verb::kWriteImm, 5000, 0x1234});
  p.sim.run();

  // The First packet needs no receive WQE and is placed and acknowledged;
  // the Last finds none and is refused with an RNR NAK (IBA §9.7.5.2.8). The
  // requester waits the RNR timer and resends from the refused PSN: the Last
  // packet alone, until one arrives at or after 100 us.
  const Time first = Bytes(4096 + kBase + kReth) / p.rate;
  const Time last = Bytes(904 + kBase + kImmDt) / p.rate;
  const Time ack = Bytes(kAck) / p.rate;
  Time arrival = first + last + p.delay;
  int naks = 0;
  while (arrival < Time::us(100)) {
    arrival = arrival + ack + p.delay + rnr_timer(code) + last + p.delay;
    ++naks;
  }
  REQUIRE(naks > 0);
  CHECK(p.b.counters().rnr_naks_sent == static_cast<uint64_t>(naks));
  CHECK(p.a.counters().retransmitted_packets == static_cast<uint64_t>(naks));
  CHECK(p.a.counters().data_packets_sent == static_cast<uint64_t>(2 + naks));
  REQUIRE(p.log.sent.size() == 1);
  CHECK(p.log.sent[0].status == WcStatus::kSuccess);
  CHECK(p.log.sent[0].completed == arrival + ack + p.delay);
  REQUIRE(p.log.received.size() == 1);
  CHECK(p.log.received[0].completed == arrival);
  CHECK(p.log.received[0].bytes == 5000);
  CHECK(p.log.received[0].imm == 0x1234);
  CHECK(p.b.qp(p.qb).receives_consumed == 1);
  CHECK(p.b.counters().payload_bytes_delivered == 5000);  // the First once, the Last once
}

TEST_CASE("WRITE with immediate waits for a posted receive (selective repeat too)",
          "[quick][nic][write_imm][rnr]") {
  const LossRecovery lr = GENERATE(LossRecovery::kGoBackN, LossRecovery::kSelectiveRepeat);
  NicConfig cfg;
  cfg.loss_recovery = lr;
  cfg.receive_queue_depth = 0;
  cfg.min_rnr_timer = 1;  // 10 us; rnr_retry 7: forever
  Pair p(cfg);
  p.sim.setup();
  p.a.post(p.qa, WorkRequest{1, Verb::kWriteImm, 20 * 4096, 99});
  p.sim.run(Time::us(500));
  CHECK(p.log.sent.empty());
  CHECK(p.log.received.empty());
  const uint64_t naks = p.b.counters().rnr_naks_sent;
  CHECK(naks >= 10);  // about one per 10 us RNR wait plus a round trip
  // 19 packets placed, the last one refused every time.
  CHECK(p.b.counters().payload_bytes_delivered == 19 * 4096);
  p.b.post_receives(p.qb, 1);
  p.sim.run();
  REQUIRE(p.log.sent.size() == 1);
  CHECK(p.log.sent[0].status == WcStatus::kSuccess);
  REQUIRE(p.log.received.size() == 1);
  CHECK(p.log.received[0].imm == 99);
  CHECK(p.log.received[0].bytes == 20 * 4096);
  CHECK(p.b.receives_available(p.qb) == 0);
  CHECK(p.b.counters().payload_bytes_delivered == 20 * 4096);
}
