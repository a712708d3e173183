// LinkSampler: records every link direction's cumulative counters every
// `interval`, and once more when the run ends, for utilisation over time.
// Sparse: a direction appears only at ticks where its counters changed since
// the previous tick, so idle links cost nothing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/link.h"
#include "sim/simulation.h"

namespace rdmasim {

struct LinkSample {
  Time time;
  uint32_t link;  // index into the sampled list (topology link k: 2k and 2k+1)
  uint64_t frames;
  int64_t wire_bytes;     // cumulative
  int64_t payload_bytes;  // cumulative
};

class LinkSampler : public Component {
 public:
  LinkSampler(Simulation& sim, std::string name, std::vector<const Link*> links, Time interval)
      : Component(sim, std::move(name)),
        links_(std::move(links)),
        last_(links_.size(), -1),
        interval_(interval),
        tick_(this, EventClass::kSample, id()) {}

  void setup() override { ctx().schedule(tick_, Time::zero()); }
  std::vector<LinkSample>& samples() { return samples_; }
  // One last sample at the end of the run, so that every direction's rows
  // add up to its totals.
  void finish() override { record(); }

 private:
  void sample() {
    record();
    if (sim().model_events_pending() > 0) ctx().schedule_in(tick_, interval_);
  }
  void record() {
    const Time now = ctx().now();
    for (uint32_t i = 0; i < links_.size(); ++i) {
      const LinkCounters& c = links_[i]->counters();
      if (c.wire_bytes != last_[i]) {
        samples_.push_back({now, i, c.frames, c.wire_bytes, c.payload_bytes});
        last_[i] = c.wire_bytes;
      }
    }
  }

  std::vector<const Link*> links_;
  std::vector<int64_t> last_;
  Time interval_;
  std::vector<LinkSample> samples_;
  MemberEvent<LinkSampler, &LinkSampler::sample> tick_;
};

}  // namespace rdmasim
