#include "sim/node.h"

#include <algorithm>
#include <cassert>

#include "sim/link.h"

namespace rdmasim {

Port::Port(Node& owner, uint32_t index)
    : owner_(owner), index_(index), tx_done_(this, EventClass::kTransmit, owner.id()) {}

bool Port::transmitting() const { return owner_.ctx().now() < busy_until_; }

void Port::wake() { wake_at(owner_.ctx().now()); }

void Port::wake_at(Time t) {
  if (link_ == nullptr) return;
  t = std::max(t, busy_until_);
  if (!tx_done_.scheduled()) {
    owner_.ctx().schedule(tx_done_, t);
  } else if (tx_done_.when() > t) {
    owner_.ctx().reschedule(tx_done_, t);
  }
}

bool Port::send_now(PacketHandle& f) {
#ifndef NDEBUG
  assert(!pulling_ && "send_now from within this port's own pull");
#endif
  if (link_ == nullptr || owner_.ctx().now() < busy_until_) return false;
  busy_until_ = link_->transmit(std::move(f));
  if (tx_done_.scheduled() && tx_done_.when() < busy_until_)
    owner_.ctx().reschedule(tx_done_, busy_until_);
  return true;
}

void Port::on_tx_done() {
#ifndef NDEBUG
  pulling_ = true;
#endif
  PacketHandle p = owner_.next_packet(index_);
#ifndef NDEBUG
  pulling_ = false;
#endif
  if (!p) return;  // idle until the next wake()
  busy_until_ = link_->transmit(std::move(p));
  const Time next = owner_.next_pull(index_, busy_until_);
  if (tx_done_.scheduled()) {
    // next_packet() woke the port: not before this frame ends.
    const Time t = std::max(std::min(next, tx_done_.when()), busy_until_);
    if (t != tx_done_.when()) owner_.ctx().reschedule(tx_done_, t);
  } else if (!next.is_infinite()) {
    owner_.ctx().schedule(tx_done_, std::max(next, busy_until_));
  }
}

}  // namespace rdmasim
