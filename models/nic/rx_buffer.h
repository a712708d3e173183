// RxBuffer: the NIC's receive buffer, a FIFO that drains into host memory
// (PCIe) at a fixed rate. Occupancy is kept per priority so that the NIC can
// generate PFC (IEEE 802.1Qbb) when the host falls behind the wire.
//
// Contract:
//  1. A frame occupies its frame bytes (destination MAC through FCS) from its
//     arrival until it has drained; frames drain one after another in arrival
//     order, each taking frame bytes / drain rate.
//  2. A frame that does not fit in the buffer is dropped (admit returns
//     false), as a full MAC FIFO would.
//  3. The buffer holds packet handles in a Ring: no allocation in steady state.
#pragma once

#include <cstdint>
#include <vector>

#include "models/flow_control/link_flow_control.h"
#include "sim/packet.h"
#include "sim/ring.h"
#include "sim/units.h"

namespace rdmasim {

class RxBuffer {
 public:
  void configure(BitRate drain, Bytes capacity) {
    drain_ = drain;
    capacity_ = capacity;
  }
  bool enabled() const { return drain_.in_bps() > 0; }
  // Occupancy is kept per lane (priority) of the port.
  void set_lanes(uint8_t lanes) { occupancy_.assign(lanes, Bytes()); }

  // A frame of `bytes` arrived at `now`: takes it, or returns false (and
  // leaves `p` to the caller) if it does not fit.
  bool admit(PacketHandle& p, Bytes bytes, Time now) {
    if (total_ + bytes > capacity_) return false;
    const Time start = last_done_ > now ? last_done_ : now;
    last_done_ = start + bytes / drain_;
    const uint8_t prio = p->priority;
    total_ += bytes;
    occupancy_[prio] += bytes;
    queue_.push_back(Entry{std::move(p), last_done_, bytes, prio});
    return true;
  }
  bool empty() const { return queue_.empty(); }
  // When the oldest frame has drained.
  Time next_done() const { return queue_.front().done; }
  // Removes the oldest frame (it has drained) and returns it.
  PacketHandle pop(uint8_t* priority) {
    Entry e = queue_.pop_front();
    total_ -= e.bytes;
    occupancy_[e.priority] -= e.bytes;
    *priority = e.priority;
    return std::move(e.packet);
  }
  Bytes occupancy(int priority) const { return occupancy_[priority]; }
  Bytes total() const { return total_; }

 private:
  struct Entry {
    PacketHandle packet;
    Time done;
    Bytes bytes;
    uint8_t priority = 0;
  };
  BitRate drain_;
  Bytes capacity_;
  Bytes total_;
  std::vector<Bytes> occupancy_ = std::vector<Bytes>(kEthernetPriorities);
  Time last_done_;
  Ring<Entry> queue_;
};

}  // namespace rdmasim
