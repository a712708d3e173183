// The live progress line on stderr: simulated time, events/s and an ETA,
// redrawn in place a few times a second, only when stderr is a terminal.
#pragma once

#include <chrono>

#include "sim/scenario/runner.h"

namespace rdmasim {

class ProgressLine {
 public:
  ProgressLine();
  void update(const Progress& p);
  // Clears the line (call before printing anything else).
  void clear();

 private:
  using Clock = std::chrono::steady_clock;
  Clock::time_point start_;
  Clock::time_point last_;
  bool shown_ = false;
};

}  // namespace rdmasim
