// Loss recovery: go-back-N (IBA §9.7.5.2: sequence-error NAK once per gap,
// rewind), selective repeat (IRN: placement, SACK, selective retransmission),
// the local ACK timeout with exponential backoff, and the error state after
// retry_cnt retries (IBA §9.7.6.1.3).
#include <vector>

#include "sim/hash.h"
#include "test/models/nic/nic_fixture.h"
#include "test/support/catch_units.h"

using namespace rdmasim;
using namespace rdmasim::testing;

namespace {

const BitRate kRate = BitRate::gbps(100);
const Time kDelay = Time::us(1);
const Time kData = Bytes(4178) / kRate;  // a full data packet (4096 + 82)
const Time kAck = Bytes(86) / kRate;

// End of transmission of WRITE packet k sent back to back from 0 (the first
// carries a 16-byte RETH).
Time end_of(int k) { return Bytes(4194 + int64_t{4178} * k) / kRate; }

// Drops the first transmission of the data packets whose PSN is in `psns`.
std::function<bool(const Packet&, uint32_t)> drop_first(std::vector<uint32_t> psns) {
  return [psns](const Packet& p, uint32_t port) {
    if (port != 0 || p.kind != PacketKind::kData || p.retransmissions != 0) return false;
    for (uint32_t x : psns) {
      if (p.psn == x) return true;
    }
    return false;
  };
}

NicConfig with(LossRecovery lr, Time rto = Time::zero()) {
  NicConfig cfg;
  cfg.loss_recovery = lr;
  cfg.retransmit_timeout = rto;
  return cfg;
}

}  // namespace

TEST_CASE("go-back-N: one lost packet is NAKed once and the requester resends from it",
          "[quick][nic][loss]") {
  Chain c(with(LossRecovery::kGoBackN));
  c.m.drop = drop_first({10});
  c.sim.setup();
  c.a.post(c.qa, WorkRequest{1, Verb::kWrite, 64 * 4096});
  c.sim.run();

  REQUIRE(c.log.sent.size() == 1);
  CHECK(c.log.sent[0].status == WcStatus::kSuccess);
  CHECK(c.b.counters().payload_bytes_delivered == 64 * 4096);
  CHECK(c.b.counters().naks_sent == 1);
  // Packet 11 is the first out of sequence: b NAKs PSN 10 when it arrives
  // (two hops), and the NAK returns over two hops. Every packet whose
  // transmission began before then was sent once already.
  const Time t_nak = end_of(11) + kDelay + kData + kDelay + (kAck + kDelay) * 2;
  int n = 0;  // packets started before the NAK arrived
  while (n == 0 || end_of(n - 1) < t_nak) ++n;
  CHECK(n == 26);  // the formula, evaluated: packet 25 is on the wire at t_nak
  CHECK(c.a.counters().retransmitted_packets == static_cast<uint64_t>(n - 10));
  CHECK(c.b.counters().out_of_sequence == static_cast<uint64_t>(n - 11));
  // The resent packets are flagged and count their earlier transmissions.
  int resent = 0;
  for (const Seen& s : c.from(0, PacketKind::kData)) {
    if ((s.flags & kFlagRetransmit) == 0) continue;
    ++resent;
    CHECK(s.retransmissions == 1);
  }
  CHECK(resent == n - 10);
  // After the rewind PSNs 10..63 go back to back; the last one's ACK ends it.
  const Time last = end_of(n - 1) + kData * 54;
  CHECK(c.log.sent[0].completed == last + (kData + kDelay) * 2 - kData + (kAck + kDelay) * 2);
  CHECK(c.a.qp(c.qa).retries == 0);
}

