// V3 of the validation cases: VL arbitration (IBA Vol 1 §7.6.9, OpenSM's
// QoS document §7). One EDR link, the switch's port to the receiver h0, with
// every VL in use always holding 4096-byte-payload packets that have their
// credits: senders on SLs 1, 2, 3 (and 0) each saturate their own link into
// the switch, three (four) times what the bottleneck carries. Expected
// values from the arbitration rule: an entry of weight w sends w x 64 bytes
// a turn, counting LRH through ICRC (4120 of a packet's 4122 wire bytes),
// and the packet that crosses the weight finishes; the high limit lets
// high-priority packets start while fewer than limit x 4096 bytes of them
// have gone since a low packet last went.
#include "test/support/catch_units.h"
#include "test/support/scenario_sim.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <tuple>
#include <vector>

using namespace rdmasim;
using namespace rdmasim::testing;

namespace {

// One flow of `size` from host `src` to host `dst` on service level `sl`.
std::string flow(int src, int dst, const char* size, int sl) {
  return R"({"kind": "flow", "src": "h)" + std::to_string(src) + R"(", "dst": "h)" +
         std::to_string(dst) + R"(", "size": ")" + size + R"(", "sl": )" + std::to_string(sl) + "}";
}

// A star of `hosts` at EDR (100 ns cables) on InfiniBand, with `qos` as
// fabric.infiniband.qos, the NIC's default SLs 1 and the `flows`.
std::string ib_star(int hosts, const std::string& qos, const std::vector<std::string>& flows) {
  std::string traffic;
  for (const std::string& f : flows) traffic += (traffic.empty() ? "" : ",") + f;
  return R"({"fabric": {"transport": "infiniband", "mtu": 4096,
             "link": {"rate": "EDR", "delay": "100ns"},
             "nic": {"data_priority": 1, "ack_priority": 1},
             "infiniband": {"qos": )" +
         qos + R"(}},
  "topology": {"kind": "star", "hosts": )" +
         std::to_string(hosts) + R"(},
  "traffic": [)" +
         traffic + "]}";
}

// The data packets leaving the switch towards some hosts: their VL, wire
// bytes and sending QP.
struct Departures {
  std::vector<int> vl;
  std::vector<uint32_t> wire;
  std::vector<uint32_t> qpn;
};
struct DepartureLog : EgressHook {
  DepartureLog() : EgressHook(kAtDequeue) {}
  void on_dequeue(const EgressView& q, Packet& p) override {
    if (p.kind != PacketKind::kData || q.now() < from) return;
    d.vl.push_back(q.priority());
    d.wire.push_back(p.wire_bytes);
    d.qpn.push_back(p.src_qpn);
  }
  Time from;
  Departures d;
};

// Runs `json` to 2.2 ms, recording the data packets the switch sends to the
// hosts `to` after 0.2 ms (2 ms of saturated traffic, the CI scale of V3).
Departures record(const std::string& json, const std::vector<uint32_t>& to) {
  const Scenario sc = load_scenario_text(json, "v3");
  ScenarioSim s(sc);
  DepartureLog log;
  log.from = Time::us(200);
  Switch* sw = s.port_to_host(to[0]).first;
  std::vector<uint32_t> ports;
  for (uint32_t h : to) ports.push_back(s.port_to_host(h).second);
  sw->add_egress_hook(log, 0xFF, ports);
  s.sim.setup();
  s.sim.run(Time::us(2200));
  return log.d;
}

// A V3 sub-case: `qos`; senders h1, h2, h3 on SLs 1, 2, 3, and with `vl0`
// h4 on SL 0, each sending more than the run carries, to h0.
Departures run_v3(const std::string& qos, bool vl0) {
  std::vector<std::string> flows;
  for (int h = 1; h <= (vl0 ? 4 : 3); ++h) flows.push_back(flow(h, 0, "64MiB", h % 4));
  return record(ib_star(5, qos, flows), {0});
}

