#include "models/traffic/patterns.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

namespace rdmasim {
namespace {

void require(bool ok, const char* what) {
  if (!ok) throw std::invalid_argument(what);
}

void require_distinct(std::vector<uint32_t> hosts, const char* what) {
  std::sort(hosts.begin(), hosts.end());
  require(std::adjacent_find(hosts.begin(), hosts.end()) == hosts.end(), what);
}

FlowSpec make_flow(const FlowCommon& c, const std::string& suffix, uint32_t src, uint32_t dst,
                   int64_t bytes, Time start) {
  FlowSpec f;
  f.name = c.name + "." + suffix;
  f.src = src;
  f.dst = dst;
  f.bytes = bytes;
  f.start = start;
  f.op = c.op;
  f.rate = c.rate;
  f.qps = c.qps;
  f.sl = c.sl;
  return f;
}

void shuffle(std::vector<uint32_t>& v, RngStream& rng) {
  for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[rng.uniform(i)]);
}

}  // namespace

std::vector<FlowSpec> incast(const IncastParams& p, RngStream& rng) {
  require(!p.senders.empty(), "incast: no senders");
  require(std::find(p.senders.begin(), p.senders.end(), p.dst) == p.senders.end(),
          "incast: dst among the senders");
  require_distinct(p.senders, "incast: a sender listed twice");
  require(p.jitter >= Time::zero(), "incast: negative jitter");
  std::vector<FlowSpec> flows;
  flows.reserve(p.senders.size());
  for (size_t k = 0; k < p.senders.size(); ++k) {
    Time start = p.common.start;
    if (p.jitter > Time::zero()) {
      start +=
          Time::ps(static_cast<int64_t>(rng.uniform(static_cast<uint64_t>(p.jitter.in_ps()) + 1)));
    }
    flows.push_back(
        make_flow(p.common, "s" + std::to_string(k), p.senders[k], p.dst, p.bytes, start));
  }
  return flows;
}

std::vector<uint32_t> shift_permutation(uint32_t n, uint32_t shift) {
  require(shift > 0 && shift < n, "shift_permutation: shift outside 1 .. n-1");
  std::vector<uint32_t> perm(n);
  for (uint32_t k = 0; k < n; ++k) perm[k] = static_cast<uint32_t>((uint64_t{k} + shift) % n);
  return perm;
}

std::vector<uint32_t> random_cross_group_permutation(const std::vector<uint32_t>& group,
                                                     RngStream& rng) {
  const size_t n = group.size();
  require(n >= 2, "random_cross_group_permutation: fewer than 2 positions");
  std::map<uint32_t, size_t> sizes;
  for (uint32_t g : group) ++sizes[g];
  size_t largest = 0;
  for (const auto& [g, count] : sizes) largest = std::max(largest, count);
  require(2 * largest <= n, "random_cross_group_permutation: a group holds more than half");

  std::vector<uint32_t> perm(n);
  if (sizes.size() == n) {
    // Each position its own group: a uniform derangement, by rejection.
    for (;;) {
      std::iota(perm.begin(), perm.end(), 0);
      shuffle(perm, rng);
      bool fixed_point = false;
      for (size_t k = 0; k < n && !fixed_point; ++k) fixed_point = perm[k] == k;
      if (!fixed_point) return perm;
    }
  }
  std::iota(perm.begin(), perm.end(), 0);
  shuffle(perm, rng);
  std::vector<uint32_t> candidates;
  for (size_t k = 0; k < n; ++k) {
    const uint32_t g = group[k];
    if (group[perm[k]] != g) continue;
    // Swapping images with j fixes k iff perm[j] is outside k's group, and
    // keeps j valid iff perm[k] (in k's group) lands outside j's group.
    candidates.clear();
    for (size_t j = 0; j < n; ++j) {
      if (group[j] != g && group[perm[j]] != g) candidates.push_back(static_cast<uint32_t>(j));
    }
    require(!candidates.empty(), "random_cross_group_permutation: no repair (a bug)");
    std::swap(perm[k], perm[candidates[rng.uniform(candidates.size())]]);
  }
  return perm;
}

