#include "sim/scenario/fault_injector.h"

#include <algorithm>

#include "models/proto/wire_format.h"

namespace rdmasim {

FaultInjector::FaultInjector(Simulation& sim, std::string name, const Scenario& sc,
                             std::vector<Cable> cables, std::vector<Switch*> switches_by_node,
                             std::vector<RdmaNic*> nics)
    : Component(sim, std::move(name)),
      sc_(sc),
      cables_(std::move(cables)),
      switches_(std::move(switches_by_node)),
      nics_(std::move(nics)),
      topo_(sc.topology),
      down_count_(sc.topology.links().size(), 0),
      action_(this, EventClass::kControl, id()),
      reconverge_(this, EventClass::kControl, id()) {
  // A failed link (topology.failed_links) is down for the whole run: held
  // down as if by a fault that never ends (the fabric builder set it down).
  for (uint32_t l = 0; l < down_count_.size(); ++l)
    down_count_[l] = sc.topology.links()[l].failed ? 1 : 0;
  for (size_t i = 0; i < sc.faults.size(); ++i) {
    const FaultSpec& f = sc.faults[i];
    if (f.kind == FaultKind::kBitErrors) {
      for (uint32_t l : f.links) {
        // On Ethernet cables the preamble, SFD and gap are not the frame's
        // bits; IB and NVLink wire bytes are all frame.
        const bool ethernet = sc.fabric.transport != Transport::kInfiniband &&
                              sc.topology.links()[l].kind != LinkKind::kNvlink;
        const Bytes outside(ethernet
                                ? kHeaderInfo[static_cast<size_t>(Header::kPreambleSfd)].bytes +
                                      kHeaderInfo[static_cast<size_t>(Header::kInterFrameGap)].bytes
                                : 0);
        cables_[l].a_to_b->set_bit_error_rate(f.ber, outside);
        cables_[l].b_to_a->set_bit_error_rate(f.ber, outside);
      }
      continue;
    }
    actions_.push_back({f.at, i, true});
    if (!f.until.is_infinite()) actions_.push_back({f.until, i, false});
  }
  std::stable_sort(actions_.begin(), actions_.end(),
                   [](const Action& a, const Action& b) { return a.at < b.at; });
}

void FaultInjector::setup() {
  if (!actions_.empty()) ctx().schedule(action_, actions_[0].at);
}

void FaultInjector::set_link(uint32_t link, bool up) {
  down_count_[link] += up ? -1 : 1;
  const bool now_up = down_count_[link] == 0;
  const Cable& c = cables_[link];
  if (now_up && !c.a_to_b->up()) came_up_.push_back(link);
  const bool went_down = !now_up && c.a_to_b->up();
  c.a_to_b->set_up(now_up);
  c.b_to_a->set_up(now_up);
  if (went_down) {
    c.a_to_b->to()->on_link_down(c.a_to_b->to_port());
    c.b_to_a->to()->on_link_down(c.b_to_a->to_port());
  }
}

void FaultInjector::on_action() {
  const Time now = ctx().now();
  bool topology_changed = false;
  while (next_ < actions_.size() && actions_[next_].at == now) {
    const Action& a = actions_[next_++];
    const FaultSpec& f = sc_.faults[a.fault];
    switch (f.kind) {
      case FaultKind::kLinkDown:
      case FaultKind::kNodeDown:
        for (uint32_t l : f.links) set_link(l, !a.start);
        topology_changed = true;
        break;
      case FaultKind::kPfcStorm:
        for (uint32_t h : f.hosts) {
          if (a.start) nics_[h]->start_pfc_storm(f.priority, f.until);
        }
        break;
      case FaultKind::kBitErrors:
        break;
    }
  }
  // Cables that came back are initialised again, once this instant's
  // actions are all done: one that another fault takes down at the same
  // instant never came up (its ends would send into it).
  std::sort(came_up_.begin(), came_up_.end());
  came_up_.erase(std::unique(came_up_.begin(), came_up_.end()), came_up_.end());
  for (const uint32_t l : came_up_) {
    const Cable& c = cables_[l];
    if (!c.a_to_b->up()) continue;
    c.a_to_b->to()->on_link_up(c.a_to_b->to_port());
    c.b_to_a->to()->on_link_up(c.b_to_a->to_port());
  }
  came_up_.clear();
  if (topology_changed) {
    // Each change is learnt `reconvergence_delay` after it happens: the
    // tables installed then are those of the links' state at the change,
    // whatever changed in between (that change has its own reconvergence).
    std::vector<bool> down(down_count_.size());
    for (size_t l = 0; l < down.size(); ++l) down[l] = down_count_[l] > 0;
    pending_.push_back({now + sc_.reconvergence_delay, std::move(down)});
    if (!reconverge_.scheduled()) ctx().schedule(reconverge_, pending_.front().at);
  }
  if (next_ < actions_.size()) ctx().schedule(action_, actions_[next_].at);
}

void FaultInjector::on_reconverge() {
  // The control plane has learnt the state of every link as it was at a
  // change (the latest due now): recompute shortest paths over the working
  // ones and install them everywhere.
  const Time now = ctx().now();
  std::vector<bool> down;
  while (!pending_.empty() && pending_.front().at <= now) {
    down = std::move(pending_.front().down);
    pending_.pop_front();
  }
  if (!pending_.empty()) ctx().schedule(reconverge_, pending_.front().at);
  for (uint32_t l = 0; l < topo_.links().size(); ++l) topo_.set_link_failed(l, down[l]);
  auto fresh = std::make_unique<Routes>(
      compute_routes(topo_, sc_.static_routes, routing_engine(sc_.fabric)));
  for (uint32_t id = 0; id < switches_.size(); ++id) {
    if (switches_[id] != nullptr) switches_[id]->set_forwarding_table(fresh->table(id));
  }
  for (RdmaNic* n : nics_) n->set_egress_selector(fresh.get());
  // Switches copied their tables; NICs now point at these: the set before
  // is no longer read.
  routes_ = std::move(fresh);
  ++reconvergences_;
}

}  // namespace rdmasim
