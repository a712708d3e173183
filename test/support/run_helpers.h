// Helpers for scenario tests: load a scenario from text or from scenarios/,
// run it in-process with the invariant checks on and hand back the result.
#pragma once

#include <string>

#include "sim/scenario/runner.h"
#include "sim/scenario/scenario.h"

namespace rdmasim::testing {

inline std::string source_path(const std::string& rel) {
  return std::string(RDMASIM_SOURCE_DIR) + "/" + rel;
}

// The tests run with the invariant checks on (sim/invariants.h).
inline RunOptions checked(RunOptions o = {}) {
  o.check = true;
  return o;
}

struct Ran {
  Scenario scenario;
  RunResult result;
};

inline Ran run_text(const std::string& json, const LoadOptions& o = {}) {
  Ran r{load_scenario_text(json, "test", o), {}};
  r.result = run_scenario(r.scenario, checked());
  return r;
}

inline Ran run_file(const std::string& rel, const LoadOptions& o = {}) {
  Ran r{load_scenario_file(source_path(rel), o), {}};
  r.result = run_scenario(r.scenario, checked());
  return r;
}

}  // namespace rdmasim::testing