TEST_CASE("selective repeat: one lost packet is resent alone", "[quick][nic][loss]") {
  NicConfig irn = with(LossRecovery::kSelectiveRepeat);
  irn.sr_reorder_threshold = 1;  // IRN: NAK the first out-of-order packet
  Chain c(irn);
  c.m.drop = drop_first({10});
  c.sim.setup();
  c.a.post(c.qa, WorkRequest{1, Verb::kWrite, 64 * 4096});
  c.sim.run();

  REQUIRE(c.log.sent.size() == 1);
  CHECK(c.log.sent[0].status == WcStatus::kSuccess);
  CHECK(c.b.counters().payload_bytes_delivered == 64 * 4096);
  CHECK(c.a.counters().retransmitted_packets == 1);
  CHECK(c.log.received.empty());  // a plain WRITE completes at the requester only
  CHECK(c.b.counters().messages_completed == 1);
  // The first NAK names PSN 10 and SACKs PSN 11: bit i = PSN 10 + i.
  const auto naks = c.from(1, PacketKind::kNak);
  REQUIRE(!naks.empty());
  CHECK(naks[0].psn == 10);
  CHECK(naks[0].syndrome == kAethNakSequenceError);
  CHECK(naks[0].aux == 0b10);
  // The wire never idles: 64 new packets and one retransmission back to back.
  const Time last = end_of(64);
  CHECK(c.log.sent[0].completed == last + (kData + kDelay) * 2 - kData + (kAck + kDelay) * 2);
}

TEST_CASE("selective repeat retransmits fewer packets than go-back-N for the same losses",
          "[quick][nic][loss]") {
  // About 2.5% of first transmissions dropped, chosen by a hash of the PSN:
  // the same packets in both modes.
  auto pattern = [](const Packet& p, uint32_t port) {
    return port == 0 && p.kind == PacketKind::kData && p.retransmissions == 0 &&
           mix64(p.psn) % 40 == 0;
  };
  const int packets = 1024;
  int dropped_psns = 0;
  for (uint32_t psn = 0; psn < packets; ++psn) dropped_psns += mix64(psn) % 40 == 0 ? 1 : 0;
  REQUIRE(dropped_psns > 10);

  uint64_t retx[2] = {0, 0};
  for (int mode = 0; mode < 2; ++mode) {
    Chain c(
        with(mode == 0 ? LossRecovery::kGoBackN : LossRecovery::kSelectiveRepeat, Time::us(50)));
    c.m.drop = pattern;
    c.sim.setup();
    c.a.post(c.qa, WorkRequest{1, Verb::kWrite, int64_t{packets} * 4096});
    c.sim.run();
    REQUIRE(c.log.sent.size() == 1);
    CHECK(c.log.sent[0].status == WcStatus::kSuccess);
    CHECK(c.b.counters().payload_bytes_delivered == int64_t{packets} * 4096);
    retx[mode] = c.a.counters().retransmitted_packets;
  }
  // Selective repeat resends exactly the lost packets; go-back-N resends
  // every packet in flight behind each loss as well.
  CHECK(retx[1] == static_cast<uint64_t>(dropped_psns));
  CHECK(retx[0] > retx[1]);
}

TEST_CASE("random bit errors: every byte arrives, with retransmissions", "[quick][nic][loss]") {
  const LossRecovery lr = GENERATE(LossRecovery::kGoBackN, LossRecovery::kSelectiveRepeat);
  Pair p(with(lr, Time::us(20)));
  // 1e-6 per bit: about 3% of 4178-byte frames; ACKs can be lost too.
  p.cable.a_to_b->set_bit_error_rate(1e-6);
  p.cable.b_to_a->set_bit_error_rate(1e-6);
  const int64_t size = 4 << 20;
  p.sim.setup();
  p.a.post(p.qa, WorkRequest{1, Verb::kWrite, size});
  p.a.post(p.qa, WorkRequest{2, Verb::kSend, size});
  p.sim.run();
  REQUIRE(p.log.sent.size() == 2);
  CHECK(p.log.sent[0].status == WcStatus::kSuccess);
  CHECK(p.log.sent[1].status == WcStatus::kSuccess);
  CHECK(p.a.counters().retransmitted_packets > 0);
  CHECK(p.cable.a_to_b->counters().corrupted > 0);
  // Every lost data packet was sent again at least once.
  CHECK(p.a.counters().retransmitted_packets >= p.cable.a_to_b->counters().corrupted);
  CHECK(p.b.counters().payload_bytes_delivered == 2 * size);
  // The responder completes the SEND (a plain WRITE raises no completion there).
  REQUIRE(p.log.received.size() == 1);
  CHECK(p.log.received[0].verb == Verb::kSend);
  CHECK(p.log.received[0].bytes == size);
  CHECK(p.b.counters().messages_completed == 2);
}

