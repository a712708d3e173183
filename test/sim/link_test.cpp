#include "test/support/catch_units.h"

#include <cmath>
#include <vector>

#include "sim/link.h"
#include "sim/node.h"

using namespace rdmasim;

namespace {

// Sends `count` frames of `bytes` wire bytes back to back from t = 0.
class Source : public Node {
 public:
  Source(Simulation& sim, std::string name, int count, uint32_t bytes)
      : Node(sim, std::move(name)), left_(count), bytes_(bytes) {
    add_port();
  }
  void setup() override { port(0).wake(); }
  void receive(uint32_t, PacketHandle) override {}
  PacketHandle next_packet(uint32_t) override {
    if (left_ == 0) return {};
    --left_;
    PacketHandle p = sim().make_packet();
    p->wire_bytes = bytes_;
    p->kind = PacketKind::kData;
    p->payload_bytes = bytes_ / 2;
    p->psn = sent_++;  // the packet's number, to check the order of arrival
    starts.push_back(sim().now());
    return p;
  }
  std::vector<Time> starts;

 private:
  int left_;
  uint32_t bytes_;
  uint32_t sent_ = 0;
};

class Sink : public Node {
 public:
  Sink(Simulation& sim, std::string name) : Node(sim, std::move(name)) { add_port(); }
  void receive(uint32_t, PacketHandle p) override {
    arrivals.push_back(sim().now());
    ids.push_back(p->psn);
    max_pending = std::max(max_pending, sim().pending_events());
  }
  PacketHandle next_packet(uint32_t) override { return {}; }
  std::vector<Time> arrivals;
  std::vector<uint64_t> ids;
  size_t max_pending = 0;
};

}  // namespace

TEST_CASE("a link serializes back to back and delivers after the delay", "[quick][link]") {
  Simulation sim;
  const int n = 1000;
  const uint32_t frame = 4178;
  auto& src = sim.add<Source>("src", n, frame);
  auto& dst = sim.add<Sink>("dst");
  auto& link = sim.add<Link>("src->dst", BitRate::gbps(100), Time::us(1));
  src.port(0).attach(link);
  link.connect(dst, 0);
  sim.run();

  // Serialization of 4178 bytes at 100 Gb/s: 4178 * 8 / 1e11 s = 334.24 ns.
  const Time ser = Time::ps(4178LL * 8 * 10);
  REQUIRE(dst.arrivals.size() == n);
  for (int i = 0; i < n; ++i) {
    CHECK(src.starts[i] == ser * i);
    CHECK(dst.arrivals[i] == ser * (i + 1) + Time::us(1));
    CHECK(dst.ids[i] == static_cast<uint64_t>(i));  // FIFO
  }
  CHECK(link.counters().frames == n);
  CHECK(link.counters().wire_bytes == int64_t{n} * frame);
  CHECK(link.counters().payload_bytes == int64_t{n} * (frame / 2));
  CHECK(link.counters().busy == ser * n);
  // One pending event for the link's in-flight frames plus the transmitter's.
  CHECK(dst.max_pending <= 2);
  // Every packet went back to the pool.
  CHECK(sim.packet_pool().live() == 0);
}

