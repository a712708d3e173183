// Validation case V1 (docs/validation.md): RoCE v2 wire format and
// serialisation. A 1 MiB WRITE over one RoCE v2 hop at 100G and at 400G, path
// MTU 4096, IPv4, no VLAN. The frame sizes of CNP and PFC are checked in
// test/models/proto/wire_format_test.cpp ("V1 RoCE v2 frame sizes").
#include "test/support/catch_units.h"
#include "test/support/run_helpers.h"

using namespace rdmasim;
using namespace rdmasim::testing;

TEST_CASE("V1 RoCE v2 WRITE wire bytes and completion time", "[quick][validation][V1]") {
  const int gbps = GENERATE(100, 400);
  LoadOptions o;
  o.overrides = {"fabric.link.rate=" + std::to_string(gbps) + "Gbps"};
  const Ran r = run_text(R"({
    "fabric": {"mtu": 4096, "link": {"delay": "500ns"}},
    "topology": {"kind": "graph", "hosts": ["a", "b"], "links": [{"a": "a", "b": "b"}]},
    "traffic": [{"kind": "flow", "src": "a", "dst": "b", "size": "1MiB"}]
  })",
                         o);
  REQUIRE(r.result.status == RunStatus::kComplete);

  // 256 packets x (4096 + 82) bytes, plus the first packet's 16-byte RETH
  // (CASES.md V1: Ethernet 14, IPv4 20, UDP 8, BTH 12, ICRC 4, FCS 4,
  // preamble+SFD 8 and IFG 12). EXACT: bytes to the byte.
  const int64_t header = 14 + 20 + 8 + 12 + 4 + 4 + 20;
  const int64_t wire = 256 * (4096 + header) + 16;
  CHECK(wire == 1'069'584);
  const LinkResult& ab = r.result.links[0];
  CHECK(ab.wire_bytes == wire);
  CHECK(ab.frames == 256);
  CHECK(ab.payload_bytes == 1 << 20);

  // Serialisation: 85.566 us at 100G, 21.391 us at 400G (CASES.md, to the ns
  // below); completion adds the propagation delay and the return of the 86-byte
  // ACK (66-byte frame + 20). At 100 and 400 Gb/s a byte takes a whole number
  // of picoseconds (80, 20), so the model is exact: to the picosecond.
  const BitRate rate = BitRate::gbps(gbps);
  const Time serialization = Bytes(wire) / rate;
  CHECK(ab.busy == serialization);
  const Time stated = gbps == 100 ? Time::ps(85'566'000) : Time::ps(21'391'000);
  CHECK(serialization >= stated);
  CHECK(serialization < stated + Time::ns(1));
  const Time expected = serialization + Time::ns(500) + Bytes(86) / rate + Time::ns(500);
  CHECK(r.result.flows[0].fct() == expected);
}
