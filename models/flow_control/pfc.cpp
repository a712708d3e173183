#include "models/flow_control/pfc.h"

#include <cassert>

namespace rdmasim {

Pfc::Pfc(uint8_t lanes) : refresh_(this, EventClass::kTimer) { set_lanes(lanes); }

void Pfc::set_lanes(uint8_t lanes) {
  assert(lanes >= 1 && lanes <= kEthernetPriorities && "a PFC frame carries eight priorities");
  lane_.assign(lanes, Lane{});
}

void Pfc::attach(Partition& ctx, ControlSink& sink, uint32_t port, uint32_t tag, BitRate rate,
                 const Params& params) {
  ctx_ = &ctx;
  sink_ = &sink;
  port_ = port;
  refresh_.set_tag(tag);
  rate_ = rate;
  params_ = params;
}

Time Pfc::on_control_frame(const Packet& f, Time now) {
  const Time effective = now + params_.response_delay;
  Time recheck = Time::infinite();
  for (uint32_t p = 0; p < lane_.size(); ++p) {
    if (((f.pfc_class_enable >> p) & 1) == 0) continue;
    Lane& l = lane_[p];
    if (f.pfc_quanta[p] == 0) {
      // Resume: the pause ends when the frame takes effect (or stands, if
      // it has already ended).
      if (l.until > effective) l.until = effective;
      if (l.from > l.until) l.from = l.until;
      recheck = std::min(recheck, effective);
    } else {
      // A refresh while paused extends the pause; otherwise it starts anew.
      if (!(l.from <= effective && effective < l.until)) l.from = effective;
      l.until = effective + pfc_pause_time(f.pfc_quanta[p], rate_);
      ++pauses_received_;
      recheck = std::min(recheck, l.until);
    }
  }
  return recheck;
}

void Pfc::xoff(uint8_t lane) {
  lane_[lane].pausing = true;
  send(lane, params_.quanta);
}

void Pfc::xon(uint8_t lane) {
  lane_[lane].pausing = false;
  send(lane, 0);
}

void Pfc::hold(uint8_t lane, Time until) {
  // Storms that overlap hold the lane until the last of them ends.
  lane_[lane].hold_until = std::max(lane_[lane].hold_until, until);
  send(lane, kPfcMaxQuanta);
  // See the hold's end even between refreshes.
  const Time end = std::max(until, ctx_->now());
  if (!until.is_infinite() && refresh_.when() > end) ctx_->reschedule(refresh_, end);
}

void Pfc::send(uint8_t lane, uint16_t quanta) {
  PacketHandle f = make_pfc_frame(*ctx_, static_cast<uint16_t>(1U << lane), quanta);
  if (quanta > 0) {
    // Refresh the pause before it runs out, while it is still wanted.
    const Time d = pfc_pause_time(quanta, rate_);
    const Time at =
        ctx_->now() +
        Time::ps(static_cast<int64_t>(static_cast<double>(d.in_ps()) * params_.refresh));
    lane_[lane].refresh_at = at;
    if (!refresh_.scheduled()) {
      ctx_->schedule(refresh_, at);
    } else if (refresh_.when() > at) {
      ctx_->reschedule(refresh_, at);
    }
  }
  sink_->emit_link_control(port_, std::move(f));
}

void Pfc::on_refresh() {
  const Time now = ctx_->now();
  for (uint32_t i = 0; i < lane_.size(); ++i) {
    Lane& l = lane_[i];
    const bool held = now < l.hold_until;
    if ((l.pausing || held) && l.refresh_at <= now)
      send(static_cast<uint8_t>(i), held ? kPfcMaxQuanta : params_.quanta);
    if (!held && l.hold_until > Time::zero()) {
      // The hold is over: resume unless the buffer still needs the pause.
      l.hold_until = Time::zero();
      if (!l.pausing) send(static_cast<uint8_t>(i), 0);
    }
  }
  Time next = Time::infinite();
  for (const Lane& l : lane_) {
    if (l.pausing || l.hold_until > now) next = std::min(next, l.refresh_at);
    if (l.hold_until > now) next = std::min(next, l.hold_until);
  }
  if (next.is_infinite()) return;
  if (!refresh_.scheduled()) {
    ctx_->schedule(refresh_, next);
  } else if (refresh_.when() > next) {
    ctx_->reschedule(refresh_, next);
  }
}

}  // namespace rdmasim
