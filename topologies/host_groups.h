// HostGroups: the numbered groups of hosts a generator builds (its leaves,
// pods, rails, scalable units) and its management hosts, as host sets name
// them (docs/traffic.md#host-sets; parsed in sim/scenario/host_set.h). The
// topology layer only says who is in which group; resolving a set is the
// scenario's.
//
// Contract:
//  1. A kind of group exists in a topology iff its generator declared it
//     (count(kind) > 0); groups of a kind are numbered 0 … count − 1 in the
//     order documented per generator in docs/topologies.md.
//  2. A host is in at most one group of each kind. Hosts are assigned in
//     host-index order, so every group lists its members in host-index order.
//  3. Management hosts (a rail-optimized fabric's `ufm`) are in no group, and
//     sets that are not explicit lists never include them.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace rdmasim {

// kNode: the GPUs of one server (rail_optimized), the unit NCCL keeps inside
// NVLink.
enum class HostGroupKind : uint8_t { kLeaf, kPod, kRail, kSu, kNode, kCount };

// The kind's key in a host set ("leaf", "pod", "rail", "su", "node").
const char* to_string(HostGroupKind k);
std::optional<HostGroupKind> host_group_kind(std::string_view key);

class HostGroups {
 public:
  // Contract 1: the topology has `count` groups of kind `k`.
  void declare(HostGroupKind k, uint32_t count);
  // Puts the host with host index `host` into group `number` of kind `k`
  // (declared, number < count); hosts in increasing host-index order.
  void assign(HostGroupKind k, uint32_t number, uint32_t host);
  void add_management(uint32_t host) { management_.push_back(host); }

  // 0 when the topology has no groups of this kind.
  uint32_t count(HostGroupKind k) const {
    return static_cast<uint32_t>(members_[static_cast<size_t>(k)].size());
  }
  // The hosts of group `number` (< count(k)), in host-index order.
  const std::vector<uint32_t>& members(HostGroupKind k, uint32_t number) const {
    return members_[static_cast<size_t>(k)][number];
  }
  bool is_management(uint32_t host) const;

 private:
  std::array<std::vector<std::vector<uint32_t>>, static_cast<size_t>(HostGroupKind::kCount)>
      members_;
  std::vector<uint32_t> management_;  // few: a linear search is enough
};

}  // namespace rdmasim
