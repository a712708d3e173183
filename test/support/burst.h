// Burst: a known egress queue for switch tests. Host a (400 Gb/s) sends n
// equal RoCE v2 data packets (priority 3) back to back through one switch to
// host b (100 Gb/s); the formulas below say what the queue at b's port holds
// at every enqueue and dequeue.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "models/switch/switch.h"
#include "sim/cable.h"
#include "test/support/test_host.h"

namespace rdmasim::testing {

// A 400 Gb/s host sends a burst of n equal packets through one switch to a
// 100 Gb/s host: the egress queue grows by three packets in every four.
// With `pipeline` > 0 the switch's latency is (pipeline + 1/2) frame times
// at 400 Gb/s, so that many frames are always between arrival and enqueue
// (and no arrival ties with an enqueue).
struct Burst {
  explicit Burst(const SwitchConfig& sc, uint32_t n_packets = 16, uint32_t pipeline_frames = 0)
      : cfg(sc), n(n_packets), pipeline(pipeline_frames) {
    cfg.latency = pipeline == 0 ? Time::zero() : in_time() * pipeline + in_time() / 2;
    sw = &sim.add<Switch>("sw", cfg);
    a = &sim.add<TestHost>("a", 0);
    b = &sim.add<TestHost>("b", 1);
    ca = connect(sim, *a, *sw, BitRate::gbps(400), delay);
    cb = connect(sim, *b, *sw, BitRate::gbps(100), delay);
    sw->set_forwarding_table(ForwardingTable::from_static({{ca.b_port}, {cb.b_port}}));
  }
  void run() {
    for (uint32_t i = 0; i < n; ++i) a->add({1, 1024, 7, 26, ecn.empty() ? uint8_t{0} : ecn[i]});
    sim.setup();
    sim.run();
  }
  // The burst, from formulas. A frame of W wire bytes takes T = W / 400 Gb/s
  // on the way in and 4T on the way out. Frame i arrives (last bit) at
  // (i + 1) T + delay and joins the queue a latency later; frame j starts
  // leaving at enqueue(0) + 4 j T. At one instant an arrival or enqueue comes
  // before a pull (the tie order: kDelivery before kTransmit).
  static uint32_t wire() { return TestHost::wire_bytes(1024); }
  // The MMU charges the frame without preamble + SFD (8 bytes) and the
  // inter-frame gap (12 bytes), in 1-byte cells.
  static int64_t charged() { return wire() - 20; }
  static Time in_time() { return Bytes(wire()) / BitRate::gbps(400); }
  Time arrival(uint32_t i) const { return in_time() * (i + 1) + delay; }
  Time enqueue(uint32_t i) const { return arrival(i) + cfg.latency; }
  Time departure(uint32_t j) const { return enqueue(0) + in_time() * (4 * j); }
  // Frames that have started leaving when frame i joins: j with 4 j T < i T.
  uint32_t left_by_enqueue(uint32_t i) const { return (i + 3) / 4; }
  // Packets in the queue when frame i joins it, and when frame j leaves it
  // (itself excluded both times): every frame enqueued by then (i <= 4j)
  // less those gone.
  uint32_t queued_at_enqueue(uint32_t i) const { return i - left_by_enqueue(i); }
  uint32_t queued_at_dequeue(uint32_t j) const { return std::min(4 * j, n - 1) - j; }
  // The MMU also counts the frames admitted and still in the pipeline: the
  // next `pipeline` frames (those that arrived less than a latency ago).
  uint32_t charged_at_enqueue(uint32_t i) const {
    return std::min(i + pipeline, n - 1) - left_by_enqueue(i);
  }
  uint32_t charged_at_dequeue(uint32_t j) const { return std::min(4 * j + pipeline, n - 1) - j; }

  Time delay = Time::us(1);
  SwitchConfig cfg;
  uint32_t n;
  uint32_t pipeline;
  std::vector<uint8_t> ecn;  // each packet's IP ECN field (empty: all 0, not ECT)
  Simulation sim;
  Switch* sw;
  TestHost* a;
  TestHost* b;
  Cable ca, cb;
};

}  // namespace rdmasim::testing
