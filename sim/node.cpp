#include "sim/node.h"

#include "sim/link.h"

namespace rdmasim {

Port::Port(Node& owner, uint32_t index)
    : owner_(owner), index_(index), tx_done_(this, EventClass::kTransmit, owner.id()) {}

void Port::wake() {
  if (!tx_done_.scheduled() && link_ != nullptr)
    owner_.sim().schedule(tx_done_, owner_.sim().now());
}

void Port::on_tx_done() {
  PacketHandle p = owner_.next_packet(index_);
  if (!p) return;  // idle until the next wake()
  owner_.sim().schedule(tx_done_, link_->transmit(std::move(p)));
}

}  // namespace rdmasim
