#include "test/support/catch_units.h"

#include "topologies/routing.h"

using namespace rdmasim;

namespace {
std::vector<uint32_t> ports_of(const Routes& r, uint32_t node, uint32_t dst) {
  std::vector<uint32_t> out;
  r.table(node).for_each_port(dst, [&](uint32_t p) { out.push_back(p); });
  return out;
}
const BitRate kRate = BitRate::gbps(100);
const Time kDelay = Time::us(1);
}  // namespace

TEST_CASE("routing on a star: each switch port leads to its host", "[quick][routing]") {
  Topology t;
  const uint32_t sw = t.add_switch("sw0");
  for (int i = 0; i < 4; ++i) t.add_link(t.add_host("h" + std::to_string(i)), sw, kRate, kDelay);
  const Routes r = compute_routes(t);
  CHECK_FALSE(r.unreachable());
  for (uint32_t h = 0; h < 4; ++h) CHECK(ports_of(r, sw, h) == std::vector<uint32_t>{h});
  CHECK(r.switch_hops(0, 3) == 1u);
}

TEST_CASE("routing finds every equal-cost next hop, parallel links included", "[quick][routing]") {
  // h0 - l0 = {s0, s1 (twice)} = l1 - h1: three equal-cost ports up from l0.
  Topology t;
  const uint32_t h0 = t.add_host("h0"), h1 = t.add_host("h1");
  const uint32_t l0 = t.add_switch("l0"), l1 = t.add_switch("l1");
  const uint32_t s0 = t.add_switch("s0"), s1 = t.add_switch("s1");
  t.add_link(h0, l0, kRate, kDelay);  // l0 port 0
  t.add_link(h1, l1, kRate, kDelay);  // l1 port 0
  t.add_link(l0, s0, kRate, kDelay);  // l0 port 1
  t.add_link(l0, s1, kRate, kDelay);  // l0 port 2
  t.add_link(l0, s1, kRate, kDelay);  // l0 port 3
  t.add_link(l1, s0, kRate, kDelay);
  t.add_link(l1, s1, kRate, kDelay);
  const Routes routes = compute_routes(t);
  CHECK(ports_of(routes, l0, 1) == std::vector<uint32_t>{1, 2, 3});
  CHECK(ports_of(routes, l0, 0) == std::vector<uint32_t>{0});
  CHECK(ports_of(routes, s1, 0) == std::vector<uint32_t>{0, 1});  // both parallel links down
  CHECK(ports_of(routes, s1, 1) == std::vector<uint32_t>{2});
  CHECK(routes.switch_hops(0, 1) == 3u);
  // The up-port set of l0 is stored once, whatever the number of leaves.
  CHECK(routes.table(l0).num_port_sets() == 1);
}

TEST_CASE("routing skips failed links and keeps port numbers", "[quick][routing]") {
  Topology t;
  const uint32_t h0 = t.add_host("h0"), h1 = t.add_host("h1");
  const uint32_t a = t.add_switch("a"), b = t.add_switch("b"), c = t.add_switch("c");
  t.add_link(h0, a, kRate, kDelay);
  t.add_link(h1, c, kRate, kDelay);
  t.add_link(a, b, kRate, kDelay);                          // a port 1
  const uint32_t direct = t.add_link(a, c, kRate, kDelay);  // a port 2
  t.add_link(b, c, kRate, kDelay);
  CHECK(ports_of(compute_routes(t), a, 1) == std::vector<uint32_t>{2});
  t.fail_link(direct);
  const Routes r = compute_routes(t);
  CHECK(ports_of(r, a, 1) == std::vector<uint32_t>{1});
  CHECK(r.switch_hops(0, 1) == 3u);
}

