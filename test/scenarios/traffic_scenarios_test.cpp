// The traffic-pattern example scenarios run: the incast's receiver link
// carries every sender's bytes and no faster than its line rate allows; a
// random permutation on a non-blocking fat-tree, an all-to-all and
// background traffic complete.
#include <map>
#include <set>

#include "models/proto/roce_v2.h"
#include "test/support/catch_units.h"
#include "test/support/run_helpers.h"

using namespace rdmasim;
using namespace rdmasim::testing;

namespace {

// Wire bytes of one RDMA WRITE of `bytes` at path MTU `mtu`: ceil(bytes/mtu)
// packets (at least one), each with the RoCE v2 headers of its opcode
// (docs/scenario.md: 82 bytes per packet over IPv4, plus the 16-byte RETH of
// the first).
int64_t write_wire_bytes(int64_t bytes, int64_t mtu, const RoceV2Format& f) {
  const int64_t packets = std::max<int64_t>(1, (bytes + mtu - 1) / mtu);
  if (packets == 1) return f.wire_bytes(RcOpcode::kWriteOnly, static_cast<uint32_t>(bytes));
  int64_t wire = f.wire_bytes(RcOpcode::kWriteFirst, static_cast<uint32_t>(mtu));
  wire += (packets - 2) * f.wire_bytes(RcOpcode::kWriteMiddle, static_cast<uint32_t>(mtu));
  wire += f.wire_bytes(RcOpcode::kWriteLast, static_cast<uint32_t>(bytes - (packets - 1) * mtu));
  return wire;
}

}  // namespace

TEST_CASE("incast: the receiver's link carries every sender's bytes, at most at line rate",
          "[traffic][scenario]") {
  const Ran r = run_file("scenarios/incast.json");
  REQUIRE(r.result.status == RunStatus::kComplete);
  const Topology& t = r.scenario.topology;
  const uint32_t dst = t.hosts()[0];  // "dst": "h0"
  const uint32_t sw = *t.find("sw0");
  // 8 senders ("all" but h0), 2 MiB each.
  REQUIRE(r.result.flows.size() == 8);
  const RoceV2Format format(r.scenario.fabric.ip, r.scenario.fabric.vlan);
  const int64_t mtu = r.scenario.fabric.nic.mtu;
  int64_t payload = 0, wire = 0;
  Time last;
  std::set<uint32_t> senders;
  for (const FlowResult& f : r.result.flows) {
    CHECK(f.done);
    CHECK(f.dst == 0);
    CHECK(f.bytes == 2 << 20);
    senders.insert(f.src);
    payload += f.bytes;
    wire += write_wire_bytes(f.bytes, mtu, format);
    last = std::max(last, f.finish);
  }
  CHECK(senders.size() == 8);
  CHECK(senders.count(0) == 0);
  const LinkResult* bottleneck = nullptr;
  for (const LinkResult& l : r.result.links) {
    if (l.from == sw && l.to == dst) bottleneck = &l;
  }
  REQUIRE(bottleneck != nullptr);
  CHECK(bottleneck->payload_bytes == payload);
  CHECK(bottleneck->wire_bytes == wire);  // only data frames flow towards the responder
  // The last completion cannot come before every wire byte has crossed the
  // receiver's link at its line rate (8 x 2 MiB in 512 packets each:
  // 17,113,216 wire bytes, 1.369 ms at 100 Gb/s).
  CHECK(wire == 8 * ((2 << 20) + 512 * 82 + 16));
  const Time bound = Bytes(wire) / bottleneck->rate;
  CHECK(last >= bound);
  // ... and not much later: the link is the only bottleneck (a few delays).
  CHECK(last <= bound + Time::us(20));
}

TEST_CASE("permutation on a non-blocking fat-tree: every flow completes", "[traffic][scenario]") {
  const Ran r = run_file("scenarios/permutation.json");
  REQUIRE(r.result.status == RunStatus::kComplete);
  const Topology& t = r.scenario.topology;
  REQUIRE(r.result.flows.size() == t.num_hosts());
  std::set<uint32_t> srcs, dsts;
  for (const FlowResult& f : r.result.flows) {
    CHECK(f.done);
    srcs.insert(f.src);
    dsts.insert(f.dst);
    // across "leaf": never to a host under the same leaf ("podP.leafL.hN").
    const std::string a = t.node(t.hosts()[f.src]).name, b = t.node(t.hosts()[f.dst]).name;
    CHECK(a.substr(0, a.rfind('.')) != b.substr(0, b.rfind('.')));
  }
  CHECK(srcs.size() == t.num_hosts());
  CHECK(dsts.size() == t.num_hosts());
}

TEST_CASE("all-to-all: n(n-1) flows, every ordered pair, all complete", "[traffic][scenario]") {
  const Ran r = run_file("scenarios/all_to_all.json");
  REQUIRE(r.result.status == RunStatus::kComplete);
  const size_t n = r.scenario.topology.num_hosts();
  REQUIRE(r.result.flows.size() == n * (n - 1));
  std::set<std::pair<uint32_t, uint32_t>> pairs;
  for (const FlowResult& f : r.result.flows) {
    CHECK(f.done);
    pairs.insert({f.src, f.dst});
  }
  CHECK(pairs.size() == n * (n - 1));
}

TEST_CASE("background websearch: every flow completes, sizes within the CDF",
          "[traffic][scenario]") {
  const Ran r = run_file("scenarios/background_websearch.json");
  REQUIRE(r.result.status == RunStatus::kComplete);
  REQUIRE(!r.result.flows.empty());
  for (const FlowResult& f : r.result.flows) {
    CHECK(f.done);
    CHECK(f.src != f.dst);
    CHECK(f.bytes >= 1);
    CHECK(f.bytes <= 30'000'000);
    CHECK(f.start <= Time::ms(2));
  }
}
