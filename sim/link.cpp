#include "sim/link.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <stdexcept>

#include "sim/node.h"

namespace rdmasim {

Link::Link(Simulation& sim, std::string name, BitRate rate, Time delay)
    : Component(sim, std::move(name)),
      sender_(&ctx()),
      serializer_(rate),
      propagation_(this, delay, EventClass::kDelivery, id()),
      rng_(sim.rng_stream(this->name())) {
  if (rate.in_bps() <= 0) throw std::invalid_argument("link rate must be positive");
  if (delay <= Time::zero()) throw std::invalid_argument("link delay must be positive");
}

Time Link::transmit(PacketHandle p) {
  assert(sender_->phase() == Phase::kRunning && "links carry packets only while running");
  assert(idle() && "transmit on a busy link");
  assert(to() != nullptr && "link not connected");
  const Time now = sender_->now();
  const Time ser = serializer_.next(Bytes(p->wire_bytes));
  tx_end_ = now + ser;
  // A cut-through sender cannot finish a frame before the frame has finished
  // arriving: on a faster egress it waits for the last bit (underrun guard).
  if (p->rx_end > tx_end_) tx_end_ = p->rx_end;
  ++counters_.frames;
  counters_.wire_bytes += p->wire_bytes;
  counters_.busy += ser;
  if (p->kind == PacketKind::kData) {
    ++counters_.data_frames;
    counters_.payload_bytes += p->payload_bytes;
  } else if (is_link_control(p->kind)) {
    ++counters_.control_frames;
  }
  if (!up_) {
    ++counters_.lost_down;
    if (sender_losses_) sender_losses_->add(*p);
    return tx_end_;
  }
  if (ber_ > 0 && rng_.uniform01() >= std::exp(static_cast<double>(p->wire_bytes - outside_frame_) *
                                               8 * log1m_ber_)) {
    p->flags |= kFlagCorrupted;
  }
  if (cut_through_bytes_ > 0 && !is_link_control(p->kind)) {
    // A cut-through receiver gets the frame once its first bytes are in; it
    // learns when the last bit will be.
    p->rx_end = tx_end_ + propagation_.delay();
    const Time head = Bytes(std::min<int64_t>(cut_through_bytes_, p->wire_bytes)) / rate();
    send(now + head + propagation_.delay(), std::move(p));
  } else {
    // Store-and-forward: delivered when its last bit arrives.
    p->rx_end = Time::zero();
    send(tx_end_ + propagation_.delay(), std::move(p));
  }
  return tx_end_;
}

void Link::setup() {
  propagation_.bind(ctx());
  if (sim().checks()) {
    losses_ = std::make_unique<LossLedger>();
    sender_losses_ = std::make_unique<LossLedger>();
  }
  if (sender_ == &ctx()) return;
  channel_ = &sender_->channel_to(ctx(), propagation_.delay());
  sim().limit_lookahead(propagation_.delay());
}

void Link::hand_over(Time due, Packet* p) {
  // From now on the packet goes back to this partition's pool.
  p->pool = &ctx().pool_;
  propagation_.push_at(due, PacketHandle(p));
}

void Link::deliver(PacketHandle p) {
  if ((p->flags & kFlagCorrupted) != 0) {
    ++counters_.corrupted;
    if (losses_) losses_->add(*p);
    return;
  }
  const Receiver& r = propagation_.extra();
  r.node->receive(r.port, std::move(p));
}

void Link::set_up(bool up) {
  // Faults run between phases, once every channel has been emptied into
  // the links: the frames on the cable are all in the line.
  assert(channel_ == nullptr || channel_->size() == 0);
  if (up_ && !up) {
    if (losses_) propagation_.for_each([&](const Packet& p) { losses_->add(p); });
    counters_.lost_down += propagation_.clear();
  }
  up_ = up;
}

void Link::set_cut_through(Bytes header) {
  cut_through_bytes_ = static_cast<int32_t>(std::min<int64_t>(header.count(), INT32_MAX));
}

void Link::set_bit_error_rate(double ber, Bytes outside_frame) {
  ber_ = ber;
  outside_frame_ = static_cast<uint32_t>(outside_frame.count());
  log1m_ber_ = ber > 0 ? std::log1p(-ber) : 0;
}

}  // namespace rdmasim
