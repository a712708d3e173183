// Switch: a store-and-forward, output-queued Ethernet switch that forwards by
// destination host through a ForwardingTable.
//
// Contract:
//  1. A packet is forwarded once its last bit has arrived (store-and-forward),
//     after the configured pipeline latency, into one FIFO per egress port.
//  2. The egress port's transmitter pulls from that FIFO (sim/node.h).
//  3. A packet with no route is dropped and counted as `no_route`.
//  4. Buffer limits, priorities, PFC and ECN are not modelled here yet: the
//     FIFO is unbounded and its peak depth is recorded.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/switch/forwarding_table.h"
#include "models/switch/switch_config.h"
#include "sim/delay_line.h"
#include "sim/node.h"
#include "sim/ring.h"

namespace rdmasim {

struct SwitchCounters {
  uint64_t forwarded = 0;
  uint64_t dropped_no_route = 0;
};

struct EgressQueueStats {
  int64_t bytes = 0;       // wire bytes queued now
  int64_t peak_bytes = 0;  // largest backlog seen
  uint64_t packets = 0;    // packets enqueued in all
};

class Switch : public Node {
 public:
  Switch(Simulation& sim, std::string name, const SwitchConfig& cfg);

  void set_forwarding_table(ForwardingTable table) { fib_ = std::move(table); }
  const ForwardingTable& forwarding_table() const { return fib_; }
  const SwitchCounters& counters() const { return counters_; }
  const EgressQueueStats& queue_stats(uint32_t port) const { return queues_[port].stats; }

  void setup() override;
  void receive(uint32_t port, PacketHandle p) override;
  PacketHandle next_packet(uint32_t port) override;

 private:
  void forward(PacketHandle p);

  struct EgressQueue {
    Ring<PacketHandle> fifo;
    EgressQueueStats stats;
  };

  const SwitchConfig& cfg_;
  ForwardingTable fib_;
  uint64_t ecmp_seed_;
  std::vector<EgressQueue> queues_;
  DelayLine<Switch, &Switch::forward> pipeline_;
  SwitchCounters counters_;
};

}  // namespace rdmasim
