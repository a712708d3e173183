// PFC at the NIC (IEEE 802.1Qbb): honouring received pause frames per
// priority, control packets included, and generating pause/resume frames from
// the receive buffer. Includes validation case V4a
// (docs/validation.md, "V4a PFC pause timing").
#include <algorithm>
#include <vector>

#include "models/flow_control/pfc.h"
#include "test/models/nic/nic_fixture.h"
#include "test/support/catch_units.h"

using namespace rdmasim;
using namespace rdmasim::testing;

namespace {

// The far end of a NIC's cable: sinks what it receives, recording when each
// data frame started (its creation time, under the pull model), and sends
// one PFC frame at a given time.
class PfcInjector : public Node {
 public:
  PfcInjector(Simulation& sim, std::string name, uint16_t class_enable, uint16_t quanta, Time at)
      : Node(sim, std::move(name)),
        class_enable_(class_enable),
        quanta_(quanta),
        at_(at),
        send_(this, EventClass::kTraffic, id()) {}

  std::vector<Time> data_starts;

  void setup() override { sim().schedule(send_, at_); }
  void receive(uint32_t, PacketHandle p) override {
    if (p->kind == PacketKind::kData && p->priority == 3) data_starts.push_back(p->created);
  }
  PacketHandle next_packet(uint32_t) override { return std::move(frame_); }

 private:
  void on_send() {
    frame_ = make_pfc_frame(sim(), class_enable_, quanta_);
    port(0).wake();
  }
  uint16_t class_enable_, quanta_;
  Time at_;
  PacketHandle frame_;
  MemberEvent<PfcInjector, &PfcInjector::on_send> send_;
};

}  // namespace

