#include "models/collective/hierarchical.h"

#include <algorithm>
#include <cassert>
#include <vector>

namespace rdmasim {

CollectivePlan hierarchical_plan(const ServerLayout& layout, int64_t bytes, uint32_t channels,
                                 int64_t slot_bytes, uint32_t chunk_slots) {
  const uint32_t g = layout.gpus, N = layout.servers();
  const uint32_t n = g * N;
  assert(g >= 2 && N >= 2 && layout.rank.size() == n && channels >= 1 && chunk_slots >= 1);
  assert(bytes > 0 && bytes % (int64_t{n} * channels) == 0);
  CollectivePlan p;
  p.ranks = n;
  const uint32_t rs_steps = g - 1, rail_steps = 2 * (N - 1);
  p.steps = 2 * rs_steps + rail_steps;
  // The rail ring's loops over one GPU's shard of a channel, as ring.h's.
  const int64_t shard = bytes / channels / g;
  const int64_t chunk_max = int64_t{chunk_slots} * slot_bytes;
  std::vector<int64_t> chunks;
  for (int64_t left = shard; left > 0;) {
    const int64_t c = std::min(chunk_max, left / N);
    chunks.push_back(c);
    left -= c * N;
  }
  size_t intra = 0, rail = 0;  // elements per connection
  for (const int64_t c : chunks) {
    const auto m = static_cast<size_t>((c + slot_bytes - 1) / slot_bytes);
    intra += size_t{N} * rs_steps * m;
    rail += size_t{rail_steps} * m;
  }
  const auto conn = [n, g](uint32_t c, uint32_t f, uint32_t s, uint32_t l) {
    return static_cast<int32_t>(3 * n * c + f * n + s * g + l);
  };
  p.conns.resize(size_t{3} * n * channels);
  for (uint32_t c = 0; c < channels; ++c) {
    for (uint32_t s = 0; s < N; ++s) {
      for (uint32_t l = 0; l < g; ++l) {
        const uint32_t me = layout.rank[size_t{s} * g + l];
        const uint32_t right = layout.rank[size_t{s} * g + (l + 1) % g];
        const uint32_t below = layout.rank[size_t{(s + 1) % N} * g + l];
        PlanConnection& rs = p.conns[static_cast<size_t>(conn(c, 0, s, l))];
        PlanConnection& ring = p.conns[static_cast<size_t>(conn(c, 1, s, l))];
        PlanConnection& ag = p.conns[static_cast<size_t>(conn(c, 2, s, l))];
        rs = {me, right, 3 * c, std::vector<PlanElement>(intra)};
        ring = {me, below, 3 * c + 1, std::vector<PlanElement>(rail)};
        ag = {me, right, 3 * c + 2, std::vector<PlanElement>(intra)};
        // What this GPU receives: inside the server from GPU l-1, on the
        // rail from server s-1.
        const int32_t rs_in = conn(c, 0, s, (l + g - 1) % g);
        const int32_t ag_in = conn(c, 2, s, (l + g - 1) % g);
        const int32_t ring_in = conn(c, 1, (s + N - 1) % N, l);
        uint32_t ib = 0, rb = 0;  // the loop's first element, intra and rail
        for (const int64_t chunk : chunks) {
          const auto m = static_cast<uint32_t>((chunk + slot_bytes - 1) / slot_bytes);
          const auto elem_bytes = [&](uint32_t k) {
            return k + 1 < m ? slot_bytes : chunk - int64_t{m - 1} * slot_bytes;
          };
          // Intra element (sub-loop i, step u, element k); rail (step t, k).
          const auto ie = [&](uint32_t i, uint32_t u, uint32_t k) {
            return ib + (i * rs_steps + u) * m + k;
          };
          const auto re = [&](uint32_t t, uint32_t k) { return rb + t * m + k; };
          for (uint32_t k = 0; k < m; ++k) {
            for (uint32_t i = 0; i < N; ++i) {
              for (uint32_t u = 0; u < rs_steps; ++u) {
                // ReduceScatter of chunk s - i: step u forwards step u-1's
                // arrival reduced with one's own; the last step's arrival
                // (the shard's chunk reduced over the server) feeds the rail
                // ring's step i, and for i = N-1 the AllGather's first too.
                PlanElement& e = rs.elems[ie(i, u, k)];
                e.bytes = elem_bytes(k);
                e.step = u;
                e.reduce = true;
                if (u > 0) {
                  e.dep_conn[0] = rs_in;
                  e.dep_elem[0] = ie(i, u - 1, k);
                }
                e.consumers = static_cast<uint8_t>(u + 1 < rs_steps ? 1 : i + 1 < N ? 1 : 2);
                // AllGather of chunk s+1-i: step 0 sends the rail ring's
                // final value, later steps forward.
                PlanElement& a = ag.elems[ie(i, u, k)];
                a.bytes = elem_bytes(k);
                a.step = rs_steps + rail_steps + u;
                if (u > 0) {
                  a.dep_conn[0] = ag_in;
                  a.dep_elem[0] = ie(i, u - 1, k);
                } else {
                  // The final value arrived on the rail in step N-2+i (for
                  // i = 0 reduced there with this server's own shard).
                  a.dep_conn[0] = ring_in;
                  a.dep_elem[0] = re(N - 2 + i, k);
                  if (i == 0) {
                    a.dep_conn[1] = rs_in;
                    a.dep_elem[1] = ie(N - 1, rs_steps - 1, k);
                  }
                }
                a.consumers = static_cast<uint8_t>(u + 1 < rs_steps ? 1 : 0);
              }
            }
            for (uint32_t t = 0; t < rail_steps; ++t) {
              // Rail ring AllReduce: step t sends chunk s - t, for t <= N-1
              // the server's reduced shard chunk (sub-loop t of the
              // ReduceScatter) combined with what arrived in step t-1.
              PlanElement& e = ring.elems[re(t, k)];
              e.bytes = elem_bytes(k);
              e.step = rs_steps + t;
              e.reduce = t + 2 <= N;
              size_t d = 0;
              if (t > 0) {
                e.dep_conn[d] = ring_in;
                e.dep_elem[d++] = re(t - 1, k);
              }
              if (t < N) {
                e.dep_conn[d] = rs_in;
                e.dep_elem[d] = ie(t, rs_steps - 1, k);
              }
              // At server s+1: the next rail step forwards it, and from
              // step N-2 on (the final values) its AllGather sends it.
              e.consumers =
                  static_cast<uint8_t>((t + 1 < rail_steps ? 1 : 0) + (t + 2 >= N ? 1 : 0));
            }
          }
          ib += N * rs_steps * m;
          rb += rail_steps * m;
        }
      }
    }
  }
  return p;
}

int64_t hierarchical_bytes_received(uint32_t n, int64_t bytes) {
  return 2 * int64_t{n - 1} * (bytes / n);
}

}  // namespace rdmasim
