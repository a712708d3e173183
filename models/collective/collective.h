// Collective: a collective operation (AllReduce, AllGather, ReduceScatter)
// run as NCCL's IB transport runs it, over a CollectivePlan (plan.h), on
// the NICs of its ranks' hosts. docs/collectives.md describes the model.
//
// Contract:
//  1. Every connection of the plan is `qps` RC QP pairs of its own
//     (channels on separate QPs; NCCL_IB_QPS_PER_CONNECTION), created at
//     build time; its completions, and only those, come to the collective
//     (models/traffic/workload.h contract 1). Each element is split over the
//     QPs as NCCL splits a transfer (qp_part_bytes), every part a WRITE with
//     immediate; it has arrived when all its parts have, and is acknowledged
//     when all are. FIFO entries go on the first QP.
//  2. Transfers follow NCCL's Simple protocol over IB verbs: the receiver
//     offers each slot of its buffer (NCCL_STEPS slots of NCCL_BUFFSIZE /
//     NCCL_STEPS bytes) with a 64-byte RDMA write into the sender's FIFO
//     (ncclIbSendFifo); the sender writes one element into an offered slot
//     with an RDMA WRITE with immediate, whose receive completion tells the
//     receiver it has landed. The sender also keeps NCCL_STEPS slots of its
//     own: an element may be posted only once the one NCCL_STEPS before it
//     is acknowledged. The FIFO write is modelled as a WRITE with immediate
//     too, so the sender learns when it lands (NCCL's proxy polls the FIFO
//     memory; the immediate adds 4 bytes to one packet).
//  3. A received element to be reduced becomes usable after bytes /
//     reduce_rate, reductions of one connection one after another; it is
//     used when the element that forwards it is posted (the data is copied
//     into the send slot), or when it is usable if nothing forwards it.
//     Slots are freed in order, each once it and every slot before it are
//     used (NCCL's kernel consumes them one after another), and offered
//     again at once.
//  4. Each rank runs its iterations one after another: iteration i+1 starts
//     `gap` after the rank finished iteration i, i.e. when it has posted all
//     its sends and all it received is reduced and freed (as NCCL's kernel
//     ends once its data is handed to the proxy; the acknowledgements of its
//     last sends may still be on their way, and free its send slots for the
//     next iteration when they come). An iteration
//     of the collective runs from the first rank's start to the last rank's
//     end; it is a unit of work (workload.h), complete when every rank has
//     finished it.
//  5. Completions only update counters; the work they enable runs in a
//     per-rank event (class kTraffic) on the partition of the rank's NIC, so
//     the collective writes a rank's state only from that partition and
//     posts only into that NIC. Each rank holds its NIC's partition until
//     its last iteration ends (or one of its QPs fails), so a partitioned
//     run stops after the same event as a sequential one.
//  6. Nothing is allocated after build: the plan, the records and the
//     per-element times are sized at construction (but the finished step
//     rows of contract 8).
//  7. A sweep runs its sizes (phases) one after another on the same QPs,
//     each with its own plan over the same connections: a rank starts its
//     first iteration of size k + 1 when it has finished its last of size
//     k (plus `gap`), as the iterations of one size follow each other. There
//     is no barrier between sizes (nccl-tests' host-side barrier before each
//     timed loop has no path between ranks here but the network).
//  8. Step records (trace.h5's /collective_steps), when kept, are a rank's
//     current iteration's; when the rank ends the iteration they become
//     rows appended to the rank's own list (written from its partition
//     only), which the runner drains between phases (take_step_rows): a
//     long run holds its unflushed rows, not every iteration's.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/collective/collective_spec.h"
#include "models/collective/plan.h"
#include "models/nic/indexed_event.h"
#include "models/nic/rdma_nic.h"
#include "models/traffic/workload.h"

namespace rdmasim {

// The size of an NCCL FIFO entry (struct ncclIbSendFifo in NCCL's
// src/transport/net_ib.cc, padded to 64 bytes): what a receiver writes into
// the sender's FIFO to offer a slot.
inline constexpr int64_t kFifoEntryBytes = 64;

class Collective : public Workload, public CompletionHandler {
 public:
  // nics[h] is the NIC of host index h; the spec's ranks must be in range.
  Collective(Simulation& sim, std::string name, CollectiveSpec spec,
             const std::vector<RdmaNic*>& nics);

