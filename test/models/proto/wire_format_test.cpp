#include "test/support/catch_units.h"

#include "models/proto/roce_v2.h"

using namespace rdmasim;

// Header sizes are restated here from the specifications (IEEE 802.3,
// IEEE 802.1Qbb, IBA vol. 1 ch. 9 and Annex A17), not read back from the
// table under test.
TEST_CASE("V1 RoCE v2 frame sizes", "[quick][validation][V1]") {
  const RoceV2Format v4(IpVersion::kIpv4, false);
  const uint32_t eth = 14, ip4 = 20, udp = 8, bth = 12, reth = 16, aeth = 4, icrc = 4, fcs = 4;
  const uint32_t wire_extra = 8 + 12;  // preamble+SFD, inter-frame gap

  // Middle packet of a 4096-byte-MTU WRITE: 82 bytes of overhead on the wire.
  CHECK(v4.wire_bytes(RcOpcode::kWriteMiddle, 4096) ==
        4096 + eth + ip4 + udp + bth + icrc + fcs + wire_extra);
  CHECK(v4.wire_bytes(RcOpcode::kWriteMiddle, 4096) == 4178);
  // First and only packets carry a RETH.
  CHECK(v4.wire_bytes(RcOpcode::kWriteFirst, 4096) == 4178 + reth);
  CHECK(v4.wire_bytes(RcOpcode::kWriteOnly, 100) == 100 + 82 + reth);
  CHECK(v4.wire_bytes(RcOpcode::kSendFirst, 4096) == 4178);
  // WRITE with immediate: 4 bytes of ImmDt on its last (or only) packet (IBA §9.3.4).
  const uint32_t imm = 4;
  CHECK(v4.wire_bytes(RcOpcode::kWriteLastImm, 100) == 100 + 82 + imm);
  CHECK(v4.wire_bytes(RcOpcode::kWriteOnlyImm, 100) == 100 + 82 + reth + imm);
  // ACK: 66-byte frame, 86 bytes on the wire.
  CHECK(v4.ack().frame_bytes(0) == eth + ip4 + udp + bth + aeth + icrc + fcs);
  CHECK(v4.ack().frame_bytes(0) == 66);
  CHECK(v4.ack().wire_bytes(0) == 86);
  // CNP: BTH + 16 reserved bytes: a 78-byte frame, 98 on the wire.
  CHECK(v4.cnp().frame_bytes(0) == 78);
  CHECK(v4.cnp().wire_bytes(0) == 98);
  // PFC: a minimum-size 64-byte MAC control frame, 84 bytes on the wire.
  CHECK(RoceV2Format::pfc().frame_bytes(0) == 64);
  CHECK(RoceV2Format::pfc().wire_bytes(0) == 84);
}

TEST_CASE("RoCE v2 framing with VLAN and IPv6", "[quick][wire]") {
  const RoceV2Format vlan(IpVersion::kIpv4, true);
  CHECK(vlan.wire_bytes(RcOpcode::kWriteMiddle, 4096) == 4178 + 4);
  CHECK(vlan.cnp().frame_bytes(0) == 82);  // IBA Annex A17.9.3: 82 B with a VLAN tag
  const RoceV2Format v6(IpVersion::kIpv6, false);
  CHECK(v6.wire_bytes(RcOpcode::kWriteMiddle, 4096) == 4178 + 20);
  // Efficiency over IPv6 at 4096: 4096 / 4198 = 0.9757 (IBA Annex A17 framing).
  CHECK(4096.0 / v6.wire_bytes(RcOpcode::kWriteMiddle, 4096) == Approx(0.9757).epsilon(1e-4));
}

TEST_CASE("short Ethernet frames are padded to 64 bytes", "[quick][wire]") {
  const HeaderSet raw{Header::kPreambleSfd, Header::kEthernet, Header::kFcs,
                      Header::kInterFrameGap};
  CHECK(raw.frame_bytes(10) == 64);
  CHECK(raw.frame_bytes(46) == 64);
  CHECK(raw.frame_bytes(47) == 65);
  CHECK(raw.wire_bytes(46) == 84);
}

TEST_CASE("frame bytes recovered from wire bytes match the header sum", "[quick][wire]") {
  const RoceV2Format v4(IpVersion::kIpv4, true);
  const HeaderSet raw{Header::kPreambleSfd, Header::kEthernet, Header::kFcs,
                      Header::kInterFrameGap};
  const HeaderSet ib{Header::kLrh, Header::kBth, Header::kIcrc, Header::kVcrc};
  for (const HeaderSet h :
       {v4.packet(RcOpcode::kWriteFirst), v4.ack(), v4.cnp(), RoceV2Format::pfc(), raw, ib}) {
    for (const uint32_t payload : {0U, 10U, 46U, 47U, 1000U, 4096U}) {
      CHECK(h.frame_bytes_of_wire(h.wire_bytes(payload)) == h.frame_bytes(payload));
    }
  }
  // Ethernet: 20 bytes of preamble, SFD and gap come off; IB has none.
  CHECK(raw.frame_bytes_of_wire(84) == 64);
  CHECK(ib.frame_bytes_of_wire(100) == 100);
}
