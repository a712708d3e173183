#include "topologies/topology.h"

#include <limits>
#include <stdexcept>

namespace rdmasim {

const char* to_string(Tier t) {
  switch (t) {
    case Tier::kHost:
      return "host";
    case Tier::kSwitch:
      return "switch";
    case Tier::kLeaf:
      return "leaf";
    case Tier::kSpine:
      return "spine";
    case Tier::kCore:
      return "core";
    case Tier::kNvSwitch:
      return "nvswitch";
    case Tier::kNicSwitch:
      return "nic_switch";
    case Tier::kCount:
      break;
  }
  return "?";
}

uint32_t Topology::add_node(std::string name, NodeKind kind, Tier tier, std::string group) {
  const auto id = static_cast<uint32_t>(nodes_.size());
  if (!by_name_.emplace(name, id).second)
    throw std::invalid_argument("duplicate node name " + name);
  uint32_t host_index = std::numeric_limits<uint32_t>::max();
  if (kind == NodeKind::kHost) {
    host_index = static_cast<uint32_t>(hosts_.size());
    hosts_.push_back(id);
  }
  nodes_.push_back(TopoNode{std::move(name), kind, tier, host_index, 0, std::move(group)});
  adjacency_.emplace_back();
  return id;
}

uint32_t Topology::add_host(std::string name, std::string group) {
  return add_node(std::move(name), NodeKind::kHost, Tier::kHost, std::move(group));
}
uint32_t Topology::add_switch(std::string name, Tier tier, std::string group) {
  return add_node(std::move(name), NodeKind::kSwitch, tier, std::move(group));
}

uint32_t Topology::add_link(uint32_t a, uint32_t b, BitRate rate, Time delay, LinkKind kind) {
  if (a >= nodes_.size() || b >= nodes_.size()) throw std::out_of_range("link endpoint");
  if (a == b) throw std::invalid_argument("a link must join two different nodes");
  if (rate.in_bps() <= 0 || delay <= Time::zero()) {
    throw std::invalid_argument("a link needs a positive rate and delay");
  }
  const auto index = static_cast<uint32_t>(links_.size());
  links_.push_back(
      TopoLink{a, b, nodes_[a].num_ports++, nodes_[b].num_ports++, rate, delay, false, kind});
  adjacency_[a].push_back({index, b});
  adjacency_[b].push_back({index, a});
  return index;
}

BitRate Topology::slowest_network_rate() const {
  BitRate slowest;
  for (const TopoLink& l : links_) {
    if (l.kind == LinkKind::kNvlink) continue;
    if (slowest.in_bps() == 0 || l.rate < slowest) slowest = l.rate;
  }
  return slowest;
}

std::optional<uint32_t> Topology::find(std::string_view name) const {
  auto it = by_name_.find(std::string(name));
  if (it == by_name_.end()) return std::nullopt;
  return it->second;
}

}  // namespace rdmasim
