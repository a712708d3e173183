#include "test/support/catch_units.h"

#include "models/flow_control/pfc.h"

using namespace rdmasim;

TEST_CASE("a pause quantum is 512 bit times", "[quick][pfc]") {
  // IEEE 802.1Qbb: 512 bit times; at 100 Gb/s 5.12 ns, so 1000 quanta = 5.12 us.
  CHECK(pfc_pause_time(1, BitRate::gbps(100)) == Time::ps(5120));
  CHECK(pfc_pause_time(1000, BitRate::gbps(100)) == Time::ns(5120));
  CHECK(pfc_pause_time(0xFFFF, BitRate::gbps(400)) == Time::ps(65535LL * 1280));
}

TEST_CASE("pause state follows pause, refresh and resume frames", "[quick][pfc]") {
  Simulation sim;
  PauseState st;
  const BitRate r = BitRate::gbps(100);
  const Time response = Time::ns(100);
  PacketHandle pause = make_pfc_frame(sim, 1 << 3, 1000);
  CHECK(pause->wire_bytes == 84);
  Time recheck = st.on_frame(*pause, Time::us(1), response, r);
  CHECK(recheck == Time::us(1) + response + Time::ns(5120));
  CHECK_FALSE(st.paused(3, Time::us(1)));  // not before the response delay
  CHECK(st.paused(3, Time::us(1) + response));
  CHECK_FALSE(st.paused(2, Time::us(2)));
  CHECK_FALSE(st.paused(3, recheck));
  // A refresh during the pause extends it from its own effect time.
  st.on_frame(*pause, Time::us(3), response, r);
  CHECK(st.paused(3, Time::us(3) + Time::ns(50)));
  CHECK(st.paused_until(3) == Time::us(3) + response + Time::ns(5120));
  // Resume.
  PacketHandle resume = make_pfc_frame(sim, 1 << 3, 0);
  recheck = st.on_frame(*resume, Time::us(4), response, r);
  CHECK(recheck == Time::us(4) + response);
  CHECK(st.paused(3, Time::us(4)));
  CHECK_FALSE(st.paused(3, Time::us(4) + response));
}