TEST_CASE("hosts never forward, and a host with two ports picks the shorter", "[quick][routing]") {
  // Two "GPUs" g0 and g1 of one node share an NVSwitch; each also has a NIC
  // port to its own rail leaf; the rail leaves meet at a spine.
  Topology t;
  const uint32_t g0 = t.add_host("g0"), g1 = t.add_host("g1");
  const uint32_t nvs = t.add_switch("nvs", Tier::kNvSwitch);
  const uint32_t r0 = t.add_switch("rail0", Tier::kLeaf), r1 = t.add_switch("rail1", Tier::kLeaf);
  const uint32_t sp = t.add_switch("spine", Tier::kSpine);
  t.add_link(g0, r0, kRate, kDelay);   // g0 port 0: NIC
  t.add_link(g0, nvs, kRate, kDelay);  // g0 port 1: NVLink
  t.add_link(g1, r1, kRate, kDelay);
  t.add_link(g1, nvs, kRate, kDelay);
  t.add_link(r0, sp, kRate, kDelay);
  t.add_link(r1, sp, kRate, kDelay);
  const Routes r = compute_routes(t);
  CHECK_FALSE(r.unreachable());
  CHECK(r.switch_hops(0, 1) == 1u);  // through the NVSwitch
  CHECK(r.egress_port(0, 1, 12345) == 1);
  CHECK(r.egress_port_count(0, 1) == 1);
  // The rail leaf reaches g1 through the spine, never through g0 and the NVSwitch.
  CHECK(ports_of(r, r0, 1) == std::vector<uint32_t>{1});
  // The NVSwitch cannot reach anything but its own GPUs: there is no path
  // that does not cross a host.
  CHECK(ports_of(r, nvs, 0) == std::vector<uint32_t>{0});
}

TEST_CASE("static routes replace computed ones for their destination", "[quick][routing]") {
  Topology t;
  const uint32_t sw = t.add_switch("sw0");
  for (int i = 0; i < 3; ++i) t.add_link(t.add_host("h" + std::to_string(i)), sw, kRate, kDelay);
  const Routes r = compute_routes(t, {StaticRoute{sw, 2, {0, 1}}});
  CHECK(ports_of(r, sw, 2) == std::vector<uint32_t>{0, 1});
  CHECK(ports_of(r, sw, 1) == std::vector<uint32_t>{1});
}

TEST_CASE("routing reports a disconnected pair of hosts", "[quick][routing]") {
  Topology t;
  const uint32_t a = t.add_switch("a"), b = t.add_switch("b");
  t.add_link(t.add_host("h0"), a, kRate, kDelay);
  t.add_link(t.add_host("h1"), b, kRate, kDelay);
  t.add_link(t.add_host("h2"), b, kRate, kDelay);
  const Routes r = compute_routes(t);
  REQUIRE(r.unreachable());
  CHECK(*r.unreachable() == std::make_pair(0u, 1u));
}

TEST_CASE("two hosts cabled to each other are reachable without a switch", "[quick][routing]") {
  Topology t;
  t.add_link(t.add_host("a"), t.add_host("b"), kRate, kDelay);
  const Routes r = compute_routes(t);
  CHECK_FALSE(r.unreachable());
  CHECK(r.switch_hops(0, 1) == 0u);
}

TEST_CASE("a host cabled to another host is not taken for a switch's own", "[quick][routing]") {
  // Switches first, so switch b's node id (1) is host h1's index; h0 is
  // cabled to h1 and to a. Found in review: b answered h1's port towards
  // h0 (3, beyond b's two ports) for the attachment naming host 1.
  Topology t;
  const uint32_t a = t.add_switch("a"), b = t.add_switch("b");
  t.add_link(a, b, kRate, kDelay);  // a port 0, b port 0
  const uint32_t h0 = t.add_host("h0"), h1 = t.add_host("h1"), h2 = t.add_host("h2");
  t.add_link(h2, b, kRate, kDelay);  // b port 1
  t.add_link(h1, a, kRate, kDelay);  // a port 1
  t.add_link(h1, t.add_host("h3"), kRate, kDelay);
  t.add_link(h1, t.add_host("h4"), kRate, kDelay);
  t.add_link(h0, h1, kRate, kDelay);  // h1 port 3
  t.add_link(h0, a, kRate, kDelay);   // a port 2
  const Routes r = compute_routes(t);
  REQUIRE(t.node(h1).host_index == b);
  CHECK(ports_of(r, b, t.node(h0).host_index) == std::vector<uint32_t>{0});
  CHECK(r.table(b).select(t.node(h0).host_index, 12345) == 0);
  CHECK(r.table(a).select(t.node(h0).host_index, 12345) == 2);
}

