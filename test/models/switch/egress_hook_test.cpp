#include "models/switch/egress_hook.h"

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/switch/switch.h"
#include "sim/cable.h"
#include "test/support/built_topology.h"
#include "test/support/burst.h"
#include "test/support/catch_units.h"
#include "test/support/test_host.h"

using namespace rdmasim;
using rdmasim::testing::Burst;
using rdmasim::testing::TestHost;

namespace {

// The toy annotator: a hop count in the packet's extension area, one more
// at every switch the packet leaves.
struct HopCount {
  uint32_t hops;
};
struct HopCounter : EgressHook {
  HopCounter() : EgressHook(kAtDequeue) {}
  void on_dequeue(const EgressView& q, Packet& p) override { ++q.ext(p).as<HopCount>().hops; }
};

}  // namespace

TEST_CASE("an egress annotator counts the switches on every path of a k=4 fat tree",
          "[quick][switch][egress_hook]") {
  // Al-Fares et al. (SIGCOMM 2008): hosts on one edge switch meet there (1
  // switch), hosts of one pod go edge-aggregation-edge (3), hosts of two pods
  // edge-aggregation-core-aggregation-edge (5). The generator numbers hosts
  // pod by pod, edge by edge: host h is on edge h / (k/2), in pod h / (k^2/4).
  const uint32_t k = 4;
  const testing::Built b = testing::build(k_ary_fat_tree(k, {BitRate::gbps(100), Time::us(1)}));
  Simulation sim;
  SwitchConfig sc;
  HopCounter counter;
  std::vector<Node*> nodes(b.t.nodes().size());
  std::vector<TestHost*> hosts(b.t.num_hosts());
  std::vector<Switch*> switches;
  for (uint32_t id = 0; id < nodes.size(); ++id) {
    const TopoNode& n = b.t.node(id);
    if (n.kind == NodeKind::kHost) {
      hosts[n.host_index] = &sim.add<TestHost>(n.name, n.host_index);
      nodes[id] = hosts[n.host_index];
    } else {
      switches.push_back(&sim.add<Switch>(n.name, sc));
      nodes[id] = switches.back();
    }
  }
  for (const TopoLink& l : b.t.links()) {
    const Cable c = connect(sim, *nodes[l.a], *nodes[l.b], l.rate, l.delay);
    REQUIRE(c.a_port == l.a_port);
    REQUIRE(c.b_port == l.b_port);
  }
  for (uint32_t id = 0; id < nodes.size(); ++id) {
    if (b.t.node(id).kind != NodeKind::kSwitch) continue;
    auto* sw = static_cast<Switch*>(nodes[id]);
    sw->set_forwarding_table(b.r.table(id));
    sw->add_egress_hook(counter, 0xFF);
  }
  // Every host sends two packets to every other host (different flow hashes,
  // so ECMP spreads them over the equal-cost paths).
  const uint32_t n = static_cast<uint32_t>(hosts.size());
  for (uint32_t s = 0; s < n; ++s) {
    for (uint32_t d = 0; d < n; ++d) {
      if (s == d) continue;
      for (uint32_t m = 0; m < 2; ++m) hosts[s]->add({d, 1024, s * 1000 + d * 10 + m});
    }
  }
  sim.setup();
  sim.run();
  const auto edge = [&](uint32_t h) { return h / (k / 2); };
  const auto pod = [&](uint32_t h) { return h / (k * k / 4); };
  std::map<uint32_t, int> paths;  // switches on the path -> packets
  for (uint32_t d = 0; d < n; ++d) {
    REQUIRE(hosts[d]->received().size() == 2 * (n - 1));
    for (const TestHost::Received& r : hosts[d]->received()) {
      const uint32_t s = r.packet.src;
      const uint32_t expected = edge(s) == edge(d) ? 1 : pod(s) == pod(d) ? 3 : 5;
      INFO("host " << s << " to host " << d);
      REQUIRE(r.has_ext);
      CHECK(r.ext.as<HopCount>().hops == expected);
      ++paths[expected];
    }
  }
  // Per host: 1 host on its edge, 2 elsewhere in its pod, 12 in other pods.
  CHECK(paths[1] == static_cast<int>(n * 1 * 2));
  CHECK(paths[3] == static_cast<int>(n * 2 * 2));
  CHECK(paths[5] == static_cast<int>(n * 12 * 2));
}

namespace {

// What a hook saw of one packet at one point.
struct Seen {
  uint8_t point;
  uint32_t index;  // the packet's place in the burst
  Time now;
  uint32_t port;
  uint8_t priority;
  int64_t queue_bytes;
  size_t queue_packets;
  int64_t tx_bytes;
  BitRate rate;
};
struct Recorder : EgressHook {
  explicit Recorder(uint8_t points = kAtEnqueue | kAtDequeue, std::vector<int>* order = nullptr,
                    int tag = 0)
      : EgressHook(points), order_(order), tag_(tag) {}
  void on_enqueue(const EgressView& q, Packet& p) override { record(kAtEnqueue, q, p); }
  void on_dequeue(const EgressView& q, Packet& p) override { record(kAtDequeue, q, p); }
  void record(uint8_t point, const EgressView& q, const Packet& p) {
    seen.push_back({point, p.psn, q.now(), q.port(), q.priority(), q.queue_bytes(),
                    q.queue_packets(), q.tx_bytes(), q.rate()});
    if (order_ != nullptr) order_->push_back(tag_);
  }
  std::vector<Seen> seen;
  std::vector<int>* order_;
  int tag_;
};

}  // namespace

