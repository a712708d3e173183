// Reads scenario key `faults` (docs/faults.md): links and nodes going down
// and up, bit errors, PFC storms. Keys, defaults and ranges:
// scenario_params.cpp.
#include "sim/scenario/host_set.h"
#include "sim/scenario/loader_parts.h"

namespace rdmasim {
namespace {

using nlohmann::json;

uint32_t node_ref(JsonReader& r, const std::string& key, const Topology& t) {
  const std::string name = r.string(key);
  auto id = t.find(name);
  if (!id) r.fail(key, "\"" + name + "\" is not a node", "a node name of this topology");
  return *id;
}

// Every link between a and b (parallel links included).
std::vector<uint32_t> links_between(JsonReader& r, const Topology& t) {
  const uint32_t a = node_ref(r, "a", t);
  const uint32_t b = node_ref(r, "b", t);
  std::vector<uint32_t> out;
  for (uint32_t i = 0; i < t.links().size(); ++i) {
    const TopoLink& l = t.links()[i];
    if ((l.a == a && l.b == b) || (l.a == b && l.b == a)) out.push_back(i);
  }
  if (out.empty()) {
    r.fail("b", "no link joins \"" + t.node(a).name + "\" and \"" + t.node(b).name + "\"",
           "two nodes with a link between them");
  }
  return out;
}

void read_window(JsonReader& r, FaultSpec& f) {
  f.at = r.time("at");
  if (const std::optional<Time> until = r.optional_time("until")) {
    if (*until <= f.at) {
      r.fail("until", to_string(*until) + " is not after `at`",
             "a time after at (" + to_string(f.at) + ")");
    }
    f.until = *until;
  }
}

}  // namespace

void read_faults(std::vector<JsonReader> items, const Topology& t, std::vector<FaultSpec>& faults) {
  for (JsonReader& r : items) {
    FaultSpec f;
    f.kind = r.kind_as<FaultKind>();
    switch (f.kind) {
      case FaultKind::kLinkDown:
        f.links = links_between(r, t);
        read_window(r, f);
        break;
      case FaultKind::kNodeDown: {
        const uint32_t n = node_ref(r, "node", t);
        for (const auto& adj : t.adjacency()[n]) f.links.push_back(adj.link);
        read_window(r, f);
        break;
      }
      case FaultKind::kBitErrors:
        f.links = links_between(r, t);
        f.ber = r.number("ber");
        break;
      case FaultKind::kPfcStorm: {
        if (r.has("host") == r.has("hosts")) {
          r.fail(r.has("host") ? "hosts" : "host", r.has("host") ? "given with host" : "missing",
                 "exactly one of host (one host) and hosts (a host set)");
        }
        if (r.has("hosts")) {
          f.hosts = read_host_set(r, "hosts", t, HostSetRules::at_least(1), nullptr);
        } else {
          const json* v = r.raw("host");
          const uint32_t h = parse_host(*v, r.path_of("host"), t);
          r.resolve("host", t.node(t.hosts()[h]).name);
          f.hosts.push_back(h);
        }
        f.priority = static_cast<uint8_t>(r.integer("priority"));
        read_window(r, f);
        break;
      }
    }
    r.finish();
    faults.push_back(std::move(f));
  }
}

}  // namespace rdmasim
