// ImmWorkload: a test-only workload (models/traffic/workload.h) that posts
// `messages` WRITEs with immediate of `bytes` each from host `src` to host
// `dst` on one QP pair of its own, at time 0, with a receive WQE posted for
// each at the responder, and records every completion it is handed. Its
// work request ids 0, 1, ... collide with other workloads' ids on purpose
// (the flow generator's part ids, a collective's connection 0): a
// completion routed to the wrong handler would be counted by the wrong
// workload. It holds the sender's partition until its last send completes.
#pragma once

#include <utility>
#include <vector>

#include "models/nic/rdma_nic.h"
#include "models/traffic/flow_generator.h"
#include "models/traffic/workload.h"

namespace rdmasim::testing {

// What the test workload was handed, kept by the test (the workload itself
// goes with the run's Simulation).
struct ImmLog {
  uint32_t qs = 0, qd = 0;
  std::vector<std::pair<uint32_t, Completion>> sends, receives;
};

class ImmWorkload final : public Workload, public CompletionHandler {
 public:
  ImmWorkload(Simulation& sim, const std::vector<RdmaNic*>& nics, uint32_t src, uint32_t dst,
              uint32_t messages, int64_t bytes, ImmLog& log)
      : Workload(sim, "imm_workload"),
        log_(log),
        nics_(nics),
        src_(src),
        dst_(dst),
        messages_(messages),
        bytes_(bytes),
        start_(this, EventClass::kTraffic, id()) {
    qs_ = nics_[src]->create_qp(this);
    qd_ = nics_[dst]->create_qp(this);
    nics_[src]->connect_qp(qs_, dst, qd_, roce_source_port(src, qs_));
    nics_[dst]->connect_qp(qd_, src, qs_, roce_source_port(src, qs_));
    nics_[dst]->post_receives(qd_, messages);
    log_.qs = qs_;
    log_.qd = qd_;
  }

  void setup() override {
    nics_[src_]->ctx().hold();
    ctx().schedule(start_, Time::zero());
  }

  void host_bytes(std::vector<int64_t>& bytes) const override {
    bytes[src_] += messages_ * bytes_;
    bytes[dst_] += messages_ * bytes_;
  }
  int64_t bytes_total() const override { return messages_ * bytes_; }
  int64_t bytes_delivered() const override { return nics_[dst_]->qp(qd_).rx_bytes; }
  size_t units() const override { return messages_; }
  size_t completed() const override { return log_.sends.size(); }
  size_t failed() const override { return 0; }

  void on_send_completion(uint32_t host, const Completion& c) override {
    log_.sends.emplace_back(host, c);
    if (log_.sends.size() == messages_) nics_[host]->ctx().release();
  }
  void on_receive_completion(uint32_t host, const Completion& c) override {
    log_.receives.emplace_back(host, c);
  }

 private:
  void on_start() {
    for (uint32_t i = 0; i < messages_; ++i) {
      nics_[src_]->post(qs_, WorkRequest{i, Verb::kWriteImm, bytes_, 1000 + i});
    }
  }

  ImmLog& log_;
  std::vector<RdmaNic*> nics_;
  uint32_t src_, dst_, messages_;
  int64_t bytes_;
  uint32_t qs_ = 0, qd_ = 0;
  MemberEvent<ImmWorkload, &ImmWorkload::on_start> start_;
};

}  // namespace rdmasim::testing
