#include "test/support/catch_units.h"

#include <array>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <tuple>
#include <vector>

#include "sim/event_queue.h"
#include "sim/rng.h"

using namespace rdmasim;

namespace {
void noop(Event&) {}
}  // namespace

TEST_CASE("events pop in (time, class, tag, sequence) order", "[quick][event]") {
  EventQueue q;
  Event late(EventClass::kTransmit, 1, noop);
  Event early(EventClass::kTransmit, 9, noop);
  Event same_time_lower_class(EventClass::kDelivery, 9, noop);
  Event tag2_scheduled_later(EventClass::kTransmit, 2, noop);
  Event tag2_scheduled_first(EventClass::kTransmit, 2, noop);
  Event flow_control(EventClass::kFlowControl, 100, noop);

  q.push(late, Time::ns(20));
  q.push(tag2_scheduled_first, Time::ns(10));  // scheduled first: earlier sequence
  q.push(early, Time::ns(10));
  q.push(tag2_scheduled_later, Time::ns(10));
  q.push(same_time_lower_class, Time::ns(10));
  q.push(flow_control, Time::ns(10));

  std::vector<Event*> order;
  while (!q.empty()) order.push_back(q.pop());
  REQUIRE(order.size() == 6);
  CHECK(order[0] == &flow_control);
  CHECK(order[1] == &same_time_lower_class);
  CHECK(order[2] == &tag2_scheduled_first);  // same key: sequence decides
  CHECK(order[3] == &tag2_scheduled_later);  // tag 2, sequence 3
  CHECK(order[4] == &early);                 // tag 9
  CHECK(order[5] == &late);
}

TEST_CASE("erase keeps the pop order", "[quick][event]") {
  EventQueue q;
  RngStream rng(7, "test");
  std::vector<std::unique_ptr<Event>> events;
  for (int i = 0; i < 500; ++i) {
    events.push_back(std::make_unique<Event>(EventClass::kTimer, i, noop));
    q.push(*events.back(), Time::ps(static_cast<int64_t>(rng.uniform(1000))));
  }
  // Cancel every third event.
  for (int i = 0; i < 500; i += 3) {
    q.erase(*events[i]);
    CHECK_FALSE(events[i]->scheduled());
  }
  Time last;
  size_t popped = 0;
  while (!q.empty()) {
    Event* e = q.pop();
    CHECK(e->when() >= last);
    CHECK(e->tag() % 3 != 0);
    last = e->when();
    ++popped;
  }
  CHECK(popped == 500 - 167);
}

TEST_CASE("cancelled and rescheduled events leave no trace in the order or the size",
          "[quick][event]") {
  EventQueue q;
  Event a(EventClass::kTimer, 1, noop), b(EventClass::kTimer, 2, noop),
      c(EventClass::kTimer, 3, noop);
  q.push(a, Time::ns(10));
  q.push(b, Time::ns(20));
  q.push(c, Time::ns(30));
  CHECK(q.size() == 3);
  q.erase(a);  // cancelled: unlinked from its bucket
  CHECK(q.size() == 2);
  q.erase(b);
  q.push(b, Time::ns(5));  // rescheduled earlier
  CHECK(q.size() == 2);
  REQUIRE(q.ready());
  CHECK(q.top_time() == Time::ns(5));
  CHECK(q.pop() == &b);
  REQUIRE(q.ready());
  CHECK(q.pop() == &c);
  CHECK(q.empty());
  CHECK(q.size() == 0);
  CHECK_FALSE(a.scheduled());
}

// Scheduling, cancelling and popping at random, near and far (within a bucket,
// an epoch, level 2's 8.6 ms and beyond it), against a sorted reference.
TEST_CASE("the wheels and the heap pop in the reference order under random churn",
          "[quick][event]") {
  EventQueue q;
  std::vector<std::unique_ptr<Event>> events;
  for (uint32_t i = 0; i < 400; ++i) {
    events.push_back(std::make_unique<Event>(static_cast<EventClass>(i % 4), i % 7, noop));
  }
  std::mt19937_64 rng(7);
  const std::array<int64_t, 5> spans = {8'000, 8'000'000, 2'000'000'000, 9'000'000'000,
                                        200'000'000'000};
  struct Ref {
    int64_t t;
    uint64_t class_tag;
    uint64_t order;
    Event* e;
    bool operator<(const Ref& o) const {
      return std::tie(t, class_tag, order) < std::tie(o.t, o.class_tag, o.order);
    }
  };
  std::set<Ref> ref;
  std::map<Event*, Ref> where;
  uint64_t order = 0;
  int64_t now = 0;
  auto schedule = [&](Event& e) {
    const int64_t t = now + static_cast<int64_t>(rng() % static_cast<uint64_t>(spans[rng() % 5]));
    if (e.scheduled()) {
      q.erase(e);
      ref.erase(where[&e]);
    }
    q.push(e, Time::ps(t));
    const Ref r{t, (static_cast<uint64_t>(e.event_class()) << 32) | e.tag(), ++order, &e};
    ref.insert(r);
    where[&e] = r;
  };
  for (auto& e : events) schedule(*e);
  size_t popped = 0;
  while (!ref.empty()) {
    REQUIRE(q.ready());
    REQUIRE(q.size() == ref.size());
    const Ref expected = *ref.begin();
    REQUIRE(q.top_time() == Time::ps(expected.t));
    Event* e = q.pop();
    REQUIRE(e == expected.e);
    ref.erase(ref.begin());
    now = expected.t;
    ++popped;
    // Churn: reschedule or cancel a few random events, re-arm the popped one.
    for (int k = 0; k < 3 && popped < 20'000; ++k) {
      Event& x = *events[rng() % events.size()];
      if (rng() % 4 == 0) {
        if (x.scheduled()) {
          q.erase(x);
          ref.erase(where[&x]);
        }
      } else {
        schedule(x);
      }
    }
    if (popped < 20'000) schedule(*e);
  }
  CHECK(q.empty());
  CHECK(popped > 20'000);
}
