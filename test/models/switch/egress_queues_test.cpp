#include "test/support/catch_units.h"

#include <map>

#include "models/switch/egress_queues.h"
#include "sim/simulation.h"

using namespace rdmasim;

namespace {
PacketHandle pkt(Simulation& sim, uint32_t bytes) {
  PacketHandle p = sim.make_packet();
  p->wire_bytes = bytes;
  return p;
}
}  // namespace

TEST_CASE("strict priority goes first, highest first", "[quick][scheduler]") {
  Simulation sim;
  SwitchConfig c;  // 6 and 7 strict
  EgressQueues q;
  q.push(3, pkt(sim, 1000));
  q.push(6, pkt(sim, 100));
  q.push(7, pkt(sim, 100));
  CHECK(q.pop(0xFF, c)->wire_bytes == 100);
  CHECK(q.nonempty_mask() == ((1 << 3) | (1 << 6)));
  CHECK(q.pop(0xFF, c)->wire_bytes == 100);
  CHECK(q.pop(0xFF, c)->wire_bytes == 1000);
  CHECK_FALSE(q.pop(0xFF, c));
}

TEST_CASE("paused priorities are skipped", "[quick][scheduler]") {
  Simulation sim;
  SwitchConfig c;
  EgressQueues q;
  q.push(3, pkt(sim, 1000));
  q.push(6, pkt(sim, 86));
  CHECK(q.pop(0xFF & ~(1 << 6), c)->wire_bytes == 1000);
  CHECK_FALSE(q.pop(0xFF & ~(1 << 6), c));
  CHECK(q.pop(0xFF, c)->wire_bytes == 86);
}

TEST_CASE("DWRR shares the port in proportion to the weights", "[quick][scheduler]") {
  Simulation sim;
  SwitchConfig c;
  c.strict_mask = 0;
  c.dwrr_weight = {1, 2, 3, 1, 1, 1, 1, 1};
  EgressQueues q;
  // Saturate priorities 0, 1, 2 with different packet sizes.
  const uint32_t sizes[3] = {4178, 1000, 9236};
  std::map<uint8_t, int64_t> served;
  for (int round = 0; round < 20000; ++round) {
    for (uint8_t p = 0; p < 3; ++p) {
      while (q.packets(p) < 4) q.push(p, pkt(sim, sizes[p]));
    }
    PacketHandle out = q.pop(0xFF, c);
    REQUIRE(out);
    for (uint8_t p = 0; p < 3; ++p) {
      // Identify the queue by size.
      if (out->wire_bytes == sizes[p]) served[p] += out->wire_bytes;
    }
  }
  const double total = served[0] + served[1] + served[2];
  CHECK(served[0] / total == Approx(1.0 / 6).epsilon(0.02));
  CHECK(served[1] / total == Approx(2.0 / 6).epsilon(0.02));
  CHECK(served[2] / total == Approx(3.0 / 6).epsilon(0.02));
}
