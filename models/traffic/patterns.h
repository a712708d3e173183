// Traffic patterns: pure functions from a pattern's parameters, what it needs
// to know of the topology (as plain data: host indices, link rates, group
// ids) and a random stream, to the flows it makes (docs/traffic.md).
//
// Contract:
//  1. Deterministic: the same parameters and the same stream state give the
//     same flows, in the same order. Random choices use RngStream only (no
//     std:: distribution), in the draw order documented per function.
//  2. Flows name themselves "<common.name>.<suffix>"; the suffixes are
//     documented per function and short ("s3", "s3.d5", "17").
//  3. Parameters are validated by the caller (the scenario loader, which
//     can name the JSON path); a violated precondition throws
//     std::invalid_argument. background() alone can also throw
//     FlowLimitError, which depends on the draws.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/traffic/flow_generator.h"
#include "models/traffic/flow_size_cdf.h"
#include "sim/rng.h"
#include "sim/units.h"

namespace rdmasim {

// What every flow of one traffic item shares.
struct FlowCommon {
  std::string name;  // prefix of the flows' names, e.g. "incast[2]"
  Time start;        // the item's start time
  Verb op = Verb::kWrite;
  BitRate rate;      // pacing of each flow; 0: line rate
  uint32_t qps = 1;  // queue pairs each flow is striped over
  int sl = -1;       // InfiniBand: the flows' service level; -1: the NIC's priorities
};

// incast: every sender sends `bytes` to dst. Flow k is senders[k] -> dst,
// named "s<k>", posted at start + U, U uniform on the whole picoseconds
// 0 .. jitter (one uniform() draw per sender, in order; no draw when jitter
// is zero). Senders: distinct, none equal to dst, at least one.
struct IncastParams {
  std::vector<uint32_t> senders;
  uint32_t dst = 0;
  int64_t bytes = 0;
  Time jitter;
  FlowCommon common;
};
std::vector<FlowSpec> incast(const IncastParams& p, RngStream& rng);

// The permutation k -> (k + shift) mod n, 0 < shift < n.
std::vector<uint32_t> shift_permutation(uint32_t n, uint32_t shift);

// A random permutation perm of 0 .. n-1 (n = group.size() >= 2) with
// group[perm[k]] != group[k] for every k: no position maps into its own
// group. Requires that no group holds more than n/2 positions (otherwise
// no such permutation exists).
//  - All groups distinct (each position its own group): a derangement,
//    uniform among all derangements (Fisher-Yates shuffles, rejected until
//    one has no fixed point; e expected shuffles).
//  - Otherwise: one Fisher-Yates shuffle, then one repair pass: for each k
//    in order whose image is in its own group, swap images with a position j
//    drawn uniformly among those for which the swap leaves both k and j
//    valid. Such a j always exists when no group exceeds n/2, and a swap
//    never breaks another position, so one pass suffices. Every valid
//    permutation can come out, though not with exactly equal probability.
std::vector<uint32_t> random_cross_group_permutation(const std::vector<uint32_t>& group,
                                                     RngStream& rng);

// permutation: host hosts[k] sends `bytes` to hosts[perm[k]], named "s<k>",
// all at start. perm is shift_permutation(n, shift) for kShift (no draws),
// or random_cross_group_permutation(group) for kRandom, where group is the
// given group id of each listed host, or, when empty, every host its own.
struct PermutationParams {
  enum class Pattern : uint8_t { kRandom, kShift };
  std::vector<uint32_t> hosts;  // distinct, at least 2
  Pattern pattern = Pattern::kRandom;
  uint32_t shift = 1;           // kShift: 0 < shift < n
  std::vector<uint32_t> group;  // kRandom: one id per listed host, or empty
  int64_t bytes = 0;
  FlowCommon common;
};
std::vector<FlowSpec> permutation(const PermutationParams& p, RngStream& rng);

// all_to_all: every listed host sends `bytes` to every other, in n-1 rounds:
// in round r (1 .. n-1) hosts[k] sends to hosts[(k + r) mod n], posted at
// start + (r - 1) * stagger. Flows are listed round by round, k ascending,
// named "s<k>.d<m>" (m the receiver's position). No draws.
struct AllToAllParams {
  std::vector<uint32_t> hosts;  // distinct, at least 2
  int64_t bytes = 0;
  Time stagger;
  FlowCommon common;
};
std::vector<FlowSpec> all_to_all(const AllToAllParams& p);

// background: every listed host starts flows at the times of a Poisson
// process of rate
//     lambda_h = load * rate_h / (8 * sizes.mean())   flows per second
// (rate_h in bit/s), so that its offered payload load is load * rate_h in
// expectation, over the closed window [start, start + duration]: every
// arrival in the window is kept, the last one included. Each flow goes to a
// host drawn uniformly among the other listed hosts, with a size drawn from
// `sizes`.
//
// The hosts' processes are generated together, as their superposition: one
// Poisson process of rate sum(lambda_h) whose points go to host h with
// probability lambda_h / sum(lambda_h), which is the same as independent
// processes per host. Per arrival, in order: the gap (exponential(), in
// picoseconds, accumulated in double and truncated to whole picoseconds for
// the start time), the source (uniform() over the sum of the rates in bit/s),
// the destination (uniform(n - 1)), the size (FlowSizeCdf::sample). The first
// gap that ends past the window ends the item. Flows come out in start order,
// named by their position: "0", "1", ...; so a longer window only appends.
struct BackgroundParams {
  std::vector<uint32_t> hosts;         // distinct, at least 2
  std::vector<BitRate> rates;          // the link rate of each listed host
  double load = 0;                     // 0 < load <= 1
  const FlowSizeCdf* sizes = nullptr;  // mean() > 0
  Time duration;
  uint64_t max_flows = 0;  // making more flows than this throws FlowLimitError
  FlowCommon common;
};
// The Poisson rate lambda_h above, in flows per second.
double background_arrival_rate(double load, BitRate rate, double mean_bytes);
// The expected number of flows: sum(lambda_h) * duration.
double background_expected_flows(const BackgroundParams& p);
std::vector<FlowSpec> background(const BackgroundParams& p, RngStream& rng);

// background() would make more than max_flows flows: thrown when the count
// passes the cap, so the work before it is bounded by the cap.
class FlowLimitError : public std::length_error {
 public:
  using std::length_error::length_error;
};

}  // namespace rdmasim
