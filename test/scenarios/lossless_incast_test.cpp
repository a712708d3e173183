// An 8:1 incast through one switch, lossless (PFC) and lossy. Expected values
// come from the line rate after headers and the buffer's size.
#include "test/support/catch_units.h"
#include "test/support/run_helpers.h"

#include <string>

using namespace rdmasim;
using namespace rdmasim::testing;

namespace {

const char* kIncast = R"({
  "fabric": {"mtu": 4096, "link": {"rate": "100Gbps", "delay": "1us"},
             "switch": {"preset": "trident2"}},
  "topology": {"kind": "star", "hosts": 9},
  "traffic": [{"kind": "incast", "senders": "all", "dst": "h0", "size": "8MiB"}]
})";

uint64_t switch_drops(const RunResult& r) {
  uint64_t n = 0;
  for (const auto& [reason, count] : r.switch_drops) n += count;
  return n;
}

}  // namespace

// Wire bytes of one 8 MiB WRITE at path MTU 4096 (CASES.md V1): 2048 packets
// of 4096 + 82 bytes (Ethernet 14, IPv4 20, UDP 8, BTH 12, ICRC 4, FCS 4,
// preamble+SFD 8, IFG 12), the first with a 16-byte RETH.
constexpr int64_t kFlowWire = 2048 * (4096 + 82) + 16;
constexpr int64_t kFirstPacket = 4096 + 82 + 16;
constexpr int64_t kAckWire = 86;

TEST_CASE("8:1 incast with PFC: lossless at line rate", "[lossless][scenario]") {
  // The NIC's PFC response delay: 0 (an ideal MAC), and 2 us and 3 us, which
  // the switch's automatic headroom must cover (2 us is within IEEE 802.3's
  // bound of 394 quanta at 100G, 2.02 us). The switch's own response delay
  // stays 0: it is not the one that reacts to the switch's pauses.
  const std::string response = GENERATE(std::string("0s"), std::string("2us"), std::string("3us"));
  INFO("fabric.nic.pfc_response_delay " << response);
  LoadOptions o;
  o.overrides = {"fabric.nic.pfc_response_delay=\"" + response + "\""};
  const Ran r = run_text(kIncast, o);
  REQUIRE(r.result.status == RunStatus::kComplete);
  // Zero drops, and the switch paused the senders.
  CHECK(switch_drops(r.result) == 0);
  CHECK(r.result.pfc_frames_sent > 0);
  // The buffer never held more than it has.
  CHECK(r.result.switch_buffer_peak > 0);
  CHECK(r.result.switch_buffer_peak <= 12'000'000);
  // The bottleneck (the switch's port to h0) runs at line rate, never idle,
  // from the first packet's arrival at the switch to the last packet's
  // departure: the span from the first packet to the last ACK is the first
  // packet's serialization and propagation, all 8 flows' wire bytes at
  // 100 Gb/s, the last packet's propagation, and the last ACK's way back
  // (serialized at h0 and at the switch, two propagations). A byte is 80 ps
  // at 100G, so this is exact to the picosecond; a missing IFG would be 0.29 %.
  const BitRate rate = BitRate::gbps(100);
  int64_t bytes = 0;
  Time first = Time::infinite(), last;
  for (const FlowResult& f : r.result.flows) {
    bytes += f.bytes;
    first = std::min(first, f.first_tx);
    last = std::max(last, f.finish);
  }
  CHECK(bytes == 8LL * 8 * 1024 * 1024);
  const Time span = Bytes(kFirstPacket) / rate + Time::us(1) + Bytes(8 * kFlowWire) / rate +
                    Time::us(1) + (Bytes(kAckWire) / rate) * 2 + Time::us(2);
  CHECK(last - first == span);
  for (const LinkResult& l : r.result.links) {
    if (r.scenario.topology.node(l.to).name != "h0") continue;
    CHECK(l.wire_bytes == 8 * kFlowWire);
    CHECK(l.busy == Bytes(8 * kFlowWire) / rate);
  }
  // The goodput follows: 4096 / 4178 of the line rate, less the 4 us fixed
  // part of a 5.4 ms span (0.08 %).
  const double goodput = static_cast<double>(bytes) * 8 / (last - first).in_seconds();
  CHECK(goodput < 4096.0 / 4178.0 * 100e9);
  CHECK(goodput > 4096.0 / 4178.0 * 100e9 * (1 - 0.001));
}

TEST_CASE("8:1 incast without PFC: drops, and go-back-N still delivers every byte",
          "[lossless][scenario]") {
  LoadOptions o;
  o.overrides = {"fabric.switch.pfc.lossless=[]", "fabric.nic.retransmit_timeout=\"100us\""};
  const Ran r = run_text(kIncast, o);
  REQUIRE(r.result.status == RunStatus::kComplete);
  CHECK(switch_drops(r.result) > 0);
  CHECK(r.result.pfc_frames_sent == 0);
  CHECK(r.result.retransmissions > 0);
  // Every byte arrived: the link into h0 carried at least all the payload.
  int64_t into_h0 = 0;
  for (const LinkResult& l : r.result.links) {
    if (r.scenario.topology.node(l.to).name == "h0") into_h0 += l.payload_bytes;
  }
  CHECK(into_h0 >= 8LL * 8 * 1024 * 1024);
  for (const FlowResult& f : r.result.flows) CHECK(f.done);
}

TEST_CASE(
    "V4b automatic headroom under cut-through covers frames stretched by a slower port "
    "upstream",
    "[validation][V4]") {
  // 400 Gb/s switches, one 25 Gb/s host. s2 cuts h's frames through to s1,
  // which cuts them through to a0: each port stays busy until the frame's
  // last bit has come in at 25 Gb/s, 16 of its own frame times, and a pause
  // for a0 or a1 waits behind it. The headroom once counted one frame time
  // at 400 Gb/s: lossless drops at both switches (24 of them, a violation
  // under the checks), with the static threshold and the dynamic one.
  for (const char* threshold : {"static", "dynamic"}) {
    INFO(threshold);
    const Ran r = run_text(std::string(R"({
      "fabric": {"link": {"rate": "400Gbps", "delay": "1us"},
                 "switch": {"forwarding": "cut_through", "pfc": {"threshold": ")") +
                           threshold + R"("}}},
      "topology": {"kind": "graph", "hosts": ["a0", "a1", "h", "b0"], "switches": ["s1", "s2"],
        "links": [{"a": "a0", "b": "s1"}, {"a": "a1", "b": "s1"}, {"a": "s1", "b": "s2"},
                  {"a": "b0", "b": "s2"}, {"a": "h", "b": "s2", "rate": "25Gbps"}]},
      "traffic": [{"kind": "incast", "senders": ["a0", "a1", "b0"], "dst": "h", "size": "4MB"},
                  {"kind": "flow", "src": "h", "dst": "a0", "size": "4MB"},
                  {"kind": "flow", "src": "h", "dst": "b0", "size": "4MB"}]})");
    CHECK(r.result.status == RunStatus::kComplete);
    CHECK(r.result.total_drops() == 0);
    CHECK(r.result.pfc_frames_sent > 0);
  }
}
