// RoCE v2 packet sizes written out from the specifications, for tests that
// compute expected values without asking models/proto (which they check).
// IPv4 without options, no VLAN tag.
#pragma once

namespace rdmasim::testing::roce_wire {

// IEEE 802.3 clause 3: MAC header (destination 6, source 6, EtherType 2),
// frame check sequence, preamble (7) + start frame delimiter (1); clause 4:
// minimum inter-packet gap of 96 bit times.
constexpr int kEthernet = 14;
constexpr int kFcs = 4;
constexpr int kPreambleSfd = 8;
constexpr int kInterFrameGap = 12;
// RFC 791 (IPv4 header, no options) and RFC 768 (UDP; RoCE v2 port 4791).
constexpr int kIpv4 = 20;
constexpr int kUdp = 8;
// IBA Vol 1 ch. 9 (Linux include/rdma/ib_pack.h: IB_BTH_BYTES, IB_RETH_BYTES,
// IB_AETH_BYTES, IB_ICRC_BYTES): base transport header, RDMA extended header
// (first or only packet of a WRITE), ACK extended header, invariant CRC.
constexpr int kBth = 12;
constexpr int kReth = 16;
constexpr int kAeth = 4;
constexpr int kIcrc = 4;
// IBA Annex A17.9.3: a RoCE v2 CNP is a BTH (opcode 0x81) and 16 reserved bytes.
constexpr int kCnpReserved = 16;

// Bytes a switch stores of a frame (destination MAC through FCS) and bytes
// the wire carries (plus preamble, SFD and gap), for a data packet of
// `payload` bytes with no extended header.
constexpr int frame_bytes(int payload) {
  return kEthernet + kIpv4 + kUdp + kBth + payload + kIcrc + kFcs;
}
constexpr int wire_bytes(int payload) {
  return frame_bytes(payload) + kPreambleSfd + kInterFrameGap;
}
constexpr int kCnpFrame = kEthernet + kIpv4 + kUdp + kBth + kCnpReserved + kIcrc + kFcs;
constexpr int kCnpWire = kCnpFrame + kPreambleSfd + kInterFrameGap;
constexpr int kAckWire =
    kEthernet + kIpv4 + kUdp + kBth + kAeth + kIcrc + kFcs + kPreambleSfd + kInterFrameGap;

static_assert(wire_bytes(4096) == 4178);  // V1: 4096 + 82
static_assert(wire_bytes(1000) == 1082);  // V6
static_assert(wire_bytes(1024) == 1106);  // V7
static_assert(kCnpFrame == 78 && kCnpWire == 98);
static_assert(kAckWire == 86);

}  // namespace rdmasim::testing::roce_wire
