// The NIC's per-QP congestion-control slot (models/cc/congestion_control.h)
// and its CNP paths, with test-only algorithms: rates, windows and their
// interplay with a flow's own rate cap, checked to the picosecond against
// wire bytes / rate; CNPs on the wire (RoCE v2, IBA Annex A17.9.3) and their
// counters; ACK ECN echo and the ACK's extension area.
#include <algorithm>
#include <map>
#include <memory>
#include <vector>

#include "models/cc/congestion_control.h"
#include "models/switch/switch.h"
#include "test/models/nic/nic_fixture.h"
#include "test/support/catch_units.h"

using namespace rdmasim;
using namespace rdmasim::testing;

namespace {

constexpr uint32_t kMtu = 4096;
constexpr int64_t kData = 4096 + 82;  // a full data packet on the wire (IPv4, no VLAN)
constexpr int64_t kAck = 86;          // ACK: BTH + AETH
constexpr int64_t kCnp = 98;          // CNP: BTH + 16 reserved bytes

// The toy controller. As reaction point it halves its rate on every CNP and
// restores line rate 10 us after the last one (its timer); as notification
// point it sends a CNP for every ECN-marked packet it receives.
class Toy : public CongestionControl {
 public:
  void on_start(CcContext& ctx) override { rate_ = ctx.line_rate(); }
  void on_cnp(CcContext& ctx) override {
    rate_ = BitRate::bps(std::max<int64_t>(rate_.in_bps() / 2, 1'000'000));
    ctx.set_rate(rate_);
    ctx.schedule_timer(ctx.now() + Time::us(10));
    cnps.push_back(ctx.now());
  }
  void on_timer(CcContext& ctx) override {
    rate_ = ctx.line_rate();
    ctx.set_rate(rate_);
    restores.push_back(ctx.now());
  }
  void on_ecn_marked(CcContext& ctx, const CcMarked&) override { ctx.send_cnp(); }

  std::vector<Time> cnps, restores;

 private:
  BitRate rate_;
};

// Records what its QP is told; optional behaviour set by the test.
class Recorder : public CongestionControl {
 public:
  struct Sent {
    Time at;
    CcSent s;
  };
  struct Acked {
    Time at;
    CcAck a;
    bool has_ext;
    uint32_t ext_magic, ext_psn, ext_count;
  };
  // What the responder writes into an ACK's extension area.
  struct Info {
    uint32_t magic;
    uint32_t psn;
    uint32_t count;
  };

  Bytes window{0};    // set at start (0: none)
  BitRate rate;       // set at start (0: none)
  bool echo = false;  // answer a marked packet with an ECN echo
  int ext_every = 0;  // write the extension area of every n-th ACK (0: never)
  std::vector<std::pair<Time, BitRate>> rate_at;  // set_rate at these times
  std::vector<std::pair<Time, Bytes>> window_at;  // set_window at these times

  void on_start(CcContext& ctx) override {
    if (window.count() > 0) ctx.set_window(window);
    if (rate.in_bps() > 0) ctx.set_rate(rate);
    arm(ctx);
  }
  void on_packet_sent(CcContext& ctx, const CcSent& s) override { sent.push_back({ctx.now(), s}); }
  void on_ack(CcContext& ctx, const CcAck& a) override {
    Acked r{ctx.now(), a, a.ext != nullptr, 0, 0, 0};
    if (a.ext != nullptr) {
      const Info& i = a.ext->as<Info>();
      r.ext_magic = i.magic;
      r.ext_psn = i.psn;
      r.ext_count = i.count;
    }
    acks.push_back(r);
  }
  void on_ecn_marked(CcContext& ctx, const CcMarked& m) override {
    marked.push_back(m.psn);
    if (echo) ctx.echo_ecn();
  }
  void on_ack_out(CcContext&, CcAckOut& ack) override {
    ++acks_out;
    if (ext_every > 0 && acks_out % ext_every == 0) {
      ack.ext().as<Info>() = Info{0xC0FFEE, ack.psn(), static_cast<uint32_t>(acks_out)};
    }
  }
  void on_timer(CcContext& ctx) override {
    const Time now = ctx.now();
    for (const auto& [t, r] : rate_at) {
      if (t == now) ctx.set_rate(r);
    }
    for (const auto& [t, w] : window_at) {
      if (t == now) ctx.set_window(w);
    }
    arm(ctx);
  }

  std::vector<Sent> sent;
  std::vector<Acked> acks;
  std::vector<uint32_t> marked;
  int acks_out = 0;

