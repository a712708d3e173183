// Topology export: a Graphviz drawing and a text summary (counts per tier,
// links per rate, oversubscription, bisection bandwidth).
#pragma once

#include <string>

#include "topologies/generators.h"
#include "topologies/topology.h"

namespace rdmasim {

// Graphviz text (a digraph drawn without arrows, lower tiers at the bottom): nodes coloured by
// tier, grouped in clusters by their group (pod, SU node), parallel links merged into one edge
// labelled "xN".
std::string to_dot(const Topology& t, const std::string& title);

// A few lines for the terminal.
std::string topology_summary(const Topology& t, const TopologyInfo& info);

}  // namespace rdmasim
