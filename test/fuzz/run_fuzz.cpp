// libFuzzer target: loads a (mutated) scenario as load_fuzz.cpp does, then
// builds it and runs its first simulated microseconds, so the fuzzer reaches
// the models (NICs, switches, PFC, faults, traffic) and the summary, not only
// the parser, with the invariant checks on. Input format: fuzz_input.h.
//
// To keep every run short: scenarios with more than kMaxNodes nodes or
// kMaxFlows flows are only loaded, the run stops at kRunFor (or the
// scenario's own earlier stop time) and after about kMaxEvents events.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <typeinfo>

#include "sim/config_error.h"
#include "sim/output/summary.h"
#include "sim/scenario/runner.h"
#include "sim/scenario/scenario.h"
#include "test/fuzz/fuzz_input.h"
#include "test/fuzz/fuzz_known.h"

namespace {

constexpr size_t kMaxNodes = 256;
constexpr size_t kMaxFlows = 1024;
constexpr rdmasim::Time kRunFor = rdmasim::Time::us(5);
constexpr uint64_t kMaxEvents = 20000;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace rdmasim;
  const fuzz::Input in =
      fuzz::split_input(std::string_view(reinterpret_cast<const char*>(data), size));
  LoadOptions options;
  options.overrides = in.sets;
  options.output_dir = "fuzz-out";  // never written: the target writes no files
  const char* stage = "the loader";
  try {
    Scenario sc = load_scenario_text(in.scenario, "fuzz", options);
    if (sc.topology.nodes().size() > kMaxNodes || sc.flows.size() > kMaxFlows) return 0;
    sc.stop.time = std::min(sc.stop.time, kRunFor);
    stage = "the run";
    RunOptions run;
    run.max_events = kMaxEvents;
    run.check = true;  // an invariant violated is a finding (sim/invariants.h)
    const RunResult r = run_scenario(sc, run);
    if (r.status == RunStatus::kInvariantViolated) {
      std::fprintf(stderr, "run_fuzz: %s\n", r.invariant.c_str());
      std::abort();
    }
    stage = "the summary";
    (void)summary_json(sc, r);
    (void)human_summary(sc, r);
  } catch (const ConfigError&) {
    // bad input, reported as such
  } catch (const std::exception& e) {
    if (fuzz::tolerated(e.what())) return 0;  // a known open bug (fuzz_known.h)
    std::fprintf(stderr, "run_fuzz: %s escaped %s: %s\n", typeid(e).name(), stage, e.what());
    std::abort();
  }
  return 0;
}
