// FabricBuilder: a Scenario's devices built into a Simulation: a NIC per
// host, a switch per switch node, a cable per topology link, cut-through,
// forwarding tables and priority rewrites. The one place that knows which
// model class each topology node becomes; run_scenario and the tests'
// ScenarioSim (test/support/scenario_sim.h) build through it.
//
// Contract:
//  1. Components are added in node order (a node's NIC or switch), then the
//     links in topology link order: component ids, and so every tie order
//     of the event queue, follow from the scenario alone.
//  2. Port numbers of the devices equal the topology's (std::logic_error
//     otherwise: a bug, not bad input).
//  3. `formats` must outlive the NICs (they keep references).
//  4. Each port gets its framing from its cable: a network cable the
//     scenario's transport (RoCE v2 or InfiniBand, with PFC or credits), an
//     NVLink (TopoLink::kind) NvlinkFormat, with no PFC, credits or
//     cut-through; an NVSwitch is built with fabric.nvswitch.
#pragma once

#include <cstdint>
#include <vector>

#include "models/nic/rdma_nic.h"
#include "models/proto/infiniband.h"
#include "models/proto/nvlink.h"
#include "models/proto/roce_v2.h"
#include "models/switch/switch.h"
#include "sim/cable.h"
#include "sim/scenario/scenario.h"
#include "sim/simulation.h"

namespace rdmasim {

struct Fabric {
  std::vector<Node*> nodes;             // by node id
  std::vector<RdmaNic*> nics;           // by host index
  std::vector<Switch*> switches;        // in node order
  std::vector<Switch*> switch_of_node;  // by node id (null for hosts)
  std::vector<Cable> cables;            // in topology link order

  // Every link direction: cable i's a->b, then its b->a (the /links rows).
  std::vector<const Link*> link_directions() const;
};

// The framings of a scenario's ports, made once per run: its transport's
// (`fabric.transport`) and NVLink's; all are values, so choosing costs no
// allocation.
class ScenarioFormat {
 public:
  explicit ScenarioFormat(const FabricConfig& f)
      : roce_(f.ip, f.vlan), ib_(f.grh), infiniband_(f.transport == Transport::kInfiniband) {}
  ScenarioFormat(const ScenarioFormat&) = delete;
  ScenarioFormat& operator=(const ScenarioFormat&) = delete;
  const TransportFormat& get() const {
    if (infiniband_) return ib_;
    return roce_;
  }
  const TransportFormat& nvlink() const { return nvlink_; }

 private:
  RoceV2Format roce_;
  InfinibandFormat ib_;
  NvlinkFormat nvlink_;
  bool infiniband_;
};

Fabric build_fabric(Simulation& sim, const Scenario& sc, const ScenarioFormat& formats);

}  // namespace rdmasim
