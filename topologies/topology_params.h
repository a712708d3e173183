// The parameter tables of scenario key `topology` (docs/topologies.md): the
// generators' parameters (bound to their configs, whose defaults they take),
// cables, failed links, static routes and priority rewrites (sim/params.h).
#pragma once

#include "sim/params.h"
#include "topologies/generators.h"

namespace rdmasim {

enum class TopologyKind : uint8_t { kStar, kGraph, kFatTree, kRailOptimized };

// `topology`: the kinds and the keys every kind shares.
const ParamTable& topology_params();
// A cable's `{rate, delay}`, defaulting to the enclosing default (usually
// fabric.link): both computed by the loader.
const ParamTable& cable_params();
// `fabric.link`: the defaults of every cable.
const Fields<LinkSpec>& fabric_link_params();

}  // namespace rdmasim
