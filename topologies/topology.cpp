#include "topologies/topology.h"

#include <limits>
#include <stdexcept>

namespace rdmasim {

uint32_t Topology::add_node(std::string name, NodeKind kind) {
  const auto id = static_cast<uint32_t>(nodes_.size());
  if (!by_name_.emplace(name, id).second)
    throw std::invalid_argument("duplicate node name " + name);
  uint32_t host_index = std::numeric_limits<uint32_t>::max();
  if (kind == NodeKind::kHost) {
    host_index = static_cast<uint32_t>(hosts_.size());
    hosts_.push_back(id);
  }
  nodes_.push_back(TopoNode{std::move(name), kind, host_index, 0});
  adjacency_.emplace_back();
  return id;
}

uint32_t Topology::add_host(std::string name) { return add_node(std::move(name), NodeKind::kHost); }
uint32_t Topology::add_switch(std::string name) {
  return add_node(std::move(name), NodeKind::kSwitch);
}

uint32_t Topology::add_link(uint32_t a, uint32_t b, BitRate rate, Time delay) {
  if (a >= nodes_.size() || b >= nodes_.size()) throw std::out_of_range("link endpoint");
  if (a == b) throw std::invalid_argument("a link must join two different nodes");
  if (rate.in_bps() <= 0 || delay <= Time::zero()) {
    throw std::invalid_argument("a link needs a positive rate and delay");
  }
  const auto index = static_cast<uint32_t>(links_.size());
  links_.push_back(TopoLink{a, b, nodes_[a].num_ports++, nodes_[b].num_ports++, rate, delay});
  adjacency_[a].push_back({index, b});
  adjacency_[b].push_back({index, a});
  return index;
}

std::optional<uint32_t> Topology::find(std::string_view name) const {
  auto it = by_name_.find(std::string(name));
  if (it == by_name_.end()) return std::nullopt;
  return it->second;
}

}  // namespace rdmasim