 private:
  // One timer, multiplexed over the scheduled changes.
  void arm(CcContext& ctx) {
    Time next = Time::infinite();
    for (const auto& c : rate_at) {
      if (c.first > ctx.now()) next = std::min(next, c.first);
    }
    for (const auto& c : window_at) {
      if (c.first > ctx.now()) next = std::min(next, c.first);
    }
    if (!next.is_infinite()) ctx.schedule_timer(next);
  }
};

// Start times of one QP's back-to-back packets on an otherwise idle port,
// from the pacing rule alone: a packet starts when the port is free (the
// last start plus its wire time at line rate) and its pacing time has come
// (the last start plus its wire bytes at the pacing rate); a rate change at
// time t recomputes the pacing time from the last start, and the QP, due
// earlier, is pulled at t. A change at the very instant of a pull is seen by
// it (deliveries and timers run before transmit decisions, sim/event.h).
struct ExpectedPacer {
  BitRate line;
  BitRate rate;  // 0: line rate
  std::multimap<Time, BitRate> changes;
  Time last = Time::infinite();
  Bytes last_wire{0};

  Time per(Bytes b, BitRate r) const { return b / (r.in_bps() > 0 ? r : line); }
  Time next(Bytes wire, Time first) {
    if (last.is_infinite()) {
      while (!changes.empty() && changes.begin()->first <= first) {
        rate = changes.begin()->second;
        changes.erase(changes.begin());
      }
      last = first;
    } else {
      const Time port_free = last + per(last_wire, line);
      Time t = std::max(port_free, last + per(last_wire, rate));
      while (!changes.empty() && changes.begin()->first <= t) {
        const Time tc = changes.begin()->first;
        rate = changes.begin()->second;
        changes.erase(changes.begin());
        t = std::max({port_free, last + per(last_wire, rate), tc});
      }
      last = t;
    }
    last_wire = wire;
    return last;
  }
};

std::vector<Seen> data_from_a(const Chain& c) {
  std::vector<Seen> d = c.from(0, PacketKind::kData);
  return d;
}

}  // namespace

