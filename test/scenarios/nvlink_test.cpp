// NVLink inside a rail-optimized server (models/proto/nvlink.h,
// docs/topologies.md): its own framing with the link rate as the payload
// rate, no PFC, no credits, no ECN, and intra-server traffic that stays on
// the NVLinks. Expected values come from the model's definition, not from a
// run: a transfer of S bytes over one NVSwitch takes S / R for the data, one
// packet's store-and-forward (MTU / R) and four propagation delays (data
// there, the last ACK back; ACKs take no time on an NVLink), with R the
// configured 2960 Gb/s (370 GB/s, NVIDIA/nccl-tests#212).
#include <catch2/catch.hpp>
#include <string>

#include "sim/scenario/runner.h"
#include "test/support/run_helpers.h"

using namespace rdmasim;
using namespace rdmasim::testing;

namespace {

constexpr int64_t kMtu = 4096;
const BitRate kNvlinkRate = BitRate::gbps(2960);  // the default payload rate
const Time kNvlinkDelay = Time::ns(100);          // the default delay

// One server of 4 GPUs (rails 400G), default NVLink; `fabric` adds keys.
std::string server(const std::string& traffic, const std::string& fabric = "") {
  return R"({"fabric": {"mtu": 4096, "link": {"rate": "400Gbps", "delay": "500ns"})" + fabric +
         R"(}, "topology": {"kind": "rail_optimized", "sus": 1, "nodes_per_su": 1, "ufm": false,
             "gpus_per_node": 4, "spines": 1}, "traffic": [)" +
         traffic + "]}";
}

std::string write(const std::string& src, const std::string& dst, int64_t bytes) {
  return R"({"kind": "flow", "src": ")" + src + R"(", "dst": ")" + dst + R"(", "size": ")" +
         std::to_string(bytes) + R"("})";
}

// Every frame of the run crossed NVLinks only: no NIC port (rail cable) and
// no leaf carried one.
void check_nvlink_only(const Ran& ran) {
  const auto& links = ran.scenario.topology.links();
  uint64_t nvlink_frames = 0;
  for (const LinkResult& l : ran.result.links) {
    if (links[l.link].kind == LinkKind::kNvlink) {
      nvlink_frames += l.frames;
      // NVLink framing: the wire carries the payload and nothing else.
      CHECK(l.wire_bytes == l.payload_bytes);
    } else {
      INFO("link " << l.link << " from node " << l.from);
      CHECK(l.frames == 0);
    }
  }
  CHECK(nvlink_frames > 0);
}

// S / R plus one packet's store-and-forward and four delays, within the
// serializer's rounding (each of the two links rounds its total down by
// less than 1 ps, docs/architecture.md).
Time one_switch_fct(int64_t bytes_through_bottleneck) {
  return Bytes(bytes_through_bottleneck) / kNvlinkRate + Bytes(kMtu) / kNvlinkRate +
         kNvlinkDelay * 4;
}

}  // namespace

TEST_CASE(
    "NVLink: a GPU-to-GPU WRITE in one server moves its payload at exactly 2960 Gb/s, plus one "
    "packet's store-and-forward and four NVLink delays, and touches no NIC port",
    "[scenario][nvlink]") {
  const int64_t size = int64_t{16} << 20;
  const Ran ran = run_text(server(write("su0.node0.gpu0", "su0.node0.gpu1", size)));
  REQUIRE(ran.result.status == RunStatus::kComplete);
  REQUIRE(ran.result.flows.size() == 1);
  const FlowResult& f = ran.result.flows[0];
  REQUIRE(f.done);
  const Time fct = f.finish - f.start;
  const Time expected = one_switch_fct(size);
  INFO("FCT " << fct.in_ps() << " ps, expected " << expected.in_ps() << " ps");
  CHECK(std::llabs((fct - expected).in_ps()) <= 2);
  // The sending NVLink was busy for exactly S / R: the payload rate.
  for (const LinkResult& l : ran.result.links) {
    if (l.payload_bytes != size) continue;
    CHECK(std::llabs((l.busy - Bytes(size) / kNvlinkRate).in_ps()) <= 1);
  }
  check_nvlink_only(ran);
  CHECK(ran.result.retransmissions == 0);
}

