// FlowSizeCdf: an empirical flow-size distribution given as a piecewise-linear
// cumulative distribution function, and sampling from it (docs/traffic.md).
//
// Contract:
//  1. The text format is HPCC's traffic_gen format: one "<size in bytes>
//     <cumulative percent>" pair a line; sizes whole bytes >= 0, percents in
//     0..100, both non-decreasing; the first percent is 0 and the last 100.
//     Blank lines and lines starting with '#' are ignored.
//  2. Between two points the CDF is linear: a size drawn from the segment
//     (s0, p0)..(s1, p1) is uniform on the whole bytes s0+1 .. s1, with
//     probability (p1 - p0) / 100 for the segment; s0 == s1 is a point mass.
//     So P(size <= s_i) is exactly p_i / 100 at every point of the file.
//  3. mean() is the mean of what sample() draws (not of the continuous
//     curve): the sum over segments of (p1 - p0) / 100 * (s0 + s1 + 1) / 2,
//     or (p1 - p0) / 100 * s1 for a point mass.
//  4. sample() uses one uniform01() draw of the stream (inverse transform).
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "sim/rng.h"

namespace rdmasim {

// A CDF table that breaks contract 1. `index` is the offending point (0-based,
// in the order given) or npos for the table as a whole; parse() adds the line
// number to the message ("line 3: ...").
class CdfError : public std::invalid_argument {
 public:
  static constexpr size_t npos = static_cast<size_t>(-1);
  CdfError(size_t at, const std::string& what) : std::invalid_argument(what), index(at) {}
  size_t index;
};

class FlowSizeCdf {
 public:
  struct Point {
    int64_t bytes = 0;
    double percent = 0;  // cumulative, 0..100
  };

  // Checks the points against contract 1 (throws CdfError).
  explicit FlowSizeCdf(std::vector<Point> points);
  // Parses the text format (throws CdfError naming the line).
  static FlowSizeCdf parse(std::string_view text);

  const std::vector<Point>& points() const { return points_; }
  int64_t min_bytes() const;  // the smallest size sample() can return
  int64_t max_bytes() const { return points_.back().bytes; }
  // Mean of sample(), in bytes (contract 3).
  double mean() const { return mean_; }
  // P(sample() <= bytes), exact for the sampled distribution.
  double cdf(int64_t bytes) const;
  // The size at quantile q in (0, 1]: the inverse of the CDF (contract 2).
  int64_t quantile(double q) const;
  int64_t sample(RngStream& rng) const { return quantile(1.0 - rng.uniform01()); }

 private:
  std::vector<Point> points_;
  double mean_ = 0;
};

// The CDFs that ship with rdmasim (scenarios/cdf/, see its SOURCE.md), by
// the short name a scenario uses: "websearch", "fb_hadoop", "alistorage",
// "google_rpc". The text is compiled in, identical to the file (tested).
struct BuiltinCdf {
  std::string_view name;
  std::string_view file;  // the file's name in scenarios/cdf/
  std::string_view text;
};
std::span<const BuiltinCdf> builtin_cdfs();
// nullptr for an unknown name.
const BuiltinCdf* find_builtin_cdf(std::string_view name);

}  // namespace rdmasim
