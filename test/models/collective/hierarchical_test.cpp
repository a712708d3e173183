// The hierarchical AllReduce plan (models/collective/hierarchical.h) and the
// rail-aligned rings (ring.h with a ServerLayout, plan.h rule 4): shape,
// dependency and consumer counts, bytes per rank, and that the graph runs to
// its end. Expected values are the algorithm's counts: ReduceScatter and
// AllGather of (g-1)/g S inside a server, a ring AllReduce of S/g over N
// servers per rail: 2(n-1)/n S per rank.
#include <catch2/catch.hpp>

#include <numeric>
#include <vector>

#include "models/collective/collective_spec.h"
#include "models/collective/hierarchical.h"
#include "models/collective/ring.h"
#include "test/support/plan_checks.h"

using namespace rdmasim;
using namespace rdmasim::testing;

namespace {

constexpr int64_t kSlot = (int64_t{4} << 20) / 8;

// Servers in order, GPU l of server s is rank s g + l, unless `shuffle`:
// then the rank numbers are reversed (the plan must follow the layout).

}  // namespace

TEST_CASE("hierarchical plan: shape, bytes per rank and dependencies", "[quick][collective]") {
  for (const uint32_t servers : {2u, 3u, 4u}) {
    for (const uint32_t gpus : {2u, 4u, 8u}) {
      for (const uint32_t channels : {1u, 2u}) {
        for (const bool shuffle : {false, true}) {
          const uint32_t n = servers * gpus;
          // 3 MiB per rank and channel: loops of 2 MiB rail chunks (4 slots)
          // and a shorter last loop; or a size with a short last slot.
          for (const int64_t per : {int64_t{3} << 20, (int64_t{3} << 20) + 4000}) {
            const int64_t size = per * n * channels;
            INFO("N=" << servers << " g=" << gpus << " channels=" << channels
                      << " shuffle=" << shuffle << " size=" << size);
            const ServerLayout l = layout(servers, gpus, shuffle);
            const CollectivePlan p = hierarchical_plan(l, size, channels, kSlot, 4);
            CHECK(p.ranks == n);
            CHECK(p.steps == 2 * (gpus - 1) + 2 * (servers - 1));
            REQUIRE(p.conns.size() == size_t{3} * n * channels);
            std::vector<int64_t> rx(n, 0), tx(n, 0), phase_rx(3 * size_t{n}, 0);
            for (size_t i = 0; i < p.conns.size(); ++i) {
              const PlanConnection& c = p.conns[i];
              const uint32_t f = c.channel % 3;
              CHECK(c.channel / 3 == i / (3 * n));
              const uint32_t at = static_cast<uint32_t>(i % n);  // s g + l
              const uint32_t s = at / gpus, gl = at % gpus;
              CHECK(c.sender == l.rank[at]);
              if (f == 1) {
                // The rail ring: GPU l of server s to GPU l of server s+1.
                CHECK(c.receiver == l.rank[((s + 1) % servers) * gpus + gl]);
              } else {
                CHECK(c.receiver == l.rank[s * gpus + (gl + 1) % gpus]);
              }
              for (const PlanElement& e : c.elems) {
                CHECK(e.bytes > 0);
                CHECK(e.bytes <= kSlot);
                CHECK(!e.relay);
                rx[c.receiver] += e.bytes;
                tx[c.sender] += e.bytes;
                phase_rx[f * size_t{n} + c.receiver] += e.bytes;
                const uint32_t first = f == 0   ? 0
                                       : f == 1 ? gpus - 1
                                                : gpus - 1 + 2 * (servers - 1);
                const uint32_t count = f == 1 ? 2 * (servers - 1) : gpus - 1;
                CHECK(e.step >= first);
                CHECK(e.step < first + count);
                // Reduced: the ReduceScatter, and the rail ring's first N-1 steps.
                CHECK(e.reduce == (f == 0 || (f == 1 && e.step - first + 2 <= servers)));
              }
            }
            for (uint32_t r = 0; r < n; ++r) {
              CHECK(rx[r] == hierarchical_bytes_received(n, size));
              CHECK(rx[r] == 2 * int64_t{n - 1} * (size / n));
              CHECK(tx[r] == rx[r]);
              // (g-1)/g S in each intra-server phase, 2(N-1)/N S/g on the rail.
              CHECK(phase_rx[r] == int64_t{gpus - 1} * (size / gpus));
              CHECK(phase_rx[2 * size_t{n} + r] == int64_t{gpus - 1} * (size / gpus));
              CHECK(phase_rx[size_t{n} + r] == 2 * int64_t{servers - 1} * (size / n));
            }
            check_consumers(p);
            CHECK(runs_to_end(p));
          }
        }
      }
    }
  }
}

