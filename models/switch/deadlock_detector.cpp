#include "models/switch/deadlock_detector.h"

#include <algorithm>
#include <functional>
#include <map>
#include <tuple>

#include "sim/link.h"

namespace rdmasim {

DeadlockDetector::DeadlockDetector(Simulation& sim, std::string name,
                                   std::vector<const Switch*> switches, Time timeout, Time interval,
                                   bool stop)
    : Component(sim, std::move(name)),
      switches_(std::move(switches)),
      timeout_(timeout),
      interval_(interval),
      stop_(stop),
      tick_(this, EventClass::kSample, id()) {}

void DeadlockDetector::setup() {
  if (!switches_.empty()) ctx().schedule_in(tick_, interval_);
}

void DeadlockDetector::check() {
  const Time now = ctx().now();
  using Key = std::tuple<uint32_t, uint32_t, uint8_t>;  // (switch index, port, priority)
  std::map<uint32_t, uint32_t> index_of;                // node id -> switch index
  for (uint32_t i = 0; i < switches_.size(); ++i) index_of[switches_[i]->id()] = i;

  // Stuck queues.
  std::map<Key, int> state;          // 0 unvisited, 1 on the DFS stack, 2 done
  bool paused_with_packets = false;  // a queue that could become stuck (paused or credit-blocked)
  for (uint32_t i = 0; i < switches_.size(); ++i) {
    const Switch& s = *switches_[i];
    for (uint32_t p = 0; p < s.num_ports(); ++p) {
      for (uint8_t q = 0; q < s.lanes(); ++q) {
        if (s.egress(p).empty(q) || s.egress_blocked(p, q) == BlockedBy::kNone) continue;
        paused_with_packets = true;
        if (now - s.last_tx(p, q) < timeout_) continue;
        state[{i, p, q}] = 0;
      }
    }
  }

  // Successors of a stuck queue: the stuck queues of the downstream switch
  // that hold packets which came in from this queue's link on this priority.
  auto successors = [&](const Key& k) {
    std::vector<Key> out;
    const auto [i, p, q] = k;
    const Link* link = switches_[i]->port(p).link();
    auto it = index_of.find(link->to()->id());
    if (it == index_of.end()) return out;  // a host: it does not forward
    const Switch& next = *switches_[it->second];
    const uint32_t in_port = link->to_port();
    for (uint32_t p2 = 0; p2 < next.num_ports(); ++p2) {
      for (uint8_t q2 = 0; q2 < next.lanes(); ++q2) {
        const Key k2{it->second, p2, q2};
        if (state.find(k2) == state.end()) continue;
        const EgressQueues& eq = next.egress(p2);
        for (size_t n = 0; n < eq.packets(q2); ++n) {
          const Packet& pk = eq.packet(q2, n);
          if (pk.ingress_port == in_port && pk.ingress_priority == q) {
            out.push_back(k2);
            break;
          }
        }
      }
    }
    return out;
  };

  // Depth-first search for a cycle.
  std::vector<Key> stack;
  std::vector<Key> found;
  std::function<bool(const Key&)> dfs = [&](const Key& k) {
    state[k] = 1;
    stack.push_back(k);
    for (const Key& n : successors(k)) {
      if (state[n] == 1) {
        auto from = std::find(stack.begin(), stack.end(), n);
        found.assign(from, stack.end());
        return true;
      }
      if (state[n] == 0 && dfs(n)) return true;
    }
    stack.pop_back();
    state[k] = 2;
    return false;
  };
  for (auto& [k, st] : state) {
    if (st == 0 && dfs(k)) break;
  }

  if (!found.empty()) {
    for (const auto& [i, p, q] : found) {
      cycle_.push_back(
          {switches_[i]->id(), switches_[i]->name(), p, q, switches_[i]->egress_blocked(p, q)});
    }
    detected_at_ = now;
    if (stop_) sim().request_stop();
    return;  // report the first deadlock only
  }
  if (sim().model_events_pending() == 0) return;
  Time next = now + interval_;
  if (!paused_with_packets) {
    // No queue is paused with packets, so none can be stuck before some
    // event changes the fabric: the ticks until the next event would find
    // nothing. Skip them (an idle stretch costs no events), landing on the
    // same grid of ticks, so that every tick that could find something
    // still runs when it did.
    const Time t = sim().next_event_time();
    if (!t.is_infinite() && t > next) {
      const int64_t skip = (t - now + interval_ - Time::ps(1)) / interval_;  // ceil
      next = now + interval_ * skip;
    }
  }
  ctx().schedule(tick_, next);
}

}  // namespace rdmasim
