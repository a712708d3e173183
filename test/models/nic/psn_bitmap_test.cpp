#include "test/support/catch_units.h"

#include "models/nic/psn_bitmap.h"
#include "models/nic/reorder_buffer.h"

using namespace rdmasim;

TEST_CASE("a PSN bitmap marks, tests and slides", "[quick][nic]") {
  PsnBitmap b(128);
  b.reset(1000);
  CHECK(b.capacity() == 128);
  CHECK(b.set(0));
  CHECK(b.set(2));
  CHECK(b.set(127));
  CHECK_FALSE(b.set(128));  // beyond the window
  CHECK(b.count() == 3);
  CHECK(b.test(2));
  CHECK_FALSE(b.test(1));
  CHECK(b.run_at_base() == 1);
  CHECK(b.next_clear(0) == 1);
  CHECK(b.next_set(1) == 2);
  CHECK(b.word(0) == 0b101);
  CHECK(b.word(2) == 1);
  b.advance(2);  // base 1002: offset 0 is the old offset 2
  CHECK(b.base() == 1002);
  CHECK(b.count() == 2);
  CHECK(b.test(0));
  CHECK(b.test(125));
  CHECK(b.set(127));  // wraps into the slots freed by the slide
  CHECK(b.test(127));
  b.advance_to(1002 + 126);
  CHECK(b.count() == 1);
  CHECK(b.test(1));
  b.advance(1'000'000);  // far past: everything cleared
  CHECK(b.count() == 0);
  CHECK(b.base() == 1002 + 126 + 1'000'000);
  CHECK(b.word(0) == 0);
}

TEST_CASE("a reorder buffer reports placed PSNs as a SACK bitmap", "[quick][nic]") {
  ReorderBuffer r;
  CHECK_FALSE(r.allocated());
  CHECK(r.sack() == 0);
  r.allocate(64, 7);
  CHECK(r.place(1, ReorderBuffer::Slot{5, Time::ns(1), 100, 0x07, 0}));
  CHECK(r.place(3, ReorderBuffer::Slot{5, Time::ns(2), 200, 0x08, 0}));
  CHECK_FALSE(r.place(64, ReorderBuffer::Slot{}));
  CHECK(r.sack() == 0b1010);
  CHECK(r.count() == 2);
  r.advance(1);
  CHECK(r.has(0));
  CHECK(r.at(0).payload == 100);
  CHECK(r.at(2).payload == 200);
  CHECK(r.sack() == 0b101);
}
