// RDMA READ (IBA Vol 1 §9.4.3, §9.7.5.1.3): one request with a RETH, the
// responses segmented at the path MTU with AETH on FIRST/LAST/ONLY, one PSN
// each, and the ORD/IRD limits.
#include <algorithm>
#include <vector>

#include "test/models/nic/nic_fixture.h"
#include "test/support/catch_units.h"

using namespace rdmasim;
using namespace rdmasim::testing;

namespace {

constexpr int64_t kHeaders =
    14 + 20 + 8 + 12 + 4 + 4 + 20;  // Eth IPv4 UDP BTH ICRC FCS, preamble+IFG

}  // namespace

TEST_CASE("a READ costs a request plus the responses' wire time", "[quick][nic][read]") {
  Pair p;
  const int64_t size = 1 << 20;  // 256 responses of 4096
  p.sim.setup();
  p.a.post(p.qa, WorkRequest{3, Verb::kRead, size});
  p.sim.run();

  REQUIRE(p.log.sent.size() == 1);
  const Completion& c = p.log.sent[0];
  CHECK(c.verb == Verb::kRead);
  CHECK(c.status == WcStatus::kSuccess);
  CHECK(c.bytes == size);
  // Request: headers + 16-byte RETH, no payload. Responses: 256 x (4096 +
  // headers), plus a 4-byte AETH on the FIRST and on the LAST.
  const int64_t request = kHeaders + 16;
  const int64_t responses = 256 * (4096 + kHeaders) + 2 * 4;
  CHECK(request == 98);
  CHECK(p.cable.a_to_b->counters().wire_bytes == request);
  CHECK(p.cable.b_to_a->counters().wire_bytes == responses);
  CHECK(p.cable.b_to_a->counters().payload_bytes == size);
  const Time expected = Bytes(request) / p.rate + p.delay + Bytes(responses) / p.rate + p.delay;
  CHECK(c.completed - c.first_tx == expected);
  // The data lands at the requester; a READ completes nothing at the responder.
  CHECK(p.a.counters().payload_bytes_delivered == size);
  CHECK(p.log.received.empty());
  CHECK(p.sim.packet_pool().live() == 0);
}

TEST_CASE("READ responses carry the request's PSN onward: n responses use n PSNs",
          "[quick][nic][read]") {
  Chain c;
  c.sim.setup();
  c.a.post(c.qa, WorkRequest{1, Verb::kRead, 3 * 4096});  // PSNs 0..2
  c.a.post(c.qa, WorkRequest{2, Verb::kWrite, 100});      // PSN 3
  c.a.post(c.qa, WorkRequest{3, Verb::kRead, 0});         // PSN 4: one empty response
  c.a.post(c.qa, WorkRequest{4, Verb::kRead, 4097});      // PSNs 5, 6
  c.sim.run();

  REQUIRE(c.log.sent.size() == 4);
  for (int i = 0; i < 4; ++i) CHECK(c.log.sent[i].wr_id == static_cast<uint64_t>(i + 1));
  const auto req = c.from(0, PacketKind::kReadRequest);
  REQUIRE(req.size() == 3);
  CHECK(req[0].psn == 0);
  CHECK(req[0].read_length == 3 * 4096);
  CHECK(req[0].opcode == 0x0C);
  CHECK(req[0].wire_bytes == 98);
  CHECK(req[1].psn == 4);
  CHECK(req[1].read_length == 0);
  CHECK(req[2].psn == 5);
  const auto write = c.from(0, PacketKind::kData);
  REQUIRE(write.size() == 1);
  CHECK(write[0].psn == 3);

  const auto resp = c.from(1, PacketKind::kData);
  REQUIRE(resp.size() == 6);
  const std::vector<uint32_t> psns{0, 1, 2, 4, 5, 6};
  const std::vector<uint8_t> ops{0x0D, 0x0E, 0x0F, 0x10, 0x0D, 0x0F};
  const std::vector<uint32_t> payload{4096, 4096, 4096, 0, 4096, 1};
  for (size_t i = 0; i < resp.size(); ++i) {
    CHECK(resp[i].psn == psns[i]);
    CHECK(resp[i].opcode == ops[i]);
    CHECK(resp[i].payload == payload[i]);
    // AETH on FIRST, LAST and ONLY (IBA §9.3.5); frames of at least 64 bytes.
    const uint32_t aeth = ops[i] == 0x0E ? 0 : 4;
    const uint32_t frame = std::max<uint32_t>(payload[i] + 62 + aeth, 64);
    CHECK(resp[i].wire_bytes == frame + 20);
  }
  // Responses and acknowledgements leave the responder in PSN order: the
  // WRITE's ACK waits behind the queued responses and, being cumulative,
  // names the last PSN the responder has (6).
  const auto acks = c.from(1, PacketKind::kAck);
  REQUIRE(acks.size() == 1);
  CHECK(acks[0].psn == 6);
  CHECK(acks[0].at > resp.back().at);
  CHECK(c.a.counters().payload_bytes_delivered == 3 * 4096 + 0 + 4097);
}

