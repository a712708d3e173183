// RdmaNic: a RoCE v2 RNIC with RC queue pairs, on one or more ports.
//
// Contract:
//  1. The NIC builds a data packet only when its port's transmitter is free
//     (pull model, sim/node.h), so a packet's creation time is the start of
//     its transmission, and the NIC holds no per-packet transmit queue for
//     data. ACKs wait in a small control queue that is served first.
//  2. Each QP is bound to one port when it is connected (by the
//     EgressSelector, if the NIC has several ports); the active QPs of a port
//     share it round robin, one packet per turn.
//  3. The responder delivers in PSN order; a packet out of order is counted
//     and dropped (loss recovery arrives with go-back-N in a later model).
//  4. Completions go to the NIC's CompletionHandler (one per NIC, like a
//     CQ), requester side when the last packet is acknowledged, responder
//     side when the last packet of an inbound message arrives.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/nic/nic_config.h"
#include "models/nic/queue_pair.h"
#include "models/proto/roce_v2.h"
#include "sim/node.h"
#include "sim/ring.h"

namespace rdmasim {

// Chooses the port a connection's packets leave by, for NICs with several
// ports (a GPU's NIC and NVLink, dual-plane NICs). Implemented by routing.
class EgressSelector {
 public:
  virtual ~EgressSelector() = default;
  virtual uint32_t egress_port(uint32_t src_host, uint32_t dst_host, uint64_t flow_hash) const = 0;
};

class CompletionHandler {
 public:
  virtual ~CompletionHandler() = default;
  virtual void on_send_completion(uint32_t host, const Completion& c) = 0;
  virtual void on_receive_completion(uint32_t host, const Completion& c) = 0;
};

struct NicCounters {
  uint64_t data_packets_sent = 0;
  uint64_t acks_sent = 0;
  uint64_t data_packets_received = 0;
  uint64_t out_of_sequence = 0;  // packets that arrived with an unexpected PSN
  int64_t payload_bytes_delivered = 0;
  uint64_t messages_completed = 0;
};

class RdmaNic : public Node {
 public:
  // `host` is the NIC's address (host id); `cfg` and `format` outlive the NIC.
  RdmaNic(Simulation& sim, std::string name, uint32_t host, const NicConfig& cfg,
          const RoceV2Format& format);

  uint32_t host() const { return host_; }
  const NicConfig& config() const { return cfg_; }
  const NicCounters& counters() const { return counters_; }
  void set_completion_handler(CompletionHandler* h) { completions_ = h; }
  void set_egress_selector(const EgressSelector* s) { egress_ = s; }

  // Creates an unconnected QP and returns its QPN.
  uint32_t create_qp();
  // Connects QP `qpn` to `remote_qpn` on host `remote_host`. `flow_hash` is
  // the connection's ECMP entropy (the RoCE v2 UDP source port).
  void connect_qp(uint32_t qpn, uint32_t remote_host, uint32_t remote_qpn, uint32_t flow_hash);
  QueuePair& qp(uint32_t qpn) { return *qps_[qpn - kFirstQpn]; }
  size_t num_qps() const { return qps_.size(); }
  // Posts a work request on a connected QP.
  void post(uint32_t qpn, const WorkRequest& wr);

  void setup() override;
  void receive(uint32_t port, PacketHandle p) override;
  PacketHandle next_packet(uint32_t port) override;

  // QPNs 0 and 1 are reserved (IBA §10.2.4: QP0/QP1 special QPs).
  static constexpr uint32_t kFirstQpn = 2;

 private:
  PacketHandle build_data(QueuePair& qp);
  void send_ack(const Packet& data, const QueuePair& qp);
  void on_data(PacketHandle p);
  void on_ack(PacketHandle p);

  uint32_t host_;
  const NicConfig& cfg_;
  const RoceV2Format& format_;
  struct PortQueues {
    Ring<uint32_t> active;       // QPNs with data to send, in round-robin order
    Ring<PacketHandle> control;  // ACKs waiting for the wire
  };
  std::vector<std::unique_ptr<QueuePair>> qps_;
  std::vector<bool> is_active_;  // by QP index
  std::vector<PortQueues> ports_;
  NicCounters counters_;
  CompletionHandler* completions_ = nullptr;
  const EgressSelector* egress_ = nullptr;
  uint64_t next_message_id_ = 0;
};

}  // namespace rdmasim
