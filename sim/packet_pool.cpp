#include "sim/packet.h"

namespace rdmasim {

void PacketPool::grow() {
  chunks_.push_back(std::make_unique<Packet[]>(kChunk));
  Packet* chunk = chunks_.back().get();
  for (int i = kChunk - 1; i >= 0; --i) {
    chunk[i].next_free = free_;
    free_ = &chunk[i];
  }
}

}  // namespace rdmasim