// The most wire bytes of VL0 packets sent back to back.
uint64_t longest_vl0_run(const Departures& d) {
  uint64_t run = 0, longest = 0;
  for (size_t i = 0; i < d.vl.size(); ++i) {
    run = d.vl[i] == 0 ? run + d.wire[i] : 0;
    longest = std::max(longest, run);
  }
  return longest;
}

// Packets of `vl` out of step with `round` repeated from the first packet
// of round[0]'s VL (all of them if that VL never comes within a round).
size_t off_round(const std::vector<int>& vl, const std::vector<int>& round) {
  const auto phase = static_cast<size_t>(std::find(vl.begin(), vl.end(), round[0]) - vl.begin());
  if (phase >= round.size()) return vl.size();
  size_t off = 0;
  for (size_t i = phase; i < vl.size(); ++i) off += vl[i] != round[(i - phase) % round.size()];
  return off;
}

}  // namespace

TEST_CASE("V3 vl arbitration (a): shares follow the low table's weights",
          "[quick][validation][V3]") {
  const Departures d = run_v3(R"({"vlarb_high": "", "vlarb_low": "1:64,2:128,3:192"})", false);
  // 2 ms of a 100 Gb/s link in 4122-byte packets: about 6,065 of them.
  REQUIRE(d.vl.size() > 6000);
  std::map<int, uint64_t> bytes;
  uint64_t total = 0;
  for (size_t i = 0; i < d.vl.size(); ++i) {
    bytes[d.vl[i]] += d.wire[i];
    total += d.wire[i];
  }
  // Shares 1/6, 2/6, 3/6 of the wire bytes, within 1 % (V3's tolerance).
  for (int vl = 1; vl <= 3; ++vl) {
    const double share = static_cast<double>(bytes[vl]) / static_cast<double>(total);
    CHECK(std::abs(share - vl / 6.0) <= 0.01 * vl / 6.0);
  }
  // Exactly: weights 4096, 8192, 12288 bytes take 1, 2, 3 packets of 4120,
  // so in every round VL1 sends one, VL2 two, VL3 three, in that order.
  CHECK(off_round(d.vl, {1, 2, 2, 3, 3, 3}) == 0);
}

TEST_CASE("V3 vl arbitration (b): high limit 6 bounds VL0 bursts", "[quick][validation][V3]") {
  const Departures d =
      run_v3(R"({"vlarb_high": "0:4", "vlarb_low": "1:64,2:128,3:192", "high_limit": 6})", true);
  REQUIRE(d.vl.size() > 6000);
  // At most 6 x 4096 bytes plus one packet, 28,698 wire bytes (V3); by the
  // rule exactly six packets start: after five (20,600 counted bytes, below
  // 24,576) a sixth, after six (24,720) a low packet.
  CHECK(longest_vl0_run(d) <= 28698);
  CHECK(longest_vl0_run(d) == 6 * 4122);
  // Every burst is six (a low packet always waits): VL0 carries 6/7 of the
  // packets, within one burst.
  const auto vl0 = static_cast<double>(std::count(d.vl.begin(), d.vl.end(), 0));
  CHECK(std::abs(vl0 - static_cast<double>(d.vl.size()) * 6 / 7) <= 6);
}

TEST_CASE("V3 vl arbitration (c): high limit 0 sends one VL0 packet at a time",
          "[quick][validation][V3]") {
  const Departures d =
      run_v3(R"({"vlarb_high": "0:4", "vlarb_low": "1:64,2:128,3:192", "high_limit": 0})", true);
  REQUIRE(d.vl.size() > 6000);
  CHECK(longest_vl0_run(d) == 4122);
  // VL0 and the low table alternate: half the packets are VL0's, within one.
  const auto vl0 = static_cast<double>(std::count(d.vl.begin(), d.vl.end(), 0));
  CHECK(std::abs(vl0 - static_cast<double>(d.vl.size()) / 2) <= 1);
}

