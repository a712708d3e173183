// FlowGenerator: posts single RDMA messages ("flows") between hosts at given
// times and records each one's completion.
//
// Contract:
//  1. Each flow gets its own connected RC QP pair, created at build time,
//     whose completions (and only those) come to the generator: other
//     workloads may post on QPs of their own on the same NICs.
//  2. Flows are posted in (start time, flow id) order by one timer event.
//  3. A flow is complete when its requester sees the completion: the ACK of
//     its last packet (WRITE, SEND) or the arrival of its last response
//     packet (READ); FCT runs from the start of transmission of its first
//     packet (a READ: its request) to that moment.
//  4. A flow whose QP enters the error state (retries exhausted) completes
//     with an error status: it is reported failed, not outstanding.
//  5. When every flow has completed or failed the run stops: each flow is a
//     hold (sim/partition.h) on its requester's partition, released when it
//     completes, so a partitioned run stops after the same event as a
//     sequential one.
//  6. The generator is an observer: it posts into NICs of any partition.
//     Completions arrive from the NICs' partitions; each writes only its
//     own flow's record.
//  7. It is the Workload (models/traffic/workload.h) of a scenario's
//     `traffic` items that expand into flows: a unit of work is a flow.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/cc/cc_algorithm.h"
#include "models/nic/rdma_nic.h"
#include "models/traffic/workload.h"
#include "sim/simulation.h"

namespace rdmasim {

struct FlowSpec {
  std::string name;
  uint32_t src = 0;  // host index: the requester
  uint32_t dst = 0;  // the responder (for a READ, the host the data comes from)
  int64_t bytes = 0;
  Time start;
  Verb op = Verb::kWrite;
  BitRate rate;       // pace the flow to this rate (shared by its QPs); 0: line rate
  uint32_t qps = 1;   // queue pairs the message is striped over (NCCL_IB_QPS_PER_CONNECTION)
  int sl = -1;        // InfiniBand: the QPs' service level (0..15); -1: the NIC's priorities
  uint32_t item = 0;  // the scenario's traffic[item] this flow came from
  // Congestion control of the flow's QPs (both ends); none if null.
  std::shared_ptr<const CcConfig> cc;
  bool operator==(const FlowSpec&) const = default;
};

struct FlowRecord {
  uint32_t id = 0;
  Time first_tx;        // start of transmission of the first packet
  Time finish;          // requester completion (success or error)
  bool done = false;    // completed successfully
  bool failed = false;  // completed with an error status (the QP is in error)
  WcStatus status = WcStatus::kSuccess;
  Time fct() const { return finish - first_tx; }
};

// The UDP source port a RoCE v2 NIC derives from its QP `qpn` of host
// `host`: 16 bits that give every QP its own ECMP entropy (both directions
// of a QP pair carry the requester's).
uint32_t roce_source_port(uint32_t host, uint32_t qpn);

class FlowGenerator : public Workload, public CompletionHandler {
 public:
  // nics[h] is the NIC of host index h; flows' hosts must be in range.
  FlowGenerator(Simulation& sim, std::string name, std::vector<FlowSpec> flows,
                const std::vector<RdmaNic*>& nics);