TEST_CASE("toy controller: rates halve on each CNP and line rate returns 10 us after the last",
          "[quick][cc][cnp]") {
  Chain c;  // a -- middlebox -- b, 100 Gb/s, 1 us per hop
  const std::vector<uint32_t> marked_psns = {5, 12, 62};
  c.m.mark = [&](const Packet& p, uint32_t port) {
    return port == 0 && p.kind == PacketKind::kData && p.retransmissions == 0 &&
           std::count(marked_psns.begin(), marked_psns.end(), p.psn) == 1;
  };
  auto rp = std::make_unique<Toy>();
  auto np = std::make_unique<Toy>();
  Toy& sender = *rp;
  Toy& receiver = *np;
  c.a.set_congestion_control(c.qa, std::move(rp));
  c.b.set_congestion_control(c.qb, std::move(np));
  const int n = 100;
  c.sim.setup();
  c.a.post(c.qa, WorkRequest{1, Verb::kSend, int64_t{n} * kMtu});
  c.sim.run();
  REQUIRE(c.log.sent.size() == 1);
  CHECK(c.log.sent[0].status == WcStatus::kSuccess);

  // Expected: a marked packet PSN m started at s_m reaches b at
  // s_m + 2 T + 2 d (store and forward at the middlebox), whose CNP, sent at
  // once on its own priority, reaches a 2 (T_cnp + d) later. The toy halves
  // then, and restores line rate 10 us after the last CNP.
  const BitRate R = c.rate;
  const Time T = Bytes(kData) / R;
  const Time Tc = Bytes(kCnp) / R;
  const Time d = c.delay;
  std::multimap<Time, bool> events;  // time -> is a CNP (else the restore)
  ExpectedPacer pacer{R, BitRate(), {}, Time::infinite(), Bytes(0)};
  BitRate toy = R;
  std::vector<Time> expected(n), cnp_at, restore_at;
  Time restore = Time::infinite();
  for (int k = 0; k < n; ++k) {
    // Turn the toy's events due by this packet's start into rate changes.
    for (;;) {
      const Time guess = k == 0 ? Time::zero() : [&] {
        ExpectedPacer probe = pacer;
        return probe.next(Bytes(kData), Time::zero());
      }();
      Time due = Time::infinite();
      bool is_cnp = false;
      if (!events.empty()) {
        due = events.begin()->first;
        is_cnp = true;
      }
      if (restore < due) {
        due = restore;
        is_cnp = false;
      }
      if (due > guess) break;
      if (is_cnp) {
        events.erase(events.begin());
        toy = BitRate::bps(toy.in_bps() / 2);
        restore = due + Time::us(10);
        cnp_at.push_back(due);
      } else {
        toy = R;
        restore = Time::infinite();
        restore_at.push_back(due);
      }
      pacer.changes.emplace(due, toy);
    }
    expected[k] = pacer.next(Bytes(kData), Time::zero());
    if (std::count(marked_psns.begin(), marked_psns.end(), static_cast<uint32_t>(k)) == 1) {
      events.emplace(expected[k] + T * 2 + d * 4 + Tc * 2, true);
    }
  }
  const auto data = data_from_a(c);
  REQUIRE(data.size() == static_cast<size_t>(n));
  for (int k = 0; k < n; ++k) {
    INFO("packet " << k);
    CHECK(data[k].created == expected[k]);
    CHECK(data[k].ecn == (k == 5 || k == 12 || k == 62 ? 3 : 2));
  }
  CHECK(sender.cnps == cnp_at);
  CHECK(sender.restores == restore_at);
  REQUIRE(cnp_at.size() == 3);
  REQUIRE(restore_at.size() == 2);
  // No event falls on a packet's start (the tie rule is not what is tested).
  for (Time t : cnp_at) CHECK(std::count(expected.begin(), expected.end(), t) == 0);

  // The spacing, phase by phase: T at line rate, 2 T after the first CNP,
  // 4 T after the second (which came before the restore), T after the
  // restore, 2 T after the third CNP, T after its restore.
  auto gaps_between = [&](Time from, Time to) {
    std::vector<Time> g;
    for (int k = 1; k < n; ++k) {
      if (data[k - 1].created >= from && data[k].created < to)
        g.push_back(data[k].created - data[k - 1].created);
    }
    return g;
  };
  const auto all = [](const std::vector<Time>& g, Time v) {
    return !g.empty() && std::all_of(g.begin(), g.end(), [v](Time x) { return x == v; });
  };
  CHECK(all(gaps_between(Time::zero(), cnp_at[0]), T));
  // The packet after a halving starts one packet time at the new rate after
  // the one before it (the rate change recomputes the pending send time).
  const auto after = [&](Time t) {
    int k = 0;
    while (data[k].created < t) ++k;
    return k;
  };
  const int k1 = after(cnp_at[0]), k2 = after(cnp_at[1]), k3 = after(restore_at[0]);
  const int k4 = after(cnp_at[2]), k5 = after(restore_at[1]);
  CHECK(data[k1].created - data[k1 - 1].created == Bytes(kData) / BitRate::gbps(50));
  CHECK(all(gaps_between(data[k1 - 1].created, cnp_at[1]), Bytes(kData) / BitRate::gbps(50)));
  CHECK(data[k2].created - data[k2 - 1].created == Bytes(kData) / BitRate::gbps(25));
  CHECK(all(gaps_between(data[k2 - 1].created, restore_at[0]), Bytes(kData) / BitRate::gbps(25)));
  CHECK(restore_at[0] == cnp_at[1] + Time::us(10));
  CHECK(data[k3].created == restore_at[0]);  // due long before: sent at once
  CHECK(all(gaps_between(data[k3].created, cnp_at[2]), T));
  CHECK(data[k4].created - data[k4 - 1].created == Bytes(kData) / BitRate::gbps(50));
  CHECK(all(gaps_between(data[k4 - 1].created, restore_at[1]), Bytes(kData) / BitRate::gbps(50)));
  CHECK(data[k5].created == restore_at[1]);
  CHECK(all(gaps_between(data[k5].created, Time::infinite()), T));

  // CNPs: one per marked packet, from b's QP to a's, on the CNP priority.
  CHECK(c.b.counters().ecn_marked_received == 3);
  CHECK(c.b.counters().cnps_sent == 3);
  CHECK(c.a.counters().cnps_received == 3);
  CHECK(c.a.counters().cnps_sent == 0);
  CHECK(c.b.counters().cnps_received == 0);
  CHECK(c.a.counters().ecn_marked_received == 0);
  CHECK(receiver.cnps.empty());
  const auto cnps = c.from(1, PacketKind::kCnp);
  REQUIRE(cnps.size() == 3);
  for (size_t i = 0; i < cnps.size(); ++i) {
    CHECK(cnps[i].opcode == static_cast<uint8_t>(RcOpcode::kCnp));
    CHECK(cnps[i].wire_bytes == kCnp);
    CHECK(cnps[i].dst_qpn == c.qa);  // BTH DestQP: the QP whose packets were marked
    CHECK(cnps[i].priority == c.cfg.cnp_priority);
    CHECK(cnps[i].dscp == c.cfg.cnp_dscp);
    CHECK(cnps[i].ecn == 0);  // not ECN-capable
    CHECK(cnps[i].at == cnp_at[i] - Tc - d);
  }
}

