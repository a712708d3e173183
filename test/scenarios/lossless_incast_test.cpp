// An 8:1 incast through one switch, lossless (PFC) and lossy. Expected values
// come from the line rate after headers and the buffer's size.
#include "test/support/catch_units.h"
#include "test/support/run_helpers.h"

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

TEST_CASE("8:1 incast with PFC: lossless at line rate", "[lossless][scenario]") {
  const Ran r = run_text(kIncast);
  REQUIRE(r.result.status == RunStatus::kComplete);
  // Zero drops, and the switch paused the senders.
  CHECK(switch_drops(r.result) == 0);
  CHECK(r.result.pfc_frames_sent > 0);
  // The buffer never held more than it has.
  CHECK(r.result.switch_buffer_peak > 0);
  CHECK(r.result.switch_buffer_peak <= 12'000'000);
  // The bottleneck (the switch's port to h0) runs at the RoCE line rate after
  // headers: payload over the span from the first packet to the last ACK.
  int64_t bytes = 0;
  Time first = Time::infinite(), last;
  for (const FlowResult& f : r.result.flows) {
    bytes += f.bytes;
    first = std::min(first, f.first_tx);
    last = std::max(last, f.finish);
  }
  const double goodput = bytes * 8.0 / (last - first).in_seconds();
  CHECK(goodput == Approx(4096.0 / 4178.0 * 100e9).epsilon(0.01));
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
