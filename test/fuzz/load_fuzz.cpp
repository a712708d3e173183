// libFuzzer target: the scenario loader and the `--set` parser, as
// `rdmasim validate` and `rdmasim topo` use them. Input format: fuzz_input.h.
//
// A ConfigError is the expected answer to bad input (exit 2 in the CLI).
// Anything else escaping the loader is a finding: the CLI reports it as an
// internal error (exit 1), so the target aborts and libFuzzer saves the
// input. Crashes, sanitizer reports, hangs (-timeout) and memory blow-ups
// (-rss_limit_mb, -malloc_limit_mb) are findings too.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <typeinfo>

#include "sim/config_error.h"
#include "sim/scenario/scenario.h"
#include "test/fuzz/fuzz_input.h"
#include "test/fuzz/fuzz_known.h"
#include "topologies/export.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace rdmasim;
  const fuzz::Input in =
      fuzz::split_input(std::string_view(reinterpret_cast<const char*>(data), size));
  LoadOptions options;
  options.overrides = in.sets;
  options.output_dir = "fuzz-out";  // never written: nothing runs
  try {
    const Scenario sc = load_scenario_text(in.scenario, "fuzz", options);
    // What `rdmasim topo` prints, from the loaded topology.
    (void)topology_summary(sc.topology, sc.topology_info);
    if (sc.topology.nodes().size() <= 4096) (void)to_dot(sc.topology, sc.name);
  } catch (const ConfigError&) {
    // bad input, reported as such
  } catch (const std::exception& e) {
    if (fuzz::tolerated(e.what())) return 0;  // a known open bug (fuzz_known.h)
    std::fprintf(stderr, "load_fuzz: %s escaped the loader: %s\n", typeid(e).name(), e.what());
    std::abort();
  }
  return 0;
}