TEST_CASE("random bit errors on READ responses: the READ completes with every byte",
          "[quick][nic][loss][read]") {
  const LossRecovery lr = GENERATE(LossRecovery::kGoBackN, LossRecovery::kSelectiveRepeat);
  Pair p(with(lr, Time::us(20)));
  p.cable.a_to_b->set_bit_error_rate(1e-6);
  p.cable.b_to_a->set_bit_error_rate(1e-6);
  const int64_t size = 4 << 20;
  p.sim.setup();
  for (uint64_t i = 0; i < 4; ++i) p.a.post(p.qa, WorkRequest{i, Verb::kRead, size / 4});
  p.sim.run();
  REQUIRE(p.log.sent.size() == 4);
  for (const Completion& c : p.log.sent) CHECK(c.status == WcStatus::kSuccess);
  CHECK(p.a.counters().payload_bytes_delivered == size);
  CHECK(p.a.counters().retransmitted_packets + p.b.counters().retransmitted_packets > 0);
}

namespace {
// A 16-packet READ whose response PSN 5 is lost once; it still completes whole.
void read_losing_response_5(Chain& c) {
  c.m.drop = [](const Packet& p, uint32_t port) {
    return port == 1 && p.kind == PacketKind::kData && p.psn == 5 && p.retransmissions == 0;
  };
  c.sim.setup();
  c.a.post(c.qa, WorkRequest{1, Verb::kRead, 16 * 4096});
  c.sim.run();
  REQUIRE(c.log.sent.size() == 1);
  CHECK(c.log.sent[0].status == WcStatus::kSuccess);
  CHECK(c.a.counters().payload_bytes_delivered == 16 * 4096);
}
}  // namespace

TEST_CASE("go-back-N READ: a lost response makes the requester ask again from it",
          "[quick][nic][loss][read]") {
  Chain c(with(LossRecovery::kGoBackN));
  read_losing_response_5(c);
  const auto req = c.from(0, PacketKind::kReadRequest);
  REQUIRE(req.size() == 2);
  CHECK(req[1].psn == 5);
  CHECK(req[1].read_length == 11 * 4096);
  CHECK(req[1].retransmissions == 1);
  // The responder executes it again: responses 5..15, flagged.
  CHECK(c.b.counters().retransmitted_packets == 11);
}

TEST_CASE("selective repeat READ: only the lost response is asked for again",
          "[quick][nic][loss][read]") {
  Chain c(with(LossRecovery::kSelectiveRepeat));
  read_losing_response_5(c);
  const auto req = c.from(0, PacketKind::kReadRequest);
  REQUIRE(req.size() == 2);
  CHECK(req[1].psn == 5);
  CHECK(req[1].read_length == 4096);
  CHECK(c.b.counters().retransmitted_packets == 1);
  CHECK(c.a.counters().retransmitted_packets == 1);
}

TEST_CASE("a lost READ request is resent when the ACK timeout expires",
          "[quick][nic][loss][read]") {
  const Time rto = Time::us(10);
  Chain c(with(LossRecovery::kGoBackN, rto));
  c.m.drop = [](const Packet& p, uint32_t) {
    return p.kind == PacketKind::kReadRequest && p.retransmissions == 0;
  };
  c.sim.setup();
  c.a.post(c.qa, WorkRequest{1, Verb::kRead, 4096});
  c.sim.run();
  REQUIRE(c.log.sent.size() == 1);
  CHECK(c.log.sent[0].status == WcStatus::kSuccess);
  CHECK(c.a.counters().timeouts == 1);
  // Request over two hops, then one 4182-byte READ RESPONSE ONLY over two.
  const Time expected =
      rto + (Bytes(98) / kRate + kDelay) * 2 + (Bytes(4096 + 86) / kRate + kDelay) * 2;
  CHECK(c.log.sent[0].completed == expected);
}

