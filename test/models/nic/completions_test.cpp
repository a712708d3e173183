// Completions per QP (IBA §11.4: a QP is bound to its completion queues):
// two workloads sharing a pair of NICs each see their own completions only.
#include <set>
#include <vector>

#include "models/traffic/flow_generator.h"
#include "test/models/nic/nic_fixture.h"
#include "test/support/catch_units.h"

using namespace rdmasim;
using namespace rdmasim::testing;

namespace {

// A test-only workload: its own QP pairs on the two NICs, SENDs and READs on
// them, every completion it is given recorded.
struct TestWorkload : CompletionHandler {
  TestWorkload(RdmaNic& nic_a, RdmaNic& nic_b, int pairs) : a(nic_a), b(nic_b) {
    for (int i = 0; i < pairs; ++i) {
      const auto [qa, qb] = connect_qps(a, b, 0x4000 + i, this);
      requester_qps.push_back(qa);
      responder_qps.push_back(qb);
    }
  }
  void on_send_completion(uint32_t host, const Completion& c) override {
    CHECK(host == a.host());
    sent.push_back(c);
  }
  void on_receive_completion(uint32_t host, const Completion& c) override {
    CHECK(host == b.host());
    received.push_back(c);
  }
  RdmaNic& a;
  RdmaNic& b;
  std::vector<uint32_t> requester_qps, responder_qps;
  std::vector<Completion> sent, received;
};

}  // namespace

TEST_CASE("a workload sharing the NICs with the flow generator sees only its completions",
          "[quick][nic][completions]") {
  Simulation sim;
  NicConfig cfg;
  RdmaNic& a = sim.add<RdmaNic>("a", 0, cfg, ipv4_format());
  RdmaNic& b = sim.add<RdmaNic>("b", 1, cfg, ipv4_format());
  connect(sim, a, b, BitRate::gbps(100), Time::us(1));
  // The generator's three flows (parts 0, 1, 2, their work request ids).
  std::vector<FlowSpec> flows;
  for (int i = 0; i < 3; ++i) {
    FlowSpec f;
    f.name = "f" + std::to_string(i);
    f.src = 0;
    f.dst = 1;
    f.bytes = 1 << 20;
    f.start = Time::us(i);
    f.op = i == 2 ? Verb::kRead : Verb::kWrite;
    flows.push_back(f);
  }
  FlowGenerator& gen = sim.add<FlowGenerator>("traffic", flows, std::vector<RdmaNic*>{&a, &b});
  TestWorkload w(a, b, 2);
  sim.setup();
  // Work request ids 0..8 collide with the generator's part ids on purpose: a
  // completion routed to the wrong handler would complete the wrong flow.
  // QP 0: 4 SENDs and 2 READs; QP 1: 3 SENDs.
  uint64_t id = 0;
  for (int i = 0; i < 4; ++i) a.post(w.requester_qps[0], WorkRequest{id++, Verb::kSend, 10'000});
  for (int i = 0; i < 2; ++i) a.post(w.requester_qps[0], WorkRequest{id++, Verb::kRead, 20'000});
  for (int i = 0; i < 3; ++i) a.post(w.requester_qps[1], WorkRequest{id++, Verb::kSend, 3'000});
  sim.run();  // stops when the generator's flows are done
  sim.run();  // and anything left runs out

  REQUIRE(gen.completed() == 3);
  CHECK(gen.failed() == 0);
  // Every flow's FCT is at least its bytes at line rate (the flows shared the
  // port with each other and with the workload).
  for (const FlowRecord& r : gen.records()) {
    CHECK(r.done);
    CHECK(r.fct() > Bytes(1 << 20) / BitRate::gbps(100));
  }
  // The workload: 9 requester completions, in posting order per QP, and one
  // receive completion per SEND (7); READs complete only at the requester.
  REQUIRE(w.sent.size() == 9);
  REQUIRE(w.received.size() == 7);
  const std::set<uint32_t> mine_a(w.requester_qps.begin(), w.requester_qps.end());
  const std::set<uint32_t> mine_b(w.responder_qps.begin(), w.responder_qps.end());
  std::vector<uint64_t> ids[2];
  for (const Completion& c : w.sent) {
    CHECK(mine_a.count(c.qpn) == 1);
    CHECK(c.status == WcStatus::kSuccess);
    ids[c.qpn == w.requester_qps[0] ? 0 : 1].push_back(c.wr_id);
  }
  CHECK(ids[0] == std::vector<uint64_t>{0, 1, 2, 3, 4, 5});
  CHECK(ids[1] == std::vector<uint64_t>{6, 7, 8});
  for (const Completion& c : w.received) {
    CHECK(mine_b.count(c.qpn) == 1);
    CHECK(c.verb == Verb::kSend);
    CHECK(c.bytes == (c.qpn == w.responder_qps[0] ? 10'000 : 3'000));
  }
}

TEST_CASE("a QP's completions can be routed to another handler", "[quick][nic][completions]") {
  Pair p;
  Log other;
  p.sim.setup();
  p.a.post(p.qa, WorkRequest{1, Verb::kSend, 100});
  p.sim.run();
  p.a.set_completion_handler(p.qa, &other);
  p.b.set_completion_handler(p.qb, nullptr);  // the responder reports nothing now
  p.a.post(p.qa, WorkRequest{2, Verb::kSend, 100});
  p.sim.run();
  REQUIRE(p.log.sent.size() == 1);
  CHECK(p.log.sent[0].wr_id == 1);
  CHECK(p.log.received.size() == 1);
  REQUIRE(other.sent.size() == 1);
  CHECK(other.sent[0].wr_id == 2);
  CHECK(other.received.empty());
  CHECK(p.b.counters().messages_completed == 2);
}
