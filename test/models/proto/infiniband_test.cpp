#include "test/support/catch_units.h"

#include "models/proto/infiniband.h"
#include "models/proto/roce_v2.h"
#include "sim/units.h"

using namespace rdmasim;

// Sizes restated from IBA vol. 1 (ch. 7 link layer, ch. 9 transport), not
// read back from the header table: LRH 8, GRH 40, BTH 12, RETH 16, AETH 4,
// ImmDt 4, ICRC 4, VCRC 2; a flow-control packet is 6 bytes (§7.9.4).
TEST_CASE("V2 InfiniBand packet bytes and credits", "[quick][validation][V2]") {
  const uint32_t lrh = 8, grh = 40, bth = 12, reth = 16, aeth = 4, imm = 4, icrc = 4, vcrc = 2;
  const InfinibandFormat ib(false);
  const InfinibandFormat ib_grh(true);

  // A full 4096-byte payload: 4096 + 26 = 4122 wire bytes, 65 credits.
  CHECK(ib.wire_bytes(RcOpcode::kWriteMiddle, 4096) == 4096 + lrh + bth + icrc + vcrc);
  CHECK(ib.wire_bytes(RcOpcode::kWriteMiddle, 4096) == 4122);
  CHECK(ib_credits(4122) == 65);  // ceil(4120 / 64)
  // With a GRH: 4162 wire bytes; the VCRC takes no buffer, so 4160 bytes
  // count: 65 credits (66 if the VCRC counted).
  CHECK(ib_grh.wire_bytes(RcOpcode::kWriteMiddle, 4096) == 4122 + grh);
  CHECK(ib_credit_bytes(4162) == 4160);
  CHECK(ib_credits(4162) == 65);
  // The same extended headers as RoCE v2.
  CHECK(ib.wire_bytes(RcOpcode::kWriteFirst, 4096) == 4122 + reth);
  CHECK(ib.wire_bytes(RcOpcode::kWriteOnlyImm, 100) == 100 + 26 + reth + imm);
  CHECK(ib.wire_bytes(RcOpcode::kWriteLastImm, 100) == 100 + 26 + imm);
  CHECK(ib.ack().wire_bytes(0) == lrh + bth + aeth + icrc + vcrc);  // 30: no padding on IB
  CHECK(ib.ack().frame_bytes(0) == 30);
  CHECK(InfinibandFormat::flow_control().wire_bytes(0) == 6);
}

TEST_CASE("IB credits leave out the VCRC", "[quick][wire]") {
  // LRH through ICRC exactly two blocks (128 bytes: a 104-byte payload plus
  // LRH, BTH and ICRC): 2 credits, although the packet is 130 wire bytes.
  const InfinibandFormat ib(false);
  const uint32_t wire = ib.wire_bytes(RcOpcode::kWriteMiddle, 104);
  CHECK(wire == 130);
  CHECK(ib_credits(wire) == 2);
  // One byte of payload more, padded to a 4-byte word (BTH PadCnt 3, IBA
  // §9.2): 134 wire bytes, the third block.
  CHECK(ib.wire_bytes(RcOpcode::kWriteMiddle, 105) == 130 + 4);
  CHECK(ib.wire_bytes(RcOpcode::kWriteMiddle, 108) == 130 + 4);
  CHECK(ib.wire_bytes(RcOpcode::kWriteMiddle, 109) == 130 + 8);
  CHECK(ib_credits(ib.wire_bytes(RcOpcode::kWriteMiddle, 105)) == 3);
  // RoCE v2 frames are not padded in the model (their fingerprints stay).
  const RoceV2Format roce(IpVersion::kIpv4, false);
  CHECK(roce.wire_bytes(RcOpcode::kWriteMiddle, 1001) ==
        roce.wire_bytes(RcOpcode::kWriteMiddle, 1000) + 1);
  CHECK(ib_credits(6 + 2) == 1);
}

TEST_CASE("IB MTUs are the five powers of two", "[quick][wire]") {
  for (uint32_t m : {256U, 512U, 1024U, 2048U, 4096U}) CHECK(is_ib_mtu(m));
  for (uint32_t m : {0U, 128U, 1000U, 1500U, 4095U, 8192U}) CHECK_FALSE(is_ib_mtu(m));
}

// Serialization at the 4x data rates (IBTA): bits / rate, to the picosecond.
// 4122 B = 32,976 bits.
TEST_CASE("IB packet wire time at EDR HDR NDR and XDR", "[quick][wire]") {
  CHECK(*parse_rate("EDR").value == BitRate::gbps(100));
  CHECK(*parse_rate("HDR").value == BitRate::gbps(200));
  CHECK(*parse_rate("NDR").value == BitRate::gbps(400));
  CHECK(*parse_rate("XDR").value == BitRate::gbps(800));
  CHECK_FALSE(parse_rate("FDR"));
  CHECK(transfer_time(Bytes(4122), BitRate::gbps(100)) == Time::ps(329'760));
  CHECK(transfer_time(Bytes(4122), BitRate::gbps(200)) == Time::ps(164'880));
  CHECK(transfer_time(Bytes(4122), BitRate::gbps(400)) == Time::ps(82'440));
  CHECK(transfer_time(Bytes(4122), BitRate::gbps(800)) == Time::ps(41'220));
  // The 6-byte flow-control packet: 0.48 ns at EDR, 0.12 ns at NDR.
  CHECK(transfer_time(Bytes(6), BitRate::gbps(100)) == Time::ps(480));
  CHECK(transfer_time(Bytes(6), BitRate::gbps(400)) == Time::ps(120));
  // A link's serializer gives the same, packet after packet.
  Serializer s(BitRate::gbps(400));
  for (int i = 0; i < 3; ++i) CHECK(s.next(Bytes(4122)) == Time::ps(82'440));
}