TEST_CASE("a lost last ACK is recovered by the timeout, restarted on every ACK",
          "[quick][nic][loss]") {
  const Time rto = Time::us(30);
  Chain c(with(LossRecovery::kGoBackN, rto));
  c.m.drop = [dropped = false](const Packet& p, uint32_t port) mutable {
    if (port == 1 && p.kind == PacketKind::kAck && p.psn == 63 && !dropped) {
      dropped = true;
      return true;
    }
    return false;
  };
  c.sim.setup();
  c.a.post(c.qa, WorkRequest{1, Verb::kWrite, 64 * 4096});
  c.sim.run();
  REQUIRE(c.log.sent.size() == 1);
  CHECK(c.a.counters().timeouts == 1);
  CHECK(c.a.counters().retransmitted_packets == 1);
  CHECK(c.b.counters().duplicates == 1);
  // ACK 62 restarts the timer; it expires rto later, PSN 63 goes again and
  // its duplicate is acknowledged.
  // On the second hop every packet is held up by the first one's 16-byte
  // RETH (no loss opens a gap here to absorb it).
  const Time at_b = end_of(62) + Bytes(16) / kRate + kData + kDelay * 2;
  const Time ack62 = at_b + (kAck + kDelay) * 2;
  const Time expected = ack62 + rto + (kData + kDelay) * 2 + (kAck + kDelay) * 2;
  CHECK(c.log.sent[0].completed == expected);
}

TEST_CASE("a link that stays down puts the QP in error after retry_cnt timeouts",
          "[quick][nic][loss]") {
  const int retry_cnt = GENERATE(0, 3, 7);
  NicConfig cfg;
  cfg.retransmit_timeout = Time::us(10);
  cfg.retry_cnt = retry_cnt;
  Pair p(cfg);
  p.cable.a_to_b->set_up(false);
  p.sim.setup();
  p.a.post(p.qa, WorkRequest{1, Verb::kWrite, 8 * 4096});
  p.a.post(p.qa, WorkRequest{2, Verb::kRead, 4096});
  p.a.post(p.qa, WorkRequest{3, Verb::kSend, 10});
  p.sim.run();

  // Timeouts at T, then 2T, 4T, ... after each retry: the last of
  // retry_cnt + 1 expiries, T (2^(retry_cnt+1) - 1) after the first
  // transmission, fails the QP.
  const Time expected = Time::us(10) * ((int64_t{1} << (retry_cnt + 1)) - 1);
  REQUIRE(p.log.sent.size() == 3);
  CHECK(p.log.sent[0].status == WcStatus::kRetryExceeded);
  CHECK(p.log.sent[1].status == WcStatus::kFlushed);
  CHECK(p.log.sent[2].status == WcStatus::kFlushed);
  for (const Completion& c : p.log.sent) CHECK(c.completed == expected);
  CHECK(p.log.sent[0].first_tx == Time::zero());
  CHECK(p.a.counters().timeouts == static_cast<uint64_t>(retry_cnt + 1));
  CHECK(p.a.counters().qp_errors == 1);
  CHECK(p.a.qp(p.qa).error);
  CHECK(p.b.counters().data_packets_received == 0);
  // Work posted on a QP in error is flushed at once.
  p.a.post(p.qa, WorkRequest{4, Verb::kWrite, 1});
  REQUIRE(p.log.sent.size() == 4);
  CHECK(p.log.sent[3].status == WcStatus::kFlushed);
}

