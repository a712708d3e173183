// FaultInjector: carries out the scenario's `faults` at their times — links
// and nodes going down and up, bit errors — and makes routing reconverge
// `reconvergence_delay` after each topology change (docs/faults.md).
//
// While routes have not reconverged, switches keep forwarding into a dead
// link and those packets are lost; the transport recovers them, or a QP ends
// in error after its retries. Routing recomputes shortest paths over the
// links that are up, with the scenario's static routes applied again.
#pragma once

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "models/nic/rdma_nic.h"
#include "models/switch/switch.h"
#include "sim/cable.h"
#include "sim/scenario/scenario.h"
#include "sim/simulation.h"

namespace rdmasim {

class FaultInjector : public Component {
 public:
  FaultInjector(Simulation& sim, std::string name, const Scenario& sc, std::vector<Cable> cables,
                std::vector<Switch*> switches_by_node, std::vector<RdmaNic*> nics);

  void setup() override;
  uint64_t reconvergences() const { return reconvergences_; }

 private:
  struct Action {
    Time at;
    size_t fault;
    bool start;  // true: the fault begins; false: it ends
  };
  void on_action();
  void on_reconverge();
  void set_link(uint32_t link, bool up);

  const Scenario& sc_;
  std::vector<Cable> cables_;
  std::vector<Switch*> switches_;  // by node id (null for hosts)
  std::vector<RdmaNic*> nics_;
  Topology topo_;                  // the scenario's, with the current failures
  std::vector<int> down_count_;    // per link: how many active faults hold it down
  std::vector<uint32_t> came_up_;  // links that came up at this instant (on_action)
  std::vector<Action> actions_;
  size_t next_ = 0;
  // Reconvergences to come, in time order: when, and which links were down
  // at the change they learn.
  struct Pending {
    Time at;
    std::vector<bool> down;
  };
  std::deque<Pending> pending_;
  std::unique_ptr<Routes> routes_;  // the table set installed last (NICs read it)
  uint64_t reconvergences_ = 0;
  MemberEvent<FaultInjector, &FaultInjector::on_action> action_;
  MemberEvent<FaultInjector, &FaultInjector::on_reconverge> reconverge_;
};

}  // namespace rdmasim
