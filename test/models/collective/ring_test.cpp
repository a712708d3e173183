// The ring plans (models/collective/ring.h) against the ring algorithms'
// definitions (Patarasuk & Yuan, JPDC 2009; NCCL's ring): steps, bytes per
// rank, dependencies and reductions. Expected values are the textbook
// counts: 2(n-1) steps for AllReduce, n-1 for AllGather and ReduceScatter,
// each moving one chunk of size/n.
#include <catch2/catch.hpp>

#include "models/collective/collective_spec.h"
#include "models/collective/ring.h"
#include "test/support/plan_checks.h"

using namespace rdmasim;
using namespace rdmasim::testing;

TEST_CASE("ring plans have the textbook steps and bytes", "[quick][collective]") {
  constexpr int64_t kSlot = (int64_t{4} << 20) / 8;
  for (const CollectiveOp op :
       {CollectiveOp::kAllReduce, CollectiveOp::kAllGather, CollectiveOp::kReduceScatter}) {
    for (const uint32_t n : {2u, 3u, 8u}) {
      for (const uint32_t channels : {1u, 3u}) {
        // 3 MiB per rank and channel: a loop of 2 MiB chunks (4 slots, half
        // the buffer, as NCCL's ALLREDUCE_CHUNKSTEPS) and one of 1 MiB, or
        // a short last slot (1000 more: a multiple of 16 bytes, so that
        // AllReduce's last-loop chunks, rounded up to 16 bytes, are equal).
        for (const int64_t chunk : {int64_t{3} << 20, (int64_t{3} << 20) + 1008}) {
          INFO(to_string(op) << " n=" << n << " channels=" << channels << " chunk=" << chunk);
          const int64_t size = chunk * n * channels;
          const CollectivePlan p = ring_plan(op, n, size, channels, kSlot, 4);
          const uint32_t steps = op == CollectiveOp::kAllReduce ? 2 * (n - 1) : n - 1;
          CHECK(p.steps == steps);
          REQUIRE(p.conns.size() == size_t{n} * channels);
          std::vector<int64_t> rx(n, 0), tx(n, 0);
          for (const PlanConnection& c : p.conns) {
            CHECK(c.receiver == (c.sender + 1) % n);
            for (const PlanElement& e : c.elems) {
              CHECK(e.bytes <= kSlot);
              CHECK(e.bytes > 0);
              rx[c.receiver] += e.bytes;
              tx[c.sender] += e.bytes;
              // A step's element depends on the previous step's, from the
              // sender's predecessor, in the same channel.
              if (e.step == 0) {
                CHECK(e.dep_conn[0] < 0);
              } else {
                REQUIRE(e.dep_conn[0] >= 0);
                const PlanConnection& d = p.conns[static_cast<size_t>(e.dep_conn[0])];
                CHECK(d.receiver == c.sender);
                CHECK(d.channel == c.channel);
                CHECK(d.elems[e.dep_elem[0]].step + 1 == e.step);
              }
              CHECK(e.dep_conn[1] < 0);
              CHECK(e.consumers == (e.step + 1 == steps ? 0 : 1));
              const bool reduce = op == CollectiveOp::kReduceScatter ||
                                  (op == CollectiveOp::kAllReduce && e.step + 1 < n);
              CHECK(e.reduce == reduce);
            }
          }
          // Each rank sends and receives one chunk per step and channel.
          for (uint32_t r = 0; r < n; ++r) {
            CHECK(rx[r] == int64_t{steps} * chunk * channels);
            CHECK(tx[r] == int64_t{steps} * chunk * channels);
            CHECK(rx[r] == ring_bytes_received(op, n, size));
          }
        }
      }
    }
  }
}

TEST_CASE("nccl-tests bus bandwidth factors", "[quick][collective]") {
  // nccl-tests doc/PERFORMANCE.md: 2(n-1)/n for AllReduce, (n-1)/n for
  // AllGather and ReduceScatter.
  CHECK(bus_factor(CollectiveOp::kAllReduce, 8) == Approx(14.0 / 8));
  CHECK(bus_factor(CollectiveOp::kAllGather, 8) == Approx(7.0 / 8));
  CHECK(bus_factor(CollectiveOp::kReduceScatter, 4) == Approx(3.0 / 4));
}