TEST_CASE("without an algorithm a marked packet is counted and nothing is sent",
          "[quick][cc][cnp]") {
  Chain c;
  c.m.mark = [](const Packet& p, uint32_t port) {
    return port == 0 && p.kind == PacketKind::kData;
  };
  c.sim.setup();
  c.a.post(c.qa, WorkRequest{1, Verb::kWrite, 10 * kMtu});
  c.sim.run();
  REQUIRE(c.log.sent.size() == 1);
  CHECK(c.b.counters().ecn_marked_received == 10);
  CHECK(c.b.counters().cnps_sent == 0);
  CHECK(c.b.counters().ecn_echo_acks_sent == 0);
  CHECK(c.from(1, PacketKind::kCnp).empty());
  // Timing as unmarked: 10 packets (RETH on the first) then the last ACK.
  const Time wire = Bytes(10 * kData + 16) / c.rate;
  const Time store_forward = Bytes(kData + 16) / c.rate;  // the largest packet's, the first
  CHECK(c.log.sent[0].completed ==
        wire + store_forward + c.delay * 2 + (Bytes(kAck) / c.rate) * 2 + c.delay * 2);
}

TEST_CASE("marked READ responses are seen at the requester; its CNP slows the responder",
          "[quick][cc][cnp]") {
  Chain c;
  c.m.mark = [](const Packet& p, uint32_t port) {
    return port == 1 && p.kind == PacketKind::kData && p.psn == 3;
  };
  c.a.set_congestion_control(c.qa, std::make_unique<Toy>());
  c.b.set_congestion_control(c.qb, std::make_unique<Toy>());
  c.sim.setup();
  c.a.post(c.qa, WorkRequest{1, Verb::kRead, 40 * kMtu});
  c.sim.run();
  REQUIRE(c.log.sent.size() == 1);
  CHECK(c.a.counters().ecn_marked_received == 1);
  CHECK(c.a.counters().cnps_sent == 1);
  CHECK(c.b.counters().cnps_received == 1);
  const auto cnps = c.from(0, PacketKind::kCnp);
  REQUIRE(cnps.size() == 1);
  CHECK(cnps[0].dst_qpn == c.qb);
  // The responses after the CNP's arrival at b, until the toy's restore
  // 10 us later, are paced at 50 Gb/s: each starts the wire bytes of the one
  // before at 50 Gb/s after it (the first included: the CNP recomputes the
  // pending send time).
  const auto resp = c.from(1, PacketKind::kData);
  REQUIRE(resp.size() == 40);
  const Time cnp_at_b = cnps[0].at + Bytes(kCnp) / c.rate + c.delay;
  int k = 0;
  while (resp[k].created < cnp_at_b) ++k;
  REQUIRE(k > 0);
  int paced = 0;
  for (int j = k; j < 40 && resp[j].created < cnp_at_b + Time::us(10); ++j, ++paced) {
    CHECK(resp[j].created - resp[j - 1].created ==
          Bytes(resp[j - 1].wire_bytes) / BitRate::gbps(50));
  }
  CHECK(paced >= 10);
}

