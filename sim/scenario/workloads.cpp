#include "sim/scenario/workloads.h"

namespace rdmasim {

size_t Workloads::failed() const {
  size_t n = 0;
  for (const Workload* w : all) n += w->failed();
  return n;
}

bool Workloads::finished() const {
  for (const Workload* w : all) {
    if (!w->finished()) return false;
  }
  return true;
}

int64_t Workloads::bytes_total() const {
  int64_t n = 0;
  for (const Workload* w : all) n += w->bytes_total();
  return n;
}

int64_t Workloads::bytes_delivered() const {
  int64_t n = 0;
  for (const Workload* w : all) n += w->bytes_delivered();
  return n;
}

Workloads build_workloads(Simulation& sim, const Scenario& sc, const std::vector<RdmaNic*>& nics) {
  Workloads w;
  w.flows = &sim.add<FlowGenerator>("traffic", sc.flows, nics);
  w.all.push_back(w.flows);
  for (const CollectiveSpec& c : sc.collectives) {
    w.collectives.push_back(&sim.add<Collective>(c.name, c, nics));
    w.all.push_back(w.collectives.back());
  }
  return w;
}

}  // namespace rdmasim
