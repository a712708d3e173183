#include "models/switch/mmu.h"

#include <algorithm>
#include <bit>
#include <string>

#include "sim/config_error.h"
#include "sim/invariants.h"

namespace rdmasim {

const char* to_string(DropReason r) {
  switch (r) {
    case DropReason::kNone:
      return "none";
    case DropReason::kHeadroom:
      return "headroom";
    case DropReason::kBuffer:
      return "buffer";
    case DropReason::kEgressLimit:
      return "egress_limit";
    case DropReason::kNoRoute:
      return "no_route";
    case DropReason::kWatchdog:
      return "watchdog";
    case DropReason::kPortDown:
      return "port_down";
    case DropReason::kHeadOfQueueLifetime:
      return "head_of_queue_lifetime";
    case DropReason::kCount:
      break;
  }
  return "?";
}

Mmu::Mmu(const SwitchConfig& cfg, uint32_t ports, std::vector<Bytes> headroom, uint8_t lanes)
    : cfg_(cfg),
      q_(nullptr),
      reserve_(cfg.reserve.count()),
      pool_(0),
      lane_shift_(static_cast<uint8_t>(std::bit_width(std::bit_ceil(uint32_t{lanes})) - 1)),
      queues_(static_cast<size_t>(ports) << lane_shift_),
      headroom_(std::move(headroom)),
      peak_headroom_(static_cast<size_t>(ports) << lane_shift_, 0) {
  q_ = queues_.data();
  int lossless = 0;
  for (uint8_t p = 0; p < lanes; ++p) lossless += cfg.lossless(p) ? 1 : 0;
  int64_t all_headroom = 0;
  for (const Bytes& h : headroom_) all_headroom += h.count() * lossless;
  pool_ = cfg.buffer.count() - all_headroom - reserve_ * lanes * static_cast<int64_t>(ports);
  if (pool_ < 0) {
    throw ConfigError("fabric.switch.buffer: " + std::to_string(cfg.buffer.count()) +
                      " bytes are fewer than the reserves and headroom of a switch with " +
                      std::to_string(ports) + " ports (" +
                      std::to_string(cfg.buffer.count() - pool_) +
                      " bytes) (expected a larger buffer, or smaller reserve or headroom)");
  }
}

int64_t Mmu::pfc_threshold() const { return (pool_ - shared_used_) >> cfg_.pfc.alpha_shift; }

int64_t Mmu::ingress_occupancy(uint32_t port, uint8_t prio) const {
  const Queue& x = q(port, prio);
  return shared_of(x) + x.headroom_used;
}

DropReason Mmu::admit_(uint32_t in_port, uint8_t in_prio, uint32_t out_port, uint8_t out_prio,
                       uint32_t bytes) {
  Queue& x = q(in_port, in_prio);
  const int64_t b = bytes;
  const bool lossless = cfg_.lossless(in_prio);
  // How much of the packet the reserve takes, and how much is left for
  // the shared pool or the headroom.
  const int64_t to_reserve = std::clamp<int64_t>(reserve_ - x.bytes, 0, b);
  const int64_t rest = b - to_reserve;

  bool to_headroom = false;
  if (lossless && rest > 0) {
    if (cfg_.pfc.threshold == PfcThreshold::kDynamic) {
      // Above the threshold (or once headroom is in use) packets go to headroom.
      to_headroom = x.headroom_used > 0 || shared_of(x) + rest > pfc_threshold();
    } else {
      // Static (Broadcom-style PG limit): once the queue has reached XOFF,
      // further packets go to headroom; the one that reaches it does not.
      to_headroom = x.headroom_used > 0 || x.bytes >= cfg_.pfc.xoff.count();
    }
    if (!to_headroom && shared_used_ + rest > pool_) to_headroom = true;
    if (to_headroom && x.headroom_used + b > headroom_[in_port].count())
      return DropReason::kHeadroom;
  } else if (!lossless && rest > 0) {
    if (shared_used_ + rest > pool_) return DropReason::kBuffer;
    const double free = static_cast<double>(pool_ - shared_used_);
    if (static_cast<double>(q(out_port, out_prio).egress + b) > cfg_.lossy_alpha * free) {
      return DropReason::kEgressLimit;
    }
  }

  if (to_headroom) {
    x.headroom_used += b;
    int64_t& peak = peak_headroom_[index(in_port, in_prio)];
    peak = std::max(peak, x.headroom_used);
  } else {
    x.bytes += b;
    shared_used_ += rest;
  }
  q(out_port, out_prio).egress += b;
  used_ += b;
  peak_used_ = std::max(peak_used_, used_);
  return DropReason::kNone;
}

void Mmu::release_(uint32_t in_port, uint8_t in_prio, uint32_t out_port, uint8_t out_prio,
                   uint32_t bytes) {
  Queue& x = q(in_port, in_prio);
  const int64_t b = bytes;
  // Headroom drains first (it holds the newest bytes of a paused queue, but
  // what matters for PFC is that it empties before shared use is counted
  // down, as in HPCC's RemoveFromIngressAdmission).
  const int64_t from_headroom = std::min(x.headroom_used, b);
  x.headroom_used -= from_headroom;
  const int64_t from_main = b - from_headroom;
  const int64_t from_shared = std::min(from_main, shared_of(x));
  x.bytes -= from_main;
  shared_used_ -= from_shared;
  q(out_port, out_prio).egress -= b;
  used_ -= b;
}

void Mmu::audit(uint32_t in_port, uint8_t in_prio, uint32_t out_port, uint8_t out_prio) const {
  const Queue& in = q(in_port, in_prio);
  const Queue& out = q(out_port, out_prio);
  const int64_t buffer = cfg_.buffer.count();
  std::string where;
  std::string what;
  auto port = [](uint32_t p, uint8_t pr) {
    return "port " + std::to_string(p) + " priority " + std::to_string(pr);
  };
  if (in.bytes < 0 || in.headroom_used < 0 || in.headroom_used > headroom_[in_port].count()) {
    where = port(in_port, in_prio) + " (ingress)";
    what = "reserve+shared " + std::to_string(in.bytes) + " B, headroom " +
           std::to_string(in.headroom_used) + " B of " +
           std::to_string(headroom_[in_port].count()) + " B";
  } else if (out.egress < 0 || out.egress > buffer) {
    where = port(out_port, out_prio) + " (egress)";
    what = "egress count " + std::to_string(out.egress) + " B, buffer " + std::to_string(buffer) +
           " B";
  } else if (used_ < 0 || used_ > buffer || shared_used_ < 0 || shared_used_ > pool_) {
    where = "the buffer";
    what = "used " + std::to_string(used_) + " B of " + std::to_string(buffer) +
           " B, shared pool " + std::to_string(shared_used_) + " B of " + std::to_string(pool_) +
           " B";
  } else {
    return;
  }
  const std::string who = owner_ != nullptr ? owner_->name() : std::string("mmu");
  throw InvariantViolation("buffer_accounting", who + " " + where,
                           owner_ != nullptr ? owner_->ctx().now() : Time::zero(),
                           what + " (expected 0 <= count <= its bound)");
}

bool Mmu::xoff_due(uint32_t port, uint8_t prio) const {
  const Queue& x = q(port, prio);
  if (!cfg_.lossless(prio)) return false;
  if (cfg_.pfc.threshold == PfcThreshold::kDynamic) {
    return x.headroom_used > 0 || shared_of(x) >= pfc_threshold();
  }
  return x.headroom_used > 0 || x.bytes >= cfg_.pfc.xoff.count();
}

bool Mmu::xon_due(uint32_t port, uint8_t prio) const {
  const Queue& x = q(port, prio);
  if (x.headroom_used > 0) return false;
  if (cfg_.pfc.threshold == PfcThreshold::kDynamic) {
    const int64_t shared = shared_of(x);
    return shared == 0 || shared + cfg_.pfc.resume_offset.count() <= pfc_threshold();
  }
  return x.bytes <= cfg_.pfc.xon.count();
}

}  // namespace rdmasim
