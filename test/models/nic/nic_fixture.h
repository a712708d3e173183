// Micro networks for the NIC tests: two NICs on one cable (Pair), or two
// NICs through a Middlebox (Chain), a two-port node that forwards, records
// every packet, drops the ones a predicate picks, marks ECN CE on the ones
// another picks, and injects PFC frames.
#pragma once

#include <functional>
#include <utility>
#include <vector>

#include "models/flow_control/pfc.h"
#include "models/nic/rdma_nic.h"
#include "sim/cable.h"

namespace rdmasim::testing {

struct Log : CompletionHandler {
  std::vector<Completion> sent, received;
  void on_send_completion(uint32_t, const Completion& c) override { sent.push_back(c); }
  void on_receive_completion(uint32_t, const Completion& c) override { received.push_back(c); }
};

inline const RoceV2Format& ipv4_format() {
  static const RoceV2Format f{IpVersion::kIpv4, false};
  return f;
}

// Connects a QP pair between two NICs, both reporting their completions to
// `log`; returns {qpn on a, qpn on b}.
inline std::pair<uint32_t, uint32_t> connect_qps(RdmaNic& a, RdmaNic& b, uint32_t hash = 0x1234,
                                                 CompletionHandler* log = nullptr) {
  const uint32_t qa = a.create_qp(log);
  const uint32_t qb = b.create_qp(log);
  a.connect_qp(qa, b.host(), qb, hash);
  b.connect_qp(qb, a.host(), qa, hash);
  return {qa, qb};
}

// Two NICs joined by one cable, with a connected QP pair.
struct Pair {
  explicit Pair(NicConfig c = {}, BitRate r = BitRate::gbps(100), Time d = Time::us(1))
      : cfg(c),
        rate(r),
        delay(d),
        a(sim.add<RdmaNic>("a", 0, cfg, ipv4_format())),
        b(sim.add<RdmaNic>("b", 1, cfg, ipv4_format())),
        cable(connect(sim, a, b, rate, delay)) {
    std::tie(qa, qb) = connect_qps(a, b, 0x1234, &log);
  }
  Simulation sim;
  NicConfig cfg;
  BitRate rate;
  Time delay;
  Log log;
  RdmaNic& a;
  RdmaNic& b;
  Cable cable;
  uint32_t qa = 0, qb = 0;
};

// What the middlebox saw of one packet.
struct Seen {
  Time at;           // arrival (last bit) at the middlebox
  uint32_t in_port;  // 0: from a, 1: from b
  PacketKind kind;
  uint8_t opcode;
  uint32_t psn;
  uint8_t flags;
  uint32_t retransmissions;
  uint64_t aux;
  uint8_t syndrome;
  uint8_t priority, dscp, pcp, ecn;
  uint32_t payload;
  uint32_t wire_bytes;
  uint32_t read_length;
  Time created;
  bool dropped;
  uint32_t dst_qpn;
};

class Middlebox : public Node {
 public:
  Middlebox(Simulation& sim, std::string name)
      : Node(sim, std::move(name)), inject_(this, EventClass::kTraffic, id()) {}

  // Drops the packets for which this returns true (called once per packet).
  std::function<bool(const Packet&, uint32_t in_port)> drop;
  // Holds a packet for which this returns true until the next one in the
  // same direction has been forwarded: the two swap places.
  std::function<bool(const Packet&, uint32_t in_port)> hold;
  // Marks congestion experienced (ECN CE) on the ECN-capable packets for
  // which this returns true, as a switch's RED would.
  std::function<bool(const Packet&, uint32_t in_port)> mark;
  std::vector<Seen> seen;

  // Sends a PFC frame out of `port` at time `at`.
  void inject_pfc(uint32_t port, uint16_t class_enable, uint16_t quanta, Time at) {
    pending_.push_back({at, port, class_enable, quanta});
  }

  void setup() override {
    out_.resize(num_ports());
    pfc_.resize(num_ports());
    held_.resize(num_ports());
    if (!pending_.empty()) sim().schedule(inject_, pending_[0].at);
  }
  void receive(uint32_t port, PacketHandle p) override {
    if (mark && (p->ecn == 1 || p->ecn == 2) && mark(*p, port)) p->ecn = 3;
    const Packet& q = *p;
    const bool dropped = q.kind != PacketKind::kPfc && drop && drop(q, port);
    seen.push_back(Seen{sim().now(), port, q.kind, q.opcode, q.psn, q.flags, q.retransmissions,
                        q.aux, q.aeth_syndrome, q.priority, q.dscp, q.pcp, q.ecn, q.payload_bytes,
                        q.wire_bytes, q.read_length, q.created, dropped, q.dst_qpn});
    if (q.kind == PacketKind::kPfc || dropped) return;
    const uint32_t out = 1 - port;
    if (!held_[out] && hold && hold(q, port)) {
      held_[out] = std::move(p);
      return;
    }
    out_[out].push_back(std::move(p));
    if (held_[out]) out_[out].push_back(std::move(held_[out]));
    this->port(out).wake();
  }
  PacketHandle next_packet(uint32_t port) override {
    if (!pfc_[port].empty()) return pfc_[port].pop_front();
    if (!out_[port].empty()) return out_[port].pop_front();
    return {};
  }

 private:
  struct Injection {
    Time at;
    uint32_t port;
    uint16_t class_enable;
    uint16_t quanta;
  };
  void on_inject() {
    const Injection& i = pending_[next_++];
    pfc_[i.port].push_back(make_pfc_frame(sim(), i.class_enable, i.quanta));
    port(i.port).wake();
    if (next_ < pending_.size()) sim().schedule(inject_, pending_[next_].at);
  }
  std::vector<Ring<PacketHandle>> out_;
  std::vector<Ring<PacketHandle>> pfc_;
  std::vector<PacketHandle> held_;
  std::vector<Injection> pending_;
  size_t next_ = 0;
  MemberEvent<Middlebox, &Middlebox::on_inject> inject_;
};

// NIC a -- middlebox -- NIC b, with a connected QP pair.
struct Chain {
  explicit Chain(NicConfig c = {}, BitRate r = BitRate::gbps(100), Time d = Time::us(1))
      : cfg(c),
        rate(r),
        delay(d),
        a(sim.add<RdmaNic>("a", 0, cfg, ipv4_format())),
        m(sim.add<Middlebox>("m")),
        b(sim.add<RdmaNic>("b", 1, cfg, ipv4_format())),
        am(connect(sim, a, m, rate, delay)),
        mb(connect(sim, m, b, rate, delay)) {
    std::tie(qa, qb) = connect_qps(a, b, 0x1234, &log);
  }
  // Seen packets of one kind from one side.
  std::vector<Seen> from(uint32_t port, PacketKind kind) const {
    std::vector<Seen> out;
    for (const Seen& s : m.seen) {
      if (s.in_port == port && s.kind == kind) out.push_back(s);
    }
    return out;
  }
  Simulation sim;
  NicConfig cfg;
  BitRate rate;
  Time delay;
  Log log;
  RdmaNic& a;
  Middlebox& m;
  RdmaNic& b;
  Cable am;
  Cable mb;
  uint32_t qa = 0, qb = 0;
};

}  // namespace rdmasim::testing
