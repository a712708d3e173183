#include "models/collective/ring.h"

#include <algorithm>
#include <cassert>
#include <vector>

namespace rdmasim {

namespace {

uint32_t ring_steps(CollectiveOp op, uint32_t n) {
  return op == CollectiveOp::kAllReduce ? 2 * (n - 1) : n - 1;
}

}  // namespace

CollectivePlan ring_plan(CollectiveOp op, uint32_t n, int64_t bytes, uint32_t channels,
                         int64_t slot_bytes, uint32_t chunk_slots, const ServerLayout* rails) {
  assert(n >= 2 && channels >= 1 && bytes > 0 && bytes % (int64_t{n} * channels) == 0);
  assert(chunk_slots >= 1);
  CollectivePlan p;
  p.ranks = n;
  p.steps = ring_steps(op, n);
  const int64_t per_channel = bytes / channels;
  const int64_t chunk_max = int64_t{chunk_slots} * slot_bytes;
  // Loops of n chunks of at most chunk_max each (NCCL's loopSize =
  // nranks x chunkSize); the last loop's chunks are what is left / n.
  std::vector<int64_t> chunks;
  for (int64_t left = per_channel; left > 0;) {
    const int64_t c = std::min(chunk_max, left / n);
    chunks.push_back(c);
    left -= c * n;
  }
  size_t per_conn = 0;
  for (const int64_t c : chunks) {
    per_conn += size_t{p.steps} * static_cast<size_t>((c + slot_bytes - 1) / slot_bytes);
  }
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
  p.conns.resize(size_t{channels} * (n + servers));
  for (uint32_t c = 0; c < channels; ++c) {
    for (uint32_t i = 0; i < n; ++i) {
      const uint32_t next = (i + 1) % n;
      PlanConnection& pc = p.conns[static_cast<size_t>(conn(c, i))];
      pc.receiver = at(c, next);
      pc.channel = c;
      pc.elems.resize(per_conn);
      PlanConnection* px = nullptr;
      if (leaves(i)) {
        // The NVLink hop to the rail's GPU, which sends on: GPU j of this
        // server is ring position i + 1 - g.
        px = &p.conns[static_cast<size_t>(relay(c, i))];
        px->sender = at(c, i);
        px->receiver = at(c, i + 1 - g);
        px->channel = c;
        px->elems.resize(per_conn);
        pc.sender = px->receiver;
      } else {
        pc.sender = at(c, i);
      }
      // The connection position i receives from (the previous position's).
      const int32_t from = conn(c, (i + n - 1) % n);
      uint32_t base = 0;  // first element of the loop
      for (const int64_t chunk : chunks) {
        const auto m = static_cast<uint32_t>((chunk + slot_bytes - 1) / slot_bytes);
        for (uint32_t s = 0; s < p.steps; ++s) {
          for (uint32_t k = 0; k < m; ++k) {
            PlanElement& e = pc.elems[base + s * m + k];
            e.bytes = k + 1 < m ? slot_bytes : chunk - int64_t{m - 1} * slot_bytes;
            e.step = s;
            // What position i sends in step s >= 1 is what it received in
            // step s-1 from i-1 (reduced, in the reduce-scatter part).
            if (s > 0) {
              e.dep_conn[0] = from;
              e.dep_elem[0] = base + (s - 1) * m + k;
            }
            // At the receiver i+1, the element goes on in step s+1.
            if (s + 1 < p.steps) e.consumers = 1;
            e.reduce =
                op == CollectiveOp::kReduceScatter || (op == CollectiveOp::kAllReduce && s + 1 < n);
            if (px != nullptr) {
              // The sender's part goes to the proxy, which forwards it as is.
              PlanElement& r = px->elems[base + s * m + k];
              r = e;
              r.consumers = 1;
              r.reduce = false;
              r.relay = true;
              e.dep_conn = {relay(c, i), -1, -1};
              e.dep_elem = {base + s * m + k, 0, 0};
            }
          }
        }
        base += p.steps * m;
      }
    }
  }
  return p;
}

int64_t ring_bytes_received(CollectiveOp op, uint32_t n, int64_t bytes) {
  return int64_t{ring_steps(op, n)} * (bytes / n);
}

}  // namespace rdmasim
