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
  lane_.clear();
  lane_.resize(lanes);
  lanes_ = lanes;
  pending_grants_ = 0;
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
  shared_blocks_ = static_cast<uint64_t>(params.shared_buffer.count()) / kIbCreditBlockBytes;
  // Link initialization (before the run) leaves every sender with the
  // whole VL buffer of its receiver (same size at both ends), within the
  // widest window a grant can express; the shared pool is granted as VLs
  // get busy.
  for (Lane& l : lane_)
    l.limit = l.granted = l.promised = std::min(buffer_blocks_, kIbMaxCreditWindow);
  if (!params.period.is_infinite()) ctx.schedule_in(period_, params.period);
  emit_in_pull_ = shared_blocks_ == 0 && params.rx_delay + params.coalesce == Time::zero();
}

Time Credits::on_control_frame(const Packet& f, Time now) {
  if (f.fc_vl >= lanes()) return Time::infinite();
  Lane& l = lane_[f.fc_vl];
  // Transmit: the grant joins the FIFO of grants in flight, each usable
  // tx_delay after its own arrival; FCCL only grows, but for a revocation.
  for (; !l.pending.empty() && l.pending.front().usable_at <= now; --pending_grants_)
    l.limit = l.pending.pop_front().fccl;
  if (f.fc_revoke != 0) {
    // Obeyed at once: no earlier, larger grant is used from now on. The
    // answer (the next update's flow-control packet on this VL) says so,
    // behind everything sent before.
    l.limit = std::min(l.limit, f.fc_fccl);
    for (size_t i = 0; i < l.pending.size(); ++i)
      l.pending[i].fccl = std::min(l.pending[i].fccl, f.fc_fccl);
    l.obeyed = f.fc_revoke;  // the newest: the link keeps their order
    answer_ |= 1U << f.fc_vl;
    request_update();
  }
  const uint64_t newest = l.pending.empty() ? l.limit : l.pending[l.pending.size() - 1].fccl;
  const uint64_t fccl = std::max(newest, f.fc_fccl);
  const Time usable = now + params_.tx_delay;
  if (usable <= now) {
    l.limit = fccl;
  } else {
    l.pending.push_back(Grant{fccl, usable});
    ++pending_grants_;
  }
  // Receive: ABR takes the neighbour's FCTBS (IBA §7.9.4). Everything it
  // sent before this packet has arrived, so a difference is blocks lost on
  // the way, which hold no buffer: grant them back.
  if (f.fc_fctbs > l.abr) {
    l.abr = f.fc_fctbs;
    changed_ |= 1U << f.fc_vl;
    request_update();
  }
  // The sender answered the last revocation: what it sent under the older
  // grants has all arrived (it travelled ahead of this packet), so only the
  // grants since then still commit blocks.
  if (l.revoking && f.fc_obeyed == l.revoked) {
    l.revoking = false;
    l.promised = l.granted;
    changed_ |= 1U << f.fc_vl;
    request_update();
  }
  return usable;
}

uint64_t Credits::claimed_except(uint8_t lane) const {
  uint64_t claimed = 0;
  for (size_t i = 0; i < lane_.size(); ++i) {
    if (i == lane) continue;
    const uint64_t c = committed(lane_[i]);
    if (c > buffer_blocks_) claimed += c - buffer_blocks_;
  }
  return claimed;
}

uint64_t Credits::pool_share(uint8_t lane) const {
  uint64_t busy_vls = 0;
  for (const Lane& l : lane_) busy_vls += busy(l) ? 1 : 0;
  const uint64_t free = shared_blocks_ - std::min(shared_blocks_, claimed_except(lane));
  return std::min(free, shared_blocks_ / std::max<uint64_t>(busy_vls, 1));
}

uint64_t Credits::shared_claimed() const {
  return claimed_except(kMaxLanes);  // every lane
}

void Credits::on_departure(uint8_t lane, uint32_t wire) {
  if (lane >= lanes()) return;
  release(lane, wire);
  changed_ |= 1U << lane;
  request_update();
}

void Credits::note_pool_use() {
  uint64_t used = 0;
  for (const Lane& l : lane_) used += l.occupied > buffer_blocks_ ? l.occupied - buffer_blocks_ : 0;
  peak_pool_use_ = std::max(peak_pool_use_, used);
  if (used > shared_blocks_) ++overfull_;
}

