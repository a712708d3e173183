#include "models/collective/ring.h"

#include <algorithm>
#include <cassert>
#include <vector>

namespace rdmasim {

namespace {

uint32_t ring_steps(CollectiveOp op, uint32_t n) {
  return op == CollectiveOp::kAllReduce ? 2 * (n - 1) : n - 1;
}

// One loop of a channel's data: chunk q (the part that starts at ring
// position q in step 0) has bytes[q].
using Loop = std::vector<int64_t>;

// A channel's `share` bytes in loops (NCCL's loopSize = nranks x chunkSize).
// AllGather and ReduceScatter: every rank owns share / n, cut into chunks of
// at most chunk_max, so the chunks of a loop are equal. AllReduce (NCCL's
// all_reduce.h, runRing, since 2.19): full loops of chunk_max per chunk;
// what is left, r float elements, in chunks of ceil(r / n) rounded up to 16
// bytes, the last ones shorter or empty (a short message fills the first
// chunks only).
std::vector<Loop> channel_loops(CollectiveOp op, uint32_t n, int64_t share, int64_t chunk_max) {
  std::vector<Loop> loops;
  if (op != CollectiveOp::kAllReduce) {
    for (int64_t left = share / n; left > 0;) {
      const int64_t c = std::min(chunk_max, left);
      loops.emplace_back(n, c);
      left -= c;
    }
    return loops;
  }
  for (int64_t left = share; left > 0;) {
    if (left >= int64_t{n} * chunk_max) {
      loops.emplace_back(n, chunk_max);
      left -= int64_t{n} * chunk_max;
      continue;
    }
    // At most chunk_max (a slot that is not a multiple of 16 bytes could
    // round above it); n such chunks still hold what is left.
    const int64_t per = (left / 4 + n - 1) / n;                  // elements
    const int64_t cc = std::min((per + 3) / 4 * 16, chunk_max);  // bytes, 16-byte aligned
    Loop l(n);
    for (uint32_t q = 0; q < n; ++q) l[q] = std::clamp<int64_t>(left - int64_t{q} * cc, 0, cc);
    loops.push_back(std::move(l));
    left = 0;
  }
  return loops;
}

// Slot transfers of a chunk: one per slot, and one (empty) for an empty chunk,
// as NCCL's Simple protocol posts every step, with or without data.
int64_t slots_of(int64_t bytes, int64_t slot_bytes) {
  return bytes == 0 ? 1 : (bytes + slot_bytes - 1) / slot_bytes;
}

}  // namespace

CollectivePlan ring_plan(CollectiveOp op, uint32_t n, int64_t bytes, uint32_t channels,
                         int64_t slot_bytes, uint32_t chunk_slots, const ServerLayout* rails) {
  assert(n >= 2 && channels >= 1 && bytes > 0);
  assert(op == CollectiveOp::kAllReduce ? bytes % 4 == 0 : bytes % (int64_t{n} * channels) == 0);
  assert(chunk_slots >= 1);
  CollectivePlan p;
  p.ranks = n;
  p.steps = ring_steps(op, n);
  const int64_t chunk_max = int64_t{chunk_slots} * slot_bytes;
  // Ring position i of channel c: the i-th rank of its ring.
  const uint32_t g = rails != nullptr ? rails->gpus : 0;
  assert(rails == nullptr || (g >= 2 && rails->rank.size() == n && rails->servers() >= 2));
  const auto at = [&](uint32_t c, uint32_t i) {
    if (rails == nullptr) return i;
    const uint32_t s = i / g, l = (c % g + i % g) % g;
    return rails->rank[size_t{s} * g + l];
  };
  // The hop from ring position i leaves a server (by a PXN relay).
  const auto leaves = [&](uint32_t i) { return rails != nullptr && i % g == g - 1; };
  const auto conn = [n](uint32_t c, uint32_t i) { return static_cast<int32_t>(c * n + i); };
  const uint32_t servers = rails != nullptr ? rails->servers() : 0;
  const auto relay = [&](uint32_t c, uint32_t i) {
    return static_cast<int32_t>(channels * n + c * servers + i / g);
  };
  // The chunk ring position i sends in step s: NCCL's rank at ring index i
  // sends chunk i - 1 in step 0 and then what it received, chunk i - 1 - s.
  const auto chunk_of = [n](uint32_t i, uint32_t s) { return (i + n - 1 - s % n) % n; };
  p.conns.resize(size_t{channels} * (n + servers));
  for (uint32_t c = 0; c < channels; ++c) {
    // The channel's share of the float elements, the remainder spread over
    // the first channels.
    const int64_t elems = bytes / 4;
    const int64_t share = op == CollectiveOp::kAllReduce
                              ? 4 * (elems / channels + (int64_t{c} < elems % channels ? 1 : 0))
                              : bytes / channels;
    const std::vector<Loop> loops = channel_loops(op, n, share, chunk_max);
    // first[i][l * steps + s]: position i's first element of step s of loop l.
    std::vector<std::vector<uint32_t>> first(n);
    for (uint32_t i = 0; i < n; ++i) {
      uint32_t e = 0;
      first[i].reserve(loops.size() * p.steps + 1);
      for (const Loop& l : loops) {
        for (uint32_t s = 0; s < p.steps; ++s) {
          first[i].push_back(e);
          e += static_cast<uint32_t>(slots_of(l[chunk_of(i, s)], slot_bytes));
        }
      }
      first[i].push_back(e);  // the element count
    }
    for (uint32_t i = 0; i < n; ++i) {
      const uint32_t next = (i + 1) % n;
      const uint32_t prev = (i + n - 1) % n;
      PlanConnection& pc = p.conns[static_cast<size_t>(conn(c, i))];
      pc.receiver = at(c, next);
      pc.channel = c;
      pc.elems.resize(first[i].back());
      PlanConnection* px = nullptr;
      if (leaves(i)) {
        // The NVLink hop to the rail's GPU, which sends on: GPU j of this
        // server is ring position i + 1 - g.
        px = &p.conns[static_cast<size_t>(relay(c, i))];
        px->sender = at(c, i);
        px->receiver = at(c, i + 1 - g);
        px->channel = c;
        px->elems.resize(first[i].back());
        pc.sender = px->receiver;
      } else {
        pc.sender = at(c, i);
      }
      // The connection position i receives from (the previous position's).
      const int32_t from = conn(c, prev);
      for (size_t l = 0; l < loops.size(); ++l) {
        for (uint32_t s = 0; s < p.steps; ++s) {
          const int64_t chunk = loops[l][chunk_of(i, s)];
          const uint32_t at_step = first[i][l * p.steps + s];
          const auto m = static_cast<uint32_t>(slots_of(chunk, slot_bytes));
          for (uint32_t k = 0; k < m; ++k) {
            PlanElement& e = pc.elems[at_step + k];
            e.bytes = k + 1 < m ? slot_bytes : chunk - int64_t{m - 1} * slot_bytes;
            e.step = s;
            // What position i sends in step s >= 1 is what it received in
            // step s-1 from i-1 (reduced, in the reduce-scatter part): the
            // same chunk, so the same number of slots.
            if (s > 0) {
              e.dep_conn[0] = from;
              e.dep_elem[0] = first[prev][l * p.steps + s - 1] + k;
            }
            // At the receiver i+1, the element goes on in step s+1.
            if (s + 1 < p.steps) e.consumers = 1;
            e.reduce =
                op == CollectiveOp::kReduceScatter || (op == CollectiveOp::kAllReduce && s + 1 < n);
            if (px != nullptr) {
              // The sender's part goes to the proxy, which forwards it as is.
              PlanElement& r = px->elems[at_step + k];
              r = e;
              r.consumers = 1;
              r.reduce = false;
              r.relay = true;
              e.dep_conn.fill(-1);
              e.dep_elem.fill(0);
              e.dep_conn[0] = relay(c, i);
              e.dep_elem[0] = at_step + k;
            }
          }
        }
      }
    }
  }
  return p;
}

int64_t ring_bytes_received(CollectiveOp op, uint32_t n, int64_t bytes) {
  return int64_t{ring_steps(op, n)} * (bytes / n);
}

}  // namespace rdmasim
