// Hierarchical AllReduce (the "hierarchical" of CASES.md V11; the scheme of
// Horovod's HOROVOD_HIERARCHICAL_ALLREDUCE, with rings in both layers and no
// switch offload, unlike NCCL's NVLS and CollNet) as a CollectivePlan, over
// whole servers of g GPUs (ServerLayout), N >= 2 servers, g >= 2:
//  1. ReduceScatter inside each server, a ring over its g GPUs (NVLink):
//     GPU l ends with shard l (S/g) reduced over the server;
//  2. on each rail l, a ring AllReduce of shard l over the N servers' GPU l
//     (2(N-1) steps on chunks of S/(gN)), so no byte leaves rail l;
//  3. AllGather inside each server, a ring over its GPUs.
// Pipelining, as NCCL pipelines in chunks: the rail ring runs in loops like
// ring.h (N chunks of at most chunk_slots slots); every chunk the rail
// ring handles is one sub-loop of the intra-server rings, with the same cut
// into elements, and the dependencies link the phases element by element:
// the rail ring's step t at server s sends chunk s - t as soon as the
// server's ReduceScatter of that chunk has arrived (and, from step 1, the
// previous server's step t-1); the AllGather of a chunk starts once the
// rail ring has delivered its final value. Inside a server the sub-loops
// go in the order the rail ring needs them (ReduceScatter: chunks s, s-1,
// ...; AllGather: s+1, s, s-1, ...), each as a ring loop of g-1 steps, so
// that each connection's chunk stays within half its buffer (ring.h).
// Per channel (each on S / channels): 3 x n connections, on plan channels
// 3c (ReduceScatter), 3c+1 (rail) and 3c+2 (AllGather).
// Steps: 0 .. g-2 the ReduceScatter, g-1 .. g+2N-4 the rail ring, then
// g-1 steps of AllGather: 2(g-1) + 2(N-1) in all.
#pragma once

#include <cstdint>

#include "models/collective/plan.h"

namespace rdmasim {

// Requires layout.gpus >= 2, layout.servers() >= 2, bytes a positive
// multiple of n x channels (n = g N), chunk_slots >= 1.
// Connection 3 n c + f n + s g + l (f: 0 ReduceScatter, 1 rail, 2
// AllGather): channel c, from GPU l of server s to GPU l+1 of server s
// (f = 0, 2) or to GPU l of server s+1 (f = 1).
CollectivePlan hierarchical_plan(const ServerLayout& layout, int64_t bytes, uint32_t channels,
                                 int64_t slot_bytes, uint32_t chunk_slots);

// Bytes each rank receives in one iteration: (g-1)/g S in each intra-server
// phase plus 2(N-1)/N S/g on its rail, which is 2(n-1)/n S, as the flat ring.
int64_t hierarchical_bytes_received(uint32_t n, int64_t bytes);

}  // namespace rdmasim
