// VL arbitration (IBA Vol 1 §7.6.9): weights in 64-byte units, the packet
// that crosses a weight finishes, entries passed over lose their turn, and
// the high limit bounds high-priority bursts while a low packet waits.
#include "test/support/catch_units.h"

#include <map>
#include <vector>

#include "models/flow_control/vl_arbiter.h"
#include "models/proto/infiniband.h"
#include "models/switch/egress_queues.h"
#include "sim/simulation.h"

using namespace rdmasim;

namespace {

// Arbitrates `n` picks with every VL in `ready` always holding packets of
// `bytes` (as arbitration counts them); returns the VLs in order.
std::vector<int> picks(VlArbiter& a, uint16_t ready, uint64_t bytes, int n) {
  std::vector<int> out;
  for (int i = 0; i < n; ++i) out.push_back(a.pick(ready, [&](uint8_t) { return bytes; }));
  return out;
}

}  // namespace

TEST_CASE("VL arbitration: weights send weight x 64 bytes per turn, the crossing packet finishes",
          "[quick][vlarb]") {
  VlArbConfig c;
  c.high.clear();
  c.low = {{1, 64}, {2, 128}, {3, 192}};
  VlArbiter a(c);
  // 4120-byte packets (a 4096-byte payload, LRH to ICRC): weight 64 is 4096
  // bytes, so one packet crosses it; 128: two (8192 - 4120 > 0); 192: three.
  const std::vector<int> one_round = {1, 2, 2, 3, 3, 3};
  std::vector<int> expected;
  for (int r = 0; r < 4; ++r) expected.insert(expected.end(), one_round.begin(), one_round.end());
  CHECK(picks(a, 0b1110, 4120, 24) == expected);
  // 64-byte packets: exactly weight packets per turn.
  VlArbiter b(c);
  std::map<int, int> count;
  for (int v : picks(b, 0b1110, 64, 384)) ++count[v];
  CHECK(count == std::map<int, int>{{1, 64}, {2, 128}, {3, 192}});
}

TEST_CASE("VL arbitration: entries of weight 0 or without a packet are passed over",
          "[quick][vlarb]") {
  VlArbConfig c;
  c.high.clear();
  c.low = {{0, 0}, {1, 4}, {2, 4}, {1, 4}};
  VlArbiter a(c);
  CHECK(a.vls() == 0b110);
  // Only VL2 ready: every pick is VL2 (VL1's entries are skipped).
  CHECK(picks(a, 0b100, 256, 3) == std::vector<int>{2, 2, 2});
  // Nothing the tables name ready: nothing.
  CHECK(a.pick(0b1, [](uint8_t) { return uint64_t{64}; }) == -1);
  CHECK(a.pick(0, [](uint8_t) { return uint64_t{64}; }) == -1);
  // In turn, with both ready: entries 2, 3, 4 (VL1, VL2, VL1), then 2 again.
  VlArbiter b(c);
  CHECK(picks(b, 0b110, 256, 6) == std::vector<int>{1, 2, 1, 1, 2, 1});
}

TEST_CASE("VL arbitration: an entry passed over loses the rest of its turn", "[quick][vlarb]") {
  VlArbConfig c;
  c.high.clear();
  c.low = {{1, 8}, {2, 8}};  // 512 bytes a turn: eight 64-byte packets
  VlArbiter a(c);
  // VL1 sends four of its eight, then has nothing ready: VL2's entry takes
  // over (and sends one) ...
  CHECK(picks(a, 0b010, 64, 4) == std::vector<int>(4, 1));
  CHECK(picks(a, 0b100, 64, 1) == std::vector<int>{2});
  // ... and keeps its turn (seven more) with both ready; VL1 then starts a
  // fresh turn of eight, not the four it had left.
  std::vector<int> expected(7, 2);
  expected.insert(expected.end(), 8, 1);
  expected.push_back(2);
  CHECK(picks(a, 0b110, 64, 16) == expected);
}

TEST_CASE("VL arbitration: the high limit bounds high bursts while a low packet waits",
          "[quick][vlarb]") {
  VlArbConfig c;
  c.high = {{0, 4}};
  c.low = {{1, 4}};
  SECTION("limit 6: high packets start while fewer than 6 x 4096 bytes have gone") {
    c.high_limit = 6;
    VlArbiter a(c);
    // 4120 bytes each: after 5 (20,600 < 24,576) a sixth starts; after six
    // (24,720) the low packet goes, and the count restarts.
    const std::vector<int> p = picks(a, 0b11, 4120, 14);
    CHECK(p == std::vector<int>{0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1});
  }
  SECTION("limit 0: one high packet at a time") {
    c.high_limit = 0;
    VlArbiter a(c);
    CHECK(picks(a, 0b11, 4120, 6) == std::vector<int>{0, 1, 0, 1, 0, 1});
  }
  SECTION("limit 255: no limit") {
    c.high_limit = 255;
    VlArbiter a(c);
    CHECK(picks(a, 0b11, 4120, 50) == std::vector<int>(50, 0));
  }
  SECTION("no low packet waiting: high goes on, and the count restarts") {
    c.high_limit = 1;
    VlArbiter a(c);
    CHECK(picks(a, 0b01, 4120, 5) == std::vector<int>(5, 0));
    CHECK(a.high_sent() == 0);
    // A low packet arrives: one 4096-unit of high data, then it.
    CHECK(picks(a, 0b11, 4120, 3) == std::vector<int>{0, 1, 0});
  }
}

TEST_CASE("VL arbitration on an egress port: only lanes with credits compete, VCRC not counted",
          "[quick][vlarb]") {
  Simulation sim;
  VlArbConfig c;
  c.high.clear();
  c.low = {{1, 33}, {2, 33}};  // 2112 bytes a turn
  VlArbiter arb(c);
  EgressQueues q;
  auto pkt = [&](uint32_t wire) {
    PacketHandle p = sim.make_packet();
    p->wire_bytes = wire;
    return p;
  };
  // 66 wire bytes are 64 as arbitration counts them: a turn of 33 x 64
  // bytes is exactly 33 packets (counting 66 bytes it would be 32).
  for (int i = 0; i < 40; ++i) {
    q.push(1, pkt(66));
    q.push(2, pkt(66));
  }
  std::vector<int> order;
  while (q.packets(1) > 0 && q.packets(2) > 0) {
    const size_t before = q.packets(1);
    REQUIRE(q.pop_arbitrated(0xFF, arb, Time::zero()));
    order.push_back(q.packets(1) < before ? 1 : 2);
  }
  std::vector<int> expected(33, 1);
  expected.insert(expected.end(), 33, 2);
  expected.insert(expected.end(), 7, 1);
  CHECK(order == expected);
  while (q.pop_arbitrated(0xFF, arb, Time::zero())) {
  }
  // VL1 without credits (not in `allowed`): VL2 alone goes.
  q.push(1, pkt(66));
  q.push(2, pkt(66));
  PacketHandle p = q.pop_arbitrated(0b100, arb, Time::zero());
  REQUIRE(p);
  CHECK(q.packets(2) == 0);
  CHECK(q.packets(1) == 1);
  CHECK_FALSE(q.pop_arbitrated(0b100, arb, Time::zero()));
  CHECK(ib_credit_bytes(66) == 64);
}
