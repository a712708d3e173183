// V2 of the validation cases at fabric level: one InfiniBand cable between
// two NICs (no switch), one data VL, 4096-byte payloads, 100 m (500 ns each
// way), zero processing delays, swept over the VL buffer Bf at EDR and NDR
// (CI scale). The receiving NIC frees a packet's blocks when it has fully
// arrived and returns them at once; the reverse direction carries nothing
// else (one ACK, at the end of the message). Expected values from the
// credit-loop formula (CASES.md V2): a packet is 4122 wire bytes and 65
// credits, W = floor(Bf / (65 x 64)) packets may be outstanding, and the
// credits of a packet are usable again t_loop = t_ser(4122 B) + 2 t_prop +
// t_ser(6 B) after it started; so with W t_ser < t_loop exactly W packets
// arrive per t_loop, else the link runs back to back at t_ser a packet.
#include "test/support/catch_units.h"
#include "test/support/scenario_sim.h"

#include <string>

using namespace rdmasim;
using namespace rdmasim::testing;

namespace {

struct Sweep {
  const char* rate;
  BitRate r;
  const char* bf;
  int64_t bf_bytes;
};

// Packets h1 has received.
uint64_t received(const ScenarioSim& s) { return s.nics[1]->counters().data_packets_received; }

}  // namespace

TEST_CASE("V2 credit loop on a cable between two NICs: W packets per t_loop, else line rate",
          "[quick][validation][V2]") {
  for (const Sweep& c : {Sweep{"EDR", BitRate::gbps(100), "8KiB", 8192},
                         Sweep{"EDR", BitRate::gbps(100), "16KiB", 16384},
                         Sweep{"EDR", BitRate::gbps(100), "32KiB", 32768},
                         Sweep{"EDR", BitRate::gbps(100), "64KiB", 65536},
                         Sweep{"NDR", BitRate::gbps(400), "8KiB", 8192},
                         Sweep{"NDR", BitRate::gbps(400), "16KiB", 16384},
                         Sweep{"NDR", BitRate::gbps(400), "32KiB", 32768},
                         Sweep{"NDR", BitRate::gbps(400), "64KiB", 65536}}) {
    CAPTURE(c.rate, c.bf);
    const std::string json = std::string(R"({
      "fabric": {"transport": "infiniband", "mtu": 4096,
                 "link": {"rate": ")") +
                             c.rate + R"(", "delay": "500ns"},
                 "nic": {"ack_interval": 1000000},
                 "infiniband": {"credits": {"vl_buffer": ")" +
                             c.bf + R"("}}},
      "topology": {"kind": "graph", "hosts": ["h0", "h1"], "links": [{"a": "h0", "b": "h1"}]},
      "traffic": [{"kind": "flow", "src": "h0", "dst": "h1", "size": "1GiB"}]
    })";
    const Scenario sc = load_scenario_text(json, "v2");
    ScenarioSim s(sc);
    s.sim.setup();
    const Time t_ser = Bytes(4122) / c.r;
    const Time t_loop = t_ser + 2 * Time::ns(500) + Bytes(6) / c.r;
    CHECK(t_loop == (c.r == BitRate::gbps(100) ? Time::ps(1'330'240) : Time::ps(1'082'560)));
    const int64_t w = c.bf_bytes / (65 * 64);
    // Steady state from 100 loops on; a window of n loops, long enough that a
    // loop off by the smallest term of t_loop (the 6-byte flow-control
    // packet, 120 ps at NDR) would drift by more than a loop and change the
    // count.
    const int n = 10'000;
    const Time t1 = 100 * t_loop;
    s.sim.run(t1);
    const uint64_t before = received(s);
    s.sim.run(t1 + n * t_loop);
    const uint64_t got = received(s) - before;
    if (w * t_ser < t_loop) {
      // Credit-bound: every loop brings exactly W packets, whatever the
      // window's phase (the pattern repeats every t_loop).
      CHECK(got == static_cast<uint64_t>(n * w));
    } else {
      // Line rate: one packet per t_ser, back to back.
      const int64_t slots = (n * t_loop).in_ps() / t_ser.in_ps();
      CHECK((got == static_cast<uint64_t>(slots) || got == static_cast<uint64_t>(slots + 1)));
    }
    // No loss, no retransmission.
    CHECK(s.nics[0]->counters().retransmitted_packets == 0);
    CHECK(s.nics[1]->counters().out_of_sequence == 0);
  }
}

TEST_CASE("Shared VL buffer on a cable: the pool adds to a busy VL's credit window",
          "[quick][scenario][infiniband]") {
  // V2's cable at EDR with 8 KiB of VL buffer (one packet: 24.79 Gb/s
  // alone) and a shared pool: 8 KiB more make the window 256 blocks, three
  // packets, exactly the 16 KiB static case (3 per t_loop); 56 KiB more
  // (1024 blocks, 15 packets) reach line rate, as 64 KiB does.
  for (const auto& [shared, w] : {std::pair<const char*, int64_t>{"8KiB", 3}, {"56KiB", 15}}) {
    CAPTURE(shared);
    const std::string json = std::string(R"({
      "fabric": {"transport": "infiniband", "mtu": 4096,
                 "link": {"rate": "EDR", "delay": "500ns"},
                 "nic": {"ack_interval": 1000000},
                 "infiniband": {"credits": {"vl_buffer": "8KiB", "shared_buffer": ")") +
                             shared + R"("}}},
      "topology": {"kind": "graph", "hosts": ["h0", "h1"], "links": [{"a": "h0", "b": "h1"}]},
      "traffic": [{"kind": "flow", "src": "h0", "dst": "h1", "size": "1GiB"}]
    })";
    const Scenario sc = load_scenario_text(json, "v2_shared");
    ScenarioSim s(sc);
    s.sim.setup();
    const Time t_ser = Bytes(4122) / BitRate::gbps(100);
    const Time t_loop = Time::ps(1'330'240);
    const int n = 10'000;
    const Time t1 = 100 * t_loop;
    s.sim.run(t1);
    const uint64_t before = received(s);
    s.sim.run(t1 + n * t_loop);
    const uint64_t got = received(s) - before;
    if (w * t_ser < t_loop) {
      CHECK(got == static_cast<uint64_t>(n * w));
    } else {
      const int64_t slots = (n * t_loop).in_ps() / t_ser.in_ps();
      CHECK((got == static_cast<uint64_t>(slots) || got == static_cast<uint64_t>(slots + 1)));
    }
    CHECK(s.nics[0]->counters().retransmitted_packets == 0);
  }
}
