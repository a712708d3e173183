#include <functional>
#include <vector>

#include "test/support/catch_units.h"

#include "models/flow_control/pfc.h"
#include "sim/event.h"
#include "sim/simulation.h"

using namespace rdmasim;

namespace {

// A port holding one Pfc: records the frames the policy emits, with the
// time each was emitted.
struct Holder : Component, ControlSink {
  struct Sent {
    Time at;
    uint16_t class_enable;
    uint16_t quanta;
  };
  Holder(Simulation& sim, BitRate rate, Pfc::Params params, uint8_t lanes = kEthernetPriorities)
      : Component(sim, "holder"), pfc(lanes), rate_(rate), params_(params) {}
  void setup() override { pfc.attach(ctx(), *this, 0, id(), rate_, params_); }
  void emit_link_control(uint32_t port, PacketHandle f) override {
    CHECK(port == 0);
    CHECK(f->kind == PacketKind::kPfc);
    CHECK(f->wire_bytes == 84);  // 64-byte MAC control frame + preamble/SFD + gap
    const auto lane = __builtin_ctz(f->pfc_class_enable);
    sent.push_back({ctx().now(), f->pfc_class_enable, f->pfc_quanta[lane]});
  }
  Pfc pfc;
  std::vector<Sent> sent;

 private:
  BitRate rate_;
  Pfc::Params params_;
};

// Runs `f` at time `at` in the holder's partition.
struct At : Component {
  At(Simulation& sim, Time at, std::function<void()> f)
      : Component(sim, "at"), at_(at), f_(std::move(f)), ev_(this, EventClass::kControl) {}
  void setup() override { ctx().schedule(ev_, at_); }
  void fire() { f_(); }
  Time at_;
  std::function<void()> f_;
  MemberEvent<At, &At::fire> ev_;
};

}  // namespace

TEST_CASE("a pause quantum is 512 bit times", "[quick][pfc]") {
  // IEEE 802.1Qbb: 512 bit times; at 100 Gb/s 5.12 ns, so 1000 quanta = 5.12 us.
  CHECK(pfc_pause_time(1, BitRate::gbps(100)) == Time::ps(5120));
  CHECK(pfc_pause_time(1000, BitRate::gbps(100)) == Time::ns(5120));
  CHECK(pfc_pause_time(0xFFFF, BitRate::gbps(400)) == Time::ps(65535LL * 1280));
}

TEST_CASE("pause state follows pause, refresh and resume frames", "[quick][pfc]") {
  Simulation sim;
  const BitRate r = BitRate::gbps(100);
  const Time response = Time::ns(100);
  Pfc::Params params;
  params.response_delay = response;
  Holder& h = sim.add<Holder>(r, params);
  sim.setup();
  Pfc& st = h.pfc;
  CHECK(st.lanes() == kEthernetPriorities);
  PacketHandle pause = make_pfc_frame(sim, 1 << 3, 1000);
  CHECK(pause->wire_bytes == 84);
  Time recheck = st.on_control_frame(*pause, Time::us(1));
  CHECK(recheck == Time::us(1) + response + Time::ns(5120));
  CHECK_FALSE(st.paused(3, Time::us(1)));  // not before the response delay
  CHECK(st.paused(3, Time::us(1) + response));
  CHECK(st.blocked(3, Time::us(1) + response) == BlockedBy::kPause);
  CHECK(st.blocked(2, Time::us(1) + response) == BlockedBy::kNone);
  CHECK_FALSE(st.paused(2, Time::us(2)));
  CHECK_FALSE(st.paused(3, recheck));  // the pause expires after exactly its quanta
  // Which lanes may send, and until when that stands.
  Time until;
  CHECK(st.sendable(Time::us(1), until) == 0xFF);
  CHECK(until == Time::us(1) + response);
  CHECK(st.sendable(Time::us(2), until) == (0xFF & ~(1U << 3)));
  CHECK(until == recheck);
  // A refresh during the pause extends it from its own effect time.
  st.on_control_frame(*pause, Time::us(3));
  CHECK(st.paused(3, Time::us(3) + Time::ns(50)));
  CHECK(st.blocked_until(3) == Time::us(3) + response + Time::ns(5120));
  // Resume.
  PacketHandle resume = make_pfc_frame(sim, 1 << 3, 0);
  recheck = st.on_control_frame(*resume, Time::us(4));
  CHECK(recheck == Time::us(4) + response);
  CHECK(st.paused(3, Time::us(4)));
  CHECK_FALSE(st.paused(3, Time::us(4) + response));
  CHECK(st.pauses_received() == 2);
}