TEST_CASE(
    "NVLink contention: two WRITEs into one GPU share its NVLink, each at half the rate (the last "
    "done at exactly 2S / R plus the one-switch latency, the first at most a packet earlier)",
    "[scenario][nvlink]") {
  const int64_t size = int64_t{8} << 20;
  const Ran ran = run_text(server(write("su0.node0.gpu0", "su0.node0.gpu2", size) + ", " +
                                  write("su0.node0.gpu1", "su0.node0.gpu2", size)));
  REQUIRE(ran.result.status == RunStatus::kComplete);
  REQUIRE(ran.result.flows.size() == 2);
  const Time last = one_switch_fct(2 * size);
  Time latest = Time::zero();
  for (const FlowResult& f : ran.result.flows) {
    REQUIRE(f.done);
    const Time fct = f.finish - f.start;
    INFO("FCT " << fct.in_ps() << " ps, the pair's last at " << last.in_ps() << " ps");
    // Half the rate each: within one packet of 2S / R (0.05 % here).
    CHECK(fct <= last + Time::ps(2));
    CHECK(fct >= last - Bytes(kMtu) / kNvlinkRate - Time::ps(2));
    latest = std::max(latest, fct);
  }
  CHECK(std::llabs((latest - last).in_ps()) <= 2);
  check_nvlink_only(ran);
}

TEST_CASE(
    "NVLink is lossless without PFC or credits, and unmarked: a 3-to-1 incast inside a server "
    "with PFC and ECN on the fabric sends no pause frame, marks nothing, drops nothing, and ends "
    "at 3S / R plus the one-switch latency",
    "[scenario][nvlink]") {
  const int64_t size = int64_t{4} << 20;
  const std::string ecn = R"(, "switch": {"pfc": {"lossless": [3]},
      "ecn": {"enabled": true, "kmin": "5KB", "kmax": "20KB", "pmax": 1}})";
  const Ran ran = run_text(server(write("su0.node0.gpu0", "su0.node0.gpu3", size) + ", " +
                                      write("su0.node0.gpu1", "su0.node0.gpu3", size) + ", " +
                                      write("su0.node0.gpu2", "su0.node0.gpu3", size),
                                  ecn));
  REQUIRE(ran.result.status == RunStatus::kComplete);
  CHECK(ran.result.pfc_frames_sent == 0);
  CHECK(ran.result.ecn_marked == 0);
  CHECK(ran.result.total_drops() == 0);
  CHECK(ran.result.retransmissions == 0);
  Time latest = Time::zero();
  for (const FlowResult& f : ran.result.flows) {
    REQUIRE(f.done);
    latest = std::max(latest, f.finish - f.start);
  }
  CHECK(std::llabs((latest - one_switch_fct(3 * size)).in_ps()) <= 3);
  check_nvlink_only(ran);
}

TEST_CASE(
    "NVLink contention: two ring AllReduces on the same 4 GPUs of one server each get half the "
    "NVLink bandwidth within 1 % (alone: within 1 % of all of it), and neither touches a NIC port",
    "[scenario][nvlink][collective]") {
  // A ring AllReduce's busbw is the rate each rank's link sustains (nccl-
  // tests' definition): R alone (370 GB/s), R / 2 each for two at once.
  const double r = static_cast<double>(kNvlinkRate.in_bps()) / 8e9;  // GB/s
  const std::string one =
      R"({"kind": "collective", "op": "all_reduce", "size": "32MiB", "ranks": {"su": 0}})";
  const Ran solo = run_text(server(one));
  REQUIRE(solo.result.status == RunStatus::kComplete);
  REQUIRE(solo.result.collectives.size() == 1);
  const double solo_busbw = solo.result.collectives[0].busbw_gbps;
  INFO("alone: busbw " << solo_busbw << " GB/s of " << r);
  CHECK(solo_busbw <= r * (1 + 1e-9));
  CHECK(solo_busbw >= 0.99 * r);
  check_nvlink_only(solo);

  const Ran two = run_text(server(one + ", " + one));
  REQUIRE(two.result.status == RunStatus::kComplete);
  REQUIRE(two.result.collectives.size() == 2);
  for (const CollectiveResult& c : two.result.collectives) {
    INFO("together: busbw " << c.busbw_gbps << " GB/s, half the rate " << r / 2);
    CHECK(c.completed == 1);
    CHECK(c.busbw_gbps == Approx(r / 2).epsilon(0.01));
  }
  check_nvlink_only(two);
}
