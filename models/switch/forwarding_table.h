// ForwardingTable: for each destination host, the set of equal-cost egress
// ports, stored flat (CSR) so a lookup is two array reads.
//
// Contract:
//  1. Built once, before the run, by the routing layer (topologies/routing.h)
//     or from static routes; immutable while running.
//  2. An empty set means "unreachable": the switch drops and counts.
//  3. select() picks within the set by a hash of the packet's flow fields and
//     the switch's seed, so one flow always takes one port (ECMP, RFC 2992).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sim/hash.h"

namespace rdmasim {

class ForwardingTable {
 public:
  ForwardingTable() = default;
  // sets[d] are the egress ports towards host d.
  explicit ForwardingTable(const std::vector<std::vector<uint32_t>>& sets) {
    offsets_.reserve(sets.size() + 1);
    offsets_.push_back(0);
    for (const auto& s : sets) {
      ports_.insert(ports_.end(), s.begin(), s.end());
      offsets_.push_back(static_cast<uint32_t>(ports_.size()));
    }
  }

  size_t num_destinations() const { return offsets_.empty() ? 0 : offsets_.size() - 1; }
  std::span<const uint32_t> ports(uint32_t dst) const {
    if (dst + 1 >= offsets_.size()) return {};
    return {ports_.data() + offsets_[dst], offsets_[dst + 1] - offsets_[dst]};
  }

  // Egress port for a packet to `dst`, or -1 if unreachable.
  int64_t select(uint32_t dst, uint64_t flow_key) const {
    auto set = ports(dst);
    if (set.empty()) return -1;
    if (set.size() == 1) return set[0];
    return set[mix64(flow_key) % set.size()];
  }

 private:
  std::vector<uint32_t> offsets_;
  std::vector<uint32_t> ports_;
};

}  // namespace rdmasim
