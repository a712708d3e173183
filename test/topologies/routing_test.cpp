#include "test/support/catch_units.h"

#include "topologies/routing.h"

using namespace rdmasim;

TEST_CASE("routing on a star: each switch port leads to its host", "[quick][routing]") {
  Topology t;
  const uint32_t sw = t.add_switch("sw0");
  for (int i = 0; i < 4; ++i)
    t.add_link(t.add_host("h" + std::to_string(i)), sw, BitRate::gbps(100), Time::us(1));
  const Routes r = compute_routes(t);
  CHECK_FALSE(r.unreachable);
  for (uint32_t h = 0; h < 4; ++h) CHECK(r.next_hops[sw][h] == std::vector<uint32_t>{h});
}

TEST_CASE("routing finds every equal-cost next hop, parallel links included", "[quick][routing]") {
  // h0 - l0 = {s0, s1 (twice)} = l1 - h1: three equal-cost ports up from l0.
  Topology t;
  const uint32_t h0 = t.add_host("h0"), h1 = t.add_host("h1");
  const uint32_t l0 = t.add_switch("l0"), l1 = t.add_switch("l1");
  const uint32_t s0 = t.add_switch("s0"), s1 = t.add_switch("s1");
  const BitRate r = BitRate::gbps(100);
  const Time d = Time::us(1);
  t.add_link(h0, l0, r, d);  // l0 port 0
  t.add_link(h1, l1, r, d);  // l1 port 0
  t.add_link(l0, s0, r, d);  // l0 port 1
  t.add_link(l0, s1, r, d);  // l0 port 2
  t.add_link(l0, s1, r, d);  // l0 port 3
  t.add_link(l1, s0, r, d);
  t.add_link(l1, s1, r, d);
  const Routes routes = compute_routes(t);
  CHECK(routes.next_hops[l0][1] == std::vector<uint32_t>{1, 2, 3});
  CHECK(routes.next_hops[l0][0] == std::vector<uint32_t>{0});
  CHECK(routes.next_hops[s1][0] == std::vector<uint32_t>{0, 1});  // both parallel links down
  CHECK(routes.next_hops[s1][1] == std::vector<uint32_t>{2});
}

TEST_CASE("routing reports a disconnected pair of hosts", "[quick][routing]") {
  Topology t;
  const uint32_t a = t.add_switch("a"), b = t.add_switch("b");
  t.add_link(t.add_host("h0"), a, BitRate::gbps(100), Time::us(1));
  t.add_link(t.add_host("h1"), b, BitRate::gbps(100), Time::us(1));
  const Routes r = compute_routes(t);
  REQUIRE(r.unreachable);
  CHECK(r.unreachable->first != r.unreachable->second);
}
