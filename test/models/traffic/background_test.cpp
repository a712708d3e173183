// Background traffic (models/traffic/patterns.h): Poisson arrivals per host
// at the rate that makes the offered load `load` in expectation, sizes from
// the CDF, destinations uniform among the others, and the closed window:
// every arrival in [start, start + duration] is kept, the last one included.
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include "test/support/flow_common.h"

#include "models/traffic/patterns.h"

using namespace rdmasim;

namespace {

FlowSizeCdf builtin(const char* name) { return FlowSizeCdf::parse(find_builtin_cdf(name)->text); }

// E[size^2] of the sampled distribution, from the table (uniform on whole
// bytes a+1 .. z per segment: mean (a+z+1)/2, variance ((z-a)^2 - 1)/12).
double second_moment(const FlowSizeCdf& c) {
  double m2 = 0;
  const auto& p = c.points();
  for (size_t i = 1; i < p.size(); ++i) {
    const double w = (p[i].percent - p[i - 1].percent) / 100;
    const double a = static_cast<double>(p[i - 1].bytes), z = static_cast<double>(p[i].bytes);
    const double mu = (a + z + 1) / 2, var = ((z - a) * (z - a) - 1) / 12;
    m2 += w * (var + mu * mu);
  }
  return m2;
}

BackgroundParams params(const FlowSizeCdf& sizes, uint32_t n, double load, Time duration) {
  BackgroundParams p;
  for (uint32_t h = 0; h < n; ++h) {
    p.hosts.push_back(h);
    p.rates.push_back(BitRate::gbps(100));
  }
  p.load = load;
  p.sizes = &sizes;
  p.duration = duration;
  p.max_flows = 10'000'000;
  p.common = rdmasim::testing::common("background[0]", Time::us(100), Verb::kWrite);
  return p;
}

}  // namespace

TEST_CASE("background arrival rate: load * rate / (8 * mean size)",
          "[quick][traffic][background]") {
  // 100 Gb/s at 40% with WebSearch (mean 1711250.5 B): 40e9 / (8 * 1711250.5).
  const FlowSizeCdf ws = builtin("websearch");
  CHECK(background_arrival_rate(0.4, BitRate::gbps(100), ws.mean()) ==
        Approx(40e9 / (8 * 1711250.5)).epsilon(1e-12));
  BackgroundParams p = params(ws, 16, 0.4, Time::ms(10));
  CHECK(background_expected_flows(p) == Approx(16 * 40e9 / (8 * 1711250.5) * 0.01));
}

TEST_CASE("background offers the target load over a long window", "[traffic][background]") {
  // Half the hosts at 100G, half at 400G, so per-host rates differ. The
  // payload bytes a host offers in the window are a compound Poisson sum:
  // mean lambda_h * D * E[S] = load * rate_h * D / 8, variance
  // lambda_h * D * E[S^2]. Each host and the total must be within 5 standard
  // deviations of the mean.
  for (const char* name : {"websearch", "fb_hadoop"}) {
    INFO(name);
    const FlowSizeCdf sizes = builtin(name);
    const double load = 0.4;
    const Time d = Time::ms(std::string(name) == "websearch" ? 1000 : 50);
    BackgroundParams p = params(sizes, 16, load, d);
    for (size_t h = 8; h < 16; ++h) p.rates[h] = BitRate::gbps(400);
    RngStream rng(1, "traffic[0]");
    const auto flows = background(p, rng);
    std::vector<double> bytes(16, 0);
    for (const FlowSpec& f : flows) bytes[f.src] += static_cast<double>(f.bytes);
    const double m2 = second_moment(sizes);
    double total = 0, total_mean = 0, total_var = 0;
    for (size_t h = 0; h < 16; ++h) {
      const double rate = static_cast<double>(p.rates[h].in_bps());
      const double lambda_d = load * rate / (8 * sizes.mean()) * d.in_seconds();
      const double mean = load * rate * d.in_seconds() / 8;
      const double sd = std::sqrt(lambda_d * m2);
      INFO("host " << h << " offered " << bytes[h] << " expected " << mean << " sd " << sd);
      CHECK(std::abs(bytes[h] - mean) < 5 * sd);
      total += bytes[h];
      total_mean += mean;
      total_var += lambda_d * m2;
    }
    INFO("total " << total << " expected " << total_mean);
    CHECK(std::abs(total - total_mean) < 5 * std::sqrt(total_var));
    // The offered load as a fraction of the hosts' capacity, to a few %.
    CHECK(total * 8 / (d.in_seconds() * (8 * 100e9 + 8 * 400e9)) == Approx(load).epsilon(0.05));
  }
}

