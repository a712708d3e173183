#include "sim/scenario/invariant_checks.h"

#include "sim/invariants.h"
#include "sim/scenario/fabric_builder.h"
#include "sim/scenario/scenario.h"
#include "test/support/catch_units.h"
#include "test/support/run_helpers.h"
#include "test/support/scenario_sim.h"

using namespace rdmasim;

TEST_CASE("qp_end_state: a completed run holds no open QP and no QP in error",
          "[quick][invariants]") {
  const QpEnd done{"flow 0 sender", false, false, true};
  const QpEnd open{"flow 1 sender", false, true, false};
  const QpEnd failed{"flow 2 sender", true, false, true};
  CHECK_NOTHROW(check_qp_end_states(RunStatus::kComplete, {done, done}, Time::us(3)));
  CHECK_THROWS_WITH(check_qp_end_states(RunStatus::kComplete, {done, open}, Time::us(3)),
                    "invariant qp_end_state violated at flow 1 sender, t=3us: the run "
                    "completed, but the QP is still open");
  CHECK_THROWS_WITH(check_qp_end_states(RunStatus::kComplete, {failed}, Time::us(3)),
                    Catch::EndsWith("the QP is in the error state"));
  // Open at a time limit, or after another end that the run reports: fine.
  for (const RunStatus s :
       {RunStatus::kTimeLimit, RunStatus::kStalled, RunStatus::kDeadlock, RunStatus::kQpError}) {
    CHECK_NOTHROW(check_qp_end_states(s, {done, open, failed}, Time::us(3)));
  }
}

TEST_CASE("qp_end_state: a QP in error must be reported", "[quick][invariants]") {
  const QpEnd silent{"host 4 QP 2", true, false, false};
  CHECK_THROWS_WITH(check_qp_end_states(RunStatus::kQpError, {silent}, Time::ms(1)),
                    "invariant qp_end_state violated at host 4 QP 2, t=1ms: the QP is in the "
                    "error state, but no error was reported");
}

TEST_CASE("flow_bytes: sent = delivered + in flight + dropped", "[quick][invariants]") {
  const FlowBytes ok{"flow 0 part 0", 10'000, 6'000, 3'000, 1'000};
  CHECK_NOTHROW(check_flow_bytes({ok}, Time::us(1)));
  FlowBytes lost = ok;
  lost.where = "flow 7 part 1";
  lost.delivered -= 1024;  // a packet that vanished
  CHECK_THROWS_WITH(check_flow_bytes({ok, lost}, Time::us(1)),
                    "invariant flow_bytes violated at flow 7 part 1, t=1us: sent 10000 B, "
                    "delivered 4976 B + in flight 3000 B + dropped 1000 B (expected sent = "
                    "their sum)");
  FlowBytes twice = ok;
  twice.delivered += 1024;  // a packet counted twice
  CHECK_THROWS_AS(check_flow_bytes({twice}, Time::us(1)), InvariantViolation);
}

TEST_CASE("an invariant violation exits with its own code", "[quick][invariants]") {
  CHECK(exit_code(RunStatus::kInvariantViolated) == 8);
  CHECK(std::string(to_string(RunStatus::kInvariantViolated)) == "invariant_violated");
}

TEST_CASE("flow_bytes: a lossy incast's drops and retransmissions balance, flow by flow",
          "[quick][invariants]") {
  // lossy_incast, cut to 2 MiB per sender (16 MiB into a queue that may
  // hold half the 12 MB pool): its egress queue drops data packets, which the
  // senders send again.
  LoadOptions o;
  o.overrides = {"traffic[0].size=\"2MiB\""};
  const Scenario sc = load_scenario_file(testing::source_path("scenarios/lossy_incast.json"), o);
  testing::ScenarioSim s(sc);
  s.sim.setup();
  s.sim.run(sc.stop.time);
  Fabric fabric;
  fabric.nics = s.nics;
  fabric.switches = s.switches;
  fabric.cables = s.cables;
  const std::vector<FlowBytes> flows = gather_flow_bytes(fabric, *s.traffic);
  REQUIRE(flows.size() == 2 * sc.flows.size());  // both directions of each
  CHECK_NOTHROW(check_flow_bytes(flows, s.sim.now()));
  int64_t sent = 0, delivered = 0, dropped = 0, in_flight = 0;
  for (const FlowBytes& f : flows) {
    sent += f.sent;
    delivered += f.delivered;
    dropped += f.dropped;
    in_flight += f.in_flight;
  }
  int64_t bytes = 0;
  for (const FlowSpec& f : sc.flows) bytes += f.bytes;
  CHECK(dropped > 0);         // the incast overflowed its queue ...
  CHECK(delivered >= bytes);  // ... every byte arrived at least once ...
  CHECK(sent == delivered + dropped + in_flight);
  CHECK(sent > bytes);  // ... some of them twice
  CHECK(s.switches[0]->drops(DropReason::kEgressLimit) > 0);
}

namespace {

// Runs the scenario's one collective to its end; the fabric the end-of-run
// checks gather from.
Fabric run_collective(testing::ScenarioSim& s, const Scenario& sc) {
  s.sim.setup();
  s.sim.run(sc.stop.time);
  REQUIRE(s.collectives.at(0)->completed() == 1);
  Fabric fabric;
  fabric.nics = s.nics;
  fabric.switches = s.switches;
  fabric.cables = s.cables;
  return fabric;
}

}  // namespace