  const std::vector<FlowSpec>& flows() const { return flows_; }
  const std::vector<FlowRecord>& records() const { return records_; }
  // The QP that sends flow i's data: (host, QPN) — the requester's, or for a
  // READ the responder's.
  // (For a flow striped over several QPs: its first part's.)
  std::pair<uint32_t, uint32_t> data_qp(uint32_t i) const {
    const Part& p = parts_[first_part_[i]];
    return flows_[i].op == Verb::kRead ? std::make_pair(flows_[i].dst, p.qd)
                                       : std::make_pair(flows_[i].src, p.qs);
  }
  // The QP pairs flow i is striped over, in posting order: (requester QPN,
  // responder QPN) of each part.
  std::vector<std::pair<uint32_t, uint32_t>> part_qps(uint32_t i) const {
    std::vector<std::pair<uint32_t, uint32_t>> v;
    for (uint32_t k = first_part_[i]; k < first_part_[i] + std::max<uint32_t>(1, flows_[i].qps);
         ++k) {
      v.emplace_back(parts_[k].qs, parts_[k].qd);
    }
    return v;
  }
  // Start of transmission of flow i's first packet, once it has one.
  std::optional<Time> first_tx(uint32_t i) const;
  // Packets flow i's QP pair sent again (requester retransmissions and
  // re-executed READ responses).
  uint64_t retransmissions(uint32_t i) const;
  // Payload bytes of flow i delivered in order at the host its data goes to
  // (the responder, or for a READ the requester), so far: each part's QP
  // receives one message (contract 1), so its bytes received so far.
  int64_t delivered(uint32_t i) const;
  // Congestion notification of flow i, summed over its parts: CNPs and ECN
  // echoes the QPs sending its data received, CNPs and CE-marked packets the
  // QPs receiving it sent and got, and the senders' algorithms' cuts.
  struct CcCounts {
    uint64_t cnps_received = 0;
    uint64_t cnps_sent = 0;
    uint64_t ecn_marked = 0;
    uint64_t ecn_echo_acks = 0;
    uint64_t rate_cuts = 0;
    CcCounts& operator+=(const CcCounts& o) {
      cnps_received += o.cnps_received;
      cnps_sent += o.cnps_sent;
      ecn_marked += o.ecn_marked;
      ecn_echo_acks += o.ecn_echo_acks;
      rate_cuts += o.rate_cuts;
      return *this;
    }
    CcCounts operator-(const CcCounts& o) const {
      return {cnps_received - o.cnps_received, cnps_sent - o.cnps_sent, ecn_marked - o.ecn_marked,
              ecn_echo_acks - o.ecn_echo_acks, rate_cuts - o.rate_cuts};
    }
  };
  CcCounts cc_counts(uint32_t i) const;
  // The (host, QPN) that sends part k's data and the one that receives it.
  std::pair<uint32_t, uint32_t> part_sender(uint32_t k) const;
  std::pair<uint32_t, uint32_t> part_receiver(uint32_t k) const;
  // The parts of flow i: [first_part(i), first_part(i) + qps).
  uint32_t first_part(uint32_t i) const { return first_part_[i]; }
  uint32_t num_parts(uint32_t i) const { return std::max<uint32_t>(1, flows_[i].qps); }
  // Workload: each host's bytes are those of the flows it sends or
  // receives; delivered bytes are delivered(i) summed over the flows.
  void host_bytes(std::vector<int64_t>& bytes) const override;
  int64_t bytes_total() const override;
  int64_t bytes_delivered() const override;
  size_t units() const override { return flows_.size(); }
  size_t completed() const override;  // successfully
  size_t failed() const override;

  void setup() override;
  void on_send_completion(uint32_t host, const Completion& c) override;
  void on_receive_completion(uint32_t, const Completion&) override {}

 private:
  void on_start();

  std::vector<FlowSpec> flows_;
  std::vector<RdmaNic*> nics_;
  // A flow is striped over `qps` parts, each its own QP pair and message;
  // the work request id of a part is its index here.
  struct Part {
    uint32_t flow;
    uint32_t qs, qd;  // requester and responder QPNs
    int64_t bytes;
  };
  std::vector<Part> parts_;
  std::vector<uint32_t> first_part_;  // per flow; its parts are contiguous
  std::vector<uint32_t> parts_left_;  // per flow: parts not yet completed
  std::vector<uint32_t> order_;       // flow ids by (start, id)
  size_t next_ = 0;                   // next position in order_
  std::vector<FlowRecord> records_;
  MemberEvent<FlowGenerator, &FlowGenerator::on_start> start_;
};

}  // namespace rdmasim
