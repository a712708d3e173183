// trace.h5: the run's tables in HDF5, for notebooks (docs/trace.md).
//
// Contract:
//  1. Written to "<path>.tmp" and renamed to <path> only once complete, so a
//     file with the final name is always whole.
//  2. Byte-identical for identical runs: object timestamps are off and no
//     uninitialised byte reaches the file.
//  3. Times are int64 picoseconds; nodes are stored once in /nodes and
//     referred to by id everywhere else.
#pragma once

#include <string>

#include "sim/scenario/run_result.h"
#include "sim/scenario/scenario.h"

namespace rdmasim {

// Throws std::runtime_error if the file cannot be written.
void write_trace(const std::string& path, const Scenario& sc, const RunResult& r);

}  // namespace rdmasim
