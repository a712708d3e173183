#include "test/support/catch_units.h"

#include <vector>

#include "models/nic/rdma_nic.h"
#include "models/switch/switch.h"
#include "sim/cable.h"
#include "sim/invariants.h"
#include "test/support/test_host.h"

using namespace rdmasim;

namespace {

struct Log : CompletionHandler {
  std::vector<Completion> sent;
  void on_send_completion(uint32_t, const Completion& c) override { sent.push_back(c); }
  void on_receive_completion(uint32_t, const Completion&) override {}
};

// n hosts on one switch; host i on switch port i.
struct Star {
  Star(int n, SwitchConfig sc, BitRate rate, Time delay) : swcfg(sc) {
    sw = &sim.add<Switch>("sw", swcfg);
    std::vector<std::vector<uint32_t>> routes;
    for (int i = 0; i < n; ++i) {
      nics.push_back(&sim.add<RdmaNic>("h" + std::to_string(i), i, nic, format));
      cables.push_back(connect(sim, *nics.back(), *sw, rate, delay));
      routes.push_back({cables.back().b_port});
    }
    sw->set_forwarding_table(ForwardingTable::from_static(routes));
  }
  void flow(int src, int dst, int64_t bytes) {
    const uint32_t qs = nics[src]->create_qp(&log), qd = nics[dst]->create_qp();
    nics[src]->connect_qp(qs, dst, qd, 100 + src);
    nics[dst]->connect_qp(qd, src, qs, 100 + src);
    pending.push_back({src, qs, bytes});
  }
  void run() {
    sim.setup();
    for (auto& f : pending) nics[f.src]->post(f.qp, WorkRequest{f.qp, Verb::kWrite, f.bytes});
    sim.run();
  }
  struct Pending {
    int src;
    uint32_t qp;
    int64_t bytes;
  };
  Simulation sim;
  SwitchConfig swcfg;
  NicConfig nic;
  RoceV2Format format{IpVersion::kIpv4, false};
  Log log;
  Switch* sw;
  std::vector<RdmaNic*> nics;
  std::vector<Cable> cables;
  std::vector<Pending> pending;
};

}  // namespace

TEST_CASE("a switch adds one store-and-forward delay and its latency", "[quick][switch]") {
  const Time latency = GENERATE(Time::zero(), Time::ns(450));
  SwitchConfig sc;
  sc.latency = latency;
  const BitRate rate = BitRate::gbps(400);
  const Time delay = Time::ns(500);
  Star s(2, sc, rate, delay);
  const int64_t packets = 1000;
  s.flow(0, 1, packets * 4096);
  s.run();
  REQUIRE(s.log.sent.size() == 1);
  // Data: every packet serialized on the first link, plus one store-and-forward
  // delay, two propagation delays and the pipeline latency. The store-and-
  // forward delay is that of the largest packet, the first (it carries the
  // RETH): every later packet waits for the one ahead of it at the egress.
  // The ACK: serialized twice (86 B), two delays, latency.
  const Time data =
      Bytes(packets * 4178 + 16) / rate + Bytes(4178 + 16) / rate + delay * 2 + latency;
  const Time ack = (Bytes(86) / rate) * 2 + delay * 2 + latency;
  CHECK(s.log.sent[0].completed - s.log.sent[0].first_tx == data + ack);
  CHECK(s.sw->counters().forwarded == 2 * packets);  // data and one ACK each
}

TEST_CASE("two senders into one port: the egress queue builds and drains", "[quick][switch]") {
  Star s(3, SwitchConfig{}, BitRate::gbps(100), Time::us(1));
  const int64_t bytes = 200 * 4096;
  s.flow(0, 2, bytes);
  s.flow(1, 2, bytes);
  s.run();
  REQUIRE(s.log.sent.size() == 2);
  // The bottleneck carries 2 x 200 packets: the later flow finishes no sooner
  // than their total serialization time at one port.
  const Time bottleneck = Bytes(2 * (200 * 4178 + 16)) / BitRate::gbps(100);
  const Time last = std::max(s.log.sent[0].completed, s.log.sent[1].completed);
  CHECK(last >= bottleneck);
  CHECK(last <= bottleneck + Time::us(5));
  // Two line-rate inputs into one output: about one packet queues per packet sent.
  int64_t peak = 0, left = 0;
  for (uint8_t pr = 0; pr < 8; ++pr) {
    peak = std::max(peak, s.sw->queue_counters(2, pr).peak_bytes);
    left += s.sw->egress(2).bytes(pr);
  }
  CHECK(peak >= 150 * 4178);
  CHECK(left == 0);
  CHECK(s.sw->mmu().used() == 0);
  CHECK(s.sw->mmu().peak_used() >= 150 * 4158);
}