std::vector<FlowSpec> permutation(const PermutationParams& p, RngStream& rng) {
  const auto n = static_cast<uint32_t>(p.hosts.size());
  require(n >= 2, "permutation: fewer than 2 hosts");
  require_distinct(p.hosts, "permutation: a host listed twice");
  std::vector<uint32_t> perm;
  if (p.pattern == PermutationParams::Pattern::kShift) {
    perm = shift_permutation(n, p.shift);
  } else {
    std::vector<uint32_t> group = p.group;
    if (group.empty()) {
      group.resize(n);
      std::iota(group.begin(), group.end(), 0);
    }
    require(group.size() == n, "permutation: one group id per host");
    perm = random_cross_group_permutation(group, rng);
  }
  std::vector<FlowSpec> flows;
  flows.reserve(n);
  for (uint32_t k = 0; k < n; ++k) {
    flows.push_back(make_flow(p.common, "s" + std::to_string(k), p.hosts[k], p.hosts[perm[k]],
                              p.bytes, p.common.start));
  }
  return flows;
}

std::vector<FlowSpec> all_to_all(const AllToAllParams& p) {
  const auto n = static_cast<uint32_t>(p.hosts.size());
  require(n >= 2, "all_to_all: fewer than 2 hosts");
  require_distinct(p.hosts, "all_to_all: a host listed twice");
  require(p.stagger >= Time::zero(), "all_to_all: negative stagger");
  std::vector<FlowSpec> flows;
  flows.reserve(uint64_t{n} * (n - 1));
  for (uint32_t r = 1; r < n; ++r) {
    const Time start = p.common.start + p.stagger * (r - 1);
    for (uint32_t k = 0; k < n; ++k) {
      const uint32_t m = (k + r) % n;
      flows.push_back(make_flow(p.common, "s" + std::to_string(k) + ".d" + std::to_string(m),
                                p.hosts[k], p.hosts[m], p.bytes, start));
    }
  }
  return flows;
}

double background_arrival_rate(double load, BitRate rate, double mean_bytes) {
  return load * static_cast<double>(rate.in_bps()) / (8.0 * mean_bytes);
}

double background_expected_flows(const BackgroundParams& p) {
  double total = 0;
  for (BitRate r : p.rates) total += background_arrival_rate(p.load, r, p.sizes->mean());
  return total * p.duration.in_seconds();
}

std::vector<FlowSpec> background(const BackgroundParams& p, RngStream& rng) {
  const size_t n = p.hosts.size();
  require(n >= 2, "background: fewer than 2 hosts");
  require_distinct(p.hosts, "background: a host listed twice");
  require(p.rates.size() == n, "background: one rate per host");
  require(p.load > 0 && p.load <= 1, "background: load outside (0, 1]");
  require(p.sizes != nullptr && p.sizes->mean() > 0, "background: no sizes, or mean size 0");
  require(p.duration >= Time::zero(), "background: negative duration");

  // Sources are drawn in proportion to their rates, in whole bit/s.
  std::vector<uint64_t> cumulative(n);
  uint64_t total_bps = 0;
  for (size_t k = 0; k < n; ++k) {
    require(p.rates[k].in_bps() > 0, "background: a rate is not positive");
    require(total_bps + static_cast<uint64_t>(p.rates[k].in_bps()) > total_bps,
            "background: the rates overflow 64 bits");
    total_bps += static_cast<uint64_t>(p.rates[k].in_bps());
    cumulative[k] = total_bps;
  }
  const double total_rate = background_arrival_rate(p.load, BitRate::bps(1), p.sizes->mean()) *
                            static_cast<double>(total_bps);  // flows per second, all hosts
  const double mean_gap_ps = 1e12 / total_rate;              // of the superposed process
  const auto window = static_cast<double>(p.duration.in_ps());

  std::vector<FlowSpec> flows;
  double t = 0;  // picoseconds after start
  for (;;) {
    t += rng.exponential(mean_gap_ps);
    const double at = std::floor(t);
    if (at > window) break;
    if (flows.size() == p.max_flows) {
      throw FlowLimitError("more than " + std::to_string(p.max_flows) + " flows (about " +
                           std::to_string(std::llround(background_expected_flows(p))) +
                           " expected)");
    }
    const uint64_t pick = rng.uniform(total_bps);
    const auto src = static_cast<size_t>(
        std::upper_bound(cumulative.begin(), cumulative.end(), pick) - cumulative.begin());
    size_t dst = rng.uniform(n - 1);
    if (dst >= src) ++dst;
    const int64_t bytes = p.sizes->sample(rng);
    flows.push_back(make_flow(p.common, std::to_string(flows.size()), p.hosts[src], p.hosts[dst],
                              bytes, p.common.start + Time::ps(static_cast<int64_t>(at))));
  }
  return flows;
}

}  // namespace rdmasim
