// Topology generators: each builds a Topology (the graph only; devices are
// created from it later by the runner) from a few numbers, and says what it
// built. Parameters are documented in docs/topologies.md.
//
// Contract:
//  1. Generators validate their parameters and throw TopologyError naming the
//     offending parameter (the loader prefixes the JSON path).
//  2. Host indices, names and port numbers follow the documented order, so
//     "pod2.leaf1.h3" or "su0.node3.gpu5" always denotes the same endpoint.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "sim/units.h"
#include "topologies/topology.h"

namespace rdmasim {

// A bad generator parameter: `param` is its scenario key, `message` the rest
// of the line ("0 is out of range (expected ...)").
class TopologyError : public std::runtime_error {
 public:
  TopologyError(std::string param, const std::string& message)
      : std::runtime_error(message), param_(std::move(param)) {}
  const std::string& param() const { return param_; }

 private:
  std::string param_;
};

// What a generator built, in the terms its users think in.
struct TopologyInfo {
  std::string kind;
  // Host order (and rail order) follows the fabric's structure, so the
  // summary prints bisection_bandwidth() (topologies/bisection.h); not for a
  // hand-built graph, whose host order is arbitrary.
  bool has_bisection = false;
  double oversubscription = 1;  // worst leaf: host-facing / fabric-facing capacity
};

// ---- fat_tree -----------------------------------------------------------

struct FatTreeConfig {
  int tiers = 2;
  // Two tiers: leaves, spines; every leaf's uplinks spread evenly over the spines.
  uint32_t leaves = 0;
  uint32_t spines = 0;
  // Three tiers: pods of leaves and spines (aggregation), joined by cores.
  uint32_t pods = 0;
  uint32_t leaves_per_pod = 0;
  uint32_t spines_per_pod = 0;
  uint32_t cores = 0;
  uint32_t hosts_per_leaf = 0;
  // Uplinks per leaf; 0 means "as many as the oversubscription asks for".
  uint32_t uplinks_per_leaf = 0;
  // Host-facing over fabric-facing capacity at a leaf: 1 is non-blocking, 3
  // is 3:1. Used when uplinks_per_leaf is 0; must give a whole number of uplinks.
  double oversubscription = 1.0;
  // Uplinks per spine to the cores (3 tiers); 0: cores / spines_per_pod.
  uint32_t uplinks_per_spine = 0;
  uint32_t switch_ports = 0;  // radix; 0 = not checked
  LinkSpec host_link, leaf_link, core_link;
};

// The classic k-ary fat-tree (Al-Fares et al., SIGCOMM 2008): k pods of k/2
// leaves and k/2 aggregation switches, (k/2)^2 cores, k/2 hosts per leaf.
FatTreeConfig k_ary_fat_tree(uint32_t k, const LinkSpec& link);

TopologyInfo build_fat_tree(const FatTreeConfig& cfg, Topology& t);

// ---- rail_optimized -----------------------------------------------------

struct RailOptimizedConfig {
  uint32_t sus = 1;            // scalable units
  uint32_t nodes_per_su = 32;  // node slots per SU (DGX SuperPOD: 32)
  bool ufm = true;             // the last SU's last slot holds the UFM appliance (4 links)
  uint32_t gpus_per_node = 8;
  uint32_t rails = 8;          // NIC ports per node, one rail leaf each; divides gpus_per_node
  uint32_t planes = 1;         // each NIC port to a separate plane of leaves and spines
  uint32_t spines = 0;         // per plane (and per SU if cores > 0); 0: reference table,
                               // or with cores the fewest that fit switch_ports
  uint32_t leaf_uplinks = 0;   // 0: one per node slot, rounded up to a multiple of spines
  uint32_t cores = 0;          // 0: the spines join all SUs; else per-SU spines join cores
  uint32_t spine_uplinks = 0;  // to the cores; 0: leaf_uplinks x leaves per SU / spines
  bool nvswitch = true;        // model the NVLink domain inside each node
  uint32_t switch_ports = 64;  // QM9700: 64 NDR ports; 0 = not checked
  LinkSpec nic_link, leaf_link, core_link;
  // The NVLink rate is the payload rate per GPU per direction (NVLink
  // framing has no per-packet bytes on the wire: models/proto/nvlink.h):
  // 370 GB/s, what NCCL reaches on H100 (NVIDIA/nccl-tests#212).
  LinkSpec nvlink{BitRate::gbps(2960), Time::ns(100)};
  LinkSpec pcie{BitRate::gbps(512), Time::ns(200)};
};

// Spines in the DGX SuperPOD (H100) reference architecture for 1..4 SUs
// (RA-11333, Network Fabrics, table 4): 4, 8, 16, 16; 0 beyond.
uint32_t superpod_spines(uint32_t sus);

TopologyInfo build_rail_optimized(const RailOptimizedConfig& cfg, Topology& t);

// ---- star ----------------------------------------------------------------

TopologyInfo build_star(uint32_t hosts, const LinkSpec& link, Topology& t);

}  // namespace rdmasim