TEST_CASE("a CNP waits behind a PFC pause of its priority, like an ACK", "[quick][cc][cnp][pfc]") {
  Chain c;
  c.m.mark = [](const Packet& p, uint32_t port) {
    return port == 0 && p.kind == PacketKind::kData && p.psn == 0;
  };
  c.b.set_congestion_control(c.qb, std::make_unique<Toy>());
  // Pause b's CNP priority (6) for 1000 quanta, from before the marked packet
  // arrives; ACKs (priority 3) go on.
  const uint16_t quanta = 1000;
  c.m.inject_pfc(1, uint16_t{1} << c.cfg.cnp_priority, quanta, Time::zero());
  c.sim.setup();
  c.a.post(c.qa, WorkRequest{1, Verb::kSend, 20 * kMtu});
  c.sim.run();
  const Time pause_start = Bytes(84) / c.rate + c.delay;  // PFC frame: 84 bytes on the wire
  const Time pause_end = pause_start + Bytes(quanta * 64) / c.rate;  // quanta x 512 bit times
  const Time marked_at_b = (Bytes(kData) / c.rate) * 2 + c.delay * 2;
  REQUIRE(marked_at_b > pause_start);
  REQUIRE(marked_at_b < pause_end);
  const auto cnps = c.from(1, PacketKind::kCnp);
  REQUIRE(cnps.size() == 1);
  CHECK(cnps[0].at == pause_end + Bytes(kCnp) / c.rate + c.delay);
  // ACKs were not held: the first arrives one ACK time and one delay after
  // the first data packet reached b.
  const auto acks = c.from(1, PacketKind::kAck);
  REQUIRE(!acks.empty());
  CHECK(acks[0].at == marked_at_b + Bytes(kAck) / c.rate + c.delay);
}

TEST_CASE("a window of W bytes keeps ceil(W / MTU) packets in flight", "[quick][cc][window]") {
  Pair p;                            // one hop, 100 Gb/s, 1 us
  const Bytes window(kMtu * 5 / 2);  // 2.5 MTUs: 3 packets
  const Time lift = Time::us(23) + Time::ps(77);
  auto rec = std::make_unique<Recorder>();
  Recorder& r = *rec;
  r.window = window;
  r.window_at = {{lift, Bytes(0)}};  // lifted by the algorithm's timer
  p.a.set_congestion_control(p.qa, std::move(rec));
  const int n = 60;
  const int64_t bytes = int64_t{n} * kMtu - 1000;  // the last packet 3096 bytes
  p.sim.setup();
  p.a.post(p.qa, WorkRequest{1, Verb::kSend, bytes});
  p.sim.run();
  REQUIRE(p.log.sent.size() == 1);
  REQUIRE(r.sent.size() == static_cast<size_t>(n));
  REQUIRE(r.acks.size() == static_cast<size_t>(n));

  // One hop: packet k (wire w_k) starting at s_k is acknowledged at
  // A_k = s_k + w_k / R + d + ACK / R + d. With 3 packets in flight packet
  // k may start when the port is free and, until the window is lifted, when
  // the ACK of k - 3 has arrived.
  const BitRate R = p.rate;
  const Time d = p.delay;
  const auto wire = [&](int k) { return k == n - 1 ? Bytes(3096 + 82) : Bytes(kData); };
  std::vector<Time> s(n), A(n);
  for (int k = 0; k < n; ++k) {
    s[k] = k == 0 ? Time::zero() : s[k - 1] + wire(k - 1) / R;
    if (k >= 3) s[k] = std::max(s[k], std::min(A[k - 3], lift));
    A[k] = s[k] + wire(k) / R + d + Bytes(kAck) / R + d;
  }
  for (int k = 0; k < n; ++k) {
    INFO("packet " << k);
    CHECK(r.sent[k].at == s[k]);
    CHECK(r.sent[k].s.psn == static_cast<uint32_t>(k));
    CHECK(r.sent[k].s.wire_bytes == wire(k).count());
    CHECK(r.acks[k].at == A[k]);
    CHECK(r.acks[k].a.acked_packets == 1);
    CHECK(r.acks[k].a.acked_bytes == (k == n - 1 ? 3096 : int64_t{kMtu}));
    if (r.acks[k].at < lift) CHECK(r.acks[k].a.in_flight <= Bytes(3 * kMtu));
  }
  // The window held: packet 3 waited for the first ACK, the port idled.
  CHECK(s[3] == A[0]);
  CHECK(s[3] > s[2] + Bytes(kData) / R);
  // After the lift, back to back.
  int k = 0;
  while (s[k] < lift) ++k;
  CHECK(s[k] == lift);
  for (int j = k + 1; j < n; ++j) CHECK(s[j] - s[j - 1] == wire(j - 1) / R);
  // RTT samples (one packet timed at a time, none retransmitted): each is
  // exactly the one-hop round trip.
  int samples = 0;
  for (int j = 0; j < n; ++j) {
    if (!r.acks[j].a.rtt) continue;
    ++samples;
    CHECK(*r.acks[j].a.rtt == wire(j) / R + d + Bytes(kAck) / R + d);
  }
  CHECK(samples >= 3);
}

