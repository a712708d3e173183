// Native InfiniBand framing (IBA Vol 1 ch. 7 link layer, ch. 9 transport):
// LRH | [GRH] | BTH | extended headers | payload | ICRC | VCRC. No preamble,
// no inter-frame gap, no minimum frame: the bytes a link serializes are the
// packet's bytes, LRH through VCRC. 8b/10b, 64b/66b and FEC overheads of the
// physical layer are not modelled: a link's rate is its data rate
// (EDR 100, HDR 200, NDR 400, XDR 800 Gb/s at 4x).
#pragma once

#include <cstdint>

#include "models/proto/ib_transport.h"
#include "models/proto/transport_format.h"
#include "models/proto/wire_format.h"

namespace rdmasim {

// Flow-control credits count 64-byte blocks of receive buffer (IBA §7.9).
inline constexpr uint32_t kIbCreditBlockBytes = 64;
// Largest VL15 (subnet management) payload (IBA C7-18, C7-27).
inline constexpr uint32_t kIbVl15MaxPayload = 256;
// The management VL: not flow-controlled.
inline constexpr uint8_t kIbManagementVl = 15;

// Whether `mtu` is an IB MTU (256, 512, 1024, 2048 or 4096 bytes).
constexpr bool is_ib_mtu(uint32_t mtu) {
  return mtu >= 256 && mtu <= 4096 && (mtu & (mtu - 1)) == 0;
}

// Bytes of a data packet that take buffer space, and so credits: the packet
// as its LRH's PktLen counts it, LRH through ICRC, without the VCRC (the
// VCRC is checked and dropped by the receiving link layer, and PktLen, from
// which the receiver sizes the packet, leaves it out). `wire` is the
// packet's wire bytes, VCRC included.
constexpr uint32_t ib_credit_bytes(uint32_t wire) {
  return wire - kHeaderInfo[static_cast<size_t>(Header::kVcrc)].bytes;
}
// Credits (64-byte blocks) a data packet of `wire` wire bytes consumes.
constexpr uint32_t ib_credits(uint32_t wire) {
  return (ib_credit_bytes(wire) + kIbCreditBlockBytes - 1) / kIbCreditBlockBytes;
}

class InfinibandFormat final : public TransportFormat {
 public:
  // `grh`: every packet carries a global route header (40 bytes); off by
  // default, as inside one subnet.
  explicit InfinibandFormat(bool grh) {
    base_ = HeaderSet{Header::kLrh, Header::kBth, Header::kIcrc, Header::kVcrc};
    if (grh) base_ = base_.with(Header::kGrh);
    for (size_t op = 0; op < 256; ++op) {
      set(static_cast<RcOpcode>(op), headers(static_cast<RcOpcode>(op)));
    }
  }

  // A link flow-control packet (IBA §7.9.4): 6 bytes, no LRH, no CRC but
  // its own LPCRC.
  static constexpr HeaderSet flow_control() { return HeaderSet{Header::kIbFlowControl}; }

 private:
  // No CNP on native IB (its congestion control, FECN/BECN, is not
  // modelled): opcode 0x81 frames like any other.
  HeaderSet headers(RcOpcode op) const { return rc_headers(base_, op); }

  HeaderSet base_;
};

}  // namespace rdmasim
