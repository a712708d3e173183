// The two RC timers' encodings (IBA Vol 1): the local ACK timeout, a 5-bit
// exponent (§9.7.6.1.3: 4.096 us x 2^timeout, 0 = infinite), and the RNR NAK
// timer, a 5-bit code carried in the AETH of an RNR NAK (§9.7.5.2.8, table
// 45).
#pragma once

#include <array>
#include <cstdint>

#include "sim/units.h"

namespace rdmasim {

// Local ACK timeout for a `timeout` exponent 0..31; 0 disables the timer.
constexpr Time ib_ack_timeout(int exponent) {
  if (exponent <= 0) return Time::infinite();
  return Time::ns(4096) * (int64_t{1} << exponent);
}

// RNR NAK timer values in microseconds, indexed by code (IBA table 45).
inline constexpr std::array<int64_t, 32> kRnrTimerUs{
    655'360, 10,     20,     30,     40,     60,      80,      120,     160,     240,    320,
    480,     640,    960,    1'280,  1'920,  2'560,   3'840,   5'120,   7'680,   10'240, 15'360,
    20'480,  30'720, 40'960, 61'440, 81'920, 122'880, 163'840, 245'760, 327'680, 491'520};

constexpr Time rnr_timer(uint32_t code) { return Time::us(kRnrTimerUs[code & 0x1F]); }

// IBA: retry counts of 7 mean "retry forever" for RNR NAKs.
inline constexpr int kRnrRetryInfinite = 7;

}  // namespace rdmasim
