#include "models/switch/switch.h"

#include <algorithm>

namespace rdmasim {

Switch::Switch(Simulation& sim, std::string name, const SwitchConfig& cfg)
    : Node(sim, std::move(name)),
      cfg_(cfg),
      ecmp_seed_(sim.rng_stream(this->name() + ".ecmp").next_u64()),
      pipeline_(this, sim, cfg.latency, EventClass::kDelivery, id()) {}

void Switch::setup() { queues_.resize(num_ports()); }

void Switch::receive(uint32_t /*port*/, PacketHandle p) {
  if (cfg_.latency == Time::zero()) {
    forward(std::move(p));
  } else {
    pipeline_.push(std::move(p));
  }
}

void Switch::forward(PacketHandle p) {
  const uint64_t key = ecmp_key(ecmp_seed_, p->src, p->dst, p->flow_hash);
  const int64_t egress = fib_.select(p->dst, key);
  if (egress < 0) {
    ++counters_.dropped_no_route;
    return;
  }
  EgressQueue& q = queues_[static_cast<size_t>(egress)];
  q.stats.bytes += p->wire_bytes;
  q.stats.peak_bytes = std::max(q.stats.peak_bytes, q.stats.bytes);
  ++q.stats.packets;
  q.fifo.push_back(std::move(p));
  ++counters_.forwarded;
  port(static_cast<uint32_t>(egress)).wake();
}

PacketHandle Switch::next_packet(uint32_t port) {
  EgressQueue& q = queues_[port];
  if (q.fifo.empty()) return {};
  PacketHandle p = q.fifo.pop_front();
  q.stats.bytes -= p->wire_bytes;
  return p;
}

}  // namespace rdmasim
