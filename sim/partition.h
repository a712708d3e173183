// Partition: one thread's share of a simulation. It has its own clock, future
// event set and packet pool; the components assigned to it schedule through
// it (Component::ctx()), so running partitions side by side needs no locks.
//
// Contract:
//  1. A simulation has one partition unless Simulation::set_partitions() asked
//     for more; with one, the partition is the whole simulation and runs it
//     exactly as before partitioning existed (same events, same order).
//  2. A component schedules only its own events, on its own partition, and
//     touches other components only through links (or, for observers, in a
//     serial step: see simulation.h). Link::transmit onto a link whose
//     receiver is in another partition appends to a Channel; the receiver
//     hands its frames to the link at the next window's start.
//  3. A packet is returned to the pool of the partition that holds it last:
//     a packet that crosses into another partition is handed to its pool.
#pragma once

#include <atomic>
#include <cassert>
#include <cstdint>
#include <memory>
#include <vector>

#include "sim/event_queue.h"
#include "sim/hash.h"
#include "sim/packet.h"
#include "sim/units.h"

namespace rdmasim {

class Link;
class Simulation;
enum class Phase : uint8_t;

class Partition {
 public:
  Partition(Simulation& sim, uint32_t index, const Phase* phase)
      : sim_(sim), index_(index), phase_(phase) {}
  Partition(const Partition&) = delete;
  Partition& operator=(const Partition&) = delete;

  Simulation& sim() const { return sim_; }
  uint32_t index() const { return index_; }
  Phase phase() const { return *phase_; }

  Time now() const { return now_; }
  void schedule(Event& e, Time t) {
    assert(!e.scheduled() && "event already scheduled");
    assert(t >= now_ && "event scheduled in the past");
    queue_.push(e, t);
    if (e.event_class() < EventClass::kSample) ++model_pending_;
  }
  void schedule_in(Event& e, Time delay) { schedule(e, now_ + delay); }
  void reschedule(Event& e, Time t) {
    assert(t >= now_);
    if (e.scheduled()) {
      queue_.erase(e);
      if (e.event_class() < EventClass::kSample) --model_pending_;
    }
    queue_.push(e, t);
    if (e.event_class() < EventClass::kSample) ++model_pending_;
  }
  void cancel(Event& e) {
    if (e.scheduled()) {
      queue_.erase(e);
      if (e.event_class() < EventClass::kSample) --model_pending_;
    }
  }
  PacketHandle make_packet() { return pool_.make(now_); }
  const PacketPool& packet_pool() const { return pool_; }

  // Asks the simulation to call its between-windows hooks after the
  // current window (e.g. a flow completed: are they all done?).
  void request_attention() { attention_ = true; }

  uint64_t events_dispatched() const { return events_; }
  uint64_t fingerprint() const { return fingerprint_; }
  size_t pending_events() const { return queue_.size(); }
  size_t model_events_pending() const { return model_pending_; }

 private:
  friend class Simulation;
  friend class Link;

  // A frame on its way to another partition (contract 2).
  struct Transfer {
    Link* link;
    Time due;
    Packet* packet;
  };
  // The frames one partition sends another, double-buffered: in window w the
  // sender appends to buffer w % 2 while the receiver takes in buffer
  // (w - 1) % 2, sent in the window before.
  struct Channel {
    std::vector<Transfer> buffer[2];
    // The earliest (due, class and tag) in each buffer: the receiver's
    // earliest event, as far as the next window's bound is concerned.
    Time min_due[2] = {Time::infinite(), Time::infinite()};
    uint64_t min_class_tag[2] = {UINT64_MAX, UINT64_MAX};
    void push(uint32_t parity, const Transfer& x, uint64_t class_tag) {
      buffer[parity].push_back(x);
      if (x.due < min_due[parity] ||
          (x.due == min_due[parity] && class_tag < min_class_tag[parity])) {
        min_due[parity] = x.due;
        min_class_tag[parity] = class_tag;
      }
    }
  };

  // Dispatches the next event; call queue_.ready() first.
  void dispatch_one() {
    const Time t = queue_.top_time();
    Event* e = queue_.pop();
    if (e->cls_ < EventClass::kSample) --model_pending_;
    now_ = t;
    ++events_;
    fingerprint_ = mix64(fingerprint_ ^ static_cast<uint64_t>(t.in_ps())) ^ e->class_tag();
    e->handler_(*e);
  }
  // Dispatches every event before (bound, bound_class_tag) in queue order.
  void run_until(Time bound, uint64_t bound_class_tag);
  // One window on this partition's thread: takes in the frames sent to it
  // in the window before, runs to the bound, publishes its next event.
  void run_window(uint32_t parity, Time bound, uint64_t bound_class_tag);
  // Hands the frames in every buffer of the channels into it to their links.
  void take_in_all();
  // next_time_/next_class_tag_ := the earliest event in the queue.
  void publish();
  // Frames in the channels into it.
  size_t in_flight() const;

  Simulation& sim_;
  uint32_t index_;
  const Phase* phase_;
  Time now_;
  EventQueue queue_;
  PacketPool pool_;
  uint64_t events_ = 0;
  size_t model_pending_ = 0;
  uint64_t fingerprint_ = 0;
  uint32_t parity_ = 0;                        // the current window's buffer in channels out
  std::vector<std::unique_ptr<Channel>> out_;  // by receiving partition; null: itself
  std::vector<Channel*> in_;                   // by sending partition; null: itself
  // Published at the end of each window, for the next window's bound, in
  // one cache line with the flag that says the window is finished.
  alignas(64) std::atomic<uint64_t> finished_{0};
  Time next_time_ = Time::infinite();
  uint64_t next_class_tag_ = UINT64_MAX;
  bool attention_ = false;
};

}  // namespace rdmasim