TEST_CASE("qp_end_state and flow_bytes cover a collective's QPs", "[quick][invariants]") {
  // A ring AllReduce on four hosts: 4 ranks x 1 channel = 4 connections,
  // each a QP pair carrying elements one way and FIFO entries the other.
  const Scenario sc = load_scenario_text(R"({
    "topology": {"kind": "star", "hosts": 4},
    "traffic": [{"kind": "collective", "op": "all_reduce", "size": "256KiB",
                 "nccl_buffsize": "64KiB"}]
  })",
                                         "collective");
  testing::ScenarioSim s(sc);
  REQUIRE(s.collectives.size() == 1);
  const Collective& c = *s.collectives[0];
  const Fabric fabric = run_collective(s, sc);
  std::vector<QpEnd> qps = gather_qp_ends(fabric, *s.traffic, s.collectives);
  std::vector<FlowBytes> bytes = gather_flow_bytes(fabric, *s.traffic, s.collectives);
  REQUIRE(qps.size() == 2 * c.connections());
  REQUIRE(bytes.size() == 2 * c.connections());
  const std::string at = "collective " + c.name() + " connection ";
  CHECK_THAT(qps[0].where, Catch::StartsWith(at + "0 sender host "));
  CHECK_NOTHROW(check_qp_end_states(RunStatus::kComplete, qps, s.sim.now()));
  CHECK_NOTHROW(check_flow_bytes(bytes, s.sim.now()));
  // Elements one way: every byte of the collective, delivered (nothing is
  // lost on a star); FIFO entries of 64 bytes the other.
  int64_t elements = 0;
  for (size_t i = 0; i < bytes.size(); i += 2) elements += bytes[i].delivered;
  CHECK(elements == c.bytes_total());
  CHECK(bytes[1].delivered % kFifoEntryBytes == 0);
  // A QP left open, or in error unreported, or a byte lost: each reported.
  QpEnd open = qps[3];
  open.open = true;
  CHECK_THROWS_WITH(check_qp_end_states(RunStatus::kComplete, {open}, s.sim.now()),
                    Catch::StartsWith("invariant qp_end_state violated at " + at + "1 receiver") &&
                        Catch::EndsWith("the QP is still open"));
  QpEnd silent = qps[2];
  silent.error = true;
  silent.reported = c.failed() > 0;
  CHECK_THROWS_AS(check_qp_end_states(RunStatus::kQpError, {silent}, s.sim.now()),
                  InvariantViolation);
  FlowBytes lost = bytes[4];
  lost.delivered -= 4096;
  CHECK_THROWS_WITH(check_flow_bytes({lost}, s.sim.now()),
                    Catch::StartsWith("invariant flow_bytes violated at " + at + "2, host "));
}

TEST_CASE("a collective run with --check passes its end-of-run checks", "[quick][invariants]") {
  const testing::Ran r = testing::run_text(R"({
    "topology": {"kind": "star", "hosts": 4},
    "traffic": [{"kind": "collective", "op": "all_gather", "size": "256KiB", "channels": 2,
                 "iterations": 2, "nccl_buffsize": "64KiB"}]
  })");
  CHECK(r.result.checked);
  CHECK(r.result.status == RunStatus::kComplete);
  CHECK(r.result.invariant.empty());
}

TEST_CASE("qp_end_state and flow_bytes cover every QP of a tree's connections",
          "[quick][invariants]") {
  // A double binary tree on four hosts with three QPs per connection: every
  // QP pair is checked (2 directions x 3 QPs per connection), and the
  // elements delivered over all of them add up to the collective's bytes.
  const Scenario sc = load_scenario_text(R"({
    "topology": {"kind": "star", "hosts": 4},
    "traffic": [{"kind": "collective", "op": "all_reduce", "algorithm": "tree", "size": "256KiB",
                 "qps_per_connection": 3, "nccl_buffsize": "64KiB"}]
  })",
                                         "tree");
  testing::ScenarioSim s(sc);
  REQUIRE(s.collectives.size() == 1);
  const Collective& c = *s.collectives[0];
  const Fabric fabric = run_collective(s, sc);
  const std::vector<QpEnd> qps = gather_qp_ends(fabric, *s.traffic, s.collectives);
  const std::vector<FlowBytes> bytes = gather_flow_bytes(fabric, *s.traffic, s.collectives);
  REQUIRE(qps.size() == 2 * 3 * c.connections());
  REQUIRE(bytes.size() == 2 * 3 * c.connections());
  CHECK_NOTHROW(check_qp_end_states(RunStatus::kComplete, qps, s.sim.now()));
  CHECK_NOTHROW(check_flow_bytes(bytes, s.sim.now()));
  int64_t elements = 0;
  for (size_t i = 0; i < bytes.size(); i += 2) elements += bytes[i].delivered;
  // Each tree carries S/2 up every one of its n - 1 edges and S/2 down:
  // 2 trees x (n - 1) x S = 6 S for n = 4.
  CHECK(elements == 6 * 256 * 1024);
  CHECK(elements == c.bytes_total());
}
