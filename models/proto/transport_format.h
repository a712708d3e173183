// TransportFormat: how a NIC's RC packets are framed on its wire: the header
// stack of each opcode, made once, so that building a packet sums nothing.
// RoceV2Format (roce_v2.h) is one; InfinibandFormat (infiniband.h: LRH |
// [GRH] | BTH | ... | ICRC | VCRC) another; NvlinkFormat (nvlink.h: no
// bytes besides the payload) the third. A NIC takes a TransportFormat per
// port, never a concrete one: the framing is data, read without a virtual
// call.
#pragma once

#include <array>
#include <cstdint>

#include "models/proto/ib_transport.h"
#include "models/proto/wire_format.h"

namespace rdmasim {

class TransportFormat {
 public:
  // A packet's header stack and the bytes its headers take.
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
  // Wire bytes of a packet with `payload` bytes of RDMA payload.
  uint32_t wire_bytes(RcOpcode op, uint32_t payload) const {
    return framing(op).wire_bytes(payload);
  }
  // Whether ports of this framing run link-level flow control (PFC or
  // credits) and the NIC's receive-buffer model; false on NVLink, lossless
  // by construction (nvlink.h).
  bool link_flow_control() const { return link_flow_control_; }

 protected:
  explicit TransportFormat(bool link_flow_control = true) : link_flow_control_(link_flow_control) {}
  // `base` (link, network and BTH headers, CRCs) plus the extended headers
  // an RC packet of opcode `op` carries after its BTH, the same on RoCE v2
  // and native IB: RETH on WRITE first/only and READ request (IBA §9.3.3);
  // ImmDt after it on WRITE last/only with immediate (§9.3.4); AETH on READ
  // response first/last/only and ACK (§9.3.5).
  static constexpr HeaderSet rc_headers(HeaderSet base, RcOpcode op) {
    switch (op) {
      case RcOpcode::kWriteFirst:
      case RcOpcode::kWriteOnly:
      case RcOpcode::kReadRequest:
        return base.with(Header::kReth);
      case RcOpcode::kWriteOnlyImm:
        return base.with(Header::kReth).with(Header::kImmDt);
      case RcOpcode::kWriteLastImm:
        return base.with(Header::kImmDt);
      case RcOpcode::kReadResponseFirst:
      case RcOpcode::kReadResponseLast:
      case RcOpcode::kReadResponseOnly:
      case RcOpcode::kAcknowledge:
        return base.with(Header::kAeth);
      default:
        return base;
    }
  }
  // Sets the header stack of `op`.
  void set(RcOpcode op, HeaderSet h) {
    framing_[static_cast<uint8_t>(op)] = Framing{h, h.header_bytes()};
  }

 private:
  std::array<Framing, 256> framing_{};
  bool link_flow_control_ = true;
};

}  // namespace rdmasim
