// Scenario: a scenario file turned into typed, validated configuration, once,
// at load time. Everything a run needs is here; nothing downstream reads JSON.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/cc/cc_algorithm.h"
#include "models/collective/collective_spec.h"
#include "models/flow_control/credits.h"
#include "models/nic/nic_config.h"
#include "models/proto/roce_v2.h"
#include "models/switch/switch_config.h"
#include "models/traffic/flow_generator.h"
#include "sim/units.h"
#include "topologies/generators.h"
#include "topologies/routing.h"
#include "topologies/topology.h"

namespace rdmasim {

enum class Transport : uint8_t { kRoceV2, kInfiniband };

struct FabricConfig {
  Transport transport = Transport::kRoceV2;
  uint32_t ethernet_mtu = 9216;
  IpVersion ip = IpVersion::kIpv4;
  bool vlan = false;
  bool grh = false;         // InfiniBand: every packet carries a GRH
  Credits::Params credits;  // InfiniBand: every port's credit-based flow control
  // InfiniBand: OpenSM's head_of_queue_lifetime (switch ports facing
  // switches) and leaf_head_of_queue_lifetime (facing hosts), encoded.
  uint32_t hoq_lifetime = 0x12;
  uint32_t leaf_hoq_lifetime = 0x10;
  // InfiniBand: operational data VLs, SL-to-VL table and VL arbitration of
  // every port (`fabric.infiniband.op_vls` and `.qos`): the NICs' ports
  // (`qos.ca`) and the switches' (`qos.swe`).
  uint32_t op_vls = 8;
  IbQos ib_qos_ca;
  IbQos ib_qos_swe;
  // The JSON objects that gave their SL-to-VL and VL arbitration tables
  // (`fabric.infiniband.qos`, or its `ca` or `swe`): what a message names.
  struct IbQosFrom {
    std::string sl2vl = "fabric.infiniband.qos";
    std::string vlarb_high = "fabric.infiniband.qos";
    std::string vlarb_low = "fabric.infiniband.qos";
  };
  IbQosFrom ib_qos_ca_from;
  IbQosFrom ib_qos_swe_from;
  LinkSpec link;
  NicConfig nic;
  SwitchConfig sw;
  // The NVSwitches' (nvswitch_config(sw)), set by the loader.
  SwitchConfig nvswitch = nvswitch_config(SwitchConfig{});
  // Congestion control of every flow's QPs unless its traffic item has its
  // own (`fabric.cc`); none if null.
  std::shared_ptr<const CcConfig> cc;
};

struct OutputConfig {
  std::string dir;  // resolved: never empty
  bool trace = true;
  Time queue_interval = Time::infinite();  // sample switch queues this often; infinite: off
  Time link_interval = Time::infinite();   // sample link counters this often; infinite: off
  bool pfc_events = true;
  bool drop_events = true;
  bool flow_paths = true;  // record the links each flow's data took
  // Rising edges of the summary's slowdown size buckets (docs/scenario.md).
  std::vector<Bytes> size_buckets = {Bytes::kb(10), Bytes::kb(100), Bytes::mb(1)};
  // Sample every QP's congestion-control state, decimated to this interval
  // (0: every change); infinite: off (models/cc/cc_sampler.h).
  Time cc_interval = Time::infinite();
  // The measurement window (docs/scenario.md): statistics over (start, end].
  // Either given turns on the switches' exact queue averages.
  std::optional<Time> window_start;  // absent: from before the first event
  std::optional<Time> window_end;    // absent: to the end of the run
  bool window_given() const { return window_start.has_value() || window_end.has_value(); }
};

enum class FaultKind : uint8_t { kLinkDown, kNodeDown, kBitErrors, kPfcStorm };

// One entry of the scenario's `faults` (docs/faults.md), resolved to links
// and hosts.
struct FaultSpec {
  FaultKind kind = FaultKind::kLinkDown;
  std::vector<uint32_t> links;  // topology links taken down / given bit errors
  std::vector<uint32_t> hosts;  // host indices (PFC storm)
  Time at;
  Time until = Time::infinite();
  double ber = 0;
  uint8_t priority = 3;
};

struct StopConfig {
  Time time = Time::infinite();
  // Wall-clock time, held as a Time (the run's real seconds, not simulated).
  Time wall_time = Time::infinite();
};

// InfiniBand switches forward by their subnet manager's linear tables
// (min-hop, docs/infiniband.md#forwarding); Ethernet switches hash over ECMP.
inline RoutingEngine routing_engine(const FabricConfig& f) {
  return f.transport == Transport::kInfiniband ? RoutingEngine::kMinHop : RoutingEngine::kEcmp;
}

struct Scenario {
  std::string name;
  uint64_t seed = 1;
  FabricConfig fabric;
  Topology topology;
  TopologyInfo topology_info;
  std::vector<StaticRoute> static_routes;
  // Priority rewrite rules, with the switch (node id) they belong to.
  std::vector<std::pair<uint32_t, PriorityRewrite>> rewrites;
  Routes routes;
  std::vector<FlowSpec> flows;
  std::vector<CollectiveSpec> collectives;  // `traffic` items of kind "collective"
  uint32_t traffic_items = 0;               // entries of `traffic` (FlowSpec::item counts them)
  std::vector<FaultSpec> faults;
  // How long after a link or node changes state the routes are recomputed.
  Time reconvergence_delay = Time::ms(1);
  OutputConfig output;
  StopConfig stop;
  // The scenario as it runs: overrides applied, every default filled in.
  // output.dir is left out: where results go does not change them.
  std::string resolved_json;
  // FNV-1a 64 of resolved_json, as 16 hex digits.
  std::string hash;
};

struct LoadOptions {
  std::vector<std::string> overrides;  // "--set" assignments, in order
  std::string output_dir;              // "--out"; empty keeps the scenario's
};

// Reads and validates a scenario file. Throws ScenarioError (one line,
// naming the JSON path) on any problem with the file or its contents.
Scenario load_scenario_file(const std::string& path, const LoadOptions& options = {});
// The same from text; `default_name` names the run if the text does not.
Scenario load_scenario_text(const std::string& text, const std::string& default_name,
                            const LoadOptions& options = {});

}  // namespace rdmasim
