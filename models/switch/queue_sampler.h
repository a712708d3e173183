// QueueSampler: records the depth of switch egress queues every `interval`,
// and on InfiniBand ports the occupancy of each data VL's receive buffer
// (the credits it holds, IBA §7.9). Sparse: a (switch, port, priority or
// VL) appears when it holds bytes, and once more with 0 when it has just
// emptied, so plots fall back to zero without a row for every idle queue at
// every tick.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/switch/switch.h"
#include "sim/simulation.h"

namespace rdmasim {

struct QueueSample {
  Time time;
  uint32_t node;
  uint32_t port;
  uint8_t priority;
  int64_t bytes;  // wire bytes queued (excluding the frame being sent)
};

struct VlBufferSample {
  Time time;
  uint32_t node;
  uint32_t port;  // the receiving port
  uint8_t vl;
  uint64_t blocks;  // 64-byte blocks of the VL's receive buffer in use
};

class QueueSampler : public Component {
 public:
  QueueSampler(Simulation& sim, std::string name, std::vector<const Switch*> switches,
               Time interval)
      : Component(sim, std::move(name)),
        switches_(std::move(switches)),
        interval_(interval),
        tick_(this, EventClass::kSample, id()) {}

  void setup() override {
    for (const Switch* s : switches_) {
      was_nonzero_.emplace_back(size_t{s->num_ports()} * s->lanes(), false);
      vl_was_nonzero_.emplace_back(size_t{s->num_ports()} * s->lanes(), false);
    }
    ctx().schedule(tick_, Time::zero());
  }
  std::vector<QueueSample>& samples() { return samples_; }
  std::vector<VlBufferSample>& vl_buffer_samples() { return vl_samples_; }

 private:
  void sample() {
    const Time now = ctx().now();
    for (size_t i = 0; i < switches_.size(); ++i) {
      const Switch& s = *switches_[i];
      for (uint32_t p = 0; p < s.num_ports(); ++p) {
        const uint16_t nonempty = s.egress(p).nonempty_mask();
        for (uint8_t q = 0; q < s.lanes(); ++q) {
          const bool now_nonzero = (nonempty >> q) & 1;
          const size_t k = size_t{p} * s.lanes() + q;
          if (now_nonzero || was_nonzero_[i][k]) {
            samples_.push_back({now, s.id(), p, q, s.egress(p).bytes(q)});
          }
          was_nonzero_[i][k] = now_nonzero;
        }
        const Credits* c = s.flow_control(p).credits();
        if (c == nullptr) continue;
        for (uint8_t vl = 0; vl < c->lanes() && vl < s.lanes(); ++vl) {
          const uint64_t blocks = c->occupied(vl);
          const size_t k = size_t{p} * s.lanes() + vl;
          if (blocks > 0 || vl_was_nonzero_[i][k])
            vl_samples_.push_back({now, s.id(), p, vl, blocks});
          vl_was_nonzero_[i][k] = blocks > 0;
        }
      }
    }
    if (sim().model_events_pending() > 0) ctx().schedule_in(tick_, interval_);
  }

  std::vector<const Switch*> switches_;
  Time interval_;
  std::vector<std::vector<bool>> was_nonzero_;
  std::vector<QueueSample> samples_;
  std::vector<std::vector<bool>> vl_was_nonzero_;
  std::vector<VlBufferSample> vl_samples_;
  MemberEvent<QueueSampler, &QueueSampler::sample> tick_;
};

}  // namespace rdmasim
