// Random number streams, one per component.
//
// Contract:
//  1. A stream is keyed by (scenario seed, the component's stable name), so
//     adding or removing a component never changes another component's draws.
//  2. The generator (xoshiro256**, Blackman & Vigna 2018) and every
//     distribution here are implemented in this file: no std:: distribution,
//     whose output differs between standard libraries, shapes a run.
#pragma once

#include <cmath>
#include <cstdint>
#include <string_view>

#include "sim/hash.h"

namespace rdmasim {

class RngStream {
 public:
  RngStream(uint64_t seed, std::string_view name) {
    uint64_t x = mix64(seed ^ fnv1a64(name));
    for (auto& w : s_) {
      x = mix64(x);
      w = x;
    }
  }

  uint64_t next_u64() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  // Uniform in [0, bound), bound > 0, without modulo bias (Lemire 2019).
  uint64_t uniform(uint64_t bound) {
    unsigned __int128 m = static_cast<unsigned __int128>(next_u64()) * bound;
    auto low = static_cast<uint64_t>(m);
    if (low < bound) {
      const uint64_t threshold = -bound % bound;
      while (low < threshold) {
        m = static_cast<unsigned __int128>(next_u64()) * bound;
        low = static_cast<uint64_t>(m);
      }
    }
    return static_cast<uint64_t>(m >> 64);
  }
  // Uniform in [0, 1) with 53 random bits.
  double uniform01() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }
  // Exponential with the given mean.
  double exponential(double mean) { return -mean * std::log1p(-uniform01()); }

 private:
  static constexpr uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

}  // namespace rdmasim