TEST_CASE(
    "ring AllReduce of any float count: NCCL's last-loop chunks of ceil(r / n) floats rounded "
    "up to 16 bytes, the last ones short or empty, every step still sent",
    "[quick][collective]") {
  // NCCL's all_reduce.h (runRing, 2.19 and later): the loop that is not
  // full cuts what is left, r floats, into chunks of alignUp(ceil(r / n), 4)
  // floats; chunk q holds min(chunk, r - q chunk) (none if negative), and a
  // rank at ring index i sends chunk i - 1 - s in step s. Every step is a
  // transfer, an empty one for an empty chunk.
  constexpr int64_t kSlot = (int64_t{4} << 20) / 8;
  struct Case {
    uint32_t n;
    int64_t bytes;
    std::vector<int64_t> chunks;  // by hand from the rule above
  };
  const std::vector<Case> cases = {
      // 8 B on 16 ranks: 2 floats; chunk alignUp(1, 4) = 4 floats = 16 B.
      {16, 8, {8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
      // 1 KiB on 16: 256 floats, 16 each (64 B), all full.
      {16, 1024, std::vector<int64_t>(16, 64)},
      // 1 KiB on 6: 256 floats, ceil(256 / 6) = 43 -> 44 floats (176 B):
      // five of 176 B, the last 1024 - 880 = 144 B.
      {6, 1024, {176, 176, 176, 176, 176, 144}},
      // 100 B on 4: 25 floats, ceil(25 / 4) = 7 -> 8 (32 B): 32, 32, 32, 4.
      {4, 100, {32, 32, 32, 4}},
      // 40 B on 8: 10 floats, 2 -> 4 (16 B): 16, 16, 8, then empty.
      {8, 40, {16, 16, 8, 0, 0, 0, 0, 0}},
  };
  for (const Case& k : cases) {
    INFO("n = " << k.n << ", " << k.bytes << " B");
    const CollectivePlan p = ring_plan(CollectiveOp::kAllReduce, k.n, k.bytes, 1, kSlot, 4);
    REQUIRE(p.conns.size() == k.n);
    for (uint32_t i = 0; i < k.n; ++i) {
      const PlanConnection& c = p.conns[i];
      // One transfer per step (every chunk fits a slot here).
      REQUIRE(c.elems.size() == p.steps);
      for (uint32_t s = 0; s < p.steps; ++s) {
        CHECK(c.elems[s].step == s);
        CHECK(c.elems[s].bytes == k.chunks[(i + k.n - 1 - s % k.n) % k.n]);
      }
    }
    // Each step moves every chunk once around the ring: the whole buffer.
    for (uint32_t s = 0; s < p.steps; ++s) {
      int64_t sum = 0;
      for (const PlanConnection& c : p.conns) sum += c.elems[s].bytes;
      CHECK(sum == k.bytes);
    }
  }
}

TEST_CASE(
    "ring AllReduce plans of uneven chunks and channels: every element's dependencies and "
    "consumers consistent, the graph runs to its end, each step moves the channel's share",
    "[quick][collective]") {
  // Slots of 1 KiB (8 KiB buffer, 8 steps), chunks of at most 4 slots.
  // Sizes whose last loop leaves uneven chunks of several slots, a short
  // last chunk, empty chunks, and channels whose share is one float more
  // or none at all (10 floats on 3 channels: 4, 3, 3; 8 bytes on 3
  // channels: 1, 1, 0 floats). Plain rings and rail-aligned ones (PXN).
  constexpr int64_t kSlot = 1024;
  for (const uint32_t n : {3u, 4u}) {
    for (const uint32_t channels : {1u, 3u}) {
      for (const int64_t bytes : {int64_t{8}, int64_t{40}, int64_t{4} * 7777, int64_t{100'004}}) {
        for (const bool rails : {false, true}) {
          INFO("n " << n << ", channels " << channels << ", " << bytes << " B"
                    << (rails ? ", rail-aligned" : ""));
          const ServerLayout l = layout(2, n);
          const uint32_t ranks = rails ? 2 * n : n;
          const CollectivePlan p = ring_plan(CollectiveOp::kAllReduce, ranks, bytes, channels,
                                             kSlot, 4, rails ? &l : nullptr);
          check_consumers(p);
          CHECK(runs_to_end(p));
          // Per channel and step, the chunks of the ring positions add up to
          // the channel's share (relays carry a copy, not more data).
          const int64_t elems = bytes / 4;
          for (uint32_t c = 0; c < channels; ++c) {
            const int64_t share = 4 * (elems / channels + (c < elems % channels ? 1 : 0));
            std::vector<int64_t> per_step(p.steps, 0);
            for (uint32_t i = 0; i < ranks; ++i) {
              for (const PlanElement& e : p.conns[size_t{c} * ranks + i].elems) {
                CHECK(e.bytes <= kSlot);
                CHECK(e.bytes >= 0);
                per_step[e.step] += e.bytes;
              }
            }
            for (uint32_t s = 0; s < p.steps; ++s) CHECK(per_step[s] == share);
          }
        }
      }
    }
  }
}
