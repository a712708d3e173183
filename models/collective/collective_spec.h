// CollectiveSpec: one collective operation as a scenario's `traffic` item of
// kind "collective" describes it (docs/collectives.md): the operation and its
// size as nccl-tests names and reports them, the algorithm, the ranks, and
// NCCL's transport parameters.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/cc/cc_algorithm.h"
#include "models/collective/plan.h"
#include "sim/units.h"

namespace rdmasim {

// nccl-tests' names: all_reduce_perf, all_gather_perf, reduce_scatter_perf.
enum class CollectiveOp : uint8_t { kAllReduce, kAllGather, kReduceScatter };
enum class CollectiveAlgorithm : uint8_t { kRing, kTree, kHierarchical };
// How ranks map onto the hosts of `ranks` (a job launcher's mapping, as
// mpirun's --map-by): as given, server by server, rail by rail (GPU j of
// every server, then GPU j+1), or a random permutation.
enum class RankPlacement : uint8_t { kGiven, kServer, kRail, kRandom };

const char* to_string(CollectiveOp op);
const char* to_string(CollectiveAlgorithm a);

// nccl-tests' bus-bandwidth factor (doc/PERFORMANCE.md; src/all_reduce.cu,
// all_gather.cu, reduce_scatter.cu): busbw = algbw x factor, with
// 2(n-1)/n for AllReduce and (n-1)/n for AllGather and ReduceScatter.
double bus_factor(CollectiveOp op, uint32_t n);

// NCCL's defaults (src/include/device.h NCCL_STEPS; NCCL_BUFFSIZE).
inline constexpr uint32_t kNcclSteps = 8;
inline constexpr int64_t kNcclBuffsize = int64_t{4} << 20;

// NCCL's IB transport splits each transfer over the connection's QPs
// (NCCL_IB_QPS_PER_CONNECTION; net_ib.cc, with NCCL_IB_SPLIT_DATA_ON_QPS):
// every QP but the last takes ceil(ceil(bytes / qps) / 128) x 128 bytes,
// the last what is left. Part i of a transfer of `bytes` over `qps` QPs
// (0 if the transfer ends before it), and the number of parts: the
// non-empty ones, or one empty WRITE with immediate for an empty transfer
// (a step without data is still posted: NCCL's Simple protocol signals
// every step).
inline constexpr int64_t kIbSplitAlign = 128;
constexpr int64_t qp_part_bytes(int64_t bytes, uint32_t qps, uint32_t i) {
  const int64_t per = (bytes + qps - 1) / qps;
  const int64_t chunk = (per + kIbSplitAlign - 1) / kIbSplitAlign * kIbSplitAlign;
  const int64_t left = bytes - chunk * i;
  return left <= 0 ? 0 : (left < chunk ? left : chunk);
}
constexpr uint32_t qp_parts(int64_t bytes, uint32_t qps) {
  if (bytes == 0) return 1;
  uint32_t n = 0;
  while (n < qps && qp_part_bytes(bytes, qps, n) > 0) ++n;
  return n;
}

struct CollectiveSpec {
  std::string name;
  CollectiveOp op = CollectiveOp::kAllReduce;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::kRing;
  std::vector<uint32_t> ranks;  // host index of rank r, r = 0 .. n-1
  // nccl-tests' "size": the whole buffer for AllReduce, the gathered output
  // for AllGather, the input for ReduceScatter; each rank owns size / n.
  int64_t bytes = 0;
  uint32_t channels = 1;    // rings side by side, each on QPs of its own
  uint32_t qps = 1;         // QPs per connection (NCCL_IB_QPS_PER_CONNECTION)
  int sl = -1;              // InfiniBand: its QPs' service level (NCCL_IB_SL); -1: the NIC's
  uint32_t iterations = 1;  // in all: with a sweep, sizes x (warmup_iters + sweep_iters)
  // A sweep (docs/collectives.md#sweeps), as nccl-tests runs one: each size
  // of `sweep_bytes` in turn, warmup_iters untimed iterations then
  // sweep_iters timed ones, on the same QPs. Empty: one size, `bytes`.
  std::vector<int64_t> sweep_bytes;
  uint32_t warmup_iters = 0, sweep_iters = 0;
  Time gap;    // each rank's idle time between its iterations (compute)
  Time start;  // every rank starts its first iteration then
  // The reduction's speed in bytes of input per second (0: free).
  BitRate reduce_rate;
  int64_t buffsize = kNcclBuffsize;    // NCCL_BUFFSIZE: each connection's receive buffer
  uint32_t steps = kNcclSteps;         // NCCL_STEPS: its slots, buffsize / steps each
  uint32_t item = 0;                   // the scenario's traffic[item]
  std::shared_ptr<const CcConfig> cc;  // congestion control of its QPs; none if null
  // NCCL_CROSS_NIC: false keeps each ring and tree channel on one rail
  // where the ranks are whole servers (plan.h rule 4).
  bool cross_nic = false;
  // The ranks as whole servers of a rail-optimized fabric (gpus 0: they are
  // not); the hierarchical algorithm needs them, rail-aligned rings and
  // trees over servers use them.
  ServerLayout servers;
  int64_t slot_bytes() const { return buffsize / steps; }
  // The layout a ring follows: rail-aligned (plan.h rule 4) unless
  // cross_nic, on whole servers of at least 2 GPUs in at least 2 servers.
  const ServerLayout* rail_rings() const {
    return !cross_nic && servers.gpus >= 2 && servers.servers() >= 2 ? &servers : nullptr;
  }
  // The layout a tree is built over, on the same condition: its nodes are
  // the servers, with a chain inside each (tree.h), rather than the ranks.
  const ServerLayout* server_trees() const { return rail_rings(); }
  // The sizes run one after another (phases): the sweep's, or `bytes` alone.
  size_t phases() const { return sweep_bytes.empty() ? 1 : sweep_bytes.size(); }
  int64_t phase_bytes(size_t p) const { return sweep_bytes.empty() ? bytes : sweep_bytes[p]; }
  uint32_t phase_iterations() const {
    return sweep_bytes.empty() ? iterations : warmup_iters + sweep_iters;
  }
  bool operator==(const CollectiveSpec&) const = default;
};

}  // namespace rdmasim
