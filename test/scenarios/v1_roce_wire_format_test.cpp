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

  // 256 packets x (4096 + 82) bytes, plus the first packet's 16-byte RETH.
  const int64_t header = 14 + 20 + 8 + 12 + 4 + 4 + 20;
  const int64_t wire = 256 * (4096 + header) + 16;
  CHECK(wire == 1'069'584);
  const LinkResult& ab = r.result.links[0];
  CHECK(ab.wire_bytes == Approx(wire).epsilon(0.001));
  CHECK(ab.payload_bytes == 1 << 20);

  // Serialisation: 85.566 us at 100G, 21.391 us at 400G; completion adds the
  // propagation delay and the return of the 86-byte ACK.
  const double rate = gbps * 1e9;
  const double serialization = wire * 8 / rate;
  CHECK(serialization == Approx(gbps == 100 ? 85.566e-6 : 21.391e-6).epsilon(0.001));
  const double expected = serialization + 500e-9 + 86 * 8 / rate + 500e-9;
  CHECK(r.result.flows[0].fct().in_seconds() == Approx(expected).epsilon(0.001));
}