TEST_CASE("V4a PFC pause timing", "[validation][V4]") {
  // A sender that always has priority-3 data queued gets one PFC frame for
  // priority 3 with q = 1000 quanta and no XON. From the frame's full
  // reception plus the response delay to the start of the next priority-3
  // data frame: q x 512 bit times (5.12 us at 100G), within one frame time.
  const Time response = GENERATE(Time::zero(), Time::ns(500), Time::ns(1234));
  const BitRate rate = BitRate::gbps(100);
  const Time delay = Time::us(1);
  const uint16_t q = 1000;
  const Time inject = Time::us(20) + Time::ns(77);  // lands inside a data frame

  Simulation sim;
  NicConfig cfg;
  cfg.pfc_response_delay = response;
  RdmaNic& nic = sim.add<RdmaNic>("nic", 0, cfg, ipv4_format());
  PfcInjector& peer = sim.add<PfcInjector>("peer", 1 << 3, q, inject);
  connect(sim, nic, peer, rate, delay);
  const uint32_t qpn = nic.create_qp();
  nic.connect_qp(qpn, 1, 2, 0x77);
  sim.setup();
  nic.post(qpn, WorkRequest{1, Verb::kWrite, 64 << 20});  // always has data queued
  sim.run(Time::us(60));

  // The PFC frame (64 bytes + preamble and gap: 84 on the wire).
  const Time received = inject + Bytes(84) / rate + delay;
  const Time effective = received + response;
  const Time expected = Bytes(q * 64) / rate;  // q x 512 bits
  CHECK(expected == Time::ns(5120));
  const auto next = std::find_if(peer.data_starts.begin(), peer.data_starts.end(),
                                 [&](Time t) { return t >= effective; });
  REQUIRE(next != peer.data_starts.end());
  const Time frame = Bytes(4178) / rate;
  CHECK(frame == Time::ps(334'240));
  const Time interval = *next - effective;
  CHECK(interval >= expected);
  CHECK(interval <= expected + frame);
  // The model is exact: the pause ends at effective + q x 512 bit times.
  CHECK(interval == expected);
  // No data frame started while paused.
  for (Time t : peer.data_starts) CHECK((t < effective || t >= effective + expected));
  CHECK(nic.flow_control(0).pfc().pauses_received() == 1);
}

TEST_CASE("a pause stops ACKs of its priority; other priorities go on", "[quick][nic][pfc]") {
  const int ack_priority = GENERATE(3, 5);
  NicConfig cfg;
  cfg.ack_priority = static_cast<uint8_t>(ack_priority);
  Chain c(cfg);
  // b is the responder: pause its priority 3 from 5 us, resume at 25 us.
  const Time pause_at = Time::us(5), resume_at = Time::us(25);
  c.m.inject_pfc(1, 1 << 3, kPfcMaxQuanta, pause_at);
  c.m.inject_pfc(1, 1 << 3, 0, resume_at);
  c.sim.setup();
  c.a.post(c.qa, WorkRequest{1, Verb::kWrite, 128 * 4096});
  c.sim.run();
  REQUIRE(c.log.sent.size() == 1);
  CHECK(c.b.counters().payload_bytes_delivered == 128 * 4096);
  // The PFC frames reach b after the data frame the middlebox may be
  // sending to b at the time (one frame time at most).
  const Time pfc = Bytes(84) / c.rate;
  const Time paused_from = pause_at + Bytes(4178) / c.rate + pfc + c.delay;
  const Time paused_to = resume_at + pfc + c.delay;
  // ACKs arriving at the middlebox, by when b began sending them.
  int during = 0;
  for (const Seen& s : c.from(1, PacketKind::kAck)) {
    const Time sent = s.at - c.delay - Bytes(86) / c.rate;
    if (sent >= paused_from && sent < paused_to) ++during;
  }
  if (ack_priority == 3) {
    CHECK(during == 0);
    // The ACKs held back leave together when the resume takes effect.
    CHECK(c.b.flow_control(0).pfc().pauses_received() == 1);
  } else {
    CHECK(during > 10);
  }
  // a itself was never paused: its data kept flowing at line rate.
  const auto data = c.from(0, PacketKind::kData);
  REQUIRE(data.size() == 128);
  CHECK(data.back().at == Bytes(4194 + 127 * int64_t{4178}) / c.rate + c.delay);
}

TEST_CASE("a zero-quanta frame resumes at once", "[quick][nic][pfc]") {
  Chain c;
  const Time pause_at = Time::us(3), resume_at = Time::us(8);
  c.m.inject_pfc(0, 1 << 3, kPfcMaxQuanta, pause_at);
  c.m.inject_pfc(0, 1 << 3, 0, resume_at);
  c.sim.setup();
  c.a.post(c.qa, WorkRequest{1, Verb::kWrite, 64 * 4096});
  c.sim.run();
  REQUIRE(c.log.sent.size() == 1);
  const Time pfc = Bytes(84) / c.rate;
  const Time resumed = resume_at + pfc + c.delay;
  // The first data frame after the resume starts exactly when it takes effect.
  const auto data = c.from(0, PacketKind::kData);
  Time first_after = Time::infinite();
  for (const Seen& s : data) {
    if (s.created >= pause_at + pfc + c.delay) first_after = std::min(first_after, s.created);
  }
  CHECK(first_after == resumed);
}

TEST_CASE("a slow host's receive buffer generates PFC and nothing is lost", "[quick][nic][pfc]") {
  NicConfig cfg;
  cfg.rx_drain_rate = BitRate::gbps(40);
  cfg.rx_buffer = Bytes::kib(256);
  cfg.rx_xoff = Bytes::kib(128);
  cfg.rx_xon = Bytes::kib(64);
  Pair p(cfg);
  const int64_t size = 8 << 20;
  p.sim.setup();
  p.a.post(p.qa, WorkRequest{1, Verb::kWrite, size});
  p.sim.run();
  REQUIRE(p.log.sent.size() == 1);
  CHECK(p.log.sent[0].status == WcStatus::kSuccess);
  CHECK(p.b.counters().payload_bytes_delivered == size);
  CHECK(p.b.counters().rx_buffer_drops == 0);
  CHECK(p.a.counters().retransmitted_packets == 0);
  // Pauses were sent and honoured, and resumes followed.
  CHECK(p.b.counters().pfc_frames_sent >= 2);
  CHECK(p.a.flow_control(0).pfc().pauses_received() >= 1);
  CHECK(p.b.counters().pfc_frames_received == 0);
  CHECK(p.a.counters().pfc_frames_received == p.b.counters().pfc_frames_sent);
  // The host is the bottleneck: 2048 frames of 4158 bytes (the first 16 more)
  // drain at 40 Gb/s, then the last ACK returns.
  const Time drain = Bytes(2048 * int64_t{4158} + 16) / cfg.rx_drain_rate;
  const Time done = p.log.sent[0].completed;
  CHECK(done >= drain);
  CHECK(done <= drain + Time::us(5));
}

TEST_CASE("without PFC headroom a slow host's buffer overflows and go-back-N recovers",
          "[quick][nic][pfc]") {
  NicConfig cfg;
  cfg.rx_drain_rate = BitRate::gbps(40);
  cfg.rx_buffer = Bytes::kib(64);
  cfg.rx_xoff = Bytes::kib(64);  // XOFF at the very top: never reached, no PFC
  cfg.rx_xon = Bytes::kib(32);
  cfg.retransmit_timeout = Time::us(50);
  Pair p(cfg);
  const int64_t size = 2 << 20;
  p.sim.setup();
  p.a.post(p.qa, WorkRequest{1, Verb::kWrite, size});
  p.sim.run();
  REQUIRE(p.log.sent.size() == 1);
  CHECK(p.log.sent[0].status == WcStatus::kSuccess);
  CHECK(p.b.counters().rx_buffer_drops > 0);
  CHECK(p.b.counters().pfc_frames_sent == 0);
  CHECK(p.a.counters().retransmitted_packets > 0);
  CHECK(p.b.counters().payload_bytes_delivered == size);
}

TEST_CASE("a PFC storm pauses the peer until it ends", "[quick][nic][pfc]") {
  Pair p;
  const Time until = Time::us(400);
  p.sim.setup();
  p.b.start_pfc_storm(3, until);
  p.a.post(p.qa, WorkRequest{1, Verb::kWrite, 256 * 4096});
  p.sim.run();
  REQUIRE(p.log.sent.size() == 1);
  // 65535 quanta at 100G last 335.5 us; refreshed every half of that: at 0,
  // 167.8 us and 335.5 us, then a resume at 400 us.
  const Time pause = pfc_pause_time(kPfcMaxQuanta, p.rate);
  CHECK(p.b.counters().pfc_frames_sent == static_cast<uint64_t>(1 + until / (pause / 2) + 1));
  CHECK(p.a.flow_control(0).pfc().pauses_received() == 3);
  // a sent from 0 until the first pause arrived, then nothing until the
  // resume arrived: the rest of the WRITE after that.
  const Time pfc = Bytes(84) / p.rate;
  const Time resumed = until + pfc + p.delay;
  const int64_t before = (pfc + p.delay) / (Bytes(4178) / p.rate) + 1;  // frames begun by then
  const Time rest = Bytes((256 - before) * 4178) / p.rate;
  CHECK(p.log.sent[0].completed == resumed + rest + p.delay + Bytes(86) / p.rate + p.delay);
}

// lossless_drop at a NIC's receive buffer (sim/invariants.h): a slow host
// (10 Gb/s into memory) behind a 1 us, 100 Gb/s cable, XOFF at 32 KiB and
// 26,000 B above it. After XOFF, what is on the cable both ways (25,000 B),
// the frame being sent and the one that crossed XOFF (4,158 B each) still
// come: more than the room, so frames of the lossless priority 3 are dropped.
TEST_CASE("lossless_drop at a NIC: counted below the automatic headroom, else a violation",
          "[quick][nic][pfc][invariants]") {
  NicConfig cfg;
  cfg.rx_drain_rate = BitRate::gbps(10);
  cfg.rx_xoff = Bytes::kib(32);
  cfg.rx_buffer = cfg.rx_xoff + Bytes(26'000);
  cfg.rx_xon = Bytes::kib(16);
  cfg.retransmit_timeout = Time::us(50);
  // Checks on, `mask` lossless at b, the automatic headroom taken for
  // frames of `frame` bytes; a 1 MiB WRITE from a to b posted.
  const auto start = [](Pair& p, uint8_t mask, uint32_t frame) {
    p.sim.set_checks(true);
    p.b.set_lossless(mask, frame);
    p.sim.setup();
    p.a.post(p.qa, WorkRequest{1, Verb::kWrite, 1 << 20});
  };
  SECTION("9216-byte frames: the automatic headroom is 52,792 B, above the room") {
    // 2 x 1 us x 100 Gb/s + 3 x (9216 + 20) B + 84 B, in bytes.
    Pair p(cfg);
    start(p, 1 << 3, 9216);
    p.sim.run();
    REQUIRE(p.log.sent.size() == 1);
    CHECK(p.log.sent[0].status == WcStatus::kSuccess);
    CHECK(p.b.counters().rx_buffer_drops > 0);
    CHECK(p.b.counters().lossless_drops_headroom_below_automatic == p.b.counters().rx_buffer_drops);
  }
  SECTION(
      "the automatic headroom taken for 64-byte frames (25,336 B, within the room): "
      "the drop is reported") {
    Pair p(cfg);
    start(p, 1 << 3, 64);  // a test hook: the fabric passes fabric.switch.max_frame
    CHECK_THROWS_WITH(p.sim.run(), Catch::StartsWith("invariant lossless_drop violated at b "
                                                     "port 0 priority 3") &&
                                       Catch::Contains("dropped at the receive buffer"));
  }
  SECTION("priority 3 not lossless: nothing is checked") {
    Pair p(cfg);
    start(p, 1 << 4, 64);
    p.sim.run();
    CHECK(p.b.counters().rx_buffer_drops > 0);
    CHECK(p.b.counters().lossless_drops_headroom_below_automatic == 0);
  }
}
