// Validation case V4 (docs/validation.md): PFC headroom and XOFF/XON. V4(a), the pause
// timing at a sender, is tested with the NIC (test/models/nic/). Expected
// values are computed here from the formulas of Cisco white paper c11-542809 and the HPCC
// simulator's MMU (docs/switch.md).
#include "test/support/catch_units.h"

#include <cmath>

#include "models/flow_control/pfc.h"
#include "models/nic/rdma_nic.h"
#include "models/switch/switch.h"
#include "sim/cable.h"

using namespace rdmasim;

namespace {

const BitRate kRate = BitRate::gbps(100);

// Keeps whatever it is cabled to paused on priority 3: PFC frames of 65535
// quanta, re-sent well before they expire. Consumes everything it gets.
class PausingSink : public Node {
 public:
  PausingSink(Simulation& sim, std::string name)
      : Node(sim, std::move(name)), tick_(this, EventClass::kTimer, id()) {}
  void setup() override { sim().schedule(tick_, Time::zero()); }
  void receive(uint32_t, PacketHandle) override {}
  PacketHandle next_packet(uint32_t) override {
    if (!pending_) return {};
    pending_ = false;
    return make_pfc_frame(sim(), 1 << 3, kPfcMaxQuanta);
  }

 private:
  void on_tick() {
    pending_ = true;
    port(0).wake();
    if (sim().now() < Time::ms(1)) sim().schedule_in(tick_, Time::us(100));
  }
  bool pending_ = false;
  MemberEvent<PausingSink, &PausingSink::on_tick> tick_;
};

// Sends back-to-back lossy (priority 0) Ethernet frames of `frame` bytes to
// host `dst`, from `start` until `stop`.
class BulkSource : public Node {
 public:
  BulkSource(Simulation& sim, std::string name, uint32_t self, uint32_t dst, uint32_t frame,
             Time start, Time stop)
      : Node(sim, std::move(name)),
        self_(self),
        dst_(dst),
        frame_(frame),
        start_(start),
        stop_(stop),
        go_(this, EventClass::kTraffic, id()) {}
  void setup() override { sim().schedule(go_, start_); }
  void receive(uint32_t, PacketHandle) override {}
  PacketHandle next_packet(uint32_t) override {
    if (sim().now() < start_ || sim().now() >= stop_) return {};
    PacketHandle p = sim().make_packet();
    p->kind = PacketKind::kRaw;
    const HeaderSet h{Header::kPreambleSfd, Header::kEthernet, Header::kFcs,
                      Header::kInterFrameGap};
    p->headers = h.bits();
    p->payload_bytes = frame_ - 18;  // Ethernet header + FCS
    p->wire_bytes = h.wire_bytes(p->payload_bytes);
    p->src = self_;
    p->dst = dst_;
    p->dscp = 0;
    return p;
  }

 private:
  void on_go() { port(0).wake(); }
  uint32_t self_, dst_, frame_;
  Time start_, stop_;
  MemberEvent<BulkSource, &BulkSource::on_go> go_;
};

struct HeadroomRun {
  uint64_t drops = 0;
  uint64_t pauses = 0;
  int64_t peak_headroom = 0;
};

// Sender (host 0) -> switch -> pausing receiver (host 1); optionally a bulk
// lossy stream from host 2 through the switch to the sender.
HeadroomRun run_headroom(Bytes headroom, bool lossy_stream, Time lossy_offset, Time cable,
                         Time response) {
  Simulation sim;
  NicConfig nic;
  nic.pfc_response_delay = response;
  RoceV2Format format(IpVersion::kIpv4, false);
  SwitchConfig sc;
  sc.buffer = Bytes::mb(32);
  sc.reserve = Bytes(0);
  sc.pfc.threshold = PfcThreshold::kStatic;
  sc.pfc.xoff = Bytes::kb(100);
  sc.pfc.xon = Bytes::kb(80);
  sc.pfc.headroom = headroom;
  sc.pfc.response_delay = response;
  auto& sender = sim.add<RdmaNic>("sender", 0, nic, format);
  auto& sink = sim.add<PausingSink>("receiver");
  auto& sw = sim.add<Switch>("sw", sc);
  connect(sim, sender, sw, kRate, cable);  // switch port 0
  connect(sim, sink, sw, kRate, cable);    // switch port 1
  const Time frame_time = Bytes(9236) / kRate;
  BulkSource* bulk = nullptr;
  if (lossy_stream) {
    bulk = &sim.add<BulkSource>("bulk", 2, 0, 9216, lossy_offset, Time::us(200));
    connect(sim, *bulk, sw, kRate, cable);  // switch port 2
  }
  sw.set_forwarding_table(ForwardingTable::from_static({{0}, {1}, {2}}));
  const uint32_t q = sender.create_qp();
  sender.connect_qp(q, 1, 99, 7);
  sim.setup();
  (void)frame_time;
  sender.post(q, WorkRequest{1, Verb::kWrite, 8 << 20});
  sim.run(Time::us(150));
  HeadroomRun r;
  r.drops = sw.drops(DropReason::kHeadroom);
  r.pauses = sw.counters().pfc_sent;
  r.peak_headroom = 0;
  return r;
}

// The worst-case headroom of Cisco white paper c11-542809, in bytes, with the
// simulator's own cable delay and response time, no interface delay, and the
// MTUs of this set-up: any frame 9216 B, lossless frame 4158 B.
int64_t formula_headroom_bits(Time cable, Time response) {
  const double r = static_cast<double>(kRate.in_bps());
  const double bits = 2 * cable.in_seconds() * r + response.in_seconds() * r + 0 /* 2 D_intf */ +
                      8.0 * (9216 + 20) + 8.0 * (4158 + 20) + 8.0 * (64 + 20);
  return static_cast<int64_t>(std::ceil(bits));
}

}  // namespace