namespace {
// Every switch, every destination (and two beyond the hosts), several flow
// keys: select() and the fast table (when it answers) give the general
// walk's port, mix64(key) mod n among for_each_port's.
void check_fast_table(const Topology& t, const Routes& r, uint32_t& answered) {
  for (uint32_t s = 0; s < t.nodes().size(); ++s) {
    if (t.node(s).kind != NodeKind::kSwitch) continue;
    const ForwardingTable& f = r.table(s);
    for (uint32_t d = 0; d < t.num_hosts() + 2; ++d) {
      const std::vector<uint32_t> ports = ports_of(r, s, d);
      for (const uint64_t key : {uint64_t{0}, uint64_t{1}, uint64_t{12345}, ~uint64_t{0}}) {
        const int64_t expected =
            ports.empty() ? -1 : int64_t{ports[ForwardingTable::pick(key, ports.size())]};
        CHECK(f.select(d, key) == expected);
        const int64_t fast = ForwardingTable::fast_select(f.fast_view(), d, key);
        if (fast >= 0) {
          CHECK(fast == expected);
          ++answered;
        }
      }
    }
  }
}
}  // namespace

TEST_CASE("the fast table gives the general walk's port on irregular fabrics", "[quick][routing]") {
  uint32_t answered = 0;
  {  // two GPUs on an NVSwitch, each also on its own rail leaf (dual-homed)
    Topology t;
    const uint32_t g0 = t.add_host("g0"), g1 = t.add_host("g1");
    const uint32_t nvs = t.add_switch("nvs", Tier::kNvSwitch);
    const uint32_t r0 = t.add_switch("rail0", Tier::kLeaf), r1 = t.add_switch("rail1", Tier::kLeaf);
    const uint32_t sp = t.add_switch("spine", Tier::kSpine);
    for (const auto& [a, b] : std::vector<std::pair<uint32_t, uint32_t>>{
             {g0, r0}, {g0, nvs}, {g1, r1}, {g1, nvs}, {r0, sp}, {r1, sp}})
      t.add_link(a, b, kRate, kDelay);
    check_fast_table(t, compute_routes(t), answered);
  }
  // Switches first (node ids overlap host indices); a host cabled only to a
  // host, one to a host and a switch, one dual-homed, one cabled twice to
  // one switch; then the same with a static route.
  Topology t;
  const uint32_t a = t.add_switch("a"), b = t.add_switch("b"), c = t.add_switch("c");
  t.add_link(a, c, kRate, kDelay);
  t.add_link(b, c, kRate, kDelay);
  t.add_link(a, b, kRate, kDelay);
  std::vector<uint32_t> h;
  for (int i = 0; i < 6; ++i) h.push_back(t.add_host("h" + std::to_string(i)));
  for (const auto& [x, y] : std::vector<std::pair<uint32_t, uint32_t>>{{h[0], a},
                                                                       {h[1], h[0]},
                                                                       {h[2], h[3]},
                                                                       {h[2], b},
                                                                       {h[3], b},
                                                                       {h[4], a},
                                                                       {h[4], b},
                                                                       {h[5], a},
                                                                       {h[5], a}})
    t.add_link(x, y, kRate, kDelay);
  for (const uint32_t sw : {a, b, c})
    t.add_link(t.add_host("s" + std::to_string(sw)), sw, kRate, kDelay);
  check_fast_table(t, compute_routes(t), answered);
  check_fast_table(t, compute_routes(t, {StaticRoute{a, 3, {0}}}), answered);
  CHECK(answered > 0);
}
