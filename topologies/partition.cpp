#include "topologies/partition.h"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>

namespace rdmasim {

std::vector<uint32_t> partition_nodes(const Topology& topo, uint32_t parts,
                                      const std::vector<int64_t>& host_weight) {
  if (parts < 1) throw std::invalid_argument("at least one partition");
  const size_t hosts = topo.num_hosts();
  if (!host_weight.empty() && host_weight.size() != hosts) {
    throw std::invalid_argument("one weight per host");
  }
  constexpr uint32_t kUnset = UINT32_MAX;
  const size_t n = topo.nodes().size();
  std::vector<uint32_t> part(n, kUnset);
  // Host index -> partition: the block of the weight's midpoint, in
  // integers: block = (2 * before + w) * parts / (2 * total).
  std::vector<uint32_t> block(hosts);
  int64_t total = 0;
  for (size_t h = 0; h < hosts; ++h) total += host_weight.empty() ? 1 : host_weight[h];
  int64_t before = 0;
  for (size_t h = 0; h < hosts; ++h) {
    const int64_t w = host_weight.empty() ? 1 : host_weight[h];
    if (w <= 0) throw std::invalid_argument("host weights must be positive");
    const auto b = static_cast<uint64_t>(2 * before + w) * parts / static_cast<uint64_t>(2 * total);
    block[h] = static_cast<uint32_t>(std::min<uint64_t>(b, parts - 1));
    before += w;
  }
  // Hosts of a group (a server's GPUs) whose inside links are shorter than
  // its links out stay together, if the group is no larger than a block: a
  // cut one would shorten the lookahead to its delay (an NVLink's 100 ns).
  std::map<std::string, size_t> group_size;
  std::map<std::string, Time> inside, outside;  // shortest link of each kind
  const auto shortest = [](std::map<std::string, Time>& m, const std::string& g, Time d) {
    const auto [it, added] = m.emplace(g, d);
    if (!added) it->second = std::min(it->second, d);
  };
  for (size_t h = 0; h < hosts; ++h) ++group_size[topo.node(topo.hosts()[h]).group];
  for (const TopoLink& l : topo.links()) {
    const std::string& a = topo.node(l.a).group;
    const std::string& b = topo.node(l.b).group;
    if (a == b) {
      if (!a.empty()) shortest(inside, a, l.delay);
      continue;
    }
    if (!a.empty()) shortest(outside, a, l.delay);
    if (!b.empty()) shortest(outside, b, l.delay);
  }
  const auto keep_whole = [&](const std::string& g) {
    if (g.empty() || group_size[g] > (hosts + parts - 1) / parts) return false;
    const auto in = inside.find(g);
    if (in == inside.end()) return false;
    const auto out = outside.find(g);
    return out == outside.end() || in->second < out->second;
  };
  for (size_t h = 1; h < hosts; ++h) {
    const std::string& g = topo.node(topo.hosts()[h]).group;
    if (g == topo.node(topo.hosts()[h - 1]).group && keep_whole(g)) block[h] = block[h - 1];
  }
  for (uint32_t id = 0; id < n; ++id) {
    const TopoNode& node = topo.node(id);
    if (node.kind == NodeKind::kHost) part[id] = block[node.host_index];
  }
  std::vector<uint64_t> switches_in(parts, 0);
  std::vector<uint64_t> votes(parts);
  for (;;) {
    // One layer: every unplaced switch next to a placed node, judged on the
    // placement before this layer.
    const std::vector<uint32_t> layer = part;
    bool any_unset = false;
    bool placed = false;
    for (uint32_t id = 0; id < n; ++id) {
      if (part[id] != kUnset) continue;
      any_unset = true;
      std::fill(votes.begin(), votes.end(), 0);
      bool near = false;
      for (const auto& adj : topo.adjacency()[id]) {
        if (layer[adj.neighbor] == kUnset) continue;
        ++votes[layer[adj.neighbor]];
        near = true;
      }
      if (!near) continue;
      uint32_t best = 0;
      for (uint32_t p = 1; p < parts; ++p) {
        if (votes[p] > votes[best] ||
            (votes[p] == votes[best] && switches_in[p] < switches_in[best])) {
          best = p;
        }
      }
      part[id] = best;
      ++switches_in[best];
      placed = true;
    }
    if (!any_unset) break;
    if (!placed) {
      // Switches out of reach of every host: to the emptiest partition.
      for (uint32_t id = 0; id < n; ++id) {
        if (part[id] != kUnset) continue;
        uint32_t best = 0;
        for (uint32_t p = 1; p < parts; ++p) {
          if (switches_in[p] < switches_in[best]) best = p;
        }
        part[id] = best;
        ++switches_in[best];
      }
      break;
    }
  }
  return part;
}

}  // namespace rdmasim
