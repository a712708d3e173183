// Ring algorithms (Patarasuk & Yuan, JPDC 2009; NCCL's ring, src/device/
// all_reduce.h, all_gather.h, reduce_scatter.h) as a CollectivePlan: in
// every channel rank r sends to rank r+1 (mod n) and receives from r-1.
//  - ReduceScatter: n-1 steps; each step a rank sends a chunk of size/n,
//    the one it received in the step before reduced with its own (step 0:
//    its own); every received chunk is reduced.
//  - AllGather: n-1 steps; a rank sends its own chunk, then forwards what
//    it received; nothing is reduced.
//  - AllReduce: ReduceScatter then AllGather, 2(n-1) steps; the chunk a
//    rank finishes reducing in step n-2 is the first it sends in the
//    all-gather.
// Each channel carries size / channels, in loops (NCCL's loopSize): each
// loop runs every step on chunks of at most `chunk_slots` slots
// (ALLREDUCE_CHUNKSTEPS = NCCL_STEPS / 2, the same for AllGather and
// ReduceScatter), the last loop on what is left / n (AllReduce: in chunks
// of ceil(left / n) floats rounded up to 16 bytes, as NCCL 2.19's runRing,
// the last chunks shorter or empty); a chunk is cut into slots (buffsize /
// steps), the last one possibly shorter, and an empty chunk is one empty
// transfer (NCCL posts every step). A chunk of at
// most half the buffer keeps the ring from deadlocking: a slot a rank needs
// is freed by its successor forwarding an element that lies less than a
// buffer ahead, and so on around the ring.
// With a ServerLayout (plan.h rule 4) the rings are rail-aligned: channel c
// visits the servers in order, each from its GPU j = c mod g on, and the
// hop out of each server is a PXN relay over NVLink to GPU j, then GPU j's
// NIC to GPU j of the next server.
#pragma once

#include <cstdint>

#include "models/collective/collective_spec.h"
#include "models/collective/plan.h"

namespace rdmasim {

// Requires n >= 2, bytes positive: a multiple of 4 for AllReduce (float32
// elements), of n x channels for the others; chunk_slots >= 1;
// `rails`, if given, of n ranks in at least 2 servers of at least 2 GPUs.
// Connection c x n + p: channel c, from the p-th rank of its ring to the
// next; then, with `rails`, connection n x channels + c x N + s: channel c's
// PXN relay in server s.
CollectivePlan ring_plan(CollectiveOp op, uint32_t n, int64_t bytes, uint32_t channels,
                         int64_t slot_bytes, uint32_t chunk_slots,
                         const ServerLayout* rails = nullptr);

// Bytes each rank receives in one iteration of the ring: 2(n-1)/n x size for
// AllReduce, (n-1)/n x size for AllGather and ReduceScatter (AllReduce: when
// every chunk is the same, i.e. size / (n x channels) is a multiple of 16
// bytes or of the chunk limit).
int64_t ring_bytes_received(CollectiveOp op, uint32_t n, int64_t bytes);

}  // namespace rdmasim
