// The parameter tables of scenario key `traffic` (docs/traffic.md): the
// kinds of traffic item, their keys, and the keys every kind shares
// (sim/params.h). Items are read by hand (hosts, host sets and CDFs need the
// topology); the tables hold their defaults, ranges and descriptions.
#pragma once

#include "sim/params.h"

namespace rdmasim {

enum class TrafficKind : uint8_t {
  kFlow,
  kIncast,
  kPermutation,
  kAllToAll,
  kBackground,
  kCollective
};

const ParamTable& traffic_params();

// Built-in default of `background.max_flows`.
inline constexpr int64_t kDefaultMaxFlows = 1'000'000;

}  // namespace rdmasim
