// Strong unit types: Time (integer picoseconds), Bytes, BitRate (bit/s), and
// the one place that parses and prints them.
//
// Invariants:
//  1. Time is a signed 64-bit count of picoseconds (max ~106 days). One byte at
//     800 Gb/s is 10 ps, so every standard Ethernet/IB rate has an exact
//     per-byte time; integer time keeps runs bit-reproducible.
//  2. Conversions between units are explicit: a bare integer never silently
//     becomes a Time, a Bytes or a BitRate.
//  3. Unit algebra (Bytes / BitRate -> Time, BitRate * Time -> Bytes) uses
//     128-bit intermediates, so it neither overflows nor loses precision for
//     any value the types can hold. Division rounds as documented per function.
//  4. Parsing is exact: "1.5us" is 1'500'000 ps, and a value that is not a whole
//     number of the base unit ("0.5ps", "1.5B") is an error, not a rounding.
#pragma once

#include <compare>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

namespace rdmasim {

class Time {
 public:
  constexpr Time() = default;
  static constexpr Time ps(int64_t v) { return Time(v); }
  static constexpr Time ns(int64_t v) { return Time(v * 1'000); }
  static constexpr Time us(int64_t v) { return Time(v * 1'000'000); }
  static constexpr Time ms(int64_t v) { return Time(v * 1'000'000'000); }
  static constexpr Time s(int64_t v) { return Time(v * 1'000'000'000'000); }
  static constexpr Time zero() { return Time(0); }
  // Larger than any reachable simulated time; used for "never".
  static constexpr Time infinite() { return Time(std::numeric_limits<int64_t>::max()); }

  constexpr int64_t in_ps() const { return ps_; }
  constexpr double in_ns() const { return static_cast<double>(ps_) * 1e-3; }
  constexpr double in_us() const { return static_cast<double>(ps_) * 1e-6; }
  constexpr double in_seconds() const { return static_cast<double>(ps_) * 1e-12; }
  constexpr bool is_infinite() const { return ps_ == std::numeric_limits<int64_t>::max(); }

  constexpr auto operator<=>(const Time&) const = default;
  constexpr Time operator+(Time o) const { return Time(ps_ + o.ps_); }
  constexpr Time operator-(Time o) const { return Time(ps_ - o.ps_); }
  constexpr Time& operator+=(Time o) {
    ps_ += o.ps_;
    return *this;
  }
  constexpr Time& operator-=(Time o) {
    ps_ -= o.ps_;
    return *this;
  }
  constexpr Time operator*(int64_t k) const { return Time(ps_ * k); }
  constexpr Time operator/(int64_t k) const { return Time(ps_ / k); }
  constexpr int64_t operator/(Time o) const { return ps_ / o.ps_; }

 private:
  constexpr explicit Time(int64_t ps) : ps_(ps) {}
  int64_t ps_ = 0;
};

class Bytes {
 public:
  constexpr Bytes() = default;
  constexpr explicit Bytes(int64_t n) : n_(n) {}
  static constexpr Bytes kib(int64_t v) { return Bytes(v * 1024); }
  static constexpr Bytes mib(int64_t v) { return Bytes(v * 1024 * 1024); }
  static constexpr Bytes gib(int64_t v) { return Bytes(v * 1024 * 1024 * 1024); }
  static constexpr Bytes kb(int64_t v) { return Bytes(v * 1000); }
  static constexpr Bytes mb(int64_t v) { return Bytes(v * 1000 * 1000); }

  constexpr int64_t count() const { return n_; }
  constexpr int64_t bits() const { return n_ * 8; }

  constexpr auto operator<=>(const Bytes&) const = default;
  constexpr Bytes operator+(Bytes o) const { return Bytes(n_ + o.n_); }
  constexpr Bytes operator-(Bytes o) const { return Bytes(n_ - o.n_); }
  constexpr Bytes& operator+=(Bytes o) {
    n_ += o.n_;
    return *this;
  }
  constexpr Bytes& operator-=(Bytes o) {
    n_ -= o.n_;
    return *this;
  }
  constexpr Bytes operator*(int64_t k) const { return Bytes(n_ * k); }

 private:
  int64_t n_ = 0;
};

class BitRate {
 public:
  constexpr BitRate() = default;
  static constexpr BitRate bps(int64_t v) { return BitRate(v); }
  static constexpr BitRate mbps(int64_t v) { return BitRate(v * 1'000'000); }
  static constexpr BitRate gbps(int64_t v) { return BitRate(v * 1'000'000'000); }

  constexpr int64_t in_bps() const { return bps_; }
  constexpr double in_gbps() const { return static_cast<double>(bps_) * 1e-9; }

  constexpr auto operator<=>(const BitRate&) const = default;

 private:
  constexpr explicit BitRate(int64_t bps) : bps_(bps) {}
  int64_t bps_ = 0;
};

constexpr Time operator*(int64_t k, Time t) { return t * k; }
constexpr Bytes operator*(int64_t k, Bytes b) { return b * k; }

// Time to put `b` on a wire of rate `r`, rounded up to the next picosecond
// (a transmission is not over until its last bit is). Requires r > 0.
Time transfer_time(Bytes b, BitRate r);
inline Time operator/(Bytes b, BitRate r) { return transfer_time(b, r); }
// Bytes a wire of rate r carries in t, rounded down.
Bytes operator*(BitRate r, Time t);
inline Bytes operator*(Time t, BitRate r) { return r * t; }
// Average rate of b bytes over t (t > 0), rounded down to a whole bit/s.
BitRate operator/(Bytes b, Time t);

// Serializes a stream of frames onto a wire of one rate without drift: each
// frame's time is rounded down, and the remainder carried into the next, so
// the sum of n frame times never differs from the exact total by 1 ps or more.
class Serializer {
 public:
  explicit Serializer(BitRate rate)
      : rate_(rate),
        ps_per_byte_(rate.in_bps() > 0 && 8 * kPsPerSecond % rate.in_bps() == 0
                         ? 8 * kPsPerSecond / rate.in_bps()
                         : 0) {}
  // Inline for the common rates, whose byte is a whole number of
  // picoseconds (25, 50, 100, 200, 400 and 800 Gb/s...): no remainder ever,
  // a multiplication instead of a division per frame; the same result.
  Time next(Bytes b) {
    if (ps_per_byte_ != 0 && b.count() >= 0 && b.count() <= INT64_MAX / ps_per_byte_) [[likely]]
      return Time::ps(b.count() * ps_per_byte_);
    return next_divided(b);
  }
  BitRate rate() const { return rate_; }

 private:
  static constexpr int64_t kPsPerSecond = 1'000'000'000'000;
  Time next_divided(Bytes b);
  BitRate rate_;
  int64_t ps_per_byte_;  // 8e12 / rate when that is whole, else 0
  int64_t carry_ = 0;    // in bit-picoseconds, always < rate_.in_bps()
};

// ---- Parsing and printing (the one place where units meet text) ----

// Result of parsing: a value, or a message saying what was wrong with the text
// and what was expected. The caller prefixes the JSON path.
template <class T>
struct Parsed {
  std::optional<T> value;
  std::string error;
  explicit operator bool() const { return value.has_value(); }
};

// "600ns", "1.5us", "2ms", "0s", "250ps". A unit is required.
Parsed<Time> parse_time(std::string_view text);
// "4096", "64KiB", "1.5MB", "12GB", "1GiB". A bare number is bytes.
// KB/MB/GB/TB are decimal; KiB/MiB/GiB/TiB binary.
Parsed<Bytes> parse_bytes(std::string_view text);
// "400Gbps", "100G", "25.78125Gbps", "800Mbps". A bare number is bit/s.
Parsed<BitRate> parse_rate(std::string_view text);

// Exact, re-parseable forms: the largest unit that divides the value.
std::string to_string(Time t);     // e.g. "1500ns", "1us", "83560ps"
std::string to_string(Bytes b);    // e.g. "4096B", "64KiB", "1GiB"
std::string to_string(BitRate r);  // e.g. "400Gbps", "25781250kbps"
// Human-readable, rounded to a few significant digits: "21.91 ms".
std::string to_human(Time t);

}  // namespace rdmasim