TEST_CASE("SL-to-VL mapping: a flow's SL picks its VL on every link, ACKs on the same SL",
          "[quick][scenario][infiniband]") {
  // SL 5 -> VL 2 and SL 9 -> VL 1 by the table; everything else as OpenSM.
  const Scenario sc = load_scenario_text(R"({
    "fabric": {"transport": "infiniband", "mtu": 4096, "link": {"rate": "EDR", "delay": "100ns"},
               "infiniband": {"qos": {"sl2vl": [0, 1, 2, 3, 4, 2, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7]}}},
    "topology": {"kind": "star", "hosts": 3},
    "traffic": [{"kind": "flow", "src": "h1", "dst": "h0", "size": "1MiB", "sl": 5},
                {"kind": "flow", "src": "h2", "dst": "h0", "size": "1MiB", "sl": 9}]
  })",
                                         "sl2vl");
  ScenarioSim s(sc);
  struct Seen : EgressHook {
    Seen() : EgressHook(kAtDequeue) {}
    void on_dequeue(const EgressView& q, Packet& p) override {
      ++by[{p.kind == PacketKind::kData, p.sl, q.priority()}];
      // It came from the NIC on the VL it leaves on (one table everywhere).
      if (p.ingress_priority != q.priority()) ++ingress_mismatch;
    }
    std::map<std::tuple<bool, int, int>, int> by;
    int ingress_mismatch = 0;
  } seen;
  auto [sw, to_h0] = s.port_to_host(0);
  sw->add_egress_hook(seen, 0xFF);
  s.sim.setup();
  s.sim.run();
  // 256 data packets each way on the mapped VL, the ACKs back on it too:
  // nothing on any other VL.
  int data = 0, acks = 0;
  for (const auto& [key, n] : seen.by) {
    const auto [is_data, sl, vl] = key;
    CHECK(((sl == 5 && vl == 2) || (sl == 9 && vl == 1)));
    (is_data ? data : acks) += n;
  }
  CHECK(data == 2 * 256);
  CHECK(acks == 2 * 256);  // ack_interval 1
  CHECK(seen.ingress_mismatch == 0);
}

TEST_CASE(
    "SL-to-VL mapping: a collective's SL (NCCL_IB_SL) carries its data, FIFO writes and ACKs "
    "on the mapped VL",
    "[quick][scenario][infiniband][collective]") {
  // SL 5 -> VL 2; the NIC's own priorities (data 3, ack 3) would be VL 3.
  const Scenario sc = load_scenario_text(R"({
    "fabric": {"transport": "infiniband", "mtu": 4096, "link": {"rate": "EDR", "delay": "100ns"},
               "infiniband": {"qos": {"sl2vl": [0, 1, 2, 3, 4, 2, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7]}}},
    "topology": {"kind": "star", "hosts": 3},
    "traffic": [{"kind": "collective", "op": "all_reduce", "size": "3MiB", "sl": 5}]
  })",
                                         "collective_sl");
  REQUIRE(sc.collectives.at(0).sl == 5);
  ScenarioSim s(sc);
  struct Seen : EgressHook {
    Seen() : EgressHook(kAtDequeue) {}
    void on_dequeue(const EgressView& q, Packet& p) override {
      ++packets;
      if (p.sl != 5 || q.priority() != 2 || p.ingress_priority != 2) ++elsewhere;
      if (p.kind == PacketKind::kData) ++data;
    }
    int packets = 0, data = 0, elsewhere = 0;
  } seen;
  s.port_to_host(0).first->add_egress_hook(seen, 0xFF);  // the star's switch, every port
  s.sim.setup();
  s.sim.run();
  // The ring: 3 connections x 4 steps x 1 MiB / 4096 = 256 packets of data
  // per step, and the FIFO writes; ACKs for both.
  CHECK(seen.data >= 3 * 4 * 256);
  CHECK(seen.packets > seen.data);
  CHECK(seen.elsewhere == 0);
}