TEST_CASE("flow rate cap and algorithm rate: the lower paces, exactly", "[quick][cc][rate]") {
  Pair p;
  const BitRate cap = BitRate::gbps(40);
  auto rec = std::make_unique<Recorder>();
  Recorder& r = *rec;
  // The algorithm: 25 Gb/s from the start, 60 at t1, none at t2, 10 at t3;
  // the flow's cap is 40 Gb/s, then 5 Gb/s from t4 (set by the application).
  const Time t1 = Time::us(5) + Time::ps(1), t2 = Time::us(10) + Time::ps(3);
  const Time t3 = Time::us(15) + Time::ps(7), t4 = Time::us(30) + Time::ps(11);
  r.rate = BitRate::gbps(25);
  r.rate_at = {{t1, BitRate::gbps(60)}, {t2, BitRate()}, {t3, BitRate::gbps(10)}};
  p.a.set_qp_rate(p.qa, cap);
  p.a.set_congestion_control(p.qa, std::move(rec));
  const int n = 40;
  p.sim.setup();
  p.a.post(p.qa, WorkRequest{1, Verb::kSend, int64_t{n} * kMtu});
  p.sim.run(t4);
  p.a.set_qp_rate(p.qa, BitRate::gbps(5));
  p.sim.run();
  REQUIRE(r.sent.size() == static_cast<size_t>(n));

  ExpectedPacer pacer{p.rate, BitRate::gbps(25), {}, Time::infinite(), Bytes(0)};
  pacer.changes = {{t1, cap}, {t2, cap}, {t3, BitRate::gbps(10)}, {t4, BitRate::gbps(5)}};
  std::vector<Time> expected(n);
  for (int k = 0; k < n; ++k) expected[k] = pacer.next(Bytes(kData), Time::zero());
  for (int k = 0; k < n; ++k) {
    INFO("packet " << k);
    CHECK(r.sent[k].at == expected[k]);
  }
  // Phase by phase, the gaps are wire bytes at the lower rate.
  const auto gaps = [&](Time from, Time to) {
    std::vector<Time> g;
    for (int k = 1; k < n; ++k) {
      if (r.sent[k - 1].at >= from && r.sent[k].at < to)
        g.push_back(r.sent[k].at - r.sent[k - 1].at);
    }
    return g;
  };
  const auto all = [](const std::vector<Time>& g, Time v) {
    return !g.empty() && std::all_of(g.begin(), g.end(), [v](Time x) { return x == v; });
  };
  const Bytes w(kData);
  CHECK(all(gaps(Time::zero(), t1), w / BitRate::gbps(25)));  // algorithm below the cap
  CHECK(all(gaps(t1 + w / BitRate::gbps(25), t3), w / cap));  // cap below the algorithm, or alone
  CHECK(all(gaps(t3 + w / cap, t4), w / BitRate::gbps(10)));  // algorithm again
  CHECK(all(gaps(t4 + w / BitRate::gbps(10), Time::infinite()), w / BitRate::gbps(5)));  // cap
  // A rise lets the waiting QP go at once (t1: its pacing time at 40 Gb/s
  // had passed); the falls find no packet starting at their instant.
  CHECK(std::count(expected.begin(), expected.end(), t1) == 1);
  for (Time t : {t3, t4}) CHECK(std::count(expected.begin(), expected.end(), t) == 0);
}

TEST_CASE("a QP activating while the port waits for a paced QP's slot goes at once",
          "[quick][cc][rate]") {
  // The port of a NIC whose only active QP is paced is pulled at that QP's
  // next slot, not at the end of each frame (Node::next_pull): a second QP
  // posted meanwhile must still start as soon as the port is free, and the
  // paced QP keep its slots.
  Pair p;
  const auto [qa2, qb2] = connect_qps(p.a, p.b, 0x5678, &p.log);
  (void)qb2;
  auto rec1 = std::make_unique<Recorder>();
  auto rec2 = std::make_unique<Recorder>();
  Recorder& r1 = *rec1;
  Recorder& r2 = *rec2;
  p.a.set_congestion_control(p.qa, std::move(rec1));
  p.a.set_congestion_control(qa2, std::move(rec2));
  p.a.set_qp_rate(p.qa, BitRate::gbps(10));
  const int n = 6;
  p.sim.setup();
  p.a.post(p.qa, WorkRequest{1, Verb::kSend, int64_t{n} * kMtu});
  // Between two of QP 1's slots (every 4178 B at 10 Gb/s = 3.3424 us), with
  // the port idle since 0.33424 us after the last start.
  const Time t = Time::us(5) + Time::ps(7);
  p.sim.run(t);
  p.a.post(qa2, WorkRequest{2, Verb::kSend, kMtu});
  p.sim.run();
  REQUIRE(r1.sent.size() == static_cast<size_t>(n));
  REQUIRE(r2.sent.size() == 1);
  CHECK(r2.sent[0].at == t);
  const Time gap = Bytes(kData) / BitRate::gbps(10);
  for (int k = 0; k < n; ++k) {
    INFO("packet " << k);
    CHECK(r1.sent[k].at == gap * k);
  }
}

