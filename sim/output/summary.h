// summary.json and the short human summary printed at the end of a run.
//
// summary.json holds what the run did; everything in it is a function of the
// resolved scenario and seed, except the `run` object (wall-clock figures),
// which is the only part allowed to differ between two identical runs.
#pragma once

#include <cstddef>
#include <string>

#include "sim/scenario/run_result.h"
#include "sim/scenario/scenario.h"

namespace rdmasim {

// The summary as JSON text (pretty-printed, keys sorted).
std::string summary_json(const Scenario& sc, const RunResult& r);
// A few lines for the terminal.
std::string human_summary(const Scenario& sc, const RunResult& r);

// Writes `content` to `path` through a temporary file in the same folder and
// a rename, so `path` is either absent or complete. Every open, write, close
// and rename is checked; on failure the temporary is removed and OutputError
// (sim/output/output_error.h) thrown.
void write_file_atomic(const std::string& path, const std::string& content);
void write_file_atomic(const std::string& path, const void* data, size_t size);

}  // namespace rdmasim