TEST_CASE("A NIC's QPs on two VLs: the VL short of credits does not hold back the other",
          "[quick][scenario][infiniband]") {
  // h1 sends on SL 1 and SL 2, h2 on SL 1, all to h0; the bottleneck (the
  // switch's port to h0) serves VL1 and VL2 alike. VL1 has two senders, so
  // h1's VL1 buffer at the switch stays full and h1's VL1 mostly waits for
  // credits; its VL2 QP, alone on VL2, must still get VL2's half of the
  // bottleneck (were the NIC to wait on VL1's credits, it would get less).
  const Departures d =
      record(ib_star(3, R"({"vlarb_high": "", "vlarb_low": "1:64,2:64"})",
                     {flow(1, 0, "64MiB", 1), flow(1, 0, "64MiB", 2), flow(2, 0, "64MiB", 1)}),
             {0});
  REQUIRE(d.vl.size() > 6000);
  // Weights 64 and 64 with 4120-byte packets: one packet each in turn, so
  // VL2 has exactly every other packet (within one).
  const auto vl2 = static_cast<double>(std::count(d.vl.begin(), d.vl.end(), 2));
  CHECK(std::abs(vl2 - static_cast<double>(d.vl.size()) / 2) <= 1);
}

TEST_CASE("A NIC arbitrates its QPs' VLs by the tables: shares 1:3 on its own link",
          "[quick][scenario][infiniband]") {
  // h1 sends on SL 1 to h0 and on SL 2 to h2: its own link is the only
  // bottleneck, so its port's VL arbitration (low table 1:64, 2:192) sets
  // the shares: one 4120-byte packet of VL1, then three of VL2, in turn (QPs
  // in turn would give 1:1).
  const Departures d = record(ib_star(3, R"({"vlarb_high": "", "vlarb_low": "1:64,2:192"})",
                                      {flow(1, 0, "64MiB", 1), flow(1, 2, "64MiB", 2)}),
                              {0, 2});
  REQUIRE(d.vl.size() > 6000);
  // The switch forwards them in the order h1 sent them (no contention).
  CHECK(off_round(d.vl, {1, 2, 2, 2}) == 0);
}

TEST_CASE(
    "A NIC arbitrates its ACKs' VL with its data's: four data packets of VL1 a turn, then up to "
    "three ACKs of VL2",
    "[quick][scenario][infiniband]") {
  // h1 sends to h0 on SL 1 and receives from h2 on SL 2, so its link
  // carries its VL1 data and the VL2 ACKs of h2's data (a QP's ACKs go on
  // its SL). Low table 1:255, 2:1 (IBA 7.6.9): VL1 sends while under 255 x
  // 64 = 16,320 counted bytes, 4 packets of 4120 (the fourth crosses);
  // VL2 while under 64, ACKs of 28 counted bytes (30 on the wire less the
  // VCRC): 3, the third crossing. h2's data brings about one ACK per data
  // packet h1 sends, more than 3 per 4, so VL2 stays backlogged: exactly 4
  // data packets, then 3 ACKs, in turn. (ACKs sent ahead of everything, as
  // before VL arbitration covered them, gave one ACK after each packet.)
  const Scenario sc =
      load_scenario_text(ib_star(3, R"({"vlarb_high": "", "vlarb_low": "1:255,2:1"})",
                                 {flow(1, 0, "64MiB", 1), flow(2, 1, "64MiB", 2)}),
                         "ack_arbitration");
  ScenarioSim s(sc);
  struct Order : EgressHook {
    Order() : EgressHook(kAtDequeue) {}
    void on_dequeue(const EgressView& q, Packet& p) override {
      if (q.now() < Time::us(200) || p.src != 1) return;  // h1's frames, steady state
      seq += p.kind == PacketKind::kData ? 'D' : 'A';
      if (p.kind != PacketKind::kData && q.priority() != 2) ++ack_elsewhere;
      if (p.kind == PacketKind::kData && q.priority() != 1) ++data_elsewhere;
    }
    std::string seq;
    int ack_elsewhere = 0, data_elsewhere = 0;
  } order;
  Switch* sw = s.port_to_host(0).first;
  sw->add_egress_hook(order, 0xFF, {s.port_to_host(0).second, s.port_to_host(2).second});
  s.sim.setup();
  s.sim.run(Time::us(1200));
  // 1 ms of h1's link: about 2,400 data packets and 1,800 ACKs.
  REQUIRE(order.seq.size() > 3000);
  CHECK(order.ack_elsewhere == 0);
  CHECK(order.data_elsewhere == 0);
  // From the first whole turn on, "DDDDAAA" over and over.
  const size_t start = order.seq.find("ADDDD");
  REQUIRE(start != std::string::npos);
  size_t off = 0, turns = 0;
  for (size_t i = start + 1; i + 7 <= order.seq.size(); i += 7, ++turns) {
    off += order.seq.compare(i, 7, "DDDDAAA") != 0;
  }
  CHECK(turns > 400);
  CHECK(off == 0);
}

