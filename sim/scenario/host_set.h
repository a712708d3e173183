// Host sets (docs/traffic.md#host-sets): the one grammar of every scenario
// key that names hosts. A set — a traffic item's `senders`, `hosts` or
// `ranks`, a static route's `dst` — is "all", a count, a list of hosts, or
// an object: {"range": [a, b]}, a group ({"leaf": 3}, {"rail": [0, 1]},
// {"su": 2}, {"pod": 0}), {"union": [set, ...]}, or {"of": set, "except":
// set, "count": n}. One host (`src`, `dst`) is a name or a host index.
//
// Contract:
//  1. A set is an ordered list of distinct host indices; the order of every
//     form is documented (it is a collective's ring order, an incast's
//     sender order).
//  2. Management hosts (topologies/host_groups.h) are in a set only where a
//     list names them.
//  3. A `count` object draws from the stream it is given (the traffic
//     item's), when it is evaluated: an object's `of`, then its `except`,
//     then its draw; a union's members in order. Without a stream a count
//     object is an error. The other forms draw nothing.
//  4. Every error is a ScenarioError naming the JSON path of the bad value.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "sim/rng.h"
#include "sim/scenario/json_reader.h"
#include "topologies/topology.h"

namespace rdmasim {

// What a key needs of its set.
struct HostSetRules {
  size_t min = 1;  // fewest hosts
  // A host the set may not hold (an incast's dst): "all" and a count leave it
  // out; any other form that holds it is an error.
  std::optional<uint32_t> without;
  std::string without_is = "dst";  // what it is, for errors

  static HostSetRules at_least(size_t n) {
    HostSetRules r;
    r.min = n;
    return r;
  }
  // At least `n` hosts, none of them `dst`.
  static HostSetRules senders(size_t n, uint32_t dst) {
    HostSetRules r = at_least(n);
    r.without = dst;
    return r;
  }
};

// One host, by name or host index, at `path`.
uint32_t parse_host(const nlohmann::json& v, const std::string& path, const Topology& t);
// "a host name such as "h0", or a host index from 0 to N-1", for errors.
std::string host_expected(const Topology& t);

// The set `v` at `path` (contract 1); `rng` may be null (contract 3).
std::vector<uint32_t> parse_host_set(const nlohmann::json& v, const std::string& path,
                                     const Topology& t, const HostSetRules& rules, RngStream* rng);

// Key `key` of `r` (its default when absent), recorded in the resolved
// scenario: "all" and a count as given, any other form as the list of host
// names it came to, so that the resolved scenario names exactly who ran.
std::vector<uint32_t> read_host_set(JsonReader& r, const std::string& key, const Topology& t,
                                    const HostSetRules& rules, RngStream* rng);

// The JSON Schema of a host set, recursive through {"$ref": "#/$defs/host_set"}
// (which is how the parameter tables refer to it); the scenario schema holds
// it under $defs.
nlohmann::json host_set_schema();

}  // namespace rdmasim
