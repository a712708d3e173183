#include "sim/packet.h"

#include <new>
#include <type_traits>

namespace rdmasim {

void PacketPool::connect(const std::vector<PacketPool*>& pools) {
  for (PacketPool* from : pools) {
    for (PacketPool* home : pools) {
      if (from == home) continue;
      from->to_.emplace_back(home, std::make_unique<ReturnRing>());
      home->from_.push_back(from->to_.back().second.get());
    }
  }
}

bool PacketPool::send_home(Packet* p) {
  ReturnRing* r = nullptr;
  for (const auto& [home, ring] : to_) {
    if (home == p->home) {
      r = ring.get();
      break;
    }
  }
  // Not connected, or a home without a ring (the observers' pool): keep it.
  if (r == nullptr) return false;
  // Packets go home in chains (through next_free) of at least kChain, one
  // chain per slot; the home splices a chain into its free list at once,
  // without walking it. A full ring makes the chain longer: no packet is
  // kept from its home.
  p->next_free = r->first;
  r->first = p;
  if (r->last == nullptr) r->last = p;
  if (++r->chained < ReturnRing::kChain) return true;
  const uint64_t t = r->tail.load(std::memory_order_relaxed);
  if (t - r->seen_head == ReturnRing::kCapacity) {
    r->seen_head = r->head.load(std::memory_order_acquire);
    if (t - r->seen_head == ReturnRing::kCapacity) return true;
  }
  r->ring[t & (ReturnRing::kCapacity - 1)] = ReturnRing::Chain{r->first, r->last};
  r->tail.store(t + 1, std::memory_order_release);
  r->first = r->last = nullptr;
  r->chained = 0;
  return true;
}

void PacketPool::refill() {
  for (ReturnRing* r : from_) {
    uint64_t h = r->head.load(std::memory_order_relaxed);
    const uint64_t t = r->tail.load(std::memory_order_acquire);
    for (; h != t; ++h) {
      const ReturnRing::Chain c = r->ring[h & (ReturnRing::kCapacity - 1)];
      c.last->next_free = free_;
      free_ = c.first;
    }
    r->head.store(h, std::memory_order_release);
  }
  if (free_ == nullptr) grow();
}

// Packets and extension areas live in blocks that are unmapped, not
// destroyed, when the pool dies.
static_assert(std::is_trivially_destructible_v<Packet> &&
              std::is_trivially_destructible_v<PacketExt>);

PacketExt* PacketPool::new_ext() {
  if (ext_next_ == kExtChunk) {
    ext_chunks_.emplace_back(sizeof(PacketExt) * kExtChunk);
    auto* chunk = static_cast<PacketExt*>(ext_chunks_.back().data());
    for (int i = 0; i < kExtChunk; ++i) new (&chunk[i]) PacketExt{};
    ext_next_ = 0;
  }
  return &static_cast<PacketExt*>(ext_chunks_.back().data())[ext_next_++];
}

void PacketPool::grow() {
  chunks_.emplace_back(sizeof(Packet) * kChunk);
  auto* chunk = static_cast<Packet*>(chunks_.back().data());
  for (int i = kChunk - 1; i >= 0; --i) {
    new (&chunk[i]) Packet{};
    chunk[i].next_free = free_;
    free_ = &chunk[i];
  }
}

}  // namespace rdmasim
