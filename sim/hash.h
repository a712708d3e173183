// Stable, platform-independent hashes. std::hash is neither stable across
// library versions nor specified, so nothing that shapes a run may use it.
#pragma once

#include <cstdint>
#include <string_view>

namespace rdmasim {

// FNV-1a, 64 bit.
constexpr uint64_t fnv1a64(std::string_view s, uint64_t h = 0xcbf29ce484222325ULL) {
  for (char c : s) {
    h ^= static_cast<uint8_t>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

// SplitMix64 finalizer: a good 64-bit mixer (Steele, Lea & Flood, OOPSLA 2014).
constexpr uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace rdmasim