TEST_CASE("ORD limits a requester's outstanding READs", "[quick][nic][read]") {
  const int ord = GENERATE(1, 4, 16);
  NicConfig cfg;
  cfg.max_rd_atomic = ord;
  Chain c(cfg);
  c.sim.setup();
  const int reads = 40;
  for (int i = 0; i < reads; ++i) c.a.post(c.qa, WorkRequest{uint64_t(i), Verb::kRead, 4 * 4096});
  c.sim.run();

  REQUIRE(c.log.sent.size() == static_cast<size_t>(reads));
  CHECK(c.a.counters().payload_bytes_delivered == int64_t{reads} * 4 * 4096);
  // Requests seen by the middlebox minus READs whose last response it has
  // seen: never more than ORD in flight, and ORD is reached.
  int in_flight = 0, peak = 0;
  for (const Seen& s : c.m.seen) {
    if (s.kind == PacketKind::kReadRequest) peak = std::max(peak, ++in_flight);
    if (s.kind == PacketKind::kData && s.in_port == 1 && (s.flags & kFlagLast) != 0) --in_flight;
  }
  CHECK(peak == ord);
  CHECK(c.a.qp(c.qa).max_reads_outstanding == ord);
  CHECK(c.b.qp(c.qb).max_read_jobs <= ord);
}

TEST_CASE("with ORD 1 each READ waits for the previous one's last response", "[quick][nic][read]") {
  NicConfig cfg;
  cfg.max_rd_atomic = 1;
  Pair p(cfg);
  p.sim.setup();
  for (uint64_t i = 0; i < 3; ++i) p.a.post(p.qa, WorkRequest{i, Verb::kRead, 4096});
  p.sim.run();
  REQUIRE(p.log.sent.size() == 3);
  // One READ: 98-byte request, delay, one 4182-byte READ RESPONSE ONLY, delay.
  const Time one = Bytes(98) / p.rate + p.delay + Bytes(4096 + kHeaders + 4) / p.rate + p.delay;
  for (int i = 0; i < 3; ++i) CHECK(p.log.sent[i].completed == one * (i + 1));
}

TEST_CASE("ORD is the smaller of max_rd_atomic and max_dest_rd_atomic", "[quick][nic][read]") {
  NicConfig cfg;
  cfg.max_rd_atomic = 8;
  cfg.max_dest_rd_atomic = 2;
  Pair p(cfg);
  p.sim.setup();
  for (uint64_t i = 0; i < 10; ++i) p.a.post(p.qa, WorkRequest{i, Verb::kRead, 100});
  p.sim.run();
  CHECK(p.log.sent.size() == 10);
  CHECK(p.a.qp(p.qa).max_reads_outstanding == 2);
  CHECK(p.b.qp(p.qb).max_read_jobs <= 2);
}

TEST_CASE("READs in both directions on one QP pair share the wire", "[quick][nic][read]") {
  Pair p;
  p.sim.setup();
  p.a.post(p.qa, WorkRequest{1, Verb::kRead, 64 * 4096});
  p.b.post(p.qb, WorkRequest{2, Verb::kRead, 64 * 4096});
  p.a.post(p.qa, WorkRequest{3, Verb::kWrite, 64 * 4096});
  p.sim.run();
  REQUIRE(p.log.sent.size() == 3);
  CHECK(p.a.counters().payload_bytes_delivered == 64 * 4096);
  CHECK(p.b.counters().payload_bytes_delivered == 2 * 64 * 4096);
  CHECK(p.a.counters().retransmitted_packets + p.b.counters().retransmitted_packets == 0);
}
