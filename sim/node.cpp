#include "sim/node.h"

#include "sim/link.h"

namespace rdmasim {

Port::Port(Node& owner, uint32_t index)
    : owner_(owner), index_(index), tx_done_(this, EventClass::kTransmit, owner.id()) {}

void Port::wake() { wake_at(owner_.sim().now()); }

void Port::wake_at(Time t) {
  if (link_ == nullptr || transmitting_) return;  // the end of the frame pulls anyway
  if (!tx_done_.scheduled()) {
    owner_.sim().schedule(tx_done_, t);
  } else if (tx_done_.when() > t) {
    owner_.sim().reschedule(tx_done_, t);
  }
}

void Port::on_tx_done() {
  transmitting_ = false;
  PacketHandle p = owner_.next_packet(index_);
  if (!p) return;  // idle until the next wake()
  transmitting_ = true;
  owner_.sim().schedule(tx_done_, link_->transmit(std::move(p)));
}

}  // namespace rdmasim
