#include "sim/cli/progress.h"

#include <fmt/format.h>

#include <cstdio>

namespace rdmasim {

ProgressLine::ProgressLine() : start_(Clock::now()), last_(start_) {}

void ProgressLine::update(const Progress& p) {
  const auto now = Clock::now();
  if (now - last_ < std::chrono::milliseconds(250)) return;
  last_ = now;
  const double wall = std::chrono::duration<double>(now - start_).count();
  // ETA from whichever end is known: the stop time, or the share of posted
  // payload delivered so far.
  double eta = -1;
  if (!p.stop.is_infinite() && p.now.in_ps() > 0) {
    eta = wall * static_cast<double>((p.stop - p.now).in_ps()) / static_cast<double>(p.now.in_ps());
  }
  if (p.fraction_done > 0.001) {
    const double by_bytes = wall * (1.0 - p.fraction_done) / p.fraction_done;
    eta = eta < 0 ? by_bytes : std::min(eta, by_bytes);
  }
  std::string line =
      fmt::format("\r  t = {:<12} {:6.2f} M events/s  {:5.1f}% delivered", to_human(p.now),
                  static_cast<double>(p.events) / wall * 1e-6, 100.0 * p.fraction_done);
  if (eta >= 0) line += fmt::format("  ETA {:.0f} s", eta);
  line += "\x1b[K";
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
  shown_ = true;
}

void ProgressLine::clear() {
  if (shown_) std::fputs("\r\x1b[K", stderr);
  shown_ = false;
}

}  // namespace rdmasim
