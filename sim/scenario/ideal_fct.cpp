#include "sim/scenario/ideal_fct.h"

#include <algorithm>
#include <cassert>
#include <limits>

#include "models/nic/queue_pair.h"

namespace rdmasim {
namespace {

using i128 = __int128;
constexpr int64_t kPsPerSecond = 1'000'000'000'000;
constexpr int64_t kNever = std::numeric_limits<int64_t>::min() / 4;

// Serialisation of the first frames of a link, `bytes` in all, as its
// Serializer gives them (each rounded down, the remainder carried): the sum
// is the exact total rounded down.
int64_t serialised(int64_t bytes, BitRate r) {
  return static_cast<int64_t>(static_cast<i128>(bytes) * 8 * kPsPerSecond / r.in_bps());
}
// The rounding carry after `bytes` (bit-picoseconds, below the rate).
int64_t carry(int64_t bytes, BitRate r) {
  return static_cast<int64_t>(static_cast<i128>(bytes) * 8 * kPsPerSecond % r.in_bps());
}

}  // namespace

// ---- PacketStream ----

void PacketStream::append(uint32_t wire_bytes, uint64_t count) {
  if (count == 0) return;
  if (!runs_.empty() && runs_.back().wire == wire_bytes) {
    runs_.back().count += count;
  } else {
    bytes_before_.push_back(bytes_through(total_));
    runs_.push_back(Run{wire_bytes, total_ + 1, count});
  }
  total_ += count;
}

uint32_t PacketStream::wire(uint64_t k) const {
  auto it = std::upper_bound(runs_.begin(), runs_.end(), k,
                             [](uint64_t v, const Run& r) { return v < r.first; });
  assert(it != runs_.begin());
  return std::prev(it)->wire;
}

int64_t PacketStream::bytes_through(uint64_t k) const {
  if (k == 0 || runs_.empty()) return 0;
  auto it = std::upper_bound(runs_.begin(), runs_.end(), k,
                             [](uint64_t v, const Run& r) { return v < r.first; });
  const size_t i = static_cast<size_t>(std::prev(it) - runs_.begin());
  const Run& r = runs_[i];
  return bytes_before_[i] + static_cast<int64_t>(std::min(k, r.first + r.count - 1) - r.first + 1) *
                                static_cast<int64_t>(r.wire);
}

// ---- the closed form ----

namespace {

// When the source starts packet k (the first at 0).
class Source {
 public:
  Source(const PacketStream& s, BitRate line, const Pacing& p) : s_(s), line_(line), p_(p) {}

  int64_t start(uint64_t k) const {
    const int64_t line = serialised(s_.bytes_through(k - 1), line_);
    if (p_.rate.in_bps() <= 0) return line;
    if (p_.qps <= 1) return paced_one(k);
    // Several QPs, each paced: round r (0-based) may start when the first
    // QP's pacing lets it, and its packets follow back to back.
    const uint64_t q = p_.qps;
    const uint64_t round = (k - 1) / q;
    const uint64_t first = round * q + 1;
    int64_t due = 0;
    for (const PacketStream::Run& r : s_.runs()) {
      // Round starts (positions = 1 mod q) of earlier rounds within this run.
      const uint64_t lo = r.first;
      const uint64_t hi = std::min(r.first + r.count - 1, first - 1);
      if (hi < lo) continue;
      const uint64_t starts = (hi - 1) / q - (lo + q - 2) / q + 1;
      due += static_cast<int64_t>(starts) * (Bytes(r.wire) / p_.rate).in_ps();
    }
    return std::max(line, due + line - serialised(s_.bytes_through(first - 1), line_));
  }

 private:
  // One QP: packet j+1 starts max(serialisation of j, wire of j / rate)
  // after packet j; per run of equal packets one or the other always wins.
  int64_t paced_one(uint64_t k) const {
    int64_t t = 0;
    for (const PacketStream::Run& r : s_.runs()) {
      if (r.first >= k) break;
      const uint64_t last = std::min(r.first + r.count - 1, k - 1);
      const int64_t gap = (Bytes(r.wire) / p_.rate).in_ps();
      const int64_t floor_ser = serialised(r.wire, line_);
      if (gap > floor_ser) {
        t += gap * static_cast<int64_t>(last - r.first + 1);
      } else {
        t += serialised(s_.bytes_through(last), line_) -
             serialised(s_.bytes_through(r.first - 1), line_);
      }
    }
    return t;
  }