TEST_CASE("hierarchical plan: dependency counts per phase", "[quick][collective]") {
  // N = 4 servers of g = 4 GPUs, one channel, 16 MiB: a 4 MiB shard per
  // GPU, one loop of 1 MiB rail chunks, 2 slots each.
  const ServerLayout l = layout(4, 4);
  const CollectivePlan p = hierarchical_plan(l, int64_t{16} << 20, 1, kSlot, 4);
  // deps[f][d]: elements of phase f with d dependencies.
  int deps[3][3] = {};
  int consumers[3][3] = {};
  for (const PlanConnection& c : p.conns) {
    for (const PlanElement& e : c.elems) {
      const int d = (e.dep_conn[0] >= 0 ? 1 : 0) + (e.dep_conn[1] >= 0 ? 1 : 0);
      ++deps[c.channel % 3][d];
      ++consumers[c.channel % 3][e.consumers];
    }
  }
  // Per GPU and slot index k (2 of them): ReduceScatter N sub-loops x
  // (g-1) steps, the first step of each without dependencies; the rail
  // ring 2(N-1) steps, step 0 on the ReduceScatter alone, steps 1..N-1 on
  // it and the previous server, later steps on the previous server; the
  // AllGather's step 0 of sub-loop 0 on the rail and the ReduceScatter.
  const int per = 16 * 2;  // GPUs x slots
  CHECK(deps[0][0] == per * 4);
  CHECK(deps[0][1] == per * 4 * 2);
  CHECK(deps[0][2] == 0);
  CHECK(deps[1][0] == 0);
  CHECK(deps[1][1] == per * (1 + 2));
  CHECK(deps[1][2] == per * 3);
  CHECK(deps[2][0] == 0);
  CHECK(deps[2][1] == per * (4 * 3 - 1));
  CHECK(deps[2][2] == per);
  // Consumers: the ReduceScatter's last step feeds the rail (sub-loop N-1
  // the AllGather too); the rail's steps N-2 .. 2N-4 feed the next step and
  // the AllGather; the AllGather's last step feeds nothing.
  CHECK(consumers[0][1] == per * (4 * 3 - 1));
  CHECK(consumers[0][2] == per);
  CHECK(consumers[1][1] == per * (2 + 1));
  CHECK(consumers[1][2] == per * 3);
  CHECK(consumers[2][0] == per * 4);
  CHECK(consumers[2][1] == per * 4 * 2);
}

TEST_CASE("rail-aligned rings: channel j leaves every server on rail j", "[quick][collective]") {
  for (const uint32_t servers : {2u, 3u}) {
    for (const uint32_t gpus : {2u, 4u}) {
      for (const uint32_t channels : {1u, 4u, 5u}) {
        for (const CollectiveOp op : {CollectiveOp::kAllReduce, CollectiveOp::kAllGather}) {
          const uint32_t n = servers * gpus;
          const int64_t size = (int64_t{3} << 20) * n * channels;
          INFO("N=" << servers << " g=" << gpus << " channels=" << channels << " "
                    << to_string(op));
          const ServerLayout l = layout(servers, gpus, true);
          const CollectivePlan p = ring_plan(op, n, size, channels, kSlot, 4, &l);
          REQUIRE(p.conns.size() == size_t{channels} * (n + servers));
          // Rank -> (server, GPU).
          std::vector<uint32_t> server(n), gpu(n);
          for (uint32_t i = 0; i < n; ++i) {
            server[l.rank[i]] = i / gpus;
            gpu[l.rank[i]] = i % gpus;
          }
          std::vector<int64_t> rx(n, 0), relayed(n, 0);
          for (size_t i = 0; i < p.conns.size(); ++i) {
            const PlanConnection& c = p.conns[i];
            const uint32_t j = c.channel % gpus;
            const bool relay = i >= size_t{channels} * n;
            if (relay) {
              // PXN: inside a server, from GPU j-1 to GPU j.
              CHECK(server[c.sender] == server[c.receiver]);
              CHECK(gpu[c.sender] == (j + gpus - 1) % gpus);
              CHECK(gpu[c.receiver] == j);
            } else if (server[c.sender] != server[c.receiver]) {
              // Across servers only on rail j, to the next server.
              CHECK(gpu[c.sender] == j);
              CHECK(gpu[c.receiver] == j);
              CHECK(server[c.receiver] == (server[c.sender] + 1) % servers);
            } else {
              CHECK(gpu[c.receiver] == (gpu[c.sender] + 1) % gpus);
              CHECK(gpu[c.receiver] != j);
            }
            for (const PlanElement& e : c.elems) {
              CHECK(e.relay == relay);
              (relay ? relayed : rx)[c.receiver] += e.bytes;
            }
          }
          for (uint32_t r = 0; r < n; ++r) {
            CHECK(rx[r] == ring_bytes_received(op, n, size));
          }
          check_consumers(p);
          CHECK(runs_to_end(p));
        }
      }
    }
  }
}
