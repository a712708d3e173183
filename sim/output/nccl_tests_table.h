// nccl_tests_table: a swept collective's results printed as nccl-tests'
// all_reduce_perf (all_gather_perf, reduce_scatter_perf) prints them
// (docs/collectives.md#sweeps): its three header lines, one row per size
// with the out-of-place and in-place columns, and its closing "# Avg bus
// bandwidth" line, in its column widths and number formats (nccl-tests
// src/common.cu), so that tools that parse nccl-tests output parse it.
//
// Contract:
//  1. The type is float and the root -1 (none of these ops has one); redop is
//     sum, or none for all_gather (as nccl-tests prints them).
//  2. In-place columns repeat the out-of-place figures: the model moves the
//     same bytes either way. #wrong is N/A: no data is checked (nccl-tests
//     -c 0).
//  3. A size whose timed iterations did not all finish prints no figures.
#pragma once

#include <string>

#include "sim/scenario/run_result.h"

namespace rdmasim {

// The table of one collective with a sweep ("" without one).
std::string nccl_tests_table(const CollectiveResult& c);
// nccl-tests' time column: 2 decimals below 100 us, 1 below 10 ms, else 0.
std::string nccl_tests_time(double time_us);

}  // namespace rdmasim
