#include "models/flow_control/credits.h"

#include <algorithm>
#include <cassert>

namespace rdmasim {

Credits::Credits(uint8_t lanes)
    : update_(this, EventClass::kTimer), period_(this, EventClass::kTimer) {
  set_lanes(lanes);
}

void Credits::set_lanes(uint8_t lanes) {
  assert(lanes >= 1 && lanes < kMaxLanes && "data VLs are VL0..VL14");
  lane_.assign(lanes, Lane{});
}

void Credits::attach(Partition& ctx, ControlSink& sink, uint32_t port, uint32_t tag,
                     const Params& params) {
  ctx_ = &ctx;
  sink_ = &sink;
  port_ = port;
  params_ = params;
  update_.set_tag(tag);
  period_.set_tag(tag);
  buffer_blocks_ = static_cast<uint64_t>(params.vl_buffer.count()) / kIbCreditBlockBytes;
  // Link initialization (before the run) leaves every sender with the
  // whole buffer of its receiver (same size at both ends).
  for (Lane& l : lane_) l.limit = l.pending_limit = buffer_blocks_;
  if (!params.period.is_infinite()) ctx.schedule_in(period_, params.period);
}

uint32_t Credits::sendable(Time now, Time& stable_until) const {
  uint32_t mask = 0;
  Time next = Time::infinite();
  for (uint32_t i = 0; i < lane_.size(); ++i) {
    const Lane& l = lane_[i];
    if (l.pending_from > now) next = std::min(next, l.pending_from);
    if (l.sent < limit(static_cast<uint8_t>(i), now)) mask |= 1U << i;
  }
  stable_until = next;
  return mask;
}

Time Credits::on_control_frame(const Packet& f, Time now) {
  if (f.fc_vl >= lanes()) return Time::infinite();
  Lane& l = lane_[f.fc_vl];
  // A grant still waiting for its tx_delay is folded into the new one
  // (FCCL only grows): its credits become usable with the later grant.
  if (now >= l.pending_from) l.limit = l.pending_limit;
  l.pending_limit = std::max(l.pending_limit, f.fc_fccl);
  l.pending_from = now + params_.tx_delay;
  return l.pending_from;
}

void Credits::on_departure(uint8_t lane, uint32_t wire) {
  if (lane >= lanes()) return;
  Lane& l = lane_[lane];
  const uint64_t blocks = ib_credits(wire);
  assert(l.occupied >= blocks);
  l.occupied -= blocks;
  l.freed += blocks;
  l.dirty = true;
  if (!update_scheduled_) {
    update_scheduled_ = true;
    ctx_->schedule_in(update_, params_.rx_delay + params_.coalesce);
  }
}

void Credits::send(uint8_t lane) {
  Lane& l = lane_[lane];
  l.dirty = false;
  ++packets_sent_;
  sink_->emit_link_control(port_, make_ib_flow_control(*ctx_, lane, l.freed + buffer_blocks_));
}

void Credits::on_update() {
  update_scheduled_ = false;
  for (uint32_t i = 0; i < lane_.size(); ++i) {
    if (lane_[i].dirty) send(static_cast<uint8_t>(i));
  }
}

void Credits::on_period() {
  for (uint32_t i = 0; i < lane_.size(); ++i) send(static_cast<uint8_t>(i));
  ctx_->schedule_in(period_, params_.period);
}

}  // namespace rdmasim
