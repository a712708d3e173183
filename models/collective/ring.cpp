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
                         int64_t slot_bytes, uint32_t chunk_slots) {
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
  // Connection c*n + r: channel c, rank r to rank r+1.
  const auto conn = [n](uint32_t c, uint32_t r) { return static_cast<int32_t>(c * n + r); };
  p.conns.resize(size_t{channels} * n);
  for (uint32_t c = 0; c < channels; ++c) {
    for (uint32_t r = 0; r < n; ++r) {
      PlanConnection& pc = p.conns[static_cast<size_t>(conn(c, r))];
      pc.sender = r;
      pc.receiver = (r + 1) % n;
      pc.channel = c;
      pc.elems.resize(per_conn);
      uint32_t base = 0;  // first element of the loop
      for (const int64_t chunk : chunks) {
        const auto m = static_cast<uint32_t>((chunk + slot_bytes - 1) / slot_bytes);
        for (uint32_t s = 0; s < p.steps; ++s) {
          for (uint32_t k = 0; k < m; ++k) {
            PlanElement& e = pc.elems[base + s * m + k];
            e.bytes = k + 1 < m ? slot_bytes : chunk - int64_t{m - 1} * slot_bytes;
            e.step = s;
            // What rank r sends in step s >= 1 is what it received in step
            // s-1 from r-1 (reduced, in the reduce-scatter part).
            if (s > 0) {
              e.dep_conn[0] = conn(c, (r + n - 1) % n);
              e.dep_elem[0] = base + (s - 1) * m + k;
            }
            // At the receiver r+1, the element goes on in step s+1.
            if (s + 1 < p.steps) e.consumers = 1;
            e.reduce =
                op == CollectiveOp::kReduceScatter || (op == CollectiveOp::kAllReduce && s + 1 < n);
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
