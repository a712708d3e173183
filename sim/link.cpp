#include "sim/link.h"

#include <cassert>
#include <stdexcept>

#include "sim/node.h"

namespace rdmasim {

Link::Link(Simulation& sim, std::string name, BitRate rate, Time delay)
    : Component(sim, std::move(name)),
      serializer_(rate),
      propagation_(this, sim, delay, EventClass::kDelivery, id()) {
  if (rate.in_bps() <= 0) throw std::invalid_argument("link rate must be positive");
  if (delay <= Time::zero()) throw std::invalid_argument("link delay must be positive");
}

Time Link::transmit(PacketHandle p) {
  assert(sim().phase() == Phase::kRunning && "links carry packets only while running");
  assert(idle() && "transmit on a busy link");
  assert(to_ != nullptr && "link not connected");
  const Time now = sim().now();
  const Time ser = serializer_.next(Bytes(p->wire_bytes));
  tx_end_ = now + ser;
  ++counters_.frames;
  counters_.wire_bytes += p->wire_bytes;
  counters_.busy += ser;
  if (p->kind == PacketKind::kData) {
    ++counters_.data_frames;
    counters_.payload_bytes += p->payload_bytes;
  }
  // Store-and-forward at the receiver: the frame is delivered when its last
  // bit arrives.
  propagation_.push_at(tx_end_ + propagation_.delay(), std::move(p));
  return tx_end_;
}

void Link::deliver(PacketHandle p) { to_->receive(to_port_, std::move(p)); }

}  // namespace rdmasim
