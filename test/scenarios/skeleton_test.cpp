// End-to-end scenario tests of the walking skeleton. Expected values are
// computed here from the wire format and link parameters, not taken from runs.
// At 100, 400 and 25 Gb/s a byte takes a whole number of picoseconds (80, 20,
// 320), so every time below is exact and checked to the picosecond: one
// missing 4-byte trailer (ICRC or FCS) is 80 ps at 400G, an 8-byte preamble
// or a store-and-forward delay far more.
#include "test/support/catch_units.h"
#include "test/support/run_helpers.h"

using namespace rdmasim;
using namespace rdmasim::testing;

namespace {

// Wire bytes of a WRITE of `bytes` at path MTU `mtu`, RoCE v2 over IPv4
// without VLAN: 82 bytes per packet (Eth 14, IPv4 20, UDP 8, BTH 12, ICRC 4,
// FCS 4, preamble+SFD 8, IFG 12) plus a 16-byte RETH on the first.
int64_t write_wire_bytes(int64_t bytes, int64_t mtu) {
  const int64_t packets = (bytes + mtu - 1) / mtu;
  return bytes + packets * 82 + 16;
}
constexpr int64_t kAckWire = 86;  // 66-byte ACK frame + 20

}  // namespace

TEST_CASE("skeleton (a) 1 GiB WRITE over one 400G link", "[skeleton]") {
  const Ran r = run_text(R"({
    "fabric": {"link": {"rate": "400Gbps", "delay": "1us"}},
    "topology": {"kind": "graph", "hosts": ["a", "b"], "links": [{"a": "a", "b": "b"}]},
    "traffic": [{"kind": "flow", "src": "a", "dst": "b", "size": "1GiB"}]
  })");
  REQUIRE(r.result.status == RunStatus::kComplete);
  const int64_t bytes = int64_t{1} << 30;
  // 262144 packets x 4178 bytes, plus 16 for the RETH.
  CHECK(write_wire_bytes(bytes, 4096) == 262144LL * 4178 + 16);
  const BitRate rate = BitRate::gbps(400);
  // All packets back to back, the last one's propagation, the ACK's
  // serialization and propagation.
  const Time expected = Bytes(write_wire_bytes(bytes, 4096)) / rate + Time::us(1) +
                        Bytes(kAckWire) / rate + Time::us(1);
  CHECK(r.result.flows[0].fct() == expected);
  CHECK(r.result.links[0].wire_bytes == write_wire_bytes(bytes, 4096));
  CHECK(r.result.out_of_sequence == 0);
  CHECK(r.result.drops_no_route == 0);
}

TEST_CASE("skeleton (b) 1 GiB WRITE through one switch adds one store-and-forward delay",
          "[skeleton]") {
  const Ran r = run_text(R"({
    "fabric": {"link": {"rate": "400Gbps", "delay": "1us"}, "switch": {"latency": "300ns"}},
    "topology": {"kind": "star", "hosts": 2},
    "traffic": [{"kind": "flow", "src": "h0", "dst": "h1", "size": "1GiB"}]
  })");
  REQUIRE(r.result.status == RunStatus::kComplete);
  const BitRate rate = BitRate::gbps(400);
  const int64_t bytes = int64_t{1} << 30;
  // One store-and-forward delay of the largest (first, RETH-carrying) packet,
  // two propagation delays and the switch latency each way; the ACK is
  // stored and forwarded too.
  const Time data = Bytes(write_wire_bytes(bytes, 4096)) / rate + Bytes(4096 + 82 + 16) / rate +
                    Time::us(2) + Time::ns(300);
  const Time ack = (Bytes(kAckWire) / rate) * 2 + Time::us(2) + Time::ns(300);
  CHECK(r.result.flows[0].fct() == data + ack);
  // Every packet crossed two links: data packet-hops = 2 x 262144.
  CHECK(r.result.data_packet_hops == 2 * 262144);
}

TEST_CASE("quickstart goodput matches the header-overhead formula", "[skeleton]") {
  const Ran r = run_file("scenarios/quickstart.json");
  REQUIRE(r.result.status == RunStatus::kComplete);
  REQUIRE(r.result.flows.size() == 1);
  const FlowResult& f = r.result.flows[0];
  // 4096 / 4178 of the 400 Gb/s line rate = 392.15 Gb/s (RoCE v2 framing: IBA Annex A17, IEEE
  // 802.3), over the 1 GiB's wire time plus the fixed part of its FCT through
  // the star's switch, as skeleton (b) without latency: the first packet's
  // store-and-forward, two 1 us propagations each way, the ACK serialized twice.
  const BitRate rate = BitRate::gbps(400);
  const Time expected = Bytes(write_wire_bytes(f.bytes, 4096)) / rate +
                        Bytes(4096 + 82 + 16) / rate + Time::us(4) + (Bytes(kAckWire) / rate) * 2;
  CHECK(f.fct() == expected);
  const double goodput = static_cast<double>(f.bytes) * 8 / f.fct().in_seconds();
  CHECK(goodput == Approx(static_cast<double>(f.bytes) * 8 / expected.in_seconds()).epsilon(1e-12));
  // The fixed part (4 us of 2.74 ms) keeps it 0.15 % under the line-rate figure.
  CHECK(goodput < 4096.0 / 4178.0 * 400e9);
  CHECK(goodput > 4096.0 / 4178.0 * 400e9 * (1 - 0.002));
}