TEST_CASE("V4b PFC headroom H prevents loss at every offset", "[validation][V4]") {
  const Time cable = Time::ns(500);  // 100 m at 5 ns/m
  const Time response = Time::ns(100);
  const Bytes h(formula_headroom_bits(cable, response) / 8 + 1);
  const Time step = (Bytes(9236) / kRate) / 8;
  for (int k = 0; k < 8; ++k) {
    const HeadroomRun r = run_headroom(h, true, Time::us(1) + step * k, cable, response);
    INFO("offset " << k);
    CHECK(r.pauses > 0);
    CHECK(r.drops == 0);
  }
}

namespace {
// V4c2: headroom two lossless frames short of H, a lossy 9216-byte frame
// starting at `offsets` evenly spaced points of its own serialization time;
// the drops over all of them.
uint64_t short_headroom_drops(int offsets) {
  const Time cable = Time::ns(500);
  const Time response = Time::ns(100);
  const int64_t hc_bits = formula_headroom_bits(cable, response) - 2 * 8 * (4158 + 20);
  const Time step = (Bytes(9236) / kRate) / offsets;
  uint64_t drops = 0;
  for (int k = 0; k < offsets; ++k)
    drops += run_headroom(Bytes(hc_bits / 8), true, Time::us(1) + step * k, cable, response).drops;
  return drops;
}
}  // namespace

TEST_CASE("V4c1 headroom two lossless frames short of H: no loss without the lossy stream",
          "[validation][V4]") {
  const Time cable = Time::ns(500);
  const Time response = Time::ns(100);
  const int64_t hc_bits = formula_headroom_bits(cable, response) - 2 * 8 * (4158 + 20);
  const HeadroomRun r = run_headroom(Bytes(hc_bits / 8), false, Time::zero(), cable, response);
  CHECK(r.pauses > 0);
  CHECK(r.drops == 0);
}

TEST_CASE("V4c2 headroom two lossless frames short of H: loss behind a lossy frame",
          "[validation][V4]") {
  CHECK(short_headroom_drops(8) >= 1);
}

namespace {

// Samples the occupancy (shared + headroom) of the switch's ingress queues
// from the two senders every 50 ns.
class OccupancyProbe : public Component {
 public:
  OccupancyProbe(Simulation& sim, std::string name, const Switch& sw)
      : Component(sim, std::move(name)), sw_(sw), tick_(this, EventClass::kSample, id()) {}
  void setup() override { sim().schedule(tick_, Time::zero()); }
  std::vector<std::pair<Time, int64_t>> samples;

 private:
  void on_tick() {
    if (sim().now() > Time::us(300))
      samples.emplace_back(sim().now(), sw_.mmu().ingress_occupancy(0, 3));
    if (sim().now() < Time::ms(3)) sim().schedule_in(tick_, Time::ns(50));
  }
  const Switch& sw_;
  MemberEvent<OccupancyProbe, &OccupancyProbe::on_tick> tick_;
};

}  // namespace