TEST_CASE("background inter-arrival times are exponential with mean 1 / lambda",
          "[traffic][background]") {
  // Per host, the gaps between consecutive arrivals (and from the window's
  // start to the first) times lambda_h are Exp(1). Kolmogorov-Smirnov
  // against 1 - exp(-x) over all hosts' gaps: D below 1.95 / sqrt(N)
  // (alpha = 0.001); and the mean gap within 5 standard errors.
  const FlowSizeCdf sizes = builtin("alistorage");
  BackgroundParams p = params(sizes, 8, 0.3, Time::ms(20));
  p.rates[0] = BitRate::gbps(25);
  RngStream rng(2, "traffic[0]");
  const auto flows = background(p, rng);
  std::vector<Time> last(8, p.common.start);
  std::vector<double> x;  // gaps * lambda
  for (const FlowSpec& f : flows) {
    const double lambda = background_arrival_rate(0.3, p.rates[f.src], sizes.mean());
    x.push_back((f.start - last[f.src]).in_seconds() * lambda);
    last[f.src] = f.start;
  }
  const auto n = static_cast<double>(x.size());
  REQUIRE(n > 10'000);
  std::sort(x.begin(), x.end());
  double d = 0, sum = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double f = 1 - std::exp(-x[i]);
    d = std::max({d, std::abs(f - static_cast<double>(i) / n),
                  std::abs(f - static_cast<double>(i + 1) / n)});
    sum += x[i];
  }
  INFO("KS D = " << d << " over " << n << " gaps");
  CHECK(d < 1.95 / std::sqrt(n));
  CHECK(std::abs(sum / n - 1) < 5 / std::sqrt(n));
}

TEST_CASE("background destinations are uniform among the other hosts",
          "[quick][traffic][background]") {
  const FlowSizeCdf sizes = builtin("google_rpc");
  BackgroundParams p = params(sizes, 5, 0.5, Time::ms(1));
  p.hosts = {9, 4, 30, 7, 2};
  RngStream rng(3, "traffic[0]");
  const auto flows = background(p, rng);
  std::map<std::pair<uint32_t, uint32_t>, int> pairs;
  for (const FlowSpec& f : flows) {
    CHECK(f.src != f.dst);
    ++pairs[{f.src, f.dst}];
  }
  REQUIRE(pairs.size() == 20);  // every ordered pair of the 5 hosts
  const double n = static_cast<double>(flows.size()), q = 1.0 / 20;
  for (const auto& [pair, c] : pairs) CHECK(std::abs(c - n * q) < 5 * std::sqrt(n * q * (1 - q)));
}

