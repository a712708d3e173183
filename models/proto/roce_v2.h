// RoCE v2 framing: which headers each kind of RoCE v2 packet carries
// (IBA Annex A17: Ethernet [802.1Q] | IPv4/IPv6 | UDP:4791 | BTH |
// extended headers | payload | ICRC | FCS, plus preamble and gap on the wire).
#pragma once

#include <array>
#include <cstdint>

#include "models/proto/ib_transport.h"
#include "models/proto/wire_format.h"

namespace rdmasim {

enum class IpVersion : uint8_t { kIpv4 = 4, kIpv6 = 6 };

class RoceV2Format {
 public:
  RoceV2Format(IpVersion ip, bool vlan) {
    base_ = HeaderSet{Header::kPreambleSfd, Header::kEthernet, Header::kUdp,          Header::kBth,
                      Header::kIcrc,        Header::kFcs,      Header::kInterFrameGap}
                .with(ip == IpVersion::kIpv6 ? Header::kIpv6 : Header::kIpv4);
    if (vlan) base_ = base_.with(Header::kVlan);
    for (size_t op = 0; op < framing_.size(); ++op) {
      const HeaderSet h = headers(static_cast<RcOpcode>(op));
      framing_[op] = Framing{h, h.header_bytes()};
    }
  }

  // A packet's header stack and the bytes its headers take, made once per
  // opcode, so that building a packet sums nothing.
  struct Framing {
    HeaderSet headers;
    uint32_t header_bytes = 0;
    uint32_t wire_bytes(uint32_t payload) const {
      return headers.wire_bytes(payload, header_bytes);
    }
  };
  const Framing& framing(RcOpcode op) const { return framing_[static_cast<uint8_t>(op)]; }

  HeaderSet packet(RcOpcode op) const { return framing(op).headers; }
  HeaderSet ack() const { return packet(RcOpcode::kAcknowledge); }
  HeaderSet cnp() const { return packet(RcOpcode::kCnp); }
  // Wire bytes of a packet with `payload` bytes of RDMA payload.
  uint32_t wire_bytes(RcOpcode op, uint32_t payload) const {
    return framing(op).wire_bytes(payload);
  }

  // A PFC frame is an untagged MAC control frame (802.3 Annex 31D).
  static constexpr HeaderSet pfc() {
    return HeaderSet{Header::kPreambleSfd, Header::kEthernet, Header::kPfcControl, Header::kFcs,
                     Header::kInterFrameGap};
  }

 private:
  // Data and request packets: RETH on WRITE first/only and READ request
  // (IBA §9.3.3); ImmDt after it on WRITE last/only with immediate (§9.3.4);
  // AETH on READ response first/last/only (§9.3.5).
  HeaderSet headers(RcOpcode op) const {
    switch (op) {
      case RcOpcode::kWriteFirst:
      case RcOpcode::kWriteOnly:
      case RcOpcode::kReadRequest:
        return base_.with(Header::kReth);
      case RcOpcode::kWriteOnlyImm:
        return base_.with(Header::kReth).with(Header::kImmDt);
      case RcOpcode::kWriteLastImm:
        return base_.with(Header::kImmDt);
      case RcOpcode::kReadResponseFirst:
      case RcOpcode::kReadResponseLast:
      case RcOpcode::kReadResponseOnly:
      case RcOpcode::kAcknowledge:
        return base_.with(Header::kAeth);
      case RcOpcode::kCnp:
        return base_.with(Header::kCnpReserved);
      default:
        return base_;
    }
  }

  HeaderSet base_;
  std::array<Framing, 256> framing_{};
};

}  // namespace rdmasim
