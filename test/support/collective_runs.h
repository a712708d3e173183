// Helpers for collective scenario tests: run a scenario on 1, 2 and 3
// threads and compare the runs (docs/collectives.md "Threads": results are
// identical on any --threads).
#pragma once

#include <catch2/catch.hpp>
#include <vector>

#include "models/collective/collective.h"
#include "sim/scenario/runner.h"
#include "sim/scenario/scenario.h"

namespace rdmasim::testing {

// The scenario run on 1, 2 and 3 threads, each run complete.
inline std::vector<RunResult> run_on_1_2_3_threads(const Scenario& sc) {
  std::vector<RunResult> runs;
  for (const uint32_t threads : {1u, 2u, 3u}) {
    RunOptions o;
    o.threads = threads;
    o.force_threads = true;
    runs.push_back(run_scenario(sc, o));
    REQUIRE(runs.back().status == RunStatus::kComplete);
  }
  return runs;
}

// Runs 2 and 3 identical to run 1: time, events, every iteration and step
// row of the first collective.
inline void check_same_as_first(const std::vector<RunResult>& runs) {
  const CollectiveResult& c = runs[0].collectives.at(0);
  for (size_t k = 1; k < runs.size(); ++k) {
    INFO(k + 1 << " threads");
    const CollectiveResult& d = runs[k].collectives.at(0);
    CHECK(runs[k].sim_time == runs[0].sim_time);
    CHECK(runs[k].events == runs[0].events);
    REQUIRE(d.iters.size() == c.iters.size());
    for (size_t i = 0; i < c.iters.size(); ++i) {
      CHECK(d.iters[i].start == c.iters[i].start);
      CHECK(d.iters[i].end == c.iters[i].end);
    }
    const std::vector<CollectiveResult::Step> cs = c.step_rows.all(), ds = d.step_rows.all();
    REQUIRE(ds.size() == cs.size());
    for (size_t i = 0; i < cs.size(); ++i) {
      CHECK(ds[i].iter == cs[i].iter);
      CHECK(ds[i].rank == cs[i].rank);
      CHECK(ds[i].step == cs[i].step);
      CHECK(ds[i].start == cs[i].start);
      CHECK(ds[i].end == cs[i].end);
      CHECK(ds[i].bytes == cs[i].bytes);
    }
    CHECK(d.rank_bytes_received == c.rank_bytes_received);
  }
}

// Runs the scenario once and returns, per iteration and rank of its first
// collective, how many times that rank was seen to end it (1 when all is
// well: each collective completes exactly once per iteration).
inline std::vector<uint32_t> rank_iteration_ends(const Scenario& sc) {
  // The collective lives with the run's Simulation: an observer added for
  // the test reads its per-rank records when the run finishes.
  struct EndReader final : Component {
    EndReader(Simulation& sim, const Collective*& c, std::vector<uint32_t>& out)
        : Component(sim, "end_reader"), c_(c), out_(out) {}
    void finish() override {
      for (uint32_t i = 0; i < c_->spec().iterations; ++i) {
        for (uint32_t r = 0; r < c_->ranks(); ++r) out_.push_back(c_->rank_iteration(i, r).ends);
      }
    }
    const Collective*& c_;
    std::vector<uint32_t>& out_;
  };
  const Collective* coll = nullptr;
  std::vector<uint32_t> ends;
  RunOptions o;
  o.add_workloads = [&](Simulation&, const std::vector<RdmaNic*>&, std::vector<Workload*>& all) {
    for (Workload* w : all) {
      if (auto* c = dynamic_cast<const Collective*>(w)) {
        if (coll == nullptr) coll = c;
      }
    }
  };
  o.on_built = [&](Simulation& sim, const std::vector<Switch*>&) {
    sim.add<EndReader>(coll, ends);
  };
  const RunResult r = run_scenario(sc, o);
  REQUIRE(r.status == RunStatus::kComplete);
  REQUIRE(coll != nullptr);
  return ends;
}

}  // namespace rdmasim::testing