TEST_CASE("SEND and WRITE deliver exact byte counts at any MTU", "[quick][skeleton]") {
  const int mtu = GENERATE(256, 1000, 1024, 4096);
  LoadOptions o;
  o.overrides = {"fabric.mtu=" + std::to_string(mtu)};
  const Ran r = run_text(R"({
    "topology": {"kind": "star", "hosts": 4},
    "traffic": [{"kind": "flow", "src": "h0", "dst": "h1", "size": 1234567, "op": "send"},
                {"kind": "flow", "src": "h2", "dst": "h1", "size": "1MB", "start": "3us"},
                {"kind": "flow", "src": "h3", "dst": "h0", "size": 0}]
  })",
                         o);
  REQUIRE(r.result.status == RunStatus::kComplete);
  int64_t payload_into_h1 = 0;
  for (const LinkResult& l : r.result.links) {
    if (r.scenario.topology.node(l.to).name == "h1") payload_into_h1 += l.payload_bytes;
  }
  CHECK(payload_into_h1 == 1234567 + 1'000'000);
  // The second flow posts at 3 us; its first packet cannot start earlier.
  CHECK(r.result.flows[1].first_tx >= Time::us(3));
}

TEST_CASE("a stop time ends the run with traffic still flowing", "[quick][skeleton]") {
  const Ran r = run_text(R"({
    "topology": {"kind": "star", "hosts": 2},
    "traffic": [{"kind": "flow", "src": "h0", "dst": "h1", "size": "1GiB"}],
    "stop": {"time": "100us"}
  })");
  CHECK(r.result.status == RunStatus::kTimeLimit);
  CHECK(r.result.sim_time == Time::us(100));
  CHECK_FALSE(r.result.flows[0].done);
}

TEST_CASE("cut-through forwarding saves the store-and-forward delay of the first packet",
          "[quick][switch]") {
  // Through one switch with latency λ: store-and-forward adds the first
  // packet's serialization; cut-through adds only the time for its first
  // 64 bytes (Ethernet, IP and UDP headers) to arrive.
  const char* json = R"({
    "fabric": {"link": {"rate": "100Gbps", "delay": "1us"}, "switch": {"latency": "300ns"}},
    "topology": {"kind": "star", "hosts": 2},
    "traffic": [{"kind": "flow", "src": "h0", "dst": "h1", "size": "1MiB"}]
  })";
  LoadOptions ct;
  ct.overrides = {"fabric.switch.forwarding=cut_through"};
  const Ran sf = run_text(json);
  const Ran cut = run_text(json, ct);
  REQUIRE(cut.result.status == RunStatus::kComplete);
  const Time first = Bytes(4096 + 82 + 16) / BitRate::gbps(100);
  const Time head = Bytes(64) / BitRate::gbps(100);
  // The ACKs are cut through too: each saves its own 86-byte serialization less
  // the 64-byte head.
  const Time ack_saving = Bytes(86) / BitRate::gbps(100) - head;
  CHECK(sf.result.flows[0].fct() - cut.result.flows[0].fct() == (first - head) + ack_saving);
}

TEST_CASE("a paced flow starts each packet wire bytes / rate after the previous", "[quick][nic]") {
  const Ran r = run_text(R"({
    "fabric": {"link": {"rate": "100Gbps", "delay": "1us"}},
    "topology": {"kind": "star", "hosts": 2},
    "traffic": [{"kind": "flow", "src": "h0", "dst": "h1", "size": 10000000, "rate": "25Gbps"}]
  })");
  REQUIRE(r.result.status == RunStatus::kComplete);
  // 2442 packets: 2441 of 4096 bytes (the first with a RETH) and one of 1664.
  const int64_t last = 1664 + 82;
  const int64_t total = write_wire_bytes(10'000'000, 4096);
  const BitRate pace = BitRate::gbps(25), line = BitRate::gbps(100);
  // The last packet starts after all the others at the paced rate; it is then
  // serialized twice at line rate (host, switch), and the ACK comes back.
  const Time expected = Bytes(total - last) / pace + (Bytes(last) / line) * 2 + Time::us(2) +
                        (Bytes(kAckWire) / line + Time::us(1)) * 2;
  CHECK(r.result.flows[0].fct() == expected);
}
