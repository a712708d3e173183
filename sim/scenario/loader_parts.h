// Pieces of the scenario loader shared between its source files. Internal to
// sim/scenario: nothing outside the loader includes this.
#pragma once

#include <vector>

#include "sim/scenario/json_reader.h"
#include "sim/scenario/scenario.h"

namespace rdmasim {

// Reads "rate" and "delay" of a link, defaulting to `def`.
LinkSpec read_link(JsonReader& r, const LinkSpec& def);
// The same for a nested object (absent: `def`), checking for unknown keys.
LinkSpec read_link_object(JsonReader r, const LinkSpec& def);

// Reads `fabric` (fabric_loader.cpp) and `fabric.nic` (nic_loader.cpp).
void read_fabric(JsonReader r, FabricConfig& f);
// `pfc`: the NIC's ports run PFC (RoCE), so its thresholds are checked.
void read_nic(JsonReader r, NicConfig& nic, bool pfc);
// Why InfiniBand traffic cannot use service level `sl` under `f`'s QoS
// tables (it maps to VL15, or to a VL no arbitration table lets send);
// empty if it can.
std::string ib_sl_unusable(const FabricConfig& f, uint8_t sl);

// Reads `traffic` into flows and collectives (traffic_loader.cpp). Random patterns draw from
// streams keyed by `seed` and the item's position. Flows get `fabric_cc`
// unless their item has a `cc` of its own.
void read_traffic(std::vector<JsonReader> items, const Topology& t, uint64_t seed,
                  const std::shared_ptr<const CcConfig>& fabric_cc, std::vector<FlowSpec>& flows,
                  std::vector<CollectiveSpec>& collectives);

// Reads `fabric.cc` or `traffic[i].cc` (cc_loader.cpp): null for "none". An
// item's setting starts from `inherit` (the fabric's) when it names the same
// algorithm.
std::shared_ptr<const CcConfig> read_cc(JsonReader r, const CcConfig* inherit);

// Reads `faults` (fault_loader.cpp).
void read_faults(std::vector<JsonReader> items, const Topology& t, std::vector<FaultSpec>& faults);

// Reads `topology` into `t` (and the static routes it names).
TopologyInfo read_topology(JsonReader r, const FabricConfig& f, Topology& t,
                           std::vector<StaticRoute>& static_routes,
                           std::vector<std::pair<uint32_t, PriorityRewrite>>& rewrites,
                           Time& reconvergence);

}  // namespace rdmasim