  const PacketStream& s_;
  BitRate line_;
  Pacing p_;
};

void add(std::vector<uint64_t>& k, uint64_t v, uint64_t n) {
  if (v >= 1 && v <= n) k.push_back(v);
}

// Packets whose serialisation at rate r rounds up, first and last of each
// run's interior: where the rounding can decide the maximum.
void rounding_candidates(const PacketStream& s, BitRate r, std::vector<uint64_t>& k) {
  const uint64_t n = s.size();
  for (const PacketStream::Run& run : s.runs()) {
    if (run.count < 3) continue;
    const uint64_t k0 = run.first + 1;
    const uint64_t k1 = run.first + run.count - 2;
    const int64_t rate = r.in_bps();
    const auto rho = static_cast<int64_t>(static_cast<i128>(run.wire) * 8 * kPsPerSecond % rate);
    if (rho == 0) continue;
    // Packet k rounds up iff the carry before it plus rho reaches the rate;
    // the carry grows by rho per packet until it does.
    const int64_t c0 = carry(s.bytes_through(k0 - 1), r);
    const uint64_t up = k0 + static_cast<uint64_t>((rate - c0 + rho - 1) / rho - 1);
    if (up <= k1) {
      add(k, up - 1, n);
      add(k, up, n);
      add(k, up + 1, n);
    }
    // Packet k rounded up iff the carry after it is below rho.
    const int64_t c1 = carry(s.bytes_through(k1), r);
    const uint64_t back = static_cast<uint64_t>(c1 / rho);
    if (back <= k1 - k0) {
      add(k, k1 - back - 1, n);
      add(k, k1 - back, n);
      add(k, k1 - back + 1, n);
    }
  }
}

}  // namespace

std::vector<Time> stream_arrivals(std::span<const PathHop> path, const SwitchTiming& sw,
                                  const PacketStream& stream, const Pacing& pacing,
                                  std::span<const uint64_t> want,
                                  std::span<const uint64_t> extra_candidates) {
  const uint64_t n = stream.size();
  const size_t hops = path.size();
  assert(n > 0 && hops > 0);
  // Candidate packets at which the max-plus path may change hop: the ends of
  // every run of equal packets and their neighbours, and where rounding
  // decides (docs/scenario.md).
  std::vector<uint64_t> ks(want.begin(), want.end());
  ks.insert(ks.end(), extra_candidates.begin(), extra_candidates.end());
  for (const PacketStream::Run& r : stream.runs()) {
    const uint64_t e = r.first + r.count - 1;
    for (uint64_t v : {r.first, r.first + 1, e - 1, e}) add(ks, v, n);
  }
  for (size_t h = 0; h < hops; ++h) {
    bool seen = false;
    for (size_t g = 0; g < h; ++g) seen = seen || path[g].rate == path[h].rate;
    if (!seen) rounding_candidates(stream, path[h].rate, ks);
  }
  std::sort(ks.begin(), ks.end());
  ks.erase(std::unique(ks.begin(), ks.end()), ks.end());

  const size_t m = ks.size();
  std::vector<int64_t> start(m), end(m), next_start(m), next_end(m);
  // T(h, k): serialisation of packets 1..k on hop h.
  auto ser_through = [&](size_t h, uint64_t k) {
    return serialised(stream.bytes_through(k), path[h].rate);
  };
  const Source source(stream, path[0].rate, pacing);
  for (size_t i = 0; i < m; ++i) {
    start[i] = source.start(ks[i]);
    end[i] = start[i] + ser_through(0, ks[i]) - ser_through(0, ks[i] - 1);
  }
  for (size_t h = 1; h < hops; ++h) {
    const PathHop& in = path[h - 1];
    const int64_t gap = in.delay.in_ps() + sw.latency.in_ps();
    // Longest path into (k, h): it joins hop h at some candidate j <= k,
    // either at j's start (from upstream) or, cut-through, at j's end (a
    // frame cannot finish leaving before it has finished arriving), then
    // serialises j..k back to back.
    int64_t best_start = kNever;  // max over j of (join at start(j)) - T(h, j-1)
    int64_t best_end = kNever;    // max over j of (join at end(j)) - T(h, j)
    for (size_t i = 0; i < m; ++i) {
      const uint64_t k = ks[i];
      const int64_t before = ser_through(h, k - 1);
      const int64_t through = ser_through(h, k);
      int64_t join_start;
      if (sw.cut_through) {
        const uint32_t w = stream.wire(k);
        const Time head = Bytes(std::min<int64_t>(sw.cut_through_bytes.count(), w)) / in.rate;
        join_start = start[i] + head.in_ps() + gap;
      } else {
        join_start = end[i] + gap;
      }
      best_start = std::max(best_start, join_start - before);
      next_start[i] = before + std::max(best_start, best_end);
      if (sw.cut_through) best_end = std::max(best_end, end[i] + in.delay.in_ps() - through);
      next_end[i] = through + std::max(best_start, best_end);
    }
    start.swap(next_start);
    end.swap(next_end);
  }
  std::vector<Time> out;
  out.reserve(want.size());
  for (uint64_t k : want) {
    const size_t i = static_cast<size_t>(std::lower_bound(ks.begin(), ks.end(), k) - ks.begin());
    out.push_back(Time::ps(end[i] + path[hops - 1].delay.in_ps()));
  }
  return out;
}

std::vector<Time> short_arrivals(std::span<const PathHop> path, const SwitchTiming& sw,
                                 std::span<const ShortFrame> frames) {
  const size_t hops = path.size();
  std::vector<int64_t> busy(hops, kNever);  // when each hop's previous frame ended
  std::vector<Time> out;
  for (const ShortFrame& f : frames) {
    int64_t ready = f.release.in_ps();
    int64_t upstream_end = kNever;
    for (size_t h = 0; h < hops; ++h) {
      const BitRate r = path[h].rate;
      const int64_t x = static_cast<int64_t>(f.wire);
      const int64_t ser = serialised(x * static_cast<int64_t>(f.ordinal), r) -
                          serialised(x * static_cast<int64_t>(f.ordinal - 1), r);
      const int64_t s = std::max(ready, busy[h]);
      int64_t e = s + ser;
      if (h > 0 && sw.cut_through) e = std::max(e, upstream_end + path[h - 1].delay.in_ps());
      busy[h] = e;
      upstream_end = e;
      if (h + 1 < hops) {
        const int64_t gap = path[h].delay.in_ps() + sw.latency.in_ps();
        if (sw.cut_through) {
          const Time head = Bytes(std::min<int64_t>(sw.cut_through_bytes.count(), f.wire)) / r;
          ready = s + head.in_ps() + gap;
        } else {
          ready = e + gap;
        }
      }
    }
    out.push_back(Time::ps(upstream_end + path[hops - 1].delay.in_ps()));
  }
  return out;
}

// ---- a scenario's flows ----

namespace {

SwitchTiming timing_of(const SwitchConfig& sw) {
  SwitchTiming t;
  t.latency = sw.latency;
  t.cut_through = sw.forwarding == Forwarding::kCutThrough;
  t.cut_through_bytes = sw.cut_through_bytes;
  return t;
}

}  // namespace

IdealFct::IdealFct(const Topology& topo, const Routes& routes, const NicConfig& nic,
                   const SwitchConfig& sw, const TransportFormat& format, uint64_t seed,
                   const TransportFormat& nvlink, const SwitchConfig& nvswitch)
    : topo_(topo),
      nic_(nic),
      format_(format),
      nvlink_(nvlink),
      router_(topo, routes, sw, seed),
      timing_(timing_of(sw)),
      nvswitch_timing_(timing_of(nvswitch)) {}

std::vector<PathHop> IdealFct::hops(const std::vector<uint32_t>& rows) const {
  std::vector<PathHop> v;
  for (uint32_t row : rows) {
    const TopoLink& l = topo_.links()[row / 2];
    v.push_back(PathHop{l.rate, l.delay});
  }
  return v;
}

namespace {

RcOpcode opcode_of(Verb verb, uint64_t r, uint64_t n) {
  const bool first = r == 1;
  const bool last = r == n;
  switch (verb) {
    case Verb::kWrite:
      return first && last ? RcOpcode::kWriteOnly
             : first       ? RcOpcode::kWriteFirst
             : last        ? RcOpcode::kWriteLast
                           : RcOpcode::kWriteMiddle;
    case Verb::kWriteImm:
      return first && last ? RcOpcode::kWriteOnlyImm
             : first       ? RcOpcode::kWriteFirst
             : last        ? RcOpcode::kWriteLastImm
                           : RcOpcode::kWriteMiddle;
    case Verb::kSend:
      return first && last ? RcOpcode::kSendOnly
             : first       ? RcOpcode::kSendFirst
             : last        ? RcOpcode::kSendLast
                           : RcOpcode::kSendMiddle;
    case Verb::kRead:
      return first && last ? RcOpcode::kReadResponseOnly
             : first       ? RcOpcode::kReadResponseFirst
             : last        ? RcOpcode::kReadResponseLast
                           : RcOpcode::kReadResponseMiddle;
  }
  return RcOpcode::kWriteOnly;
}

}  // namespace

Time IdealFct::of(const FlowSpec& f, std::span<const std::pair<uint32_t, uint32_t>> parts) const {
  const auto q = static_cast<uint32_t>(parts.size());
  assert(q >= 1);
  const uint32_t mtu = nic_.mtu;
  // The parts, as FlowGenerator splits the message: the first (bytes mod q)
  // get one byte more.
  std::vector<int64_t> bytes(q);
  std::vector<uint64_t> packets(q);
  for (uint32_t k = 0; k < q; ++k) {
    bytes[k] = f.bytes / q + (static_cast<int64_t>(k) < f.bytes % q ? 1 : 0);
    packets[k] = packets_for(bytes[k], mtu);
  }
  const uint64_t n_min = *std::min_element(packets.begin(), packets.end());
  const uint64_t n_max = *std::max_element(packets.begin(), packets.end());
  // The paths: requests and data one way, the answers the other. A path
  // between two GPUs of a server is NVLink's all the way (hosts do not
  // forward): NVLink framing, and NVSwitches that store and forward.
  const uint32_t sport = roce_source_port(f.src, parts[0].first);
  const std::vector<uint32_t> out_rows = router_.rows(f.src, f.dst, sport, parts[0].second);
  const std::vector<uint32_t> back_rows = router_.rows(f.dst, f.src, sport, parts[0].first);
  if (out_rows.empty() || back_rows.empty()) return Time::infinite();
  const bool nvlink = topo_.links()[out_rows[0] / 2].kind == LinkKind::kNvlink;
  const TransportFormat& format = nvlink ? nvlink_ : format_;
  const SwitchTiming& timing = nvlink ? nvswitch_timing_ : timing_;
  auto wire = [&](uint32_t k, uint64_t r) {
    const int64_t left = bytes[k] - static_cast<int64_t>(r - 1) * mtu;
    const auto payload = static_cast<uint32_t>(std::clamp<int64_t>(left, 0, mtu));
    return format.wire_bytes(opcode_of(f.op, r, packets[k]), payload);
  };
  // The stream the data source sends: round robin, one packet per part per
  // round; the rounds in which every part sends a middle packet are one run.
  // The last two rounds of every part (its last packets and their ACKs) are
  // listed packet by packet.
  struct Listed {
    uint64_t pos;
    uint32_t part;
    uint64_t r;
  };
  std::vector<Listed> tail;
  PacketStream stream;
  const uint64_t bulk_lo = 2;
  const uint64_t bulk_hi = n_min >= 3 ? n_min - 2 : 1;
  const uint64_t listed_from = std::max<uint64_t>(1, n_min - 1);
  for (uint64_t r = 1; r <= n_max; ++r) {
    if (r >= bulk_lo && r <= bulk_hi) {
      stream.append(wire(0, 2), q * (bulk_hi - bulk_lo + 1));
      r = bulk_hi;
      continue;
    }
    for (uint32_t k = 0; k < q; ++k) {
      if (packets[k] < r) continue;
      stream.append(wire(k, r), 1);
      if (r >= listed_from) tail.push_back(Listed{stream.size(), k, r});
    }
  }
  const Pacing pacing{BitRate::bps(f.rate.in_bps() / q), q};

  if (f.op == Verb::kRead) {
    // The requests (one per part, back to back) to the responder; its
    // responses start when the first has arrived.
    const std::vector<PathHop> ask = hops(out_rows);
    const std::vector<PathHop> back = hops(back_rows);
    const ShortFrame request{Time::zero(), format.wire_bytes(RcOpcode::kReadRequest, 0), 1};
    const Time asked = short_arrivals(ask, timing, std::span(&request, 1))[0];
    const uint64_t last = stream.size();
    return asked + stream_arrivals(back, timing, stream, pacing, std::span(&last, 1))[0];
  }

  const std::vector<PathHop> data = hops(out_rows);
  const std::vector<PathHop> acks = hops(back_rows);
  std::vector<uint64_t> want;
  for (const Listed& l : tail) want.push_back(l.pos);
  const std::vector<Time> arrived = stream_arrivals(data, timing, stream, pacing, want);
  // The responder acknowledges every ack_interval-th packet of a part and its
  // last; ACKs before the listed packets are out of the way. Each ACK's
  // serialisation depends on how many went before it on the same links.
  const auto every = static_cast<uint64_t>(std::max(1, nic_.ack_interval));
  uint64_t ordinal = q * ((listed_from - 1) / every);
  std::vector<ShortFrame> sent;
  const uint32_t ack_wire = format.wire_bytes(RcOpcode::kAcknowledge, 0);
  for (size_t i = 0; i < tail.size(); ++i) {
    const Listed& l = tail[i];
    if (l.r % every == 0 || l.r == packets[l.part]) {
      sent.push_back(ShortFrame{arrived[i], ack_wire, ++ordinal});
    }
  }
  const std::vector<Time> acked = short_arrivals(acks, timing, sent);
  return *std::max_element(acked.begin(), acked.end());
}

}  // namespace rdmasim
