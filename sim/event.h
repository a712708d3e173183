// Events: small intrusive records owned by the component that schedules them.
//
// Contract:
//  1. An Event is owned by a component (usually as a member, see MemberEvent)
//     and outlives every scheduling of it. Scheduling never allocates: the
//     event carries its own links for the queue's near-future buckets, and
//     the sequence number of its live entry, which is how the queue tells
//     live entries from cancelled ones where it keeps copies.
//  2. An event is in the queue at most once. Scheduling one that is already
//     scheduled is a bug (asserted); use Simulation::reschedule to move it.
//  3. Events that fall on the same picosecond run in the total order
//       (time, EventClass, source tag, sequence number)
//     where the source tag is the owning component's stable id and the sequence
//     number counts schedule() calls. The first three keys do not depend on how
//     the network is partitioned; the last only orders events of one component.
//  4. Events are neither copyable nor movable: the queue holds their address.
#pragma once

#include <cstdint>

#include "sim/units.h"

namespace rdmasim {

// Named priority classes for events at the same picosecond, lowest runs first.
enum class EventClass : uint8_t {
  // Link-level flow control (IB credit updates) takes effect before any
  // transmit decision at the same instant, as in hardware where the MAC
  // applies it before it starts the next frame. No model schedules it yet: a
  // PFC pause takes effect through the delivery of its frame and a pull at its
  // end; the InfiniBand credit model will. Kept at 0 so that the classes keep
  // their numbers (and the pinned fingerprints theirs).
  kFlowControl = 0,
  // A packet's last bit arrives at a node. Runs before transmit decisions so
  // that a transmitter choosing at time t sees every packet that arrived at t.
  kDelivery = 1,
  // Protocol timers (retransmission, ACK coalescing, DCQCN): they react to the
  // state after this instant's arrivals.
  kTimer = 2,
  // A transmitter finished a frame and picks the next one.
  kTransmit = 3,
  // Traffic generators post work; after the fabric settled at this instant.
  kTraffic = 4,
  // Samplers observe the state after everything else at this instant changed it.
  kSample = 5,
  // Run control (stop time, progress, watchdogs) comes last.
  kControl = 6,
};

class Simulation;

class Event {
 public:
  using Handler = void (*)(Event&);

  Event(EventClass cls, uint32_t tag, Handler handler) : handler_(handler), tag_(tag), cls_(cls) {}
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  bool scheduled() const { return live_seq_ != 0; }
  Time when() const { return when_; }
  EventClass event_class() const { return cls_; }
  uint32_t tag() const { return tag_; }
  // (class << 32) | tag: the order of events due at the same time.
  uint64_t class_tag() const { return (static_cast<uint64_t>(cls_) << 32) | tag_; }
  // Set once the owning component knows its stable id.
  void set_tag(uint32_t tag) { tag_ = tag; }
  // Memory the handler will read first that is not in the event itself (e.g.
  // the link's in-flight record of the packet it delivers). The queue
  // prefetches it when the event's bucket becomes current, a few events
  // before it runs: the simulation is bound by memory latency. Null: none.
  // (The queue reads the records of cancelled events too, lazily discarded:
  // an event must outlive the run it was scheduled in, as components do.)
  void set_prefetch_hint(const void* p) { hint_ = p; }

 private:
  friend class EventQueue;
  friend class Partition;

  Handler handler_;
  Time when_;
  uint64_t live_seq_ = 0;  // sequence number of its live queue entry; 0: not scheduled
  // Links of the calendar bucket the event waits in (see event_queue.h).
  Event* next_ = nullptr;
  Event** pprev_ = nullptr;  // the pointer that points at this event; null: not in a bucket
  const void* hint_ = nullptr;
  uint32_t tag_;
  EventClass cls_;
  uint8_t level_ = 0;  // which wheel's bucket list holds it (1 or 2); 0: none
};

// An event that calls `(owner->*Method)()`: the usual way a component owns its
// events, e.g. `MemberEvent<Link, &Link::on_arrival> arrival_{this, ...};`.
template <class T, void (T::*Method)()>
class MemberEvent final : public Event {
 public:
  MemberEvent(T* owner, EventClass cls, uint32_t tag = 0)
      : Event(cls, tag, &MemberEvent::thunk), owner_(owner) {}

 private:
  static void thunk(Event& e) { (static_cast<MemberEvent&>(e).owner_->*Method)(); }
  T* owner_;
};

}  // namespace rdmasim