  const CollectiveSpec& spec() const { return spec_; }
  // The plan of the first size (phase), and of phase p: the same
  // connections, each with the elements of that size.
  const CollectivePlan& plan() const { return plans_[0]; }
  const CollectivePlan& plan(size_t p) const { return plans_[p]; }
  // The first iteration of phase p (p = phases(): the total).
  uint32_t phase_first_iteration(size_t p) const { return first_iter_[p]; }
  uint32_t ranks() const { return plans_[0].ranks; }

  // One rank's part of one iteration.
  struct RankIteration {
    Time start = Time::infinite();
    Time end = Time::infinite();  // infinite: not finished
    uint32_t ends = 0;            // times it was seen to end (exactly 1 when finished)
  };
  const RankIteration& rank_iteration(uint32_t iter, uint32_t rank) const {
    return iters_[size_t{iter} * ranks() + rank];
  }
  // One rank's part of one step of one iteration: from its first post of an
  // element of the step to the arrival of the last element of the step it
  // receives, and the bytes it received in the step.
  struct StepRecord {
    Time start = Time::infinite();
    Time end = Time::infinite();
    int64_t bytes = 0;
  };
  // A step record that is final: its rank finished the iteration at `done`
  // (Time::infinite(): the run ended before it did).
  struct StepRow {
    Time done;
    uint32_t host = 0, iter = 0, rank = 0, step = 0;
    StepRecord rec;
  };
  // Step records are kept (contract 8) only when asked, before setup.
  void record_steps(bool on) { record_steps_ = on; }
  // Between phases (no partition running): moves the rows of every
  // rank-iteration that ended before `before` to `out`, rank by rank, each
  // rank's in the order its iterations ended, a rank-iteration's in step order.
  void take_step_rows(Time before, std::vector<StepRow>& out);
  // After the run: the rows of the iterations ranks began and did not end.
  void take_open_step_rows(std::vector<StepRow>& out);
  // Payload bytes rank `rank` has received in all so far (data elements
  // only, not FIFO entries, nor what it received as a PXN proxy: plan.h
  // rule 4), and what it received as a proxy.
  int64_t received(uint32_t rank) const { return rank_rx_[rank]; }
  int64_t relayed(uint32_t rank) const { return relay_rx_[rank]; }
  // Iteration `iter` of the whole collective: first start, last end.
  Time iteration_start(uint32_t iter) const;
  Time iteration_end(uint32_t iter) const;  // infinite if a rank has not finished it
  // QP pair q of connection i: (sender's QPN, receiver's QPN).
  std::pair<uint32_t, uint32_t> connection_qps(uint32_t i, uint32_t q = 0) const {
    return {conns_[i].qs[q], conns_[i].qr[q]};
  }
  // For the end-of-run invariant checks (sim/scenario/invariant_checks.h):
  // connection i's hosts and QPNs (one pair per QP of the connection), and
  // whether what its ends posted has arrived (elements at the receiver, FIFO
  // entries at the sender).
  struct ConnectionEnds {
    uint32_t sender_host = 0, receiver_host = 0;
    std::vector<uint32_t> qs, qr;
    bool data_arrived = false;
    bool offers_arrived = false;
  };
  size_t connections() const { return conns_.size(); }
  ConnectionEnds connection_ends(uint32_t i) const {
    const Conn& c = conns_[i];
    ConnectionEnds e;
    e.sender_host = c.sender_host;
    e.receiver_host = c.receiver_host;
    e.qs = c.qs;
    e.qr = c.qr;
    e.data_arrived = c.arrived == c.posted;
    e.offers_arrived = c.offered == c.offers_sent;
    return e;
  }

  // Workload.
  void host_bytes(std::vector<int64_t>& bytes) const override;
  int64_t bytes_total() const override;
  int64_t bytes_delivered() const override;
  size_t units() const override { return spec_.iterations; }
  size_t completed() const override;
  size_t failed() const override;

  void setup() override;
  void on_send_completion(uint32_t host, const Completion& c) override;
  void on_receive_completion(uint32_t host, const Completion& c) override;

