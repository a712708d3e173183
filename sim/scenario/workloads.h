// The workloads a scenario's `traffic` makes (models/traffic/workload.h),
// built on the fabric's NICs in a fixed order. A traffic kind is either one
// that expands into flows (traffic_loader.cpp: flow, incast, permutation,
// all_to_all, background), all of which one FlowGenerator runs, or a kind
// with a workload of its own (collective: models/collective/collective.h),
// added here after the flow generator.
#pragma once

#include <vector>

#include "models/collective/collective.h"
#include "models/nic/rdma_nic.h"
#include "models/traffic/flow_generator.h"
#include "models/traffic/workload.h"
#include "sim/scenario/scenario.h"
#include "sim/simulation.h"

namespace rdmasim {

struct Workloads {
  // The flows of every item that expands into flows: always present (it may
  // have none), first, named "traffic".
  FlowGenerator* flows = nullptr;
  // One per `traffic` item of kind "collective", in item order, after the flows.
  std::vector<Collective*> collectives;
  std::vector<Workload*> all;  // in the order built; flows first

  // The run's state as its workloads report it.
  size_t failed() const;
  bool finished() const;  // every workload's every unit completed
  int64_t bytes_total() const;
  int64_t bytes_delivered() const;
};

Workloads build_workloads(Simulation& sim, const Scenario& sc, const std::vector<RdmaNic*>& nics);

}  // namespace rdmasim