TEST_CASE("A NIC's QPs on one VL take turns while the arbiter alternates VLs",
          "[quick][scenario][infiniband]") {
  // h1: one QP on SL 1 to h0, two on SL 2 to h2; weights 64 and 64 (one
  // packet a turn each): its link alternates VL1 and VL2, and VL2's turns go
  // to its two QPs in turn, a quarter of the packets each (a NIC that
  // rotated its ring on every skipped QP would give one of them all).
  const Departures d =
      record(ib_star(3, R"({"vlarb_high": "", "vlarb_low": "1:64,2:64"})",
                     {flow(1, 0, "64MiB", 1), flow(1, 2, "64MiB", 2), flow(1, 2, "64MiB", 2)}),
             {0, 2});
  std::map<uint32_t, int64_t> by_qp;
  for (uint32_t q : d.qpn) ++by_qp[q];
  REQUIRE(by_qp.size() == 3);
  const auto total = static_cast<int64_t>(d.qpn.size());
  REQUIRE(total > 6000);
  std::vector<int64_t> n;
  for (const auto& [qpn, c] : by_qp) n.push_back(c);
  // The VL1 QP (the first made) half, the VL2 QPs a quarter each, within one.
  CHECK(std::abs(2 * n[0] - total) <= 2);
  CHECK(std::abs(4 * n[1] - total) <= 4);
  CHECK(std::abs(4 * n[2] - total) <= 4);
}

TEST_CASE("SL-to-VL per port class: NICs' (qos.ca) and switches' (qos.swe) tables",
          "[quick][scenario][infiniband]") {
  // SL 5 leaves the NIC on VL 1 (ca) and the switch on VL 2 (swe): the
  // switch buffers it on VL 1, the VL it came by, and queues it on VL 2.
  const Scenario sc = load_scenario_text(R"({
    "fabric": {"transport": "infiniband", "mtu": 4096, "link": {"rate": "EDR", "delay": "100ns"},
               "infiniband": {"qos": {
                 "ca": {"sl2vl": "0,1,2,3,4,1,6,7,0,1,2,3,4,5,6,7"},
                 "swe": {"sl2vl": "0,1,2,3,4,2,6,7,0,1,2,3,4,5,6,7"}}}},
    "topology": {"kind": "star", "hosts": 2},
    "traffic": [{"kind": "flow", "src": "h1", "dst": "h0", "size": "256KiB", "sl": 5}]
  })",
                                         "sl2vl_classes");
  ScenarioSim s(sc);
  struct Seen : EgressHook {
    Seen() : EgressHook(kAtDequeue) {}
    void on_dequeue(const EgressView& q, Packet& p) override {
      ++by[{p.sl, p.ingress_priority, q.priority()}];
    }
    std::map<std::tuple<int, int, int>, int> by;
  } seen;
  auto [sw, to_h0] = s.port_to_host(0);
  sw->add_egress_hook(seen, 0xFF);
  s.sim.setup();
  s.sim.run();
  // 64 data packets and 64 ACKs, every one in on VL 1 and out on VL 2.
  CHECK(seen.by == std::map<std::tuple<int, int, int>, int>{{{5, 1, 2}, 128}});
}