TEST_CASE("a packet with no route is dropped and counted", "[quick][switch]") {
  Star s(2, SwitchConfig{}, BitRate::gbps(100), Time::us(1));
  s.sw->set_forwarding_table(ForwardingTable::from_static({{0}, {}}));
  s.flow(0, 1, 4096);
  s.run();
  // The requester retries retry_cnt times, then completes in error.
  REQUIRE(s.log.sent.size() == 1);
  CHECK(s.log.sent[0].status != WcStatus::kSuccess);
  CHECK(s.sw->counters().dropped_no_route == 1 + static_cast<uint64_t>(s.nic.retry_cnt));
}

TEST_CASE("ECN marking frequency follows the RED curve", "[switch][ecn]") {
  // Two senders into one port build the egress queue up steadily; every data
  // packet is evaluated at the queue length it finds. Marking probability:
  // 0 below Kmin, Pmax (q - Kmin)/(Kmax - Kmin) between, 1 above Kmax.
  SwitchConfig sc;
  sc.buffer = Bytes::mb(64);
  sc.ecn.enabled = true;
  sc.ecn.kmin = Bytes::kb(200);
  sc.ecn.kmax = Bytes::kb(8000);
  sc.ecn.pmax = 0.4;
  sc.pfc.lossless_mask = 0;  // let the queue grow: no PFC
  Star s(3, sc, BitRate::gbps(100), Time::us(1));
  // The queue each decision saw, observed apart from the marker: the frame
  // bytes (wire bytes less preamble, SFD and IFG: 20) of the packets waiting
  // in the egress queue to h2 when the decision is made (at enqueue, before
  // the packet joins; the frame being sent has left the queue and the MMU's
  // count alike). The marker's own report must agree with it.
  const uint32_t out = s.cables[2].b_port;
  std::vector<std::pair<int64_t, bool>> seen;
  uint64_t disagree = 0;
  s.sw->ecn_probe.attach([&](int64_t reported, bool m) {
    const EgressQueues& eq = s.sw->egress(out);
    int64_t q = 0;
    for (size_t i = 0; i < eq.packets(3); ++i) q += eq.packet(3, i).wire_bytes - 20;
    if (reported != q) ++disagree;
    seen.emplace_back(q, m);
  });
  s.flow(0, 2, 40LL << 20);
  s.flow(1, 2, 40LL << 20);
  s.run();
  const double kmin = 200e3, kmax = 8000e3, pmax = 0.4;
  // Buckets of queue length: compare the marked share with the curve at the
  // bucket's mean queue length, within 5 binomial standard deviations.
  const int buckets = 10;
  std::vector<double> n(buckets + 2), marked(buckets + 2), qsum(buckets + 2);
  for (const auto& [q, m] : seen) {
    int b = q <= kmin  ? 0
            : q > kmax ? buckets + 1
                       : 1 + static_cast<int>((q - kmin) * buckets / (kmax - kmin + 1));
    n[b] += 1;
    marked[b] += m ? 1 : 0;
    qsum[b] += static_cast<double>(q);
  }
  CHECK(n[0] > 100);
  CHECK(marked[0] == 0);
  for (int b = 1; b <= buckets; ++b) {
    REQUIRE(n[b] > 200);
    const double p = pmax * (qsum[b] / n[b] - kmin) / (kmax - kmin);
    const double sd = std::sqrt(p * (1 - p) / n[b]);
    INFO("bucket " << b << ": " << n[b] << " packets, p = " << p);
    CHECK(std::abs(marked[b] / n[b] - p) < 5 * sd + 0.01);
  }
  if (n[buckets + 1] > 0) CHECK(marked[buckets + 1] == n[buckets + 1]);
  CHECK(disagree == 0);
}