TEST_CASE("an egress hook sees the queue, the bytes sent, the rate and the time",
          "[quick][switch][egress_hook]") {
  const uint32_t pipeline = GENERATE(0u, 5u);
  Burst s(SwitchConfig{}, 16, pipeline);
  Recorder rec;
  s.sw->add_egress_hook(rec, 0xFF);
  s.run();
  REQUIRE(s.b->received().size() == s.n);
  REQUIRE(s.sw->counters().pfc_sent == 0);  // nothing but the burst leaves port cb
  std::vector<Seen> enq, deq;
  for (const Seen& x : rec.seen) (x.point == EgressHook::kAtEnqueue ? enq : deq).push_back(x);
  REQUIRE(enq.size() == s.n);
  REQUIRE(deq.size() == s.n);
  for (uint32_t i = 0; i < s.n; ++i) {
    INFO("packet " << i);
    CHECK(enq[i].index == i);
    CHECK(enq[i].now == s.enqueue(i));
    CHECK(enq[i].port == s.cb.b_port);
    CHECK(enq[i].priority == 3);  // DSCP 26
    CHECK(enq[i].queue_packets == s.queued_at_enqueue(i));
    CHECK(enq[i].queue_bytes == s.charged_at_enqueue(i) * s.charged());
    CHECK(enq[i].tx_bytes == int64_t{s.left_by_enqueue(i)} * s.wire());
    CHECK(enq[i].rate == BitRate::gbps(100));
    CHECK(deq[i].index == i);
    CHECK(deq[i].now == s.departure(i));
    CHECK(deq[i].port == s.cb.b_port);
    CHECK(deq[i].priority == 3);
    CHECK(deq[i].queue_packets == s.queued_at_dequeue(i));
    CHECK(deq[i].queue_bytes == s.charged_at_dequeue(i) * s.charged());
    CHECK(deq[i].tx_bytes == int64_t{i} * s.wire());  // every frame before it
    CHECK(deq[i].rate == BitRate::gbps(100));
  }
  // The last frame's last bit reaches b one frame time (4T) and a cable after
  // it starts leaving.
  CHECK(s.b->received().back().at == s.departure(s.n - 1) + s.in_time() * 4 + s.delay);
}

TEST_CASE("egress hooks run in registration order, on their ports and priorities only",
          "[quick][switch][egress_hook]") {
  Burst s(SwitchConfig{}, 4);
  std::vector<int> order;
  Recorder first(EgressHook::kAtEnqueue | EgressHook::kAtDequeue, &order, 1);
  Recorder second(EgressHook::kAtDequeue, &order, 2);
  Recorder other_priority(EgressHook::kAtEnqueue | EgressHook::kAtDequeue, nullptr, 0);
  Recorder other_port(EgressHook::kAtEnqueue | EgressHook::kAtDequeue, nullptr, 0);
  Recorder this_port(EgressHook::kAtEnqueue, &order, 3);
  s.sw->add_egress_hook(first, 1 << 3);
  s.sw->add_egress_hook(second, 0xFF);
  s.sw->add_egress_hook(other_priority, 0xFF & ~(1 << 3));
  s.sw->add_egress_hook(other_port, 0xFF, {s.ca.b_port});
  s.sw->add_egress_hook(this_port, 1 << 3, {s.cb.b_port});
  s.run();
  REQUIRE(s.b->received().size() == 4);
  // Enqueues and dequeues interleave as the burst arrives; at each point the
  // hooks that asked for it run in the order they were added.
  std::vector<int> expected;
  for (const Seen& x : first.seen) {
    if (x.point == EgressHook::kAtEnqueue) {
      expected.insert(expected.end(), {1, 3});
    } else {
      expected.insert(expected.end(), {1, 2});
    }
  }
  CHECK(order == expected);
  CHECK(first.seen.size() == 8);
  CHECK(second.seen.size() == 4);
  CHECK(this_port.seen.size() == 4);
  CHECK(other_priority.seen.empty());
  CHECK(other_port.seen.empty());  // nothing but PFC could leave there, and PFC frames pass no hook
}

TEST_CASE("egress hooks are added before setup", "[quick][switch][egress_hook]") {
  Burst s(SwitchConfig{}, 1);
  Recorder late, wrong_port;
  SECTION("after setup") {
    s.sim.setup();
    CHECK_THROWS_AS(s.sw->add_egress_hook(late, 0xFF), std::logic_error);
  }
  SECTION("on a port the switch does not have") {
    s.sw->add_egress_hook(wrong_port, 0xFF, {7});
    CHECK_THROWS_AS(s.sim.setup(), std::invalid_argument);
  }
}
