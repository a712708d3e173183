#include "test/support/catch_units.h"

#include <vector>

#include "models/nic/rdma_nic.h"
#include "sim/cable.h"

using namespace rdmasim;

namespace {

struct Log : CompletionHandler {
  std::vector<Completion> sent, received;
  void on_send_completion(uint32_t, const Completion& c) override { sent.push_back(c); }
  void on_receive_completion(uint32_t, const Completion& c) override { received.push_back(c); }
};

// Two NICs joined by one cable, with a connected QP pair.
struct Pair {
  explicit Pair(NicConfig c = {}, BitRate rate = BitRate::gbps(100), Time delay = Time::us(1))
      : cfg(c),
        a(sim.add<RdmaNic>("a", 0, cfg, format)),
        b(sim.add<RdmaNic>("b", 1, cfg, format)),
        cable(connect(sim, a, b, rate, delay)) {
    a.set_completion_handler(&log);
    b.set_completion_handler(&log);
    qa = a.create_qp();
    qb = b.create_qp();
    a.connect_qp(qa, 1, qb, 0x1234);
    b.connect_qp(qb, 0, qa, 0x1234);
  }
  Simulation sim;
  NicConfig cfg;
  RoceV2Format format{IpVersion::kIpv4, false};
  Log log;
  RdmaNic& a;
  RdmaNic& b;
  Cable cable;
  uint32_t qa = 0, qb = 0;
};

}  // namespace

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
  REQUIRE(p.log.received.size() == 1);
  CHECK(p.log.received[0].bytes == size);
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
  REQUIRE(p.log.received.size() == 3);
  CHECK(p.log.received[0].verb == Verb::kSend);
  CHECK(p.log.received[1].verb == Verb::kWrite);
  CHECK(p.log.received[1].bytes == 0);
  // 3 + 1 + 1 packets.
  CHECK(p.a.counters().data_packets_sent == 5);
}

TEST_CASE("active QPs share the port round robin", "[quick][nic]") {
  Pair p;
  const uint32_t q2a = p.a.create_qp();
  const uint32_t q2b = p.b.create_qp();
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