TEST_CASE("a link at a rate that does not divide a byte keeps exact total time", "[quick][link]") {
  Simulation sim;
  const int n = 10'000;
  auto& src = sim.add<Source>("src", n, 1500);
  auto& dst = sim.add<Sink>("dst");
  const BitRate rate = BitRate::bps(25'781'250'000);  // EDR lane signalling rate
  auto& link = sim.add<Link>("l", rate, Time::ns(5));
  src.port(0).attach(link);
  link.connect(dst, 0);
  sim.run();
  const __int128 exact_total_ps =
      static_cast<__int128>(1500) * 8 * n * 1'000'000'000'000 / rate.in_bps();
  CHECK(dst.arrivals.back() - Time::ns(5) == Time::ps(static_cast<int64_t>(exact_total_ps)));
}

TEST_CASE("a link that goes down loses what is in flight and what is sent into it",
          "[quick][link]") {
  Simulation sim;
  auto& src = sim.add<Source>("src", 100, 1000);
  auto& dst = sim.add<Sink>("dst");
  auto& link = sim.add<Link>("l", BitRate::gbps(100), Time::us(1));
  src.port(0).attach(link);
  link.connect(dst, 0);
  sim.setup();
  // 1000 bytes at 100G: 80 ns per frame; 1 us of flight holds 12.5 frames.
  sim.run(Time::ns(2000));  // frames 0..24 sent; those ending by 1000 ns have arrived
  const size_t arrived = dst.arrivals.size();
  const size_t in_flight = link.in_flight();
  CHECK(in_flight > 0);
  link.set_up(false);
  sim.run(Time::ns(4000));
  link.set_up(true);
  sim.run();
  CHECK(link.counters().lost_down >= in_flight + 20);
  CHECK(dst.arrivals.size() + link.counters().lost_down == 100);
  CHECK(arrived + 0 <= dst.arrivals.size());
}

TEST_CASE("bit errors corrupt frames at the rate the BER implies", "[quick][link]") {
  Simulation sim(3);
  const int n = 20000;
  auto& src = sim.add<Source>("src", n, 1250);  // 10,000 bits a frame
  auto& dst = sim.add<Sink>("dst");
  auto& link = sim.add<Link>("l", BitRate::gbps(100), Time::us(1));
  src.port(0).attach(link);
  link.connect(dst, 0);
  link.set_bit_error_rate(1e-5);
  sim.run();
  // P(frame corrupted) = 1 - (1 - 1e-5)^10000 = 0.0952.
  const double p = 1 - std::pow(1 - 1e-5, 10000);
  const double sd = std::sqrt(n * p * (1 - p));
  CHECK(std::abs(static_cast<double>(link.counters().corrupted) - n * p) < 5 * sd);
  CHECK(dst.arrivals.size() + link.counters().corrupted == static_cast<size_t>(n));
}

// Ethernet's preamble, SFD and inter-frame gap are on the wire but not in
// the frame: an error there loses nothing. 84 wire bytes are a 64-byte
// frame, 512 bits: P = 1 - (1 - 1e-3)^512 = 0.401; counting all 672 bits
// would give 0.489, some 25 standard deviations away.
TEST_CASE("bit errors count the frame's bits, not the preamble and gap", "[quick][link]") {
  Simulation sim(3);
  const int n = 20000;
  auto& src = sim.add<Source>("src", n, 84);
  auto& dst = sim.add<Sink>("dst");
  auto& link = sim.add<Link>("l", BitRate::gbps(100), Time::us(1));
  src.port(0).attach(link);
  link.connect(dst, 0);
  link.set_bit_error_rate(1e-3, Bytes(20));
  sim.run();
  const double p = 1 - std::pow(1 - 1e-3, 512);
  const double sd = std::sqrt(n * p * (1 - p));
  CHECK(std::abs(static_cast<double>(link.counters().corrupted) - n * p) < 5 * sd);
}

namespace {

// A data frame is due at 1 us (the port woken then); a timer at the same
// instant, or at `control_at`, sends a 6-byte control frame with
// Port::send_now, as an InfiniBand flow-control update does.
class ControlSource : public Node {
 public:
  ControlSource(Simulation& sim, std::string name, Time control_at)
      : Node(sim, std::move(name)), control_at_(control_at) {
    add_port();
    timer_.set_tag(id());
  }
  void setup() override {
    ctx().schedule(wake_, Time::us(1));
    ctx().schedule(timer_, control_at_);
  }
  void receive(uint32_t, PacketHandle) override {}
  PacketHandle next_packet(uint32_t) override {
    pulls.push_back(sim().now());
    if (data_left_ == 0) return {};
    --data_left_;
    PacketHandle p = sim().make_packet();
    p->kind = PacketKind::kData;
    p->wire_bytes = 1000;
    p->psn = 1;
    return p;
  }
  Time next_pull(uint32_t, Time frame_end) const override {
    return data_left_ > 0 ? frame_end : Time::infinite();
  }
  std::vector<Time> pulls;
  bool sent_now = false;

 private:
  void on_wake() { port(0).wake(); }
  void on_timer() {
    PacketHandle f = sim().make_packet();
    f->kind = PacketKind::kIbFlowControl;
    f->wire_bytes = 6;
    f->psn = 2;
    sent_now = port(0).send_now(f);
    CHECK(sent_now == !f);  // the frame is taken only when sent
  }
  Time control_at_;
  int data_left_ = 1;
  MemberEvent<ControlSource, &ControlSource::on_wake> wake_{this, EventClass::kDelivery, 0};
  MemberEvent<ControlSource, &ControlSource::on_timer> timer_{this, EventClass::kTimer, 0};
};

}  // namespace

// The pull the woken port had at 1 us moves to the control frame's end
// (6 B at 100 Gb/s: 480 ps), as if that pull had taken the control frame
// first; on a busy port send_now() leaves the frame to the node.
TEST_CASE("a control frame sent at once on an idle port goes ahead of the frame due then",
          "[quick][link]") {
  // src -> dst over 100 Gb/s and 1 us, the control frame sent at `at`.
  auto build = [](Simulation& sim, Time at) -> std::pair<ControlSource&, Sink&> {
    auto& src = sim.add<ControlSource>("src", at);
    auto& dst = sim.add<Sink>("dst");
    auto& link = sim.add<Link>("l", BitRate::gbps(100), Time::us(1));
    src.port(0).attach(link);
    link.connect(dst, 0);
    sim.run();
    return {src, dst};
  };
  Simulation sim;
  auto [src, dst] = build(sim, Time::us(1));
  CHECK(src.sent_now);
  REQUIRE(dst.ids == std::vector<uint64_t>{2, 1});
  CHECK(dst.arrivals[0] == Time::us(2) + Time::ps(480));
  CHECK(dst.arrivals[1] == Time::us(2) + Time::ps(480) + Time::ns(80));
  CHECK(src.pulls.front() == Time::us(1) + Time::ps(480));  // none at 1 us itself
  CHECK(src.port(0).link()->counters().control_frames == 1);

  Simulation busy;
  auto [src2, dst2] = build(busy, Time::us(1) + Time::ns(40));  // mid-frame
  CHECK_FALSE(src2.sent_now);
  CHECK(dst2.ids == std::vector<uint64_t>{1});
}
