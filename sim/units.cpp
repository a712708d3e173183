#include "sim/units.h"

#include <array>
#include <cassert>
#include <cstdint>
#include <cstdio>

namespace rdmasim {
namespace {

using i128 = __int128;
constexpr int64_t kPsPerSecond = 1'000'000'000'000;
constexpr i128 kInt64Max = std::numeric_limits<int64_t>::max();

struct Unit {
  std::string_view suffix;
  int64_t scale;  // base units per 1 of this unit
};

// A decimal number split into an integer mantissa and a power of ten.
struct Decimal {
  i128 mantissa = 0;
  int exp10 = 0;
};

// Parses "12", "1.5", "2.5e3" (no sign, no spaces) at the front of `s`;
// returns how many characters were consumed, 0 if none.
size_t parse_decimal(std::string_view s, Decimal& out) {
  size_t i = 0;
  int digits = 0;
  int frac = 0;
  bool seen_point = false;
  i128 m = 0;
  for (; i < s.size(); ++i) {
    char c = s[i];
    if (c >= '0' && c <= '9') {
      if (m != 0 && ++digits > 30) return 0;  // no unit needs more digits than this
      m = m * 10 + (c - '0');
      if (seen_point) ++frac;
    } else if (c == '.' && !seen_point) {
      seen_point = true;
    } else {
      break;
    }
  }
  if (i == 0 || (i == 1 && seen_point)) return 0;
  int exp = 0;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    size_t j = i + 1;
    bool neg = false;
    if (j < s.size() && (s[j] == '+' || s[j] == '-')) neg = s[j++] == '-';
    size_t start = j;
    while (j < s.size() && s[j] >= '0' && s[j] <= '9' && j - start < 4)
      exp = exp * 10 + (s[j++] - '0');
    if (j > start) {
      i = j;
      if (neg) exp = -exp;
    }
  }
  out.mantissa = m;
  out.exp10 = exp - frac;
  return i;
}

enum class Fit { kOk, kFraction, kTooLarge };

// mantissa * 10^exp10 * scale as an exact int64.
Fit scale_exact(const Decimal& d, int64_t scale, int64_t& out) {
  // Up to 31 significant digits times a unit of up to 10^15 may exceed 128
  // bits: such a value is too large for any quantity here.
  i128 v = 0;
  if (__builtin_mul_overflow(d.mantissa, static_cast<i128>(scale), &v)) return Fit::kTooLarge;
  int e = d.exp10;
  for (; e > 0; --e) {
    v *= 10;
    if (v > kInt64Max) return Fit::kTooLarge;
  }
  for (; e < 0; ++e) {
    if (v % 10 != 0) return Fit::kFraction;
    v /= 10;
  }
  if (v > kInt64Max) return Fit::kTooLarge;
  out = static_cast<int64_t>(v);
  return Fit::kOk;
}

std::string quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

template <class T, size_t N>
Parsed<T> parse_with_units(std::string_view text, const std::array<Unit, N>& units,
                           bool unit_required, const char* what, const char* base_name,
                           const char* example, T (*make)(int64_t)) {
  Parsed<T> r;
  auto fail = [&](const std::string& problem) {
    r.error = problem + " (expected e.g. " + example + ")";
    return r;
  };
  Decimal d;
  size_t n = parse_decimal(text, d);
  if (n == 0) return fail(quoted(text) + " is not " + what);
  std::string_view suffix = text.substr(n);
  int64_t scale = 0;
  if (suffix.empty()) {
    if (unit_required) return fail(quoted(text) + " has no unit");
    scale = 1;
  } else {
    for (const Unit& u : units) {
      if (u.suffix == suffix) scale = u.scale;
    }
    if (scale == 0) return fail(quoted(text) + " is not " + what);
  }
  int64_t v = 0;
  switch (scale_exact(d, scale, v)) {
    case Fit::kOk:
      r.value = make(v);
      return r;
    case Fit::kFraction:
      return fail(quoted(text) + " is not a whole number of " + base_name);
    case Fit::kTooLarge:
      return fail(quoted(text) + " is too large");
  }
  return r;
}

constexpr std::array<Unit, 7> kTimeUnits{{{"ps", 1},
                                          {"ns", 1'000},
                                          {"us", 1'000'000},
                                          {"\xC2\xB5s", 1'000'000},  // µs
                                          {"ms", 1'000'000'000},
                                          {"s", kPsPerSecond},
                                          {"sec", kPsPerSecond}}};

constexpr std::array<Unit, 10> kByteUnits{{{"B", 1},
                                           {"KB", 1'000},
                                           {"MB", 1'000'000},
                                           {"GB", 1'000'000'000},
                                           {"TB", 1'000'000'000'000},
                                           {"KiB", int64_t{1} << 10},
                                           {"MiB", int64_t{1} << 20},
                                           {"GiB", int64_t{1} << 30},
                                           {"TiB", int64_t{1} << 40},
                                           {"kB", 1'000}}};

constexpr std::array<Unit, 14> kRateUnits{{{"bps", 1},
                                           {"kbps", 1'000},
                                           {"Kbps", 1'000},
                                           {"Mbps", 1'000'000},
                                           {"Gbps", 1'000'000'000},
                                           {"Tbps", 1'000'000'000'000},
                                           {"Kb/s", 1'000},
                                           {"Mb/s", 1'000'000},
                                           {"Gb/s", 1'000'000'000},
                                           {"Tb/s", 1'000'000'000'000},
                                           {"K", 1'000},
                                           {"M", 1'000'000},
                                           {"G", 1'000'000'000},
                                           {"T", 1'000'000'000'000}}};

template <size_t N>
std::string exact_string(int64_t v, const std::array<Unit, N>& units, std::string_view base) {
  if (v == 0) return "0" + std::string(base);
  const Unit* best = nullptr;
  for (const Unit& u : units) {
    if (v % u.scale == 0 && (best == nullptr || u.scale > best->scale)) best = &u;
  }
  return std::to_string(v / best->scale) + std::string(best->suffix);
}

}  // namespace

Time transfer_time(Bytes b, BitRate r) {
  assert(r.in_bps() > 0);
  i128 num = static_cast<i128>(b.bits()) * kPsPerSecond;
  i128 q = (num + r.in_bps() - 1) / r.in_bps();
  return Time::ps(static_cast<int64_t>(q));
}

Bytes operator*(BitRate r, Time t) {
  i128 bits = static_cast<i128>(r.in_bps()) * t.in_ps() / kPsPerSecond;
  return Bytes(static_cast<int64_t>(bits / 8));
}

BitRate operator/(Bytes b, Time t) {
  assert(t.in_ps() > 0);
  i128 bps = static_cast<i128>(b.bits()) * kPsPerSecond / t.in_ps();
  return BitRate::bps(static_cast<int64_t>(bps));
}

Time Serializer::next_divided(Bytes b) {
  // The same arithmetic in 64 bits whenever it fits (frames under ~1 MB):
  // a 128-bit division is a library call, on every frame.
  const int64_t bits = b.bits();
  if (bits >= 0 && bits <= (INT64_MAX - carry_) / kPsPerSecond) {
    const auto n = static_cast<uint64_t>(bits * kPsPerSecond + carry_);
    const auto r = static_cast<uint64_t>(rate_.in_bps());
    const uint64_t q = n / r;
    carry_ = static_cast<int64_t>(n - q * r);
    return Time::ps(static_cast<int64_t>(q));
  }
  i128 num = static_cast<i128>(bits) * kPsPerSecond + carry_;
  i128 q = num / rate_.in_bps();
  carry_ = static_cast<int64_t>(num - q * rate_.in_bps());
  return Time::ps(static_cast<int64_t>(q));
}

Parsed<Time> parse_time(std::string_view text) {
  return parse_with_units<Time>(text, kTimeUnits, true, "a time", "picoseconds",
                                "\"600ns\", \"1.5us\" or \"2ms\"", &Time::ps);
}

Parsed<Bytes> parse_bytes(std::string_view text) {
  return parse_with_units<Bytes>(
      text, kByteUnits, false, "a size", "bytes", "\"4096\", \"64KiB\" or \"12MB\"",
      +[](int64_t v) { return Bytes(v); });
}

Parsed<BitRate> parse_rate(std::string_view text) {
  // InfiniBand 4x data rates by generation name (IBTA; the data rate after
  // line encoding: encoding and FEC are not modelled).
  constexpr std::array<std::pair<std::string_view, int64_t>, 4> kIbRates{
      {{"EDR", 100}, {"HDR", 200}, {"NDR", 400}, {"XDR", 800}}};
  for (const auto& [name, gbps] : kIbRates) {
    if (text == name) return Parsed<BitRate>{BitRate::gbps(gbps), {}};
  }
  return parse_with_units<BitRate>(text, kRateUnits, false, "a rate", "bit/s",
                                   "\"400Gbps\" or \"100G\"", &BitRate::bps);
}

std::string to_string(Time t) {
  if (t.is_infinite()) return "inf";
  constexpr std::array<Unit, 5> units{
      {{"ps", 1}, {"ns", 1'000}, {"us", 1'000'000}, {"ms", 1'000'000'000}, {"s", kPsPerSecond}}};
  if (t.in_ps() < 0) return "-" + exact_string(-t.in_ps(), units, "s");
  return exact_string(t.in_ps(), units, "s");
}

std::string to_string(Bytes b) {
  constexpr std::array<Unit, 4> units{
      {{"B", 1}, {"KiB", int64_t{1} << 10}, {"MiB", int64_t{1} << 20}, {"GiB", int64_t{1} << 30}}};
  if (b.count() < 0) return "-" + exact_string(-b.count(), units, "B");
  return exact_string(b.count(), units, "B");
}

std::string to_string(BitRate r) {
  constexpr std::array<Unit, 5> units{{{"bps", 1},
                                       {"kbps", 1'000},
                                       {"Mbps", 1'000'000},
                                       {"Gbps", 1'000'000'000},
                                       {"Tbps", 1'000'000'000'000}}};
  return exact_string(r.in_bps(), units, "bps");
}

std::string to_human(Time t) {
  if (t.is_infinite()) return "inf";
  double ps = static_cast<double>(t.in_ps());
  const char* unit = "ps";
  double v = ps;
  if (ps >= 1e12) {
    v = ps * 1e-12, unit = "s";
  } else if (ps >= 1e9) {
    v = ps * 1e-9, unit = "ms";
  } else if (ps >= 1e6) {
    v = ps * 1e-6, unit = "us";
  } else if (ps >= 1e3) {
    v = ps * 1e-3, unit = "ns";
  }
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.4g %s", v, unit);
  return buf;
}

}  // namespace rdmasim