void Credits::request_update() {
  if (!update_scheduled_) {
    update_scheduled_ = true;
    ctx_->schedule_in(update_, params_.rx_delay + params_.coalesce);
  }
}

void Credits::send(uint8_t lane) {
  Lane& l = lane_[lane];
  l.granted = grant(lane);
  l.promised = std::max(l.promised, l.granted);
  l.abr_granted = l.abr;
  emit(lane);
}

void Credits::emit(uint8_t lane) {
  Lane& l = lane_[lane];
  ++packets_sent_;
  ++l.fc_sent;
  // An unanswered revocation rides on every packet for the VL, so a lost
  // one is repeated by the next (a periodic one at the latest).
  sink_->emit_link_control(port_, make_ib_flow_control(*ctx_, lane, l.granted, l.sent,
                                                       l.revoking ? l.revoked : 0, l.obeyed));
}

void Credits::revoke(uint8_t lane) {
  // Only an idle lane (nothing held) is revoked: its grant falls to ABR +
  // its own buffer, and its sender's larger grant stays committed
  // (`promised`) until the answer.
  Lane& l = lane_[lane];
  assert(l.occupied == 0 && !l.revoking);
  l.granted = l.abr + std::min(buffer_blocks_, kIbMaxCreditWindow);
  assert(l.granted < l.promised);
  if (++l.revoked == 0) l.revoked = 1;
  ++l.revocations;
  l.revoking = true;
  emit(lane);
}

void Credits::on_update() {
  update_scheduled_ = false;
  // Answer the revocations obeyed since the last update.
  for (uint32_t lanes = answer_; lanes != 0; lanes &= lanes - 1)
    send(static_cast<uint8_t>(__builtin_ctz(lanes)));
  answer_ = 0;
  // A static split's grant grows only on a lane that freed blocks or took
  // its neighbour's FCTBS; with a pool any busy lane's share may have grown.
  if (shared_blocks_ == 0) {
    for (uint32_t lanes = changed_; lanes != 0; lanes &= lanes - 1) {
      const auto i = static_cast<uint8_t>(__builtin_ctz(lanes));
      if (grant(i) > lane_[i].granted) send(i);
    }
    changed_ = 0;
    return;
  }
  changed_ = 0;
  // An idle lane's claim is taken back while another lane is busy (a lane
  // that is busy again later claims anew).
  bool any_busy = false;
  for (const Lane& l : lane_) any_busy = any_busy || busy(l);
  for (uint8_t i = 0; any_busy && i < lanes(); ++i) {
    const Lane& l = lane_[i];
    if (!busy(l) && !l.revoking && committed(l) > buffer_blocks_) revoke(i);
  }
  // With a pool: every lane, until no grant grows (a lane that stops being
  // busy raises the others' equal shares). Each pass that sends commits
  // blocks, so the passes end.
  for (bool grew = true; grew;) {
    grew = false;
    for (uint8_t i = 0; i < lanes(); ++i) {
      if (grant(i) > lane_[i].granted) {
        send(i);
        grew = true;
      }
      lane_[i].abr_granted = lane_[i].abr;  // looked at: busy again only on new arrivals
    }
  }
}

void Credits::restart_link() {
  pending_grants_ = 0;
  answer_ = 0;
  changed_ = 0;
  for (uint8_t i = 0; i < lanes(); ++i) {
    Lane& l = lane_[i];
    while (!l.pending.empty()) l.pending.pop_front();
    l.sent = 0;
    l.limit = 0;
    l.obeyed = 0;
    l.abr = l.abr_granted = 0;
    l.granted = l.promised = 0;
    l.revoked = 0;
    l.revoking = false;
  }
  // Lanes beyond the data VLs carry nothing: as at the first initialisation.
  for (size_t i = params_.data_vls; i < lane_.size(); ++i)
    lane_[i].limit = lane_[i].granted = lane_[i].promised =
        std::min(buffer_blocks_, kIbMaxCreditWindow);
  const size_t vls = std::min<size_t>(lane_.size(), params_.data_vls);
  for (size_t i = 0; i < vls; ++i) send(static_cast<uint8_t>(i));
}

void Credits::on_period() {
  const size_t vls = std::min<size_t>(lane_.size(), params_.data_vls);
  for (size_t i = 0; i < vls; ++i) send(static_cast<uint8_t>(i));
  ctx_->schedule_in(period_, params_.period);
}

}  // namespace rdmasim