namespace {

// Hands a PFC frame to a switch port at a given time, as if its neighbour
// had sent it, and never follows it with a resume.
struct PauseInjector : Component {
  PauseInjector(Simulation& s, Switch& sw, uint32_t port, Time at, uint16_t quanta)
      : Component(s, "injector"), sw_(sw), port_(port), at_(at), quanta_(quanta) {}
  void setup() override { sim().schedule(event_, at_); }
  void fire() { sw_.receive(port_, make_pfc_frame(sim(), uint16_t{1} << 3, quanta_)); }
  Switch& sw_;
  uint32_t port_;
  Time at_;
  uint16_t quanta_;
  MemberEvent<PauseInjector, &PauseInjector::fire> event_{this, EventClass::kDelivery, 0};
};

// 64 packets from a 400G host queue at the switch for a 100G host; a pause
// that arrives mid-frame and then simply expires.
Time burst_completion(bool pause, uint16_t quanta, uint64_t* timeouts) {
  Simulation sim;
  SwitchConfig sc;
  NicConfig nc;
  RoceV2Format format{IpVersion::kIpv4, false};
  Log log;
  Switch& sw = sim.add<Switch>("sw", sc);
  RdmaNic& a = sim.add<RdmaNic>("h0", 0, nc, format);
  RdmaNic& b = sim.add<RdmaNic>("h1", 1, nc, format);
  const Cable ca = connect(sim, a, sw, BitRate::gbps(400), Time::us(1));
  const Cable cb = connect(sim, b, sw, BitRate::gbps(100), Time::us(1));
  sw.set_forwarding_table(ForwardingTable::from_static({{ca.b_port}, {cb.b_port}}));
  // At 10 us every packet is in the switch and its port to h1 is mid-frame.
  if (pause) sim.add<PauseInjector>(sw, cb.b_port, Time::us(10) + Time::ns(100), quanta);
  const uint32_t qa = a.create_qp(&log), qb = b.create_qp();
  a.connect_qp(qa, 1, qb, 7);
  b.connect_qp(qb, 0, qa, 7);
  sim.setup();
  a.post(qa, WorkRequest{qa, Verb::kWrite, 64 * 4096});
  sim.run();
  REQUIRE(log.sent.size() == 1);
  *timeouts = a.counters().timeouts;
  return log.sent[0].completed;
}

}  // namespace

TEST_CASE("a pause that expires without a resume frees the queue when it ends", "[quick][switch]") {
  const uint16_t quanta = 1000;
  uint64_t timeouts = 0;
  const Time plain = burst_completion(false, quanta, &timeouts);
  const Time paused = burst_completion(true, quanta, &timeouts);
  // IEEE 802.1Qbb: a quantum is 512 bit times at the port's rate.
  const Time pause = Time::ps(int64_t{quanta} * 512 * 10);  // 10 ps per bit at 100 Gb/s
  CHECK(timeouts == 0);
  // The port resumes when the pause ends, not when a retransmission timeout
  // brings a new packet: the delay is the pause, less what was in flight.
  CHECK(paused > plain);
  CHECK(paused <= plain + pause + Time::us(1));
}

namespace {
// Records what a host-side node receives; sends nothing.
struct Sink : Node {
  Sink(Simulation& s, std::string n) : Node(s, std::move(n)) {}
  void receive(uint32_t, PacketHandle p) override {
    if (p->kind != PacketKind::kPfc) got.push_back({sim().now(), p->priority});
  }
  PacketHandle next_packet(uint32_t) override { return {}; }
  std::vector<std::pair<Time, uint8_t>> got;
};
// Hands data packets with a given DSCP to switch port 0 at given times.
struct DataInjector : Component {
  DataInjector(Simulation& s, Switch& sw) : Component(s, "data"), sw_(sw) {}
  std::vector<std::pair<Time, uint8_t>> items;  // (when, DSCP)
  size_t next = 0;
  void setup() override { sim().schedule(event_, items[0].first); }
  void fire() {
    const HeaderSet h = RoceV2Format(IpVersion::kIpv4, false).packet(RcOpcode::kWriteMiddle);
    PacketHandle p = sim().make_packet();
    p->kind = PacketKind::kData;
    p->headers = h.bits();
    p->payload_bytes = 4096;
    p->wire_bytes = h.wire_bytes(4096);
    p->dst = 1;
    p->dscp = items[next++].second;
    sw_.receive(0, std::move(p));
    if (next < items.size()) sim().schedule(event_, items[next].first);
  }
  Switch& sw_;
  MemberEvent<DataInjector, &DataInjector::fire> event_{this, EventClass::kDelivery, 0};
};
}  // namespace

