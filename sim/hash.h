// Stable, platform-independent hashes. std::hash is neither stable across
// library versions nor specified, so nothing that shapes a run may use it.
#pragma once

#include <cstdint>
#include <string>
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

// 16 lower-case hex digits, as hashes and fingerprints are shown.
inline std::string hex64(uint64_t v) {
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, v >>= 4) s[static_cast<size_t>(i)] = "0123456789abcdef"[v & 15];
  return s;
}

}  // namespace rdmasim
