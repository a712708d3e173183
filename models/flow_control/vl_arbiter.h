// VlArbiter: the VL arbitration of one InfiniBand output port (IBA Vol 1
// §7.6.9), which picks the data VL that sends next; it replaces strict
// priority and DWRR (egress_queues.h) on credited ports.
//
// Two tables, high and low priority, each a list of (VL, weight) entries,
// served in turn: an entry lets its VL send `weight` x 64 bytes, counted
// from the LRH through the ICRC (the VCRC's 2 bytes are left out), and a
// packet that starts within the weight is finished, so a turn may overshoot
// by up to one packet; then the next entry takes over with its whole weight.
// An entry whose VL has no packet ready (none queued, or not enough credits)
// or whose weight is 0 is passed over and loses what was left of its turn.
//
// The high table is served first, but while a low-priority packet waits at
// most `high_limit` x 4096 bytes of high-priority data are sent before a
// low-priority packet goes: a high packet may start while the count is
// below the limit (so a burst exceeds it by at most a packet), 0 lets one
// high packet go at a time, 255 means no limit. The count restarts when a
// low packet is sent or when none waits.
//
// Cost: pick() is O(table entries) in the worst case (a table holds at most
// 64); with one VL ready it returns on the first entry that names it.
#pragma once

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "models/proto/ib_qos.h"

namespace rdmasim {

class VlArbiter {
 public:
  explicit VlArbiter(const VlArbConfig& cfg)
      : high_(cfg.high),
        low_(cfg.low),
        high_mask_(VlArbConfig::vls_of(cfg.high)),
        low_mask_(VlArbConfig::vls_of(cfg.low)),
        limit_bytes_(cfg.high_limit == 255 ? UINT64_MAX : uint64_t{cfg.high_limit} * 4096) {}

  // The VL to send next among `ready` (bit v: VL v's head packet may be sent
  // now), or -1; `bytes(vl)` is that head packet's size as arbitration
  // counts it. The choice is committed: the caller sends that packet.
  template <class Bytes>
  int pick(uint16_t ready, Bytes&& bytes) {
    const int vl = choose(ready);
    if (vl >= 0) charge(bytes(static_cast<uint8_t>(vl)));
    return vl;
  }

  // pick() in two steps, for a sender that builds the packet once its VL is
  // chosen (a NIC): choose() names the VL, charge() then takes the size of
  // the packet sent on it (before the next choose()).
  int choose(uint16_t ready) {
    const uint16_t hi = ready & high_mask_;
    const uint16_t lo = ready & low_mask_;
    if (lo == 0) high_sent_ = 0;  // the limit holds only while a low packet waits
    if (hi != 0 && (lo == 0 || high_sent_ == 0 || high_sent_ < limit_bytes_)) {
      chosen_ = kHigh;
      count_high_ = lo != 0;
      return find(high_, hi);
    }
    if (lo != 0) {
      chosen_ = kLow;
      count_high_ = false;
      return find(low_, lo);
    }
    chosen_ = kNone;
    return -1;
  }
  void charge(uint64_t size) {
    if (chosen_ == kNone) return;
    Table& t = chosen_ == kHigh ? high_ : low_;
    t.left -= static_cast<int64_t>(size);
    if (t.left <= 0) t.next();
    if (count_high_) high_sent_ += size;
    if (chosen_ == kLow) high_sent_ = 0;  // a low packet went
    chosen_ = kNone;
  }

  // The VLs that can ever send (an entry of nonzero weight in a table).
  uint16_t vls() const { return high_mask_ | low_mask_; }
  // High-priority bytes sent since a low packet last had its chance.
  uint64_t high_sent() const { return high_sent_; }

 private:
  struct Table {
    explicit Table(std::vector<VlArbEntry> e) : entries(std::move(e)) {
      // after[i][vl]: the first entry after i (cyclically, i itself last)
      // that names vl with a weight, or kNoEntry.
      after.resize(entries.size());
      for (size_t i = 0; i < entries.size(); ++i) {
        after[i].fill(kNoEntry);
        for (size_t d = 1; d <= entries.size(); ++d) {
          const size_t k = (i + d) % entries.size();
          const VlArbEntry& entry = entries[k];
          if (entry.weight > 0 && after[i][entry.vl] == kNoEntry)
            after[i][entry.vl] = static_cast<uint8_t>(k);
        }
      }
    }
    static constexpr uint8_t kNoEntry = 0xFF;
    std::vector<VlArbEntry> entries;
    std::vector<std::array<uint8_t, 16>> after;
    size_t at = 0;      // the entry whose turn it is
    int64_t left = 0;   // bytes left of its turn
    bool fresh = true;  // its turn has not started: `left` is not loaded
    void next() {
      at = at + 1 == entries.size() ? 0 : at + 1;
      fresh = true;
    }
  };

  // The VL of `t`'s entry that sends next, from its current entry on: the
  // first whose VL is in `ready` and has weight left (the entry stays
  // current until charge() ends its turn). Some entry qualifies (`ready` is
  // within the table's VLs), so at most every entry is visited once more.
  static int find(Table& t, uint16_t ready) {
    if ((ready & (ready - 1)) == 0) {
      // One VL ready: what the walk below would do, by the table of next
      // entries (the entries passed over lose their turns all the same).
      const auto vl = static_cast<uint8_t>(__builtin_ctz(ready));
      const VlArbEntry& e = t.entries[t.at];
      if (e.vl == vl && (t.fresh ? e.weight > 0 : t.left > 0)) {
        if (t.fresh) {
          t.left = int64_t{e.weight} * 64;
          t.fresh = false;
        }
        return vl;
      }
      const uint8_t k = t.after[t.at][vl];
      if (k == Table::kNoEntry) return -1;
      t.at = k;
      t.left = int64_t{t.entries[k].weight} * 64;
      t.fresh = false;
      return vl;
    }
    for (size_t n = 0; n <= t.entries.size(); ++n) {
      const VlArbEntry& e = t.entries[t.at];
      if (t.fresh) {
        t.left = int64_t{e.weight} * 64;
        t.fresh = false;
      }
      if (t.left > 0 && ((ready >> e.vl) & 1) != 0) return e.vl;
      t.next();
    }
    return -1;
  }

  Table high_;
  Table low_;
  uint16_t high_mask_;
  uint16_t low_mask_;
  uint64_t limit_bytes_;
  uint64_t high_sent_ = 0;
  enum Chosen : uint8_t { kNone, kHigh, kLow };
  Chosen chosen_ = kNone;    // the table choose() served, until charge()
  bool count_high_ = false;  // it was the high one, with a low packet waiting
};

}  // namespace rdmasim