TEST_CASE("a packet queued behind a pause that found its queue empty leaves when the pause ends",
          "[quick][switch]") {
  // Priority 0 keeps the port busy while a pause of priority 3 arrives; the
  // priority-0 queue drains; then a priority-3 packet arrives. The pause
  // expires with no resume frame: the packet must leave then.
  Simulation sim;
  SwitchConfig sc;
  Switch& sw = sim.add<Switch>("sw", sc);
  Sink& a = sim.add<Sink>(std::string("a"));
  Sink& b = sim.add<Sink>(std::string("b"));
  const Cable ca = connect(sim, a, sw, BitRate::gbps(100), Time::us(1));
  const Cable cb = connect(sim, b, sw, BitRate::gbps(100), Time::us(1));
  sw.set_forwarding_table(ForwardingTable::from_static({{ca.b_port}, {cb.b_port}}));
  DataInjector& data = sim.add<DataInjector>(sw);
  for (int i = 0; i < 10; ++i) data.items.push_back({Time::ns(1 + i), 0});  // DSCP 0: priority 0
  data.items.push_back({Time::us(4), 26});                                  // DSCP 26: priority 3
  const uint16_t quanta = 1000;
  sim.add<PauseInjector>(sw, cb.b_port, Time::ns(500), quanta);
  sim.setup();
  sim.run();
  REQUIRE(b.got.size() == 11);
  CHECK(b.got.back().second == 3);
  // IEEE 802.1Qbb: 512 bit times per quantum; then one 4178-byte frame at
  // 100 Gb/s and the cable's 1 us.
  const Time pause_end =
      Time::ns(500) + sc.pfc.response_delay + Time::ps(int64_t{quanta} * 512 * 10);
  const Time frame = Time::ps(4178 * 8 * 10);
  CHECK(b.got.back().first == pause_end + frame + Time::us(1));
}

namespace {
// Two TestHosts (which ignore PFC) send `packets` frames each at line rate
// to a third through one switch, on lossless priority 3: the egress drains
// at half the arrival rate and the pauses go unheeded, so the ingress
// headroom fills and the switch drops.
struct UnheededPause {
  UnheededPause(Bytes headroom, bool checks, int packets) {
    cfg.buffer = Bytes(1'000'000);  // less than the backlog: PFC must act
    cfg.pfc.headroom = headroom;
    sim.set_checks(checks);
    sw = &sim.add<Switch>("sw", cfg);
    std::vector<std::vector<uint32_t>> routes;
    for (uint32_t i = 0; i < 3; ++i) {
      hosts.push_back(&sim.add<testing::TestHost>("h" + std::to_string(i), i));
      routes.push_back(
          {connect(sim, *hosts.back(), *sw, BitRate::gbps(100), Time::ns(500)).b_port});
    }
    sw->set_forwarding_table(ForwardingTable::from_static(routes));
    for (int k = 0; k < packets; ++k) {
      hosts[0]->add({2, 1024});
      hosts[1]->add({2, 1024});
    }
  }
  Simulation sim;
  SwitchConfig cfg;
  Switch* sw;
  std::vector<testing::TestHost*> hosts;
};
}  // namespace

TEST_CASE("lossless_drop: a drop on a lossless priority with the automatic headroom is a violation",
          "[quick][switch][invariants]") {
  UnheededPause u(Bytes(0), true, 2000);
  u.sim.setup();
  try {
    u.sim.run();
    FAIL("no violation reported");
  } catch (const InvariantViolation& v) {
    CHECK(v.invariant() == "lossless_drop");
    CHECK_THAT(std::string(v.what()), Catch::Contains("at sw port 0 priority 3") ||
                                          Catch::Contains("at sw port 1 priority 3"));
  }
}

TEST_CASE(
    "lossless_drop: with the headroom configured below the automatic value, drops are counted",
    "[quick][switch][invariants]") {
  // 100 Gb/s, 500 ns of cable: the automatic headroom is about 17 KB.
  UnheededPause u(Bytes(8192), true, 2000);
  u.sim.setup();
  REQUIRE(pfc_headroom(u.cfg, BitRate::gbps(100), Time::ns(500), Time::zero()) == Bytes(8192));
  REQUIRE(auto_pfc_headroom(u.cfg, BitRate::gbps(100), Time::ns(500), Time::zero()) > Bytes(8192));
  u.sim.run();
  const uint64_t drops = u.sw->drops(DropReason::kHeadroom);
  CHECK(drops > 0);
  CHECK(u.sw->counters().lossless_drops_headroom_below_automatic == drops);
  // Every frame is received or dropped.
  CHECK(u.hosts[2]->received().size() + drops == 4000);
}