TEST_CASE("PFC policy: XOFF once over the threshold, XON once at it, refresh while paused",
          "[quick][pfc]") {
  // 100 Gb/s, 1000 quanta = 5.12 us; refreshed at a quarter: every 1.28 us.
  Simulation sim;
  Pfc::Params params;
  params.quanta = 1000;
  params.refresh = 0.25;
  Holder& h = sim.add<Holder>(BitRate::gbps(100), params);
  // A buffer of one lane: XOFF at >= 3 frames, XON at <= 1.
  int occupancy = 0;
  auto arrive = [&] {
    ++occupancy;
    h.pfc.on_arrival(5, [&] { return occupancy >= 3; });
  };
  auto leave = [&] {
    --occupancy;
    h.pfc.on_departure(5, [&] { return occupancy <= 1; });
  };
  sim.add<At>(Time::us(1), [&] {
    for (int i = 0; i < 4; ++i) arrive();  // XOFF at the third, once
  });
  // At 5 us the queue drains to 1: XON then, and no refresh after it.
  sim.add<At>(Time::us(5), [&] {
    for (int i = 0; i < 3; ++i) leave();
  });
  sim.setup();
  sim.run();
  CHECK_FALSE(h.pfc.holding(5));
  CHECK(occupancy == 1);
  // XOFF at 1 us, refreshes at 1 + k x 1.28 us while paused (2.28, 3.56,
  // 4.84), XON at 5 us.
  REQUIRE(h.sent.size() == 5);
  const Time refresh = Time::ps(1280'000);
  for (size_t k = 0; k < 4; ++k) {
    CHECK(h.sent[k].at == Time::us(1) + refresh * static_cast<int64_t>(k));
    CHECK(h.sent[k].class_enable == 1 << 5);
    CHECK(h.sent[k].quanta == 1000);
  }
  CHECK(h.sent[4].at == Time::us(5));
  CHECK(h.sent[4].quanta == 0);
}

TEST_CASE("PFC policy: a hold pauses regardless of the buffer, then resumes", "[quick][pfc]") {
  // 400 Gb/s: 65535 quanta = 83.8848 us, refreshed at half (41.9424 us).
  Simulation sim;
  Holder& h = sim.add<Holder>(BitRate::gbps(400), Pfc::Params{});
  sim.add<At>(Time::us(10), [&] { h.pfc.hold(2, Time::us(100)); });
  sim.setup();
  sim.run();
  const Time half = Time::ps(65535LL * 1280 / 2);
  REQUIRE(h.sent.size() == 4);
  CHECK(h.sent[0].at == Time::us(10));
  CHECK(h.sent[1].at == Time::us(10) + half);
  CHECK(h.sent[2].at == Time::us(10) + half * 2);
  for (size_t k = 0; k < 3; ++k) CHECK(h.sent[k].quanta == kPfcMaxQuanta);
  CHECK(h.sent[3].at == Time::us(100));  // the hold ends: resume
  CHECK(h.sent[3].quanta == 0);
  CHECK(h.sent[3].class_enable == 1 << 2);
}

TEST_CASE("PFC policy: a hold does not resume a lane the buffer still pauses", "[quick][pfc]") {
  Simulation sim;
  Holder& h = sim.add<Holder>(BitRate::gbps(400), Pfc::Params{});
  sim.add<At>(Time::us(10), [&] {
    h.pfc.hold(2, Time::us(20));
    h.pfc.on_arrival(2, [] { return true; });  // the buffer wants a pause too
  });
  sim.add<At>(Time::us(30), [&] { h.pfc.on_departure(2, [] { return true; }); });
  sim.setup();
  sim.run();
  // Hold and XOFF at 10 us; nothing at the hold's end (20 us); XON at 30 us.
  REQUIRE(h.sent.size() == 3);
  CHECK(h.sent[0].at == Time::us(10));
  CHECK(h.sent[1].at == Time::us(10));
  CHECK(h.sent[2].at == Time::us(30));
  CHECK(h.sent[2].quanta == 0);
}

TEST_CASE("PFC policy: lanes are per port", "[quick][pfc]") {
  Simulation sim;
  Holder& h = sim.add<Holder>(BitRate::gbps(100), Pfc::Params{}, 4);
  sim.setup();
  CHECK(h.pfc.lanes() == 4);
  Time until;
  CHECK(h.pfc.sendable(Time::zero(), until) == 0xF);
  CHECK(until.is_infinite());
}
