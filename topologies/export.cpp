#include "topologies/export.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <map>
#include <sstream>

#include "topologies/bisection.h"

namespace rdmasim {
namespace {

const char* tier_colour(Tier t) {
  switch (t) {
    case Tier::kHost:
      return "#9ecae1";
    case Tier::kLeaf:
      return "#a1d99b";
    case Tier::kSpine:
      return "#fdae6b";
    case Tier::kCore:
      return "#fc9272";
    case Tier::kNvSwitch:
      return "#bcbddc";
    case Tier::kNicSwitch:
      return "#d9d9d9";
    default:
      return "#ffffff";
  }
}

std::string quote(const std::string& s) { return "\"" + s + "\""; }

// Drawing order of tiers, bottom up.
int rank(Tier t) {
  switch (t) {
    case Tier::kHost:
      return 0;
    case Tier::kNicSwitch:
      return 1;
    case Tier::kNvSwitch:
    case Tier::kLeaf:
    case Tier::kSwitch:
      return 2;
    case Tier::kSpine:
      return 3;
    case Tier::kCore:
      return 4;
    default:
      return 5;
  }
}

}  // namespace

std::string to_dot(const Topology& t, const std::string& title) {
  std::ostringstream o;
  // A digraph with edges pointing up the tiers (drawn without arrows) lets
  // dot rank hosts at the bottom and cores at the top.
  o << "digraph " << quote(title) << " {\n"
    << "  graph [rankdir=BT, splines=false, nodesep=0.15, fontname=Helvetica];\n"
    << "  node [shape=box, style=filled, fontname=Helvetica, fontsize=9, height=0.25];\n"
    << "  edge [color=\"#777777\", fontsize=7, dir=none];\n";
  std::map<std::string, std::vector<uint32_t>> groups;
  for (uint32_t i = 0; i < t.nodes().size(); ++i) groups[t.node(i).group].push_back(i);
  int cluster = 0;
  for (const auto& [group, ids] : groups) {
    const bool boxed = !group.empty();
    if (boxed)
      o << "  subgraph cluster_" << cluster++ << " {\n    label=" << quote(group)
        << "; style=rounded;\n";
    for (uint32_t i : ids) {
      const TopoNode& n = t.node(i);
      o << (boxed ? "    " : "  ") << quote(n.name) << " [fillcolor=" << quote(tier_colour(n.tier))
        << (n.kind == NodeKind::kHost ? ", shape=ellipse" : "") << "];\n";
    }
    if (boxed) o << "  }\n";
  }
  // Merge parallel links.
  std::map<std::pair<uint32_t, uint32_t>, std::pair<int, const TopoLink*>> edges;
  for (const TopoLink& l : t.links()) {
    auto key = std::minmax(l.a, l.b);
    auto& e = edges[{key.first, key.second}];
    ++e.first;
    e.second = &l;
  }
  for (const auto& [key, e] : edges) {
    uint32_t lo = key.first, hi = key.second;
    if (rank(t.node(lo).tier) > rank(t.node(hi).tier)) std::swap(lo, hi);
    o << "  " << quote(t.node(lo).name) << " -> " << quote(t.node(hi).name) << " [";
    o << "tooltip=" << quote(to_string(e.second->rate) + ", " + to_string(e.second->delay));
    if (e.first > 1) o << ", label=" << quote("x" + std::to_string(e.first)) << ", penwidth=2";
    if (e.second->failed) o << ", style=dashed, color=red";
    o << "];\n";
  }
  o << "}\n";
  return o.str();
}

std::string topology_summary(const Topology& t, const TopologyInfo& info) {
  std::ostringstream o;
  std::array<uint64_t, static_cast<size_t>(Tier::kCount)> per_tier{};
  for (const TopoNode& n : t.nodes()) ++per_tier[static_cast<size_t>(n.tier)];
  o << "topology " << info.kind << ": " << t.nodes().size() << " nodes, " << t.links().size()
    << " links\n";
  o << "  nodes:";
  for (size_t i = 0; i < per_tier.size(); ++i) {
    if (per_tier[i] != 0) o << " " << per_tier[i] << " " << to_string(static_cast<Tier>(i));
  }
  o << "\n";
  // Links per tier pair and rate.
  std::map<std::string, uint64_t> classes;
  uint64_t failed = 0;
  for (const TopoLink& l : t.links()) {
    std::string a = to_string(t.node(l.a).tier), b = to_string(t.node(l.b).tier);
    if (b < a) std::swap(a, b);
    ++classes[a + "-" + b + " " + to_string(l.rate)];
    failed += l.failed ? 1 : 0;
  }
  o << "  links:";
  bool first = true;
  for (const auto& [k, v] : classes) {
    o << (first ? " " : ", ") << v << " " << k;
    first = false;
  }
  o << "\n";
  if (failed != 0) o << "  failed links: " << failed << "\n";
  char buf[128];
  std::snprintf(buf, sizeof buf, "  oversubscription %.3g:1", info.oversubscription);
  o << buf;
  if (info.has_bisection) o << "; bisection bandwidth " << to_string(bisection_bandwidth(t));
  o << "\n";
  return o.str();
}

}  // namespace rdmasim
