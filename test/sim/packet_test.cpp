// Packets and their pool: the extension area (sim/packet.h contract 4).
#include <catch2/catch.hpp>

#include "sim/packet.h"

namespace rdmasim {
namespace {

struct HopCount {
  uint8_t hops;
  uint64_t stamp;
};

}  // namespace

TEST_CASE("packet extension area: none until asked for, cleared per use, kept by the slot",
          "[quick][packet]") {
  PacketPool pool;
  {
    PacketHandle p = pool.make(Time::ns(1));
    CHECK(p->ext == nullptr);
    CHECK(p->ext_used == 0);
  }
  CHECK(pool.ext_capacity() == 0);  // a run that never asks allocates nothing

  Packet* slot = nullptr;
  PacketExt* area = nullptr;
  {
    PacketHandle p = pool.make(Time::ns(2));
    slot = p.get();
    HopCount& h = pool.ext(*p).as<HopCount>();
    CHECK(h.hops == 0);
    CHECK(h.stamp == 0);
    h.hops = 3;
    h.stamp = 42;
    area = p->ext;
    CHECK(p->ext_used == 1);
    // Asking again within the same use keeps what was written.
    CHECK(pool.ext(*p).as<HopCount>().hops == 3);
  }
  CHECK(pool.ext_capacity() > 0);
  // The pool hands the slot out again (last released, first made): the area
  // is still attached, unused, and cleared when next asked for.
  PacketHandle q = pool.make(Time::ns(3));
  REQUIRE(q.get() == slot);
  CHECK(q->ext == area);
  CHECK(q->ext_used == 0);
  CHECK(q->created == Time::ns(3));
  CHECK(pool.ext(*q).as<HopCount>().hops == 0);
  CHECK(pool.ext(*q).as<HopCount>().stamp == 0);
  CHECK(pool.created() == 3);
}

}  // namespace rdmasim