TEST_CASE("an algorithm answering marks with ECN echo: the next ACK carries it",
          "[quick][cc][echo]") {
  NicConfig cfg;
  cfg.ack_interval = 4;  // ACKs after PSNs 3, 7 and the last, 9
  Chain c(cfg);
  c.m.mark = [](const Packet& p, uint32_t port) {
    return port == 0 && p.kind == PacketKind::kData && (p.psn == 1 || p.psn == 5);
  };
  auto req = std::make_unique<Recorder>();
  auto resp = std::make_unique<Recorder>();
  Recorder& requester = *req;
  Recorder& responder = *resp;
  resp->echo = true;
  c.a.set_congestion_control(c.qa, std::move(req));
  c.b.set_congestion_control(c.qb, std::move(resp));
  c.sim.setup();
  c.a.post(c.qa, WorkRequest{1, Verb::kWrite, 10 * kMtu});
  c.sim.run();
  REQUIRE(c.log.sent.size() == 1);
  CHECK(responder.marked == std::vector<uint32_t>{1, 5});
  const auto acks = c.from(1, PacketKind::kAck);
  REQUIRE(acks.size() == 3);
  CHECK(acks[0].psn == 3);
  CHECK(acks[1].psn == 7);
  CHECK(acks[2].psn == 9);
  CHECK((acks[0].flags & kFlagEcnEcho) != 0);
  CHECK((acks[1].flags & kFlagEcnEcho) != 0);
  CHECK((acks[2].flags & kFlagEcnEcho) == 0);
  REQUIRE(requester.acks.size() == 3);
  CHECK(requester.acks[0].a.ecn_echo);
  CHECK(requester.acks[1].a.ecn_echo);
  CHECK(!requester.acks[2].a.ecn_echo);
  CHECK(requester.acks[0].a.acked_packets == 4);
  CHECK(requester.acks[2].a.acked_packets == 2);
  CHECK(c.b.counters().ecn_echo_acks_sent == 2);
  CHECK(c.a.counters().ecn_echo_acks_received == 2);
  CHECK(c.b.counters().cnps_sent == 0);
  CHECK(c.b.counters().ecn_marked_received == 2);
}

TEST_CASE("the responder's algorithm writes an ACK's extension area; the requester's reads it",
          "[quick][cc][ext]") {
  Chain c;
  auto req = std::make_unique<Recorder>();
  auto resp = std::make_unique<Recorder>();
  Recorder& requester = *req;
  resp->ext_every = 2;  // every second ACK
  c.a.set_congestion_control(c.qa, std::move(req));
  c.b.set_congestion_control(c.qb, std::move(resp));
  c.sim.setup();
  c.a.post(c.qa, WorkRequest{1, Verb::kSend, 12 * kMtu});
  c.sim.run();
  REQUIRE(requester.acks.size() == 12);
  for (size_t i = 0; i < 12; ++i) {
    INFO("ACK " << i);
    const bool written = (i + 1) % 2 == 0;
    CHECK(requester.acks[i].has_ext == written);
    if (!written) continue;
    CHECK(requester.acks[i].ext_magic == 0xC0FFEE);
    CHECK(requester.acks[i].ext_psn == requester.acks[i].a.psn);
    CHECK(requester.acks[i].ext_count == i + 1);
  }
}

