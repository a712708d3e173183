// The one declaration of every header rdmasim puts on a wire, with its size,
// and the rule that turns a header stack plus payload into wire bytes.
// Models build packets from these; nothing else invents packet sizes.
//
// Sources:
//  - Ethernet: IEEE 802.3 clause 3 (14-byte MAC header, 4-byte FCS, 64-byte
//    minimum frame, 7+1 bytes preamble+SFD, 12-byte minimum inter-frame gap);
//    802.1Q tag 4 bytes.
//  - IPv4 20 (no options), IPv6 40, UDP 8 (RoCE v2 destination port 4791).
//  - IBA Vol 1 ch. 9: BTH 12, RETH 16, AETH 4, ImmDt 4 (§9.3.4), ICRC 4;
//    LRH 8, GRH 40, VCRC 2; IBA Vol 1 §7.9.4: a link flow-control packet is
//    6 bytes (Op 4 bits, FCTBS 12, VL 4, FCCL 12, LPCRC 16).
//  - RoCE v2 CNP (IBA Annex A17.9.3): BTH (opcode 0x81) + 16 reserved bytes.
//  - PFC (IEEE 802.1Qbb / 802.3 Annex 31D): MAC control opcode 0x0101,
//    class-enable vector 2 bytes, eight 2-byte pause times.
//  - NVLink: no bytes of its own on the wire; the link's rate is its payload
//    rate (models/proto/nvlink.h says why).
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <string_view>

namespace rdmasim {

enum class Header : uint8_t {
  kPreambleSfd,    // 8: Ethernet preamble (7) + start frame delimiter (1)
  kEthernet,       // 14: destination MAC, source MAC, EtherType
  kVlan,           // 4: IEEE 802.1Q tag (carries the PCP)
  kIpv4,           // 20: IPv4 header without options
  kIpv6,           // 40: IPv6 fixed header
  kUdp,            // 8: UDP (RoCE v2: destination port 4791)
  kBth,            // 12: IB base transport header
  kReth,           // 16: RDMA extended transport header (WRITE first/only, READ request)
  kAeth,           // 4: ACK extended transport header
  kCnpReserved,    // 16: reserved bytes after the BTH of a RoCE v2 CNP
  kIcrc,           // 4: invariant CRC
  kFcs,            // 4: Ethernet frame check sequence
  kInterFrameGap,  // 12: minimum Ethernet inter-frame gap
  kPfcControl,     // 20: MAC control opcode (2), class-enable vector (2), 8 pause times (16)
  kLrh,            // 8: IB local route header
  kGrh,            // 40: IB global route header
  kVcrc,           // 2: IB variant CRC
  kImmDt,          // 4: immediate data (WRITE Last/Only with Immediate)
  kIbFlowControl,  // 6: IB flow-control packet: Op, FCTBS, VL, FCCL (4), LPCRC (2)
  kNvlink,         // 0: NVLink framing; its overhead is inside the link's payload rate (nvlink.h)
  kCount
};

struct HeaderInfo {
  std::string_view name;
  uint16_t bytes;
};

inline constexpr std::array<HeaderInfo, static_cast<size_t>(Header::kCount)> kHeaderInfo{{
    {"preamble+SFD", 8},
    {"Ethernet", 14},
    {"802.1Q", 4},
    {"IPv4", 20},
    {"IPv6", 40},
    {"UDP", 8},
    {"BTH", 12},
    {"RETH", 16},
    {"AETH", 4},
    {"CNP reserved", 16},
    {"ICRC", 4},
    {"FCS", 4},
    {"inter-frame gap", 12},
    {"PFC MAC control", 20},
    {"LRH", 8},
    {"GRH", 40},
    {"VCRC", 2},
    {"ImmDt", 4},
    {"IB flow control", 6},
    {"NVLink", 0},
}};

inline constexpr uint16_t kRoceV2UdpPort = 4791;
// Smallest Ethernet frame, destination MAC through FCS; shorter frames are padded.
inline constexpr uint32_t kEthernetMinFrame = 64;

// A set of headers, one bit per Header.
class HeaderSet {
 public:
  constexpr HeaderSet() = default;
  constexpr HeaderSet(std::initializer_list<Header> hs) {
    for (Header h : hs) bits_ |= bit(h);
  }
  constexpr explicit HeaderSet(uint32_t bits) : bits_(bits) {}
  constexpr HeaderSet with(Header h) const { return HeaderSet(bits_ | bit(h)); }
  constexpr HeaderSet without(Header h) const { return HeaderSet(bits_ & ~bit(h)); }
  constexpr bool has(Header h) const { return (bits_ & bit(h)) != 0; }
  constexpr uint32_t bits() const { return bits_; }
  constexpr bool operator==(const HeaderSet&) const = default;

  // Bytes of all headers in the set (no padding, no payload).
  constexpr uint32_t header_bytes() const {
    uint32_t sum = 0;
    for (uint32_t b = bits_; b != 0; b &= b - 1) sum += kHeaderInfo[std::countr_zero(b)].bytes;
    return sum;
  }

  // Frame bytes as the receiving MAC counts them: for Ethernet, destination
  // MAC through FCS, padded to the 64-byte minimum; for IB, LRH through VCRC.
  constexpr uint32_t frame_bytes(uint32_t payload) const {
    return frame_bytes(payload, header_bytes());
  }
  // The same, given this set's header_bytes() (a format computes it once).
  constexpr uint32_t frame_bytes(uint32_t payload, uint32_t header_bytes) const {
    // IB pads the payload to whole 4-byte words (BTH PadCnt, IBA §9.2):
    // the pad is on the wire and in the buffer.
    if (has(Header::kLrh)) payload = (payload + 3) & ~3U;
    uint32_t frame = header_bytes + payload;
    if (has(Header::kPreambleSfd)) frame -= kHeaderInfo[size_t(Header::kPreambleSfd)].bytes;
    if (has(Header::kInterFrameGap)) frame -= kHeaderInfo[size_t(Header::kInterFrameGap)].bytes;
    if (has(Header::kEthernet) && frame < kEthernetMinFrame) frame = kEthernetMinFrame;
    return frame;
  }

  // frame_bytes() of a packet whose wire_bytes() is `wire`: what a switch
  // charges per hop, without summing the header stack again.
  constexpr uint32_t frame_bytes_of_wire(uint32_t wire) const {
    if (has(Header::kPreambleSfd)) wire -= kHeaderInfo[size_t(Header::kPreambleSfd)].bytes;
    if (has(Header::kInterFrameGap)) wire -= kHeaderInfo[size_t(Header::kInterFrameGap)].bytes;
    return wire;
  }

  // Bytes a link serializes: the frame plus, on Ethernet, preamble+SFD and
  // the inter-frame gap (they occupy the wire as much as the frame does).
  constexpr uint32_t wire_bytes(uint32_t payload) const {
    return wire_bytes(payload, header_bytes());
  }
  constexpr uint32_t wire_bytes(uint32_t payload, uint32_t header_bytes) const {
    uint32_t wire = frame_bytes(payload, header_bytes);
    if (has(Header::kPreambleSfd)) wire += kHeaderInfo[size_t(Header::kPreambleSfd)].bytes;
    if (has(Header::kInterFrameGap)) wire += kHeaderInfo[size_t(Header::kInterFrameGap)].bytes;
    return wire;
  }

 private:
  static constexpr uint32_t bit(Header h) { return 1U << static_cast<uint32_t>(h); }
  uint32_t bits_ = 0;
};

}  // namespace rdmasim