TEST_CASE("background keeps the last arrival: counts match a Poisson process on the closed window",
          "[traffic][background]") {
  // lambda * D = 3 per host. Over 1000 seeds x 8 hosts the mean count per
  // host must be 3 within 5 standard errors (sqrt(3 / 8000) = 0.019), and
  // the variance equal to the mean (Poisson). Dropping each host's last
  // arrival would give 3 - 1 + exp(-3) = 2.05.
  const FlowSizeCdf sizes = builtin("websearch");
  const double lambda = background_arrival_rate(0.5, BitRate::gbps(100), sizes.mean());
  const Time d = Time::ps(std::llround(3 / lambda * 1e12));
  double sum = 0, sum2 = 0;
  int samples = 0;
  for (uint64_t seed = 1; seed <= 1000; ++seed) {
    BackgroundParams p = params(sizes, 8, 0.5, d);
    RngStream rng(seed, "traffic[0]");
    std::vector<int> count(8, 0);
    for (const FlowSpec& f : background(p, rng)) ++count[f.src];
    for (int c : count) {
      sum += c;
      sum2 += c * c;
      ++samples;
    }
  }
  const double mean = sum / samples, var = sum2 / samples - mean * mean;
  const double lambda_d = lambda * d.in_seconds();
  CHECK(lambda_d == Approx(3).epsilon(1e-9));
  INFO("mean " << mean << " variance " << var);
  CHECK(std::abs(mean - lambda_d) < 5 * std::sqrt(lambda_d / samples));
  CHECK(var / mean == Approx(1).margin(0.1));
}

TEST_CASE("background window is closed at its end: an arrival on the end is kept, none after",
          "[quick][traffic][background]") {
  const FlowSizeCdf sizes = builtin("fb_hadoop");
  BackgroundParams p = params(sizes, 6, 0.5, Time::us(200));
  RngStream rng(9, "traffic[0]");
  const auto flows = background(p, rng);
  REQUIRE(flows.size() > 10);
  for (const FlowSpec& f : flows) {
    CHECK(f.start >= p.common.start);
    CHECK(f.start <= p.common.start + p.duration);
  }
  // Arrivals come in time order: the last flow is the last arrival. With the
  // window ending exactly at it, it is still there (and nothing changes);
  // one picosecond earlier, it alone is gone.
  const Time last = flows.back().start;
  REQUIRE(last > flows[flows.size() - 2].start);
  p.duration = last - p.common.start;
  RngStream at_end(9, "traffic[0]");
  CHECK(background(p, at_end) == flows);
  p.duration = last - p.common.start - Time::ps(1);
  RngStream before(9, "traffic[0]");
  const auto shorter = background(p, before);
  REQUIRE(shorter.size() == flows.size() - 1);
  CHECK(shorter == std::vector<FlowSpec>(flows.begin(), flows.end() - 1));
}

TEST_CASE("background: a longer window only appends, seeds and names",
          "[quick][traffic][background]") {
  const FlowSizeCdf sizes = builtin("websearch");
  BackgroundParams p = params(sizes, 16, 0.6, Time::ms(2));
  RngStream a(1, "traffic[0]");
  const auto flows = background(p, a);
  for (size_t i = 0; i < flows.size(); ++i) {
    CHECK(flows[i].name == "background[0]." + std::to_string(i));
    if (i > 0) CHECK(flows[i].start >= flows[i - 1].start);
  }
  RngStream again(1, "traffic[0]"), other(2, "traffic[0]");
  CHECK(background(p, again) == flows);
  CHECK_FALSE(background(p, other) == flows);
  p.duration = Time::ms(4);
  RngStream longer(1, "traffic[0]");
  const auto more = background(p, longer);
  REQUIRE(more.size() > flows.size());
  CHECK(std::vector<FlowSpec>(more.begin(), more.begin() + static_cast<long>(flows.size())) ==
        flows);
}

TEST_CASE("background max_flows is a cap on the count made", "[quick][traffic][background]") {
  const FlowSizeCdf sizes = builtin("alistorage");
  BackgroundParams p = params(sizes, 4, 0.5, Time::us(100));
  RngStream rng(1, "traffic[0]");
  const size_t n = background(p, rng).size();
  REQUIRE(n > 0);
  p.max_flows = n;
  RngStream exact(1, "traffic[0]");
  CHECK(background(p, exact).size() == n);
  p.max_flows = n - 1;
  RngStream over(1, "traffic[0]");
  CHECK_THROWS_AS(background(p, over), FlowLimitError);
}