TEST_CASE("ECN marks at a switch reach the toy controllers: every count agrees",
          "[quick][cc][cnp][switch]") {
  // Two senders into one receiver through a switch that marks every data
  // packet that finds its egress queue non-empty (kmin = kmax = 0).
  Simulation sim;
  SwitchConfig sc;
  sc.ecn.enabled = true;
  sc.ecn.kmin = Bytes(0);
  sc.ecn.kmax = Bytes(0);
  NicConfig nc;
  Log log;
  Switch& sw = sim.add<Switch>("sw", sc);
  std::vector<RdmaNic*> nics;
  std::vector<std::vector<uint32_t>> routes;
  for (uint32_t i = 0; i < 3; ++i) {
    nics.push_back(&sim.add<RdmaNic>("h" + std::to_string(i), i, nc, ipv4_format()));
    const Cable cab = connect(sim, *nics.back(), sw, BitRate::gbps(100), Time::us(1));
    routes.push_back({cab.b_port});
  }
  sw.set_forwarding_table(ForwardingTable::from_static(routes));
  std::vector<std::pair<uint32_t, uint32_t>> qps;
  for (uint32_t s = 0; s < 2; ++s) {
    qps.push_back(connect_qps(*nics[s], *nics[2], 0x100 + s, &log));
    nics[s]->set_congestion_control(qps[s].first, std::make_unique<Toy>());
    nics[2]->set_congestion_control(qps[s].second, std::make_unique<Toy>());
  }
  sim.setup();
  for (uint32_t s = 0; s < 2; ++s)
    nics[s]->post(qps[s].first, WorkRequest{s, Verb::kWrite, 1 << 20});
  sim.run();
  REQUIRE(log.sent.size() == 2);
  const uint64_t marked = sw.counters().ecn_marked;
  CHECK(marked > 0);
  CHECK(nics[2]->counters().ecn_marked_received == marked);
  CHECK(nics[2]->counters().cnps_sent == marked);
  CHECK(nics[0]->counters().cnps_received + nics[1]->counters().cnps_received == marked);
  CHECK(nics[0]->counters().cnps_received > 0);
  CHECK(nics[1]->counters().cnps_received > 0);
}

TEST_CASE("emptying or refilling the slot drops the old algorithm's rate and timer",
          "[quick][cc][rate]") {
  Chain p;  // the middlebox sees every start
  struct Counting : Recorder {
    int* timers;
    explicit Counting(int* t) : timers(t) {}
    void on_timer(CcContext& ctx) override {
      ++*timers;
      Recorder::on_timer(ctx);
    }
  };
  int old_timers = 0, new_timers = 0;
  auto first = std::make_unique<Counting>(&old_timers);
  first->rate = BitRate::gbps(10);
  first->rate_at = {{Time::us(40), BitRate::gbps(1)}};  // pending when it is dropped
  p.a.set_congestion_control(p.qa, std::move(first));
  const int n = 60;
  p.sim.setup();
  p.a.post(p.qa, WorkRequest{1, Verb::kSend, int64_t{n} * kMtu});
  const Time t1 = Time::us(10) + Time::ps(5), t2 = Time::us(11) + Time::ps(9);
  p.sim.run(t1);
  CHECK(p.a.congestion_control(p.qa) != nullptr);
  p.a.set_congestion_control(p.qa, nullptr);  // back to line rate at once
  CHECK(p.a.congestion_control(p.qa) == nullptr);
  p.sim.run(t2);
  auto second = std::make_unique<Counting>(&new_timers);
  second->rate = BitRate::gbps(50);
  Counting& s = *second;
  p.a.set_congestion_control(p.qa, std::move(second));
  p.sim.run();
  REQUIRE(p.log.sent.size() == 1);
  CHECK(old_timers == 0);
  CHECK(new_timers == 0);

  ExpectedPacer pacer{p.rate, BitRate::gbps(10), {}, Time::infinite(), Bytes(0)};
  pacer.changes = {{t1, BitRate()}, {t2, BitRate::gbps(50)}};
  std::vector<Time> expected(n);
  for (int k = 0; k < n; ++k) expected[k] = pacer.next(Bytes(kData), Time::zero());
  // The second algorithm saw the packets from its attachment on.
  const size_t before = static_cast<size_t>(
      std::count_if(expected.begin(), expected.end(), [&](Time t) { return t < t2; }));
  REQUIRE(s.sent.size() == n - before);
  for (size_t k = 0; k < s.sent.size(); ++k) CHECK(s.sent[k].at == expected[before + k]);
  const auto data = p.from(0, PacketKind::kData);
  REQUIRE(data.size() == static_cast<size_t>(n));
  for (int k = 0; k < n; ++k) CHECK(data[k].created == expected[k]);
  CHECK(std::count(expected.begin(), expected.end(), t1) == 1);  // due long before: sent at once
  CHECK(expected[before] - expected[before - 1] == Bytes(kData) / BitRate::gbps(50));
  CHECK(expected[before + 1] - expected[before] == Bytes(kData) / BitRate::gbps(50));
}