 private:
  struct Conn {
    uint32_t sender_host = 0, receiver_host = 0;
    // QPNs per QP of the connection: the sender's and the receiver's ends.
    std::vector<uint32_t> qs, qr;
    // Per phase: elements per iteration, and the first element (counted
    // over iterations) of the phase's first iteration.
    std::vector<uint64_t> phase_elems, phase_base;
    // The sender's and the receiver's current iteration: its first element
    // (counted over iterations), its element count and its plan (each
    // written at its own end's partition, when that rank begins an iteration).
    struct Current {
      uint64_t base = 0, elems = 0;
      const PlanConnection* pc = nullptr;
    };
    Current send, recv;
    // Cumulative over iterations (element g of iteration i is the phase's
    // base plus (i - the phase's first iteration) x its elements, plus e).
    // Written at the sender's partition:
    uint64_t offered = 0;    // FIFO entries arrived (slots offered)
    uint64_t posted = 0;     // elements posted
    uint64_t send_done = 0;  // elements acknowledged
    // Written at the receiver's partition:
    uint64_t offers_sent = 0;  // FIFO entries posted
    uint64_t arrived = 0;
    uint64_t ready = 0;  // reduced, usable
    uint64_t freed = 0;
    std::vector<Time> ready_at;  // per element of the current iteration
    std::vector<uint8_t> used;   // per element: uses so far, its slot not yet freed
    // Parts (one per QP) of the elements in flight, by element % NCCL_STEPS
    // (at most NCCL_STEPS are): acknowledged at the sender, arrived at the
    // receiver.
    std::vector<uint8_t> parts_acked, parts_in;
    std::vector<uint8_t> parts_sent;  // at the sender: parts of each element in flight
  };
  struct RankState {
    uint32_t host = 0;
    uint32_t iter = 0;     // iterations it finished
    uint32_t phase = 0;    // the phase (sweep size) of its current or next iteration
    bool active = false;   // in an iteration
    Time next_start;       // when its next iteration may start
    uint64_t pending = 0;  // posts and frees its iteration still waits for
    bool failed = false;
    bool held = false;
    std::vector<uint32_t> in, out;  // its connections as receiver and as sender
  };

  void kick(uint32_t rank);  // the rank's event: all the work its state allows now
  void wake(uint32_t rank, Time at);
  void begin_iteration(uint32_t rank);
  // Connection c's iteration `in_phase` of phase p.
  Conn::Current current(uint32_t c, uint32_t p, uint64_t in_phase) const;
  void end_iteration(uint32_t rank);
  void try_send(uint32_t rank, uint32_t conn);
  void use(uint32_t conn, uint64_t elem);
  // Whether the elements `pe` depends on are usable, in the rank's current iteration.
  bool deps_ready(const PlanElement& pe) const;
  void offer(uint32_t conn, uint64_t g);
  void fail(uint32_t rank);
  // Which of its ends ((conn * qps + q) * 2 + 0: the sender's QP q, + 1: the
  // receiver's) a host's QPN is.
  uint32_t end_of(uint32_t host, uint32_t qpn) const;

  CollectiveSpec spec_;
  std::vector<CollectivePlan> plans_;  // per phase
  std::vector<uint32_t> first_iter_;   // per phase, and the total at the end
  std::vector<RdmaNic*> nics_;
  std::vector<Conn> conns_;
  // Per (receiving rank, plan channel), rank x channels + channel: its
  // reduction is busy until then. One per channel, not per connection: a
  // tree node reduces its children's chunks (up to 3) one after another.
  std::vector<Time> reduce_free_;
  uint32_t plan_channels_ = 1;
  std::vector<RankState> rank_;
  std::vector<RankIteration> iters_;
  bool record_steps_ = false;
  std::vector<StepRecord> cur_steps_;            // rank x steps: its current iteration's
  std::vector<std::vector<StepRow>> step_rows_;  // per rank: finished, not yet taken
  std::vector<int64_t> rank_rx_;
  std::vector<int64_t> relay_rx_;  // per rank, as a proxy
  // Per host: the first QPN it created for the collective, and its ends by
  // QPN - first (its QPs are created one after another).
  std::vector<uint32_t> first_qpn_;
  std::vector<std::vector<uint32_t>> ends_;
  std::vector<std::unique_ptr<IndexedEvent<Collective, &Collective::kick>>> kicks_;
};

}  // namespace rdmasim
