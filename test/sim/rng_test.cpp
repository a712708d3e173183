#include "test/support/catch_units.h"

#include <cmath>

#include "sim/rng.h"

using namespace rdmasim;

TEST_CASE("rng streams are keyed by seed and component name", "[quick][rng]") {
  RngStream a(42, "sw0.ecmp");
  RngStream a_again(42, "sw0.ecmp");
  RngStream other_name(42, "sw1.ecmp");
  RngStream other_seed(43, "sw0.ecmp");
  const uint64_t x = a.next_u64();
  CHECK(x == a_again.next_u64());
  CHECK(x != other_name.next_u64());
  CHECK(x != other_seed.next_u64());
}

TEST_CASE("rng distributions have the right moments", "[quick][rng]") {
  RngStream r(1, "moments");
  const int n = 200'000;
  double sum = 0, sum_exp = 0;
  uint64_t counts[10] = {};
  for (int i = 0; i < n; ++i) {
    sum += r.uniform01();
    sum_exp += r.exponential(3.0);
    ++counts[r.uniform(10)];
  }
  // Uniform(0,1) has mean 1/2 and sd 1/sqrt(12): 5 standard errors.
  CHECK(std::abs(sum / n - 0.5) < 5 * std::sqrt(1.0 / 12 / n));
  // Exponential(mean 3) has sd 3.
  CHECK(std::abs(sum_exp / n - 3.0) < 5 * 3.0 / std::sqrt(n));
  for (uint64_t c : counts)
    CHECK(std::abs(static_cast<double>(c) - n / 10.0) < 5 * std::sqrt(n * 0.09));
}
