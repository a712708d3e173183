// FlowSizeCdf: parsing the HPCC table format, the interpolation contract
// (uniform whole bytes between points, exact at the points), the mean of
// what is sampled, and the empirical CDF of samples against the table.
#include "models/traffic/flow_size_cdf.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <sstream>

using namespace rdmasim;

namespace {

std::string read_source_file(const std::string& rel) {
  std::ifstream in(std::string(RDMASIM_SOURCE_DIR) + "/" + rel, std::ios::binary);
  REQUIRE(in);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Mean of the continuous piecewise-linear curve: the trapezoid rule, as HPCC's
// custom_rand.py getAvg computes it.
double trapezoid_mean(const FlowSizeCdf& c) {
  double m = 0;
  const auto& p = c.points();
  for (size_t i = 1; i < p.size(); ++i) {
    m += (p[i].percent - p[i - 1].percent) / 100.0 *
         static_cast<double>(p[i].bytes + p[i - 1].bytes) / 2.0;
  }
  return m;
}

std::string error_of(const std::string& text) {
  try {
    FlowSizeCdf::parse(text);
  } catch (const CdfError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("built-in CDFs are the files in scenarios/cdf, verbatim", "[quick][traffic][cdf]") {
  REQUIRE(builtin_cdfs().size() == 4);
  for (const BuiltinCdf& b : builtin_cdfs()) {
    INFO(b.name);
    CHECK(read_source_file("scenarios/cdf/" + std::string(b.file)) == b.text);
    CHECK(find_builtin_cdf(b.name) == &b);
  }
  CHECK(find_builtin_cdf("websearh") == nullptr);
}

TEST_CASE("built-in CDF means: the table's trapezoid mean plus half a byte",
          "[quick][traffic][cdf]") {
  // scenarios/cdf/SOURCE.md lists each file's (trapezoid) mean; sizes are
  // drawn as whole bytes s0+1 .. s1 in each segment, whose mean is the
  // segment's midpoint plus 1/2 (no shipped table has a point mass).
  const std::pair<const char*, double> listed[] = {
      {"websearch", 1711250}, {"fb_hadoop", 120421}, {"alistorage", 40870}, {"google_rpc", 2892}};
  for (const auto& [name, mean] : listed) {
    INFO(name);
    const FlowSizeCdf c = FlowSizeCdf::parse(find_builtin_cdf(name)->text);
    CHECK(std::abs(trapezoid_mean(c) - mean) < 0.5);  // the table rounds to whole bytes
    CHECK(c.mean() == Approx(trapezoid_mean(c) + 0.5).epsilon(1e-12));
  }
  // WebSearch exactly: sum of (dp/100) * (s0 + s1) / 2 = 1711250.
  CHECK(FlowSizeCdf::parse(find_builtin_cdf("websearch")->text).mean() ==
        Approx(1711250.5).epsilon(1e-12));
}

TEST_CASE("quantiles interpolate linearly and round up to whole bytes", "[quick][traffic][cdf]") {
  const FlowSizeCdf c = FlowSizeCdf::parse(find_builtin_cdf("websearch")->text);
  REQUIRE(c.points().size() == 12);
  CHECK(c.min_bytes() == 1);
  CHECK(c.max_bytes() == 30'000'000);
  // (0, 0%) .. (10000, 15%): 7.5% is halfway.
  CHECK(c.quantile(0.075) == 5000);
  CHECK(c.quantile(0.15) == 10000);  // a point: exactly its size
  // (80000, 53%) .. (200000, 60%): 56.5% is halfway, 140000.
  CHECK(c.quantile(0.565) == 140000);
  CHECK(c.quantile(1.0) == 30'000'000);
  CHECK(c.quantile(1e-12) == 1);  // never 0 bytes
  // Just above a point: the next whole byte.
  CHECK(c.quantile(0.15 + 1e-9) == 10001);
  // The CDF is exact at every point of the table, and linear between.
  for (const auto& p : c.points()) CHECK(c.cdf(p.bytes) == Approx(p.percent / 100.0));
  CHECK(c.cdf(5000) == Approx(0.075));
  CHECK(c.cdf(-1) == 0);
  CHECK(c.cdf(40'000'000) == 1);
}

TEST_CASE("point masses and gaps in a table", "[quick][traffic][cdf]") {
  // 50% exactly 100 bytes (a vertical step), nothing below 100, then 101..200.
  const FlowSizeCdf c = FlowSizeCdf::parse("0 0\n100 0\n100 50\n200 100\n");
  CHECK(c.min_bytes() == 100);
  CHECK(c.quantile(1e-9) == 100);
  CHECK(c.quantile(0.3) == 100);
  CHECK(c.quantile(0.5) == 100);
  CHECK(c.quantile(0.75) == 150);
  CHECK(c.cdf(99) == 0);
  CHECK(c.cdf(100) == 0.5);
  CHECK(c.cdf(150) == 0.75);
  CHECK(c.mean() == 0.5 * 100 + 0.5 * (100 + 200 + 1) / 2.0);
}

TEST_CASE("the table format: comments, blank lines, tabs and CRLF", "[quick][traffic][cdf]") {
  const FlowSizeCdf c = FlowSizeCdf::parse("# sizes\r\n\r\n0\t0\r\n  1000   100  \r\n");
  REQUIRE(c.points().size() == 2);
  CHECK(c.points()[1].bytes == 1000);
  CHECK(c.points()[1].percent == 100);
  CHECK(c.mean() == 500.5);
}

TEST_CASE("malformed tables name the line and the problem", "[quick][traffic][cdf]") {
  CHECK(error_of("0 0\n") == "1 point(s), fewer than 2");
  CHECK(error_of("") == "0 point(s), fewer than 2");
  CHECK(error_of("0 0\n10 120\n") == "line 2: percent 120 is outside 0..100");
  CHECK(error_of("0 5\n10 100\n") == "line 1: the first percent is 5, not 0");
  CHECK(error_of("0 0\n10 99\n") == "line 2: the last percent is 99, not 100");
  CHECK(error_of("0 0\n20 50\n10 100\n") == "line 3: size 10 is below the previous size 20");
  CHECK(error_of("0 0\n10 50\n20 40\n30 100\n") ==
        "line 3: percent 40 is below the previous percent 50");
  CHECK(error_of("# c\n0 0\n1.5 100\n") == "line 3: size 1.5 is not a whole number of bytes");
  CHECK(error_of("0 0\nten 100\n") == "line 2: \"ten\" is not a number");
  CHECK(error_of("0 0 0\n") == "line 1: 3 fields, not 2");
  CHECK(error_of("0 0\n-10 100\n") == "line 2: size -10 is negative");
}

TEST_CASE("sampled sizes follow the table's CDF", "[traffic][cdf]") {
  // For each shipped table, N draws; at every point of the table and at the
  // middle of every segment, the empirical P(size <= s) must match the
  // table's CDF there (linear interpolation) to within 5 binomial standard
  // errors, sqrt(p (1 - p) / N), plus 1/N for granularity. The sample mean
  // must match mean() within 5 standard errors (the standard deviation from
  // the exact second moment of the sampled distribution).
  const int n = 200'000;
  for (const BuiltinCdf& b : builtin_cdfs()) {
    INFO(b.name);
    const FlowSizeCdf c = FlowSizeCdf::parse(b.text);
    RngStream rng(7, b.name);
    std::vector<int64_t> s(n);
    for (int64_t& x : s) x = c.sample(rng);
    std::sort(s.begin(), s.end());
    CHECK(s.front() >= c.min_bytes());
    CHECK(s.back() <= c.max_bytes());
    auto empirical = [&](int64_t v) {
      return static_cast<double>(std::upper_bound(s.begin(), s.end(), v) - s.begin()) / n;
    };
    const auto& pts = c.points();
    int checked = 0;
    for (size_t i = 0; i < pts.size(); ++i) {
      std::vector<std::pair<int64_t, double>> at = {{pts[i].bytes, pts[i].percent / 100}};
      if (i > 0 && pts[i].bytes - pts[i - 1].bytes >= 2) {
        // The middle of the segment: whole bytes s0+1 .. s1 equally likely.
        const int64_t a = pts[i - 1].bytes, z = pts[i].bytes, m = a + (z - a) / 2;
        const double p =
            (pts[i - 1].percent + (pts[i].percent - pts[i - 1].percent) *
                                      static_cast<double>(m - a) / static_cast<double>(z - a)) /
            100;
        at.emplace_back(m, p);
      }
      for (const auto& [v, p] : at) {
        const double tol = 5 * std::sqrt(p * (1 - p) / n) + 1.0 / n;
        INFO("size " << v << " expected " << p << " got " << empirical(v));
        CHECK(std::abs(empirical(v) - p) <= tol);
        CHECK(c.cdf(v) == Approx(p).margin(1e-12));
        ++checked;
      }
    }
    CHECK(checked >= static_cast<int>(pts.size()));
    // Second moment of the sampled distribution, from the table: uniform on
    // whole bytes a+1 .. z has mean (a+z+1)/2 and variance ((z-a)^2 - 1)/12.
    double m2 = 0;
    for (size_t i = 1; i < pts.size(); ++i) {
      const double w = (pts[i].percent - pts[i - 1].percent) / 100;
      const double a = static_cast<double>(pts[i - 1].bytes), z = static_cast<double>(pts[i].bytes);
      const double mu = (a + z + 1) / 2, var = ((z - a) * (z - a) - 1) / 12;
      m2 += w * (var + mu * mu);
    }
    double sum = 0;
    for (int64_t x : s) sum += static_cast<double>(x);
    const double sd = std::sqrt(m2 - c.mean() * c.mean());
    CHECK(std::abs(sum / n - c.mean()) <= 5 * sd / std::sqrt(n));
  }
}
