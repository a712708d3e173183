// IB transport layer constants shared by RoCE v2 and native InfiniBand:
// RC opcodes (IBA Vol 1 §9.2, table 38), AETH syndromes (§9.3.5) and 24-bit
// PSN arithmetic (§9.7.1).
#pragma once

#include <cstdint>

namespace rdmasim {

// Reliable Connection opcodes (IBA table 38, transport type 000).
enum class RcOpcode : uint8_t {
  kSendFirst = 0x00,
  kSendMiddle = 0x01,
  kSendLast = 0x02,
  kSendOnly = 0x04,
  kWriteFirst = 0x06,
  kWriteMiddle = 0x07,
  kWriteLast = 0x08,
  kWriteLastImm = 0x09,  // RDMA WRITE Last with Immediate (carries ImmDt)
  kWriteOnly = 0x0A,
  kWriteOnlyImm = 0x0B,  // RDMA WRITE Only with Immediate (RETH and ImmDt)
  kReadRequest = 0x0C,
  kReadResponseFirst = 0x0D,
  kReadResponseMiddle = 0x0E,
  kReadResponseLast = 0x0F,
  kReadResponseOnly = 0x10,
  kAcknowledge = 0x11,
  // RoCE v2 congestion notification packet (IBA Annex A17.9.3).
  kCnp = 0x81,
};

// AETH syndrome (IBA §9.3.5): bits 6..5 select ACK (00), RNR NAK (01) or NAK
// (11); for an ACK bits 4..0 are a credit count, 0x1F meaning "not limited".
inline constexpr uint8_t kAethAckUnlimited = 0x1F;
inline constexpr uint8_t kAethRnrNak = 0x20;            // | RNR timer code
inline constexpr uint8_t kAethNakSequenceError = 0x60;  // NAK code 0
inline constexpr uint8_t kAethNakRemoteAccess = 0x62;   // NAK code 2

inline constexpr uint32_t kPsnMask = 0xFFFFFF;

constexpr uint32_t psn_add(uint32_t psn, uint32_t n) { return (psn + n) & kPsnMask; }
// Signed distance b - a on the 24-bit circle, in [-2^23, 2^23).
constexpr int32_t psn_diff(uint32_t a, uint32_t b) {
  int32_t d = static_cast<int32_t>((b - a) & kPsnMask);
  return d >= (1 << 23) ? d - (1 << 24) : d;
}

}  // namespace rdmasim
