// WindowRecorder: the counters at the ends of the measurement window
// (`output.window`, docs/scenario.md): each flow's payload delivered so far
// and its congestion notification (CNPs, ECN echoes, cuts), every link
// direction's counters and the PFC frames switches have sent, taken at the
// window's start and end, so that a statistic over the window is the
// difference of the two.
//
// Contract:
//  1. An observer (sim/simulation.h contract 5): it reads NICs, links and
//     switches of every partition, between phases.
//  2. A snapshot at time t runs in EventClass::kSample, after every model
//     event at t, so the window (start, end] holds what happens after the
//     start's picosecond, up to and including the end's.
//  3. Events: one at the start (if given) and one at the end (if given and
//     models still had events pending at the start), nothing else. A run
//     that ends before a snapshot's time does not take it: then the start
//     is missing (the window lies after the run) or the end is the end of
//     the run (the caller takes the final counters).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/switch/switch.h"
#include "models/traffic/flow_generator.h"
#include "sim/link.h"
#include "sim/simulation.h"

namespace rdmasim {

struct WindowCounters {
  std::vector<int64_t> delivered;   // per flow (FlowGenerator::delivered)
  std::vector<LinkCounters> links;  // per link direction, in the order given
  uint64_t pfc_frames_sent = 0;     // by switches
  FlowGenerator::CcCounts cc;       // summed over the flows (FlowGenerator::cc_counts)
};

class WindowRecorder : public Component {
 public:
  WindowRecorder(Simulation& sim, std::string name, const FlowGenerator& traffic,
                 std::vector<const Link*> links, std::vector<const Switch*> switches,
                 std::optional<Time> start, std::optional<Time> end)
      : Component(sim, std::move(name)),
        traffic_(traffic),
        links_(std::move(links)),
        switches_(std::move(switches)),
        start_(start),
        end_(end),
        at_start_(this, EventClass::kSample, id()),
        at_end_(this, EventClass::kSample, id()) {}

  void setup() override {
    if (start_) {
      ctx().schedule(at_start_, *start_);
    } else if (end_) {
      ctx().schedule(at_end_, *end_);
    }
  }

  // The counters now (the final ones, after the run).
  WindowCounters take() const {
    WindowCounters c;
    for (uint32_t i = 0; i < traffic_.flows().size(); ++i) {
      c.delivered.push_back(traffic_.delivered(i));
      c.cc += traffic_.cc_counts(i);
    }
    for (const Link* l : links_) c.links.push_back(l->counters());
    for (const Switch* s : switches_) c.pfc_frames_sent += s->pfc_sent();
    return c;
  }
  // The snapshots, if the run reached their times.
  const std::optional<WindowCounters>& at_start() const { return start_counters_; }
  const std::optional<WindowCounters>& at_end() const { return end_counters_; }

 private:
  void on_start() {
    start_counters_ = take();
    // With no model event pending nothing changes any more: the end's
    // counters are these, and no event keeps the run going.
    if (end_ && sim().model_events_pending() > 0) ctx().schedule(at_end_, *end_);
  }
  void on_end() { end_counters_ = take(); }

  const FlowGenerator& traffic_;
  std::vector<const Link*> links_;
  std::vector<const Switch*> switches_;
  std::optional<Time> start_, end_;
  std::optional<WindowCounters> start_counters_, end_counters_;
  MemberEvent<WindowRecorder, &WindowRecorder::on_start> at_start_;
  MemberEvent<WindowRecorder, &WindowRecorder::on_end> at_end_;
};

}  // namespace rdmasim
