// Validation case V4 (docs/validation.md): PFC headroom and XOFF/XON. V4(a), the pause
// timing at a sender, is tested with the NIC (test/models/nic/). Expected
// values are computed here from the formulas of Cisco white paper c11-542809 and the HPCC
// simulator's MMU (docs/switch.md).
#include "test/support/catch_units.h"

#include <algorithm>
#include <cmath>
#include <optional>

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
  int64_t peak_headroom = 0;        // the most the sender's ingress queue held in headroom (bytes)
  int64_t headroom = 0;             // the headroom the switch gave that queue
  int64_t pool = 0;                 // the switch's shared pool
  int64_t dropped_wire_bytes = 0;   // of the dropped frames
  Time xoff_at = Time::infinite();  // the first pause the switch sent the sender
  Time wait;  // how long that pause waited for the lossy frame on its port (from the schedule)
};

// Sender (host 0) -> switch -> pausing receiver (host 1); optionally a bulk
// lossy stream from host 2 through the switch to the sender. `headroom` 0:
// the switch's automatic headroom. `switch_response` is the switch's own
// response delay (it acts on the receiver's pauses; 0 when not given);
// `response` the sender NIC's, which the switch's pauses wait for.
HeadroomRun run_headroom(Bytes headroom, bool lossy_stream, Time lossy_offset, Time cable,
                         Time response, PfcThreshold threshold = PfcThreshold::kStatic,
                         std::optional<Time> switch_response = std::nullopt) {
  Simulation sim;
  NicConfig nic;
  nic.pfc_response_delay = response;
  RoceV2Format format(IpVersion::kIpv4, false);
  SwitchConfig sc;
  // Dynamic: pause at about a ninth of the shared pool (alpha 1/8), so within
  // the run.
  sc.buffer = threshold == PfcThreshold::kDynamic ? Bytes::mb(1) : Bytes::mb(32);
  sc.reserve = Bytes(0);
  sc.pfc.threshold = threshold;
  sc.pfc.xoff = Bytes::kb(100);
  sc.pfc.xon = Bytes::kb(80);
  sc.pfc.headroom = headroom;
  sc.pfc.response_delay = switch_response.value_or(response);
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
  HeadroomRun r;
  sw.drop_probe.attach([&](const DropEvent& e) { r.dropped_wire_bytes += e.bytes; });
  sw.pfc_probe.attach([&](const PfcEvent& e) {
    if (e.sent && e.pause && e.port == 0 && r.xoff_at.is_infinite()) r.xoff_at = e.time;
  });
  sim.setup();
  (void)frame_time;
  sender.post(q, WorkRequest{1, Verb::kWrite, 8 << 20});
  sim.run(Time::us(150));
  r.drops = sw.drops(DropReason::kHeadroom);
  r.pauses = sw.counters().pfc_sent;
  r.peak_headroom = sw.mmu().peak_headroom_used(0, 3);
  r.headroom = sw.mmu().headroom(0).count();
  r.pool = sw.mmu().shared_pool();
  // The lossy frames leave the switch towards the sender back to back from
  // the first one's arrival, one every frame_time: the pause queued at
  // xoff_at waits for the rest of the one in transmission.
  if (lossy_stream && !r.xoff_at.is_infinite()) {
    const Time first = lossy_offset + frame_time + cable;
    if (r.xoff_at > first) {
      const Time into = Time::ps((r.xoff_at - first).in_ps() % frame_time.in_ps());
      r.wait = into == Time::zero() ? Time::zero() : frame_time - into;
    }
  }
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

// Zero drain (the receiver keeps the switch paused): every lossless frame
// that reaches the switch after the queue crosses XOFF is charged to headroom
// (frame bytes, 4158, with cells of 1 byte). The sender sends 4178-byte wire
// frames back to back, one every T_f = 4178 x 8 / R; the crossing frame's
// last bit arrives at t0 and the k-th after it at t0 + k T_f. The PFC frame
// leaves at t0 + w (w: the rest of the frame the switch is sending on that
// port), is received at t0 + w + T_pfc + d (T_pfc: 84 bytes, d the cable),
// takes effect D_resp later, and the sender finishes the frame it has started
// (IEEE 802.1Qbb; 802.3 Annex 31B). Frame k started at t0 + (k - 1) T_f - d,
// so it is sent if (k - 1) T_f < X = w + T_pfc + 2 d + D_resp: N = ceil(X / T_f)
// frames after the crossing one. The static threshold admits the crossing
// frame to shared (N frames in headroom); the dynamic one charges it to
// headroom (N + 1).
int64_t frames_after_xoff(Time wait, Time cable, Time response) {
  const int64_t x = (wait + Bytes(84) / kRate + cable * 2 + response).in_ps();
  const int64_t tf = (Bytes(4178) / kRate).in_ps();
  return (x + tf - 1) / tf;
}

}  // namespace

