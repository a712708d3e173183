// TestHost: a host for switch tests that sends a fixed list of RoCE v2 data
// packets out of its port 0, back to back at line rate from time 0, and
// records every packet it receives with a copy of its extension area (which
// RdmaNic does not read). No transport: nothing is acknowledged.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/proto/roce_v2.h"
#include "sim/node.h"

namespace rdmasim::testing {

class TestHost : public Node {
 public:
  // What to send: a WRITE-middle packet of `payload` bytes to host `dst`.
  struct Send {
    uint32_t dst;
    uint32_t payload = 1024;
    uint32_t flow_hash = 0;
    uint8_t dscp = 26;  // priority 3 under the default trust map
    uint8_t ecn = 0;
  };
  struct Received {
    Time at;
    Packet packet;  // a copy: its pointers are not to be followed
    bool has_ext;
    PacketExt ext;
  };

  TestHost(Simulation& sim, std::string name, uint32_t host)
      : Node(sim, std::move(name)), host_(host) {}

  // The wire size of what add(s) sends (preamble and inter-frame gap included).
  static uint32_t wire_bytes(uint32_t payload) { return headers().wire_bytes(payload); }

  void add(const Send& s) { sends_.push_back(s); }
  const std::vector<Received>& received() const { return received_; }

  void setup() override {
    if (!sends_.empty()) port(0).wake();
  }
  PacketHandle next_packet(uint32_t) override {
    if (next_ == sends_.size()) return {};
    const Send& s = sends_[next_];
    PacketHandle p = ctx().make_packet();
    p->kind = PacketKind::kData;
    p->headers = headers().bits();
    p->payload_bytes = s.payload;
    p->wire_bytes = headers().wire_bytes(s.payload);
    p->src = host_;
    p->dst = s.dst;
    p->flow_hash = s.flow_hash;
    p->dscp = s.dscp;
    p->ecn = s.ecn;
    p->psn = static_cast<uint32_t>(next_);  // its index in the send list
    ++next_;
    return p;
  }
  Time next_pull(uint32_t, Time frame_end) const override {
    return next_ < sends_.size() ? frame_end : Time::infinite();
  }
  void receive(uint32_t, PacketHandle p) override {
    if (p->kind == PacketKind::kPfc) return;
    Received r{ctx().now(), *p, p->ext_used != 0, {}};
    if (r.has_ext) r.ext = *p->ext;
    received_.push_back(r);
  }

 private:
  static HeaderSet headers() {
    return RoceV2Format(IpVersion::kIpv4, false).packet(RcOpcode::kWriteMiddle);
  }
  uint32_t host_;
  std::vector<Send> sends_;
  size_t next_ = 0;
  std::vector<Received> received_;
};

}  // namespace rdmasim::testing