TEST_CASE("V4d XOFF/XON band and pause cycle of a 2:1 incast (HPCC MMU)", "[validation][V4]") {
  Simulation sim;
  NicConfig nic;
  RoceV2Format format(IpVersion::kIpv4, false);
  SwitchConfig sc;
  sc.buffer = Bytes::mb(4);
  sc.reserve = Bytes(0);
  sc.pfc.threshold = PfcThreshold::kDynamic;
  sc.pfc.alpha_shift = 3;
  sc.pfc.resume_offset = Bytes(3072);
  sc.pfc.headroom = Bytes::kb(100);
  const Time link = Time::us(1);
  auto& a = sim.add<RdmaNic>("a", 0, nic, format);
  auto& b = sim.add<RdmaNic>("b", 1, nic, format);
  auto& c = sim.add<RdmaNic>("c", 2, nic, format);
  auto& sw = sim.add<Switch>("sw", sc);
  connect(sim, a, sw, kRate, link);
  connect(sim, b, sw, kRate, link);
  connect(sim, c, sw, kRate, link);
  sw.set_forwarding_table(ForwardingTable::from_static({{0}, {1}, {2}}));
  std::vector<Time> pauses_to_a;
  sw.pfc_probe.attach([&](const PfcEvent& e) {
    if (e.sent && e.pause && e.port == 0 && e.priority == 3) pauses_to_a.push_back(e.time);
  });
  auto& probe = sim.add<OccupancyProbe>("probe", sw);
  const uint32_t qa = a.create_qp(), qca = c.create_qp();
  const uint32_t qb = b.create_qp(), qcb = c.create_qp();
  a.connect_qp(qa, 2, qca, 1);
  c.connect_qp(qca, 0, qa, 1);
  b.connect_qp(qb, 2, qcb, 2);
  c.connect_qp(qcb, 1, qb, 2);
  sim.setup();
  a.post(qa, WorkRequest{1, Verb::kWrite, int64_t{1} << 30});
  b.post(qb, WorkRequest{2, Verb::kWrite, int64_t{1} << 30});
  sim.run(Time::ms(3));

  // Derived (docs/validation.md, V4d): B_avail = buffer - all headroom - all reserve;
  // XOFF = B_avail / (2^s + 2); Delta = 2^s x 3072 / (2^s + 2).
  const double b_avail = static_cast<double>(sw.mmu().shared_pool());
  const double two_s = 8;
  const double xoff = b_avail / (two_s + 2);
  const double delta = two_s * 3072 / (two_s + 2);
  const double xon = xoff - delta;
  const double C = 100e9 / 8;  // bytes/s
  const double t_rt = 2 * link.in_seconds() + 84 * 8 / 100e9 + 0 + 4178 * 8 / 100e9;
  const double d = C / 2;
  const double frame = 4158;
  int64_t lo = INT64_MAX, hi = 0;
  for (const auto& [t, occ] : probe.samples) {
    lo = std::min(lo, occ);
    hi = std::max(hi, occ);
  }
  CHECK(static_cast<double>(lo) >= xon - d * t_rt - frame);
  CHECK(static_cast<double>(hi) <= xoff + sc.pfc.headroom.count());
  // The cycle: P = 4 (Delta + C t_rt) / C, measured over at least 20 cycles.
  REQUIRE(pauses_to_a.size() >= 21);
  const double measured = (pauses_to_a.back() - pauses_to_a.front()).in_seconds() /
                          static_cast<double>(pauses_to_a.size() - 1);
  const double expected = 4 * (delta + C * t_rt) / C;
  CHECK(measured == Approx(expected).epsilon(0.2));
}

TEST_CASE("V4b extensive: headroom H prevents loss at 64 offsets", "[extensive][validation][V4]") {
  const Time cable = Time::ns(500);
  const Time response = Time::ns(100);
  const Bytes h(formula_headroom_bits(cable, response) / 8 + 1);
  const Time step = (Bytes(9236) / kRate) / 64;
  for (int k = 0; k < 64; ++k) {
    INFO("offset " << k);
    CHECK(run_headroom(h, true, Time::us(1) + step * k, cable, response).drops == 0);
  }
}

TEST_CASE("V4c2 extensive: two lossless frames short of H drops at some of 64 offsets",
          "[extensive][validation][V4]") {
  CHECK(short_headroom_drops(64) >= 1);
}