TEST_CASE("V4b PFC headroom H prevents loss at every offset", "[validation][V4]") {
  const Time cable = Time::ns(500);  // 100 m at 5 ns/m
  const Time response = Time::ns(100);
  const Bytes h(formula_headroom_bits(cable, response) / 8 + 1);
  const Time frame_any = Bytes(9236) / kRate;
  const Time step = frame_any / 8;
  int64_t most = 0;
  for (int k = 0; k < 8; ++k) {
    const HeadroomRun r = run_headroom(h, true, Time::us(1) + step * k, cable, response);
    INFO("offset " << k << ", pause waited " << to_string(r.wait));
    CHECK(r.pauses > 0);
    CHECK(r.drops == 0);
    // Exact: the frames that arrive after XOFF, each charged 4158 bytes.
    CHECK(r.peak_headroom == frames_after_xoff(r.wait, cable, response) * 4158);
    CHECK(r.peak_headroom <= h.count());
    most = std::max(most, r.peak_headroom);
  }
  // The sweep reaches a wait of at least 7/8 of the lossy frame.
  CHECK(most >= frames_after_xoff(frame_any - step, cable, response) * 4158);
}

TEST_CASE("V4b automatic headroom covers the NIC's PFC response delay", "[validation][V4]") {
  // The switch's own response delay is 0; the sender NIC's is 2 us (within
  // IEEE 802.3's bound of 394 quanta at 100G, 2.02 us) or 3 us. The automatic
  // headroom must cover the NIC's: it is the NIC that reacts to the switch's
  // pause. (With the switch's own delay in the formula, as before, the
  // headroom was 31,056 bytes and this lost frames.)
  const Time cable = Time::ns(500);
  const Time response = GENERATE(Time::us(2), Time::us(3));
  const PfcThreshold threshold = GENERATE(PfcThreshold::kStatic, PfcThreshold::kDynamic);
  INFO("NIC response " << to_string(response)
                       << (threshold == PfcThreshold::kStatic ? ", static" : ", dynamic"));
  // The formula of docs/switch.md with this set-up's numbers: 2 d R / 8 +
  // D_resp R / 8 + 2 x (9216 + 20) + (64 + 20) bytes, and for the dynamic
  // threshold one more 9236-byte frame (the crossing packet); cells of 1 byte.
  const auto bytes_in = [](Time t) { return (t.in_ps() * 100 + 7999) / 8000; };  // at 100 Gb/s
  const int64_t auto_headroom = bytes_in(cable * 2) + bytes_in(response) + 2 * 9236 + 84 +
                                (threshold == PfcThreshold::kDynamic ? 9236 : 0);
  // Without the lossy stream the pause never waits: exact. The static
  // threshold admits the crossing frame to shared: N frames in headroom. The
  // dynamic one (HPCC, CASES.md V4d: thr = (B_avail - shared_used) >> 3)
  // either admits a frame to shared that leaves shared use at or above the
  // threshold it lowers (pause; N in headroom) or charges the frame that
  // would pass it to headroom (pause; N + 1): which, follows from the
  // frames' charges (4174 for the first, with its RETH, then 4158) and the
  // pool, B_avail = buffer - both ports' headroom (reserve 0).
  int64_t pool = 0;
  int64_t crossing = 0;
  if (threshold == PfcThreshold::kDynamic) {
    // Two ports: the sender's (auto_headroom) and the receiver's, whose
    // neighbour responds at once (the same formula without D_resp).
    pool = 1'000'000 - auto_headroom - (auto_headroom - bytes_in(response));
    int64_t shared = 0;
    for (int64_t c = 4174;; c = 4158) {
      if (shared + c > (pool - shared) >> 3) {
        crossing = 1;
        break;
      }
      shared += c;
      if (shared >= (pool - shared) >> 3) break;
    }
  }
  {
    const HeadroomRun r =
        run_headroom(Bytes(0), false, Time::zero(), cable, response, threshold, Time::zero());
    CHECK(r.headroom == auto_headroom);
    if (threshold == PfcThreshold::kDynamic) CHECK(r.pool == pool);
    CHECK(r.pauses > 0);
    CHECK(r.drops == 0);
    CHECK(r.peak_headroom == (frames_after_xoff(Time::zero(), cable, response) + crossing) * 4158);
  }
  // Behind a 9236-byte lossy frame, at 8 offsets: exact from the wait for the
  // static threshold; for the dynamic one, the lossy frame passing through
  // the buffer also lowers the threshold, so N or N + 1.
  const Time step = (Bytes(9236) / kRate) / 8;
  for (int k = 0; k < 8; ++k) {
    const HeadroomRun r = run_headroom(Bytes(0), true, Time::us(1) + step * k, cable, response,
                                       threshold, Time::zero());
    INFO("offset " << k << ", pause waited " << to_string(r.wait));
    CHECK(r.drops == 0);
    const int64_t n = frames_after_xoff(r.wait, cable, response);
    if (threshold == PfcThreshold::kStatic) {
      CHECK(r.peak_headroom == n * 4158);
    } else {
      CHECK((r.peak_headroom == n * 4158 || r.peak_headroom == (n + 1) * 4158));
    }
    CHECK(r.peak_headroom <= r.headroom);
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
  // At the offset where the pause waits longest (at least 7/8 of a lossy
  // frame), the bytes arriving after XOFF (charged to headroom or dropped;
  // the queue does not drain) reach H - 8 (4158 + 20) - 8 (9216 + 20) / 8
  // bits, counting each frame's 20 bytes of preamble and gap as H does; and
  // they are exactly the frames the pause's wait lets through.
  const Time cable = Time::ns(500);
  const Time response = Time::ns(100);
  const int64_t h_bits = formula_headroom_bits(cable, response);
  const Bytes hc((h_bits - 2 * 8 * (4158 + 20)) / 8);
  const Time step = (Bytes(9236) / kRate) / 8;
  Time longest;
  int64_t arrived_bits = 0;
  for (int k = 0; k < 8; ++k) {
    const HeadroomRun r = run_headroom(hc, true, Time::us(1) + step * k, cable, response);
    INFO("offset " << k << ", pause waited " << to_string(r.wait));
    const int64_t frames = frames_after_xoff(r.wait, cable, response);
    CHECK(r.peak_headroom / 4158 + r.dropped_wire_bytes / 4178 == frames);
    CHECK(r.peak_headroom % 4158 == 0);
    CHECK(r.dropped_wire_bytes % 4178 == 0);
    if (r.wait > longest) {
      longest = r.wait;
      arrived_bits = (r.peak_headroom / 4158 * 4178 + r.dropped_wire_bytes) * 8;
    }
  }
  CHECK(longest >= (Bytes(9236) / kRate) - step);
  CHECK(arrived_bits >= h_bits - 8 * (4158 + 20) - 8 * (9216 + 20) / 8);
  CHECK(arrived_bits > hc.count() * 8);
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