TEST_CASE("lossless_drop: with checks off the drop is only counted as a headroom drop",
          "[quick][switch][invariants]") {
  UnheededPause u(Bytes(0), false, 2000);
  u.sim.setup();
  u.sim.run();
  CHECK(u.sw->drops(DropReason::kHeadroom) > 0);
  CHECK(u.sw->counters().lossless_drops_headroom_below_automatic == 0);
}

TEST_CASE(
    "headroom auto: cells charge a frame of F bytes ceil(F/c) c of buffer for F + 20 of wire; "
    "small_packet_percentage weighs minimum-size frames against 1 KB ones",
    "[quick][switch][pfc]") {
  // 100 Gb/s, 1 us of cable, no response delay, static threshold, 4,200-byte
  // frames: 2 R d + 2 x 8 (4200 + 20) + 8 x 84 = 268,192 bits = 33,524 B.
  SwitchConfig cfg;
  cfg.max_frame = 4200;
  cfg.pfc.threshold = PfcThreshold::kStatic;
  const auto h = [&](uint32_t cell, int percent) {
    cfg.cell = cell;
    cfg.pfc.small_packet_percentage = percent;
    return auto_pfc_headroom(cfg, BitRate::gbps(100), Time::us(1), Time::zero()).count();
  };
  // Trident2's 208-byte cells: a 64-byte frame takes 208 B for 84 B of wire
  // (x 208/84); the first size past one cell, 209 B, takes 416 for 229.
  CHECK(small_frame_occupancy(208) == Approx(208.0 / 84).epsilon(1e-15));
  // 80-byte cells: 64 B fits one cell (below its wire time); 81 B takes two.
  CHECK(small_frame_occupancy(80) == Approx(160.0 / 101).epsilon(1e-15));
  CHECK(small_frame_occupancy(1) == 1.0);
  CHECK(small_frame_occupancy(16) == 1.0);  // cells of 20 B or less: wire covers it
  // ceil(33,524 x factor / c) c, the factor as weighed:
  CHECK(h(208, 100) == 83200);  // x 2.476: 399.1 cells
  CHECK(h(208, 0) == 40352);    // x (1 + 208/1024): 193.9 cells
  CHECK(h(208, 50) == 61776);   // halfway: 296.5 cells
  CHECK(h(80, 100) == 53120);   // x 1.584: 663.8 cells
  CHECK(h(1, 100) == 33524);    // byte-granular buffers: the wire bytes
}

TEST_CASE(
    "headroom auto under cut-through: the frame being sent may come in at the slowest "
    "ingress rate, 8 (MTU_any + 20) R / R_in",
    "[quick][switch][pfc]") {
  // 400 Gb/s, 1 us, 9,216-byte frames, byte cells, static threshold: the
  // frame this port is sending, cut through from a 25 Gb/s port, ends only
  // when its last bit has come in, 16 frame times at 400 Gb/s. Store-and-
  // forward: 2 R d + 2 x 8 x 9236 + 8 x 84 = 948,448 bits = 118,556 B; cut
  // through from 25 Gb/s: 2 R d + 16 x 8 x 9236 + 8 x 9236 + 8 x 84 =
  // 2,056,768 bits = 257,096 B.
  SwitchConfig cfg;
  cfg.max_frame = 9216;
  cfg.cell = 1;
  cfg.pfc.threshold = PfcThreshold::kStatic;
  const BitRate r = BitRate::gbps(400);
  const auto h = [&](BitRate in) {
    return auto_pfc_headroom(cfg, r, Time::us(1), Time::zero(), in).count();
  };
  CHECK(h(BitRate()) == 118556);
  CHECK(h(BitRate::gbps(25)) == 118556);  // store-and-forward: no stretch
  cfg.forwarding = Forwarding::kCutThrough;
  CHECK(h(BitRate()) == 118556);
  CHECK(h(r) == 118556);
  CHECK(h(BitRate::gbps(800)) == 118556);  // a faster ingress stretches nothing
  CHECK(h(BitRate::gbps(25)) == 257096);
}
