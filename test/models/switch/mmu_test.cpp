#include "test/support/catch_units.h"

#include "models/switch/mmu.h"
#include "sim/invariants.h"
#include "sim/simulation.h"

using namespace rdmasim;

namespace {
SwitchConfig dynamic_config() {
  SwitchConfig c;
  c.buffer = Bytes(1'000'000);
  c.reserve = Bytes(4096);
  c.pfc.alpha_shift = 3;
  c.pfc.resume_offset = Bytes(3072);
  c.pfc.lossless_mask = 1 << 3;
  return c;
}
}  // namespace

TEST_CASE("the shared pool is the buffer less reserves and headroom", "[quick][mmu]") {
  const SwitchConfig c = dynamic_config();
  Mmu m(c, 4, std::vector<Bytes>(4, Bytes(50'000)));
  // 4 ports x 8 priorities x 4096 reserve; 4 ports x 1 lossless priority x 50 KB.
  CHECK(m.shared_pool() == 1'000'000 - 4 * 8 * 4096 - 4 * 50'000);
  CHECK(m.pfc_threshold() == m.shared_pool() >> 3);
}

TEST_CASE("dynamic PFC: pause at the threshold, headroom above it, resume with hysteresis",
          "[quick][mmu]") {
  const SwitchConfig c = dynamic_config();
  Mmu m(c, 2, std::vector<Bytes>(2, Bytes(50'000)));
  const uint32_t pkt = 1000;
  // Fill ingress queue (0, 3) until a pause is due.
  int64_t sent = 0;
  while (!m.xoff_due(0, 3)) {
    REQUIRE(m.admit(0, 3, 1, 3, pkt) == DropReason::kNone);
    sent += pkt;
    REQUIRE(sent < 1'000'000);
  }
  // At that point the queue's shared use reached thr = (pool - shared) >> 3,
  // i.e. shared = pool / (2^3 + 1) for a single queue (within one packet).
  const double expect = static_cast<double>(m.shared_pool()) / 9;
  CHECK(static_cast<double>(m.ingress_occupancy(0, 3)) == Approx(expect).margin(pkt));
  // More arrivals go to headroom, and are dropped only once it is full.
  while (m.admit(0, 3, 1, 3, pkt) == DropReason::kNone) {
  }
  CHECK(m.headroom_used(0, 3) == 50'000);  // exactly full
  CHECK(m.admit(0, 3, 1, 3, pkt) == DropReason::kHeadroom);
  CHECK_FALSE(m.xon_due(0, 3));
  // Drain: resume only once headroom is empty and shared + 3 KB <= thr.
  int64_t drained = 0;
  while (!m.xon_due(0, 3)) {
    m.release(0, 3, 1, 3, pkt);
    drained += pkt;
  }
  CHECK(m.headroom_used(0, 3) == 0);
  CHECK(drained >= 50'000);  // the full headroom went out before the resume
  const int64_t shared = m.ingress_occupancy(0, 3);
  CHECK(shared + 3072 <= m.pfc_threshold());
  CHECK(shared + 3072 + pkt > m.pfc_threshold() - 1000);  // not much earlier than needed
}

TEST_CASE("static PFC thresholds", "[quick][mmu]") {
  SwitchConfig c = dynamic_config();
  c.pfc.threshold = PfcThreshold::kStatic;
  c.pfc.xoff = Bytes(100'000);
  c.pfc.xon = Bytes(80'000);
  Mmu m(c, 2, std::vector<Bytes>(2, Bytes(20'000)));
  for (int i = 0; i < 99; ++i) REQUIRE(m.admit(0, 3, 1, 3, 1000) == DropReason::kNone);
  CHECK_FALSE(m.xoff_due(0, 3));
  REQUIRE(m.admit(0, 3, 1, 3, 1000) == DropReason::kNone);
  CHECK(m.xoff_due(0, 3));
  for (int i = 0; i < 20; ++i) REQUIRE(m.admit(0, 3, 1, 3, 1000) == DropReason::kNone);
  CHECK(m.admit(0, 3, 1, 3, 1000) == DropReason::kHeadroom);
  for (int i = 0; i < 39; ++i) {
    m.release(0, 3, 1, 3, 1000);
    CHECK_FALSE(m.xon_due(0, 3));
  }
  m.release(0, 3, 1, 3, 1000);  // 80 KB left, headroom empty
  CHECK(m.xon_due(0, 3));
}

TEST_CASE("lossy queues drop at the egress dynamic threshold", "[quick][mmu]") {
  SwitchConfig c = dynamic_config();
  c.lossy_alpha = 1.0;
  Mmu m(c, 2, std::vector<Bytes>(2, Bytes(50'000)));
  int admitted = 0;
  while (m.admit(0, 0, 1, 0, 1000) == DropReason::kNone) ++admitted;
  // The egress queue stops when q > alpha x (pool - shared): q ~ pool / 2.
  CHECK(static_cast<double>(m.egress_bytes(1, 0)) ==
        Approx(m.shared_pool() / 2.0).margin(8 * 4096 + 2000));
  CHECK(m.admit(0, 0, 1, 0, 1000) == DropReason::kEgressLimit);
  CHECK(m.used() <= c.buffer.count());
  CHECK(m.peak_used() == m.used());
}

TEST_CASE("cells round every packet up", "[quick][mmu]") {
  SwitchConfig c = dynamic_config();
  c.cell = 208;
  Mmu m(c, 1, {Bytes(0)});
  CHECK(m.charge(1) == 208);
  CHECK(m.charge(208) == 208);
  CHECK(m.charge(4158) == 20 * 208);
}

TEST_CASE("the MMU reserves per lane of each port", "[quick][mmu]") {
  const SwitchConfig c = dynamic_config();
  // 3 ports of 16 lanes (InfiniBand VLs) x 4096 reserve; one lossless lane
  // (priority 3) with 50 KB headroom on each port.
  Mmu m(c, 3, std::vector<Bytes>(3, Bytes(50'000)), 16);
  CHECK(m.shared_pool() == 1'000'000 - 3 * 16 * 4096 - 3 * 50'000);
  // Queues of different ports and lanes do not alias.
  REQUIRE(m.admit(2, 15, 1, 9, 1000) == DropReason::kNone);
  CHECK(m.ingress_bytes(2, 15) == 1000);
  CHECK(m.egress_bytes(1, 9) == 1000);
  CHECK(m.ingress_bytes(1, 15) == 0);
  CHECK(m.egress_bytes(2, 9) == 0);
}

TEST_CASE("buffer_accounting: a count that goes negative is reported, with checks on",
          "[quick][mmu][invariants]") {
  const SwitchConfig c = dynamic_config();
  const bool checks = GENERATE(false, true);
  Simulation sim;
  Component& owner = sim.add<Component>("sw");
  Mmu m(c, 2, std::vector<Bytes>(2, Bytes(50'000)));
  if (checks) m.enable_checks(owner);
  REQUIRE(m.admit(0, 3, 1, 3, 1000) == DropReason::kNone);
  m.release(0, 3, 1, 3, 1000);
  CHECK(m.used() == 0);
  // Released twice (a corrupted accounting): the counts go below zero.
  if (checks) {
    CHECK_THROWS_WITH(m.release(0, 3, 1, 3, 1000),
                      Catch::StartsWith("invariant buffer_accounting violated at sw port 0 "
                                        "priority 3 (ingress), t=0s: reserve+shared -1000 B"));
  } else {
    m.release(0, 3, 1, 3, 1000);
    CHECK(m.used() == -1000);  // what the check would have caught
  }
}

TEST_CASE("buffer_accounting: the audit bounds every count it reads", "[quick][mmu][invariants]") {
  const SwitchConfig c = dynamic_config();
  Simulation sim;
  Component& owner = sim.add<Component>("sw");
  Mmu m(c, 2, std::vector<Bytes>(2, Bytes(50'000)));
  m.enable_checks(owner);
  // A release of another queue's packet: this egress count goes negative
  // while the ingress queue's does not.
  REQUIRE(m.admit(0, 3, 1, 3, 8192) == DropReason::kNone);
  CHECK_THROWS_WITH(m.release(0, 3, 1, 2, 4096), Catch::Contains("port 1 priority 2 (egress)"));
}
