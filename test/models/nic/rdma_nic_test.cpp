#include "test/support/catch_units.h"

#include <vector>

#include "test/models/nic/nic_fixture.h"

using namespace rdmasim;
using namespace rdmasim::testing;

TEST_CASE("a WRITE completes after its wire time plus the ACK's return", "[quick][nic]") {
  Pair p;
  const int64_t size = 1 << 20;  // 1 MiB: 256 packets of 4096
  p.sim.setup();
  p.a.post(p.qa, WorkRequest{7, Verb::kWrite, size});
  p.sim.run();

  REQUIRE(p.log.sent.size() == 1);
  const Completion& c = p.log.sent[0];
  CHECK(c.wr_id == 7);
  CHECK(c.bytes == size);
  // 256 packets of 4096 + 82 bytes, plus a 16-byte RETH on the first; then one
  // propagation delay, then the 86-byte ACK of the last packet and its delay.
  const int64_t wire = 256 * (4096 + 82) + 16;
  const Time expected =
      Bytes(wire) / BitRate::gbps(100) + Time::us(1) + Bytes(86) / BitRate::gbps(100) + Time::us(1);
  CHECK(c.completed - c.first_tx == expected);
  CHECK(p.cable.a_to_b->counters().wire_bytes == wire);
  CHECK(p.b.counters().payload_bytes_delivered == size);
  CHECK(p.b.counters().out_of_sequence == 0);
  // ACK every packet by default.
  CHECK(p.b.counters().acks_sent == 256);
  // A plain WRITE consumes no receive WQE and completes only at the requester.
  CHECK(p.log.received.empty());
  CHECK(p.b.counters().messages_completed == 1);
  CHECK(p.sim.packet_pool().live() == 0);
}

TEST_CASE("ACK coalescing acknowledges every n packets and the last at once", "[quick][nic]") {
  NicConfig cfg;
  cfg.ack_interval = 16;
  Pair p(cfg);
  p.sim.setup();
  p.a.post(p.qa, WorkRequest{1, Verb::kWrite, 100 * 4096 + 5});  // 101 packets
  p.sim.run();
  // floor(100 / 16) = 6 coalesced ACKs before the last packet, plus the last.
  CHECK(p.b.counters().acks_sent == 7);
  CHECK(p.log.sent.size() == 1);
  CHECK(p.b.counters().payload_bytes_delivered == 100 * 4096 + 5);
}

TEST_CASE("SEND and WRITE messages on one QP complete in order", "[quick][nic]") {
  Pair p;
  p.sim.setup();
  p.a.post(p.qa, WorkRequest{1, Verb::kSend, 10'000});
  p.a.post(p.qa, WorkRequest{2, Verb::kWrite, 0});  // zero-length WRITE: one packet
  p.a.post(p.qa, WorkRequest{3, Verb::kSend, 4096});
  p.sim.run();
  REQUIRE(p.log.sent.size() == 3);
  CHECK(p.log.sent[0].wr_id == 1);
  CHECK(p.log.sent[1].wr_id == 2);
  CHECK(p.log.sent[2].wr_id == 3);
  CHECK(p.log.sent[0].completed <= p.log.sent[1].completed);
  // The responder completes the two SENDs; the WRITE raises no completion there.
  REQUIRE(p.log.received.size() == 2);
  CHECK(p.log.received[0].verb == Verb::kSend);
  CHECK(p.log.received[0].bytes == 10'000);
  CHECK(p.log.received[1].verb == Verb::kSend);
  CHECK(p.log.received[1].bytes == 4096);
  CHECK(p.b.counters().messages_completed == 3);
  // 3 + 1 + 1 packets.
  CHECK(p.a.counters().data_packets_sent == 5);
}

TEST_CASE("active QPs share the port round robin", "[quick][nic]") {
  Pair p;
  const uint32_t q2a = p.a.create_qp(&p.log);
  const uint32_t q2b = p.b.create_qp(&p.log);
  p.a.connect_qp(q2a, 1, q2b, 0x99);
  p.b.connect_qp(q2b, 0, q2a, 0x99);
  p.sim.setup();
  p.a.post(p.qa, WorkRequest{1, Verb::kWrite, 40 * 4096});
  p.a.post(q2a, WorkRequest{2, Verb::kWrite, 40 * 4096});
  p.sim.run();
  REQUIRE(p.log.sent.size() == 2);
  // Interleaved one packet each: the second QP finishes one packet time later.
  const Time one_packet = Bytes(4178) / BitRate::gbps(100);
  CHECK(p.log.sent[1].completed - p.log.sent[0].completed == one_packet);
}

TEST_CASE("packets carry the configured priority, PCP and DSCP", "[quick][nic]") {
  SECTION("defaults: data and ACK at priority 3 with DSCP 26, data ECT(0)") {
    Chain c;
    c.sim.setup();
    c.a.post(c.qa, WorkRequest{1, Verb::kWrite, 3 * 4096});
    c.sim.run();
    const auto data = c.from(0, PacketKind::kData);
    const auto acks = c.from(1, PacketKind::kAck);
    REQUIRE(data.size() == 3);
    REQUIRE(!acks.empty());
    for (const Seen& s : data) {
      CHECK(s.priority == 3);
      CHECK(s.pcp == 3);
      CHECK(s.dscp == 26);
      CHECK(s.ecn == 2);
    }
    for (const Seen& s : acks) {
      CHECK(s.pcp == 3);
      CHECK(s.dscp == 26);
      CHECK(s.ecn == 0);
    }
  }
  SECTION("configured") {
    NicConfig cfg;
    cfg.data_priority = 4;
    cfg.data_dscp = 34;
    cfg.ack_priority = 6;
    cfg.ack_dscp = 46;
    Chain c(cfg);
    c.sim.setup();
    c.a.post(c.qa, WorkRequest{1, Verb::kRead, 4096});
    c.sim.run();
    const auto req = c.from(0, PacketKind::kReadRequest);
    const auto resp = c.from(1, PacketKind::kData);
    REQUIRE(req.size() == 1);
    REQUIRE(resp.size() == 1);
    CHECK(req[0].pcp == 4);
    CHECK(req[0].dscp == 34);
    CHECK(resp[0].pcp == 4);
    CHECK(resp[0].dscp == 34);
    c.a.post(c.qa, WorkRequest{2, Verb::kWrite, 10});
    c.sim.run();
    const auto acks = c.from(1, PacketKind::kAck);
    REQUIRE(acks.size() == 1);
    CHECK(acks[0].pcp == 6);
    CHECK(acks[0].dscp == 46);
  }
}

TEST_CASE("many outstanding WQEs on one QP complete in order with exact bytes", "[quick][nic]") {
  Pair p;
  p.sim.setup();
  int64_t total = 0;
  for (uint64_t i = 0; i < 50; ++i) {
    const auto bytes = static_cast<int64_t>(1000 + 997 * i);
    total += bytes;
    p.a.post(p.qa, WorkRequest{i, i % 2 == 0 ? Verb::kWrite : Verb::kSend, bytes});
  }
  p.sim.run();
  REQUIRE(p.log.sent.size() == 50);
  for (uint64_t i = 0; i < 50; ++i) {
    CHECK(p.log.sent[i].wr_id == i);
    CHECK(p.log.sent[i].status == WcStatus::kSuccess);
  }
  CHECK(p.b.counters().payload_bytes_delivered == total);
  CHECK(p.a.counters().retransmitted_packets == 0);
  CHECK(p.sim.packet_pool().live() == 0);
}
