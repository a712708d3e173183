#include "sim/output/nccl_tests_table.h"

#include <fmt/format.h>

namespace rdmasim {

std::string nccl_tests_time(double time_us) {
  if (time_us >= 10000.0) return fmt::format("{:7.0f}", time_us);
  if (time_us >= 100.0) return fmt::format("{:7.1f}", time_us);
  return fmt::format("{:7.2f}", time_us);
}

std::string nccl_tests_table(const CollectiveResult& c) {
  if (c.sweep.empty()) return "";
  std::string out = fmt::format("# {} {}: nccl-tests sweep, {} ranks, warmup iters: {} iters: {}\n",
                                c.name, c.op, c.ranks, c.warmup_iters, c.sweep.front().iters);
  out += "#\n";
  out += fmt::format(
      "# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}           out-of-place"
      "                       in-place          \n",
      "", "", "", "", "");
  out += fmt::format(
      "# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6} {:>6}  {:>7}  {:>6}  {:>6} "
      "{:>6}\n",
      "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw",
      "busbw", "#wrong");
  out += fmt::format(
      "# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>5}  {:>7}  {:>6}  {:>6}  "
      "{:>5}\n",
      "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)",
      "");
  const char* redop = c.op == "all_gather" ? "none" : "sum";
  for (const CollectiveResult::SweepRow& r : c.sweep) {
    out += fmt::format("{:>12}  {:>12}  {:>8}  {:>6}  {:>6}", r.bytes, r.count, "float", redop, -1);
    for (int column = 0; column < 2; ++column) {
      if (r.done) {
        out += fmt::format("  {}  {:6.2f}  {:6.2f}  {:>5}", nccl_tests_time(r.time_us),
                           r.algbw_gbps, r.busbw_gbps, "N/A");
      } else {
        out += fmt::format("  {:>7}  {:>6}  {:>6}  {:>5}", "-", "-", "-", "N/A");
      }
    }
    out += "\n";
  }
  out += fmt::format("# Avg bus bandwidth    : {} \n", fmt::format("{:g}", c.avg_busbw_gbps));
  out += "#\n";
  return out;
}

}  // namespace rdmasim
