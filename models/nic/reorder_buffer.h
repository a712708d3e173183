// ReorderBuffer: the selective-repeat responder's out-of-order placement
// (IRN, Mittal et al., SIGCOMM 2018, §3): packets that arrive ahead of the
// expected PSN are placed (here: remembered) and delivered in PSN order once
// the gap before them fills, so a message completes when all its packets are
// there.
//
// Contract:
//  1. The window starts at the responder's expected PSN and slides with it;
//     its capacity is a power of two (`sr_window`).
//  2. Storage is allocated on first use, once per QP, so QPs that never see
//     reordering cost nothing and steady state never allocates.
#pragma once

#include <cstdint>
#include <vector>

#include "models/nic/psn_bitmap.h"
#include "sim/units.h"

namespace rdmasim {

class ReorderBuffer {
 public:
  // What delivery needs to know of a placed packet.
  struct Slot {
    uint64_t message_id = 0;
    Time created;
    uint32_t payload = 0;
    uint32_t imm = 0;  // ImmDt, on the packet carrying it
    uint8_t opcode = 0;
    uint8_t flags = 0;
  };

  bool allocated() const { return present_.allocated(); }
  void allocate(uint32_t capacity, uint64_t base) {
    present_ = PsnBitmap(capacity);
    present_.reset(base);
    slots_.resize(capacity);
  }
  uint32_t capacity() const { return present_.capacity(); }
  uint32_t count() const { return allocated() ? present_.count() : 0; }
  bool has(uint64_t offset) const { return allocated() && present_.test(offset); }
  // Places a packet `offset` PSNs past the base; false if beyond the window.
  bool place(uint64_t offset, const Slot& s) {
    if (!present_.set(offset)) return false;
    slots_[index(offset)] = s;
    return true;
  }
  const Slot& at(uint64_t offset) const { return slots_[index(offset)]; }
  // Slides the base by n (the responder's expected PSN moved on).
  void advance(uint64_t n) {
    if (allocated()) present_.advance(n);
  }
  // SACK bitmap: bit i set = PSN base + i has been placed.
  uint64_t sack() const { return allocated() ? present_.word(0) : 0; }

 private:
  size_t index(uint64_t offset) const {
    return static_cast<size_t>((present_.base() + offset) & (present_.capacity() - 1));
  }

  PsnBitmap present_;
  std::vector<Slot> slots_;
};

}  // namespace rdmasim
