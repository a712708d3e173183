#include "topologies/host_groups.h"

#include <algorithm>
#include <stdexcept>

namespace rdmasim {

const char* to_string(HostGroupKind k) {
  switch (k) {
    case HostGroupKind::kLeaf:
      return "leaf";
    case HostGroupKind::kPod:
      return "pod";
    case HostGroupKind::kRail:
      return "rail";
    case HostGroupKind::kSu:
      return "su";
    case HostGroupKind::kNode:
      return "node";
    case HostGroupKind::kCount:
      break;
  }
  return "?";
}

std::optional<HostGroupKind> host_group_kind(std::string_view key) {
  for (size_t i = 0; i < static_cast<size_t>(HostGroupKind::kCount); ++i) {
    const auto k = static_cast<HostGroupKind>(i);
    if (key == to_string(k)) return k;
  }
  return std::nullopt;
}

void HostGroups::declare(HostGroupKind k, uint32_t count) {
  members_[static_cast<size_t>(k)].assign(count, {});
}

void HostGroups::assign(HostGroupKind k, uint32_t number, uint32_t host) {
  auto& groups = members_[static_cast<size_t>(k)];
  if (number >= groups.size()) throw std::out_of_range("host group number");
  std::vector<uint32_t>& m = groups[number];
  if (!m.empty() && m.back() >= host) throw std::logic_error("hosts out of host-index order");
  m.push_back(host);
}

bool HostGroups::is_management(uint32_t host) const {
  return std::find(management_.begin(), management_.end(), host) != management_.end();
}

}  // namespace rdmasim
