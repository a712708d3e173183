// QueueSampler: records the depth of switch egress queues every `interval`.
// Sparse: a (switch, port, priority) appears when it holds bytes, and once
// more with 0 when it has just emptied, so plots fall back to zero without
// a row for every idle queue at every tick.
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

class QueueSampler : public Component {
 public:
  QueueSampler(Simulation& sim, std::string name, std::vector<const Switch*> switches,
               Time interval)
      : Component(sim, std::move(name)),
        switches_(std::move(switches)),
        interval_(interval),
        tick_(this, EventClass::kSample, id()) {}

  void setup() override {
    for (const Switch* s : switches_)
      was_nonzero_.emplace_back(size_t{s->num_ports()} * s->lanes(), false);
    ctx().schedule(tick_, Time::zero());
  }
  std::vector<QueueSample>& samples() { return samples_; }

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
      }
    }
    if (sim().model_events_pending() > 0) ctx().schedule_in(tick_, interval_);
  }

  std::vector<const Switch*> switches_;
  Time interval_;
  std::vector<std::vector<bool>> was_nonzero_;
  std::vector<QueueSample> samples_;
  MemberEvent<QueueSampler, &QueueSampler::sample> tick_;
};

}  // namespace rdmasim
