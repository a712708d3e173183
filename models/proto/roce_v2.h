// RoCE v2 framing: which headers each kind of RoCE v2 packet carries
// (IBA Annex A17: Ethernet [802.1Q] | IPv4/IPv6 | UDP:4791 | BTH |
// extended headers | payload | ICRC | FCS, plus preamble and gap on the wire).
#pragma once

#include <cstdint>

#include "models/proto/ib_transport.h"
#include "models/proto/transport_format.h"
#include "models/proto/wire_format.h"

namespace rdmasim {

enum class IpVersion : uint8_t { kIpv4 = 4, kIpv6 = 6 };

class RoceV2Format final : public TransportFormat {
 public:
  RoceV2Format(IpVersion ip, bool vlan) {
    base_ = HeaderSet{Header::kPreambleSfd, Header::kEthernet, Header::kUdp,          Header::kBth,
                      Header::kIcrc,        Header::kFcs,      Header::kInterFrameGap}
                .with(ip == IpVersion::kIpv6 ? Header::kIpv6 : Header::kIpv4);
    if (vlan) base_ = base_.with(Header::kVlan);
    for (size_t op = 0; op < 256; ++op) {
      set(static_cast<RcOpcode>(op), headers(static_cast<RcOpcode>(op)));
    }
  }

  HeaderSet cnp() const { return packet(RcOpcode::kCnp); }

  // A PFC frame is an untagged MAC control frame (802.3 Annex 31D).
  static constexpr HeaderSet pfc() {
    return HeaderSet{Header::kPreambleSfd, Header::kEthernet, Header::kPfcControl, Header::kFcs,
                     Header::kInterFrameGap};
  }

 private:
  // The RC packets' extended headers (rc_headers); a CNP carries 16
  // reserved bytes after its BTH (IBA Annex A17.9.3).
  HeaderSet headers(RcOpcode op) const {
    return op == RcOpcode::kCnp ? base_.with(Header::kCnpReserved) : rc_headers(base_, op);
  }

  HeaderSet base_;
};

}  // namespace rdmasim