TEST_CASE("the local ACK timeout is 4.096 us x 2^timeout", "[quick][nic][loss]") {
  NicConfig cfg;
  cfg.timeout = 14;  // ConnectX default: 67.108864 ms
  cfg.retry_cnt = 1;
  Pair p(cfg);
  p.cable.a_to_b->set_up(false);
  p.sim.setup();
  p.a.post(p.qa, WorkRequest{1, Verb::kWrite, 100});
  p.sim.run();
  REQUIRE(p.log.sent.size() == 1);
  CHECK(p.log.sent[0].status == WcStatus::kRetryExceeded);
  CHECK(p.log.sent[0].completed == Time::ps(67'108'864'000) * 3);
}

TEST_CASE("timeout 0 waits forever", "[quick][nic][loss]") {
  NicConfig cfg;
  cfg.timeout = 0;
  Pair p(cfg);
  p.cable.a_to_b->set_up(false);
  p.sim.setup();
  p.a.post(p.qa, WorkRequest{1, Verb::kWrite, 100});
  // Nothing is left to happen: no timer runs.
  CHECK(p.sim.run() == RunEnd::kIdle);
  CHECK(p.sim.now() < Time::us(1));
  CHECK(p.log.sent.empty());
  CHECK(p.a.counters().timeouts == 0);
}

TEST_CASE("selective repeat places reordered packets; messages complete whole and in order",
          "[quick][nic][loss]") {
  // Every 7th data packet swaps places with the one behind it, as packet
  // spraying would reorder them. Messages of 3 packets: 40 SENDs, WRITEs
  // and WRITEs with immediate, in turn; the responder completes the SENDs
  // and WRITEs with immediate (27), whole and in order.
  auto swap_every_7th = [](const Packet& p, uint32_t port) {
    return port == 0 && p.kind == PacketKind::kData && p.retransmissions == 0 && p.psn % 7 == 3;
  };
  const int messages = 40;
  uint64_t retx[2] = {0, 0};
  for (int mode = 0; mode < 2; ++mode) {
    Chain c(with(mode == 0 ? LossRecovery::kGoBackN : LossRecovery::kSelectiveRepeat));
    c.m.hold = swap_every_7th;
    c.sim.setup();
    const Verb verbs[3] = {Verb::kSend, Verb::kWrite, Verb::kWriteImm};
    for (int i = 0; i < messages; ++i) {
      c.a.post(c.qa, WorkRequest{uint64_t(i), verbs[i % 3], 3 * 4096, uint32_t(1000 + i)});
    }
    c.sim.run();
    REQUIRE(c.log.sent.size() == static_cast<size_t>(messages));
    std::vector<int> completing;  // the messages the responder completes
    for (int i = 0; i < messages; ++i) {
      if (verbs[i % 3] != Verb::kWrite) completing.push_back(i);
    }
    REQUIRE(completing.size() == 27);
    REQUIRE(c.log.received.size() == completing.size());
    for (int i = 0; i < messages; ++i) {
      CHECK(c.log.sent[i].wr_id == static_cast<uint64_t>(i));
      CHECK(c.log.sent[i].status == WcStatus::kSuccess);
    }
    for (size_t k = 0; k < completing.size(); ++k) {
      const int i = completing[k];
      CHECK(c.log.received[k].bytes == 3 * 4096);
      CHECK(c.log.received[k].verb == verbs[i % 3]);
      if (verbs[i % 3] == Verb::kWriteImm) CHECK(c.log.received[k].imm == uint32_t(1000 + i));
    }
    CHECK(c.b.counters().messages_completed == static_cast<uint64_t>(messages));
    CHECK(c.b.counters().payload_bytes_delivered == int64_t{messages} * 3 * 4096);
    CHECK(c.b.counters().out_of_sequence > 0);
    retx[mode] = c.a.counters().retransmitted_packets;
  }
  // 120 packets, 17 swaps. Selective repeat NAKs each swap at once and, as
  // IRN does, resends the packet that looked lost: one spurious
  // retransmission per swap at most. Go-back-N resends a round trip's worth.
  CHECK(retx[1] <= 17);
  CHECK(retx[0] > retx[1]);
}
