// RunResult: what one run produced, in plain structs, for the output writers
// (sim/output/) and for tests. Everything except the `wall` part is a pure
// function of the resolved scenario and seed.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "models/cc/congestion_control.h"
#include "models/nic/queue_pair.h"
#include "models/switch/deadlock_detector.h"
#include "models/switch/queue_sampler.h"
#include "models/switch/switch.h"
#include "sim/link_sampler.h"
#include "sim/row_spool.h"
#include "sim/units.h"

namespace rdmasim {

enum class RunStatus : uint8_t {
  kComplete,   // all traffic completed
  kTimeLimit,  // stop.time reached first
  kStalled,    // nothing left to do, but traffic is incomplete: no progress
  kQpError,    // a QP exhausted its retries: its flows failed (docs/nic.md)
  kDeadlock,   // a PFC deadlock: a cycle of paused queues that stopped sending
  // Ended early by the environment, not by the scenario: what was gathered
  // up to the stop, exempt from the determinism promise (docs/reliability.md,
  // "Signals and limits").
  kInterrupted,    // SIGINT or SIGTERM (RunOptions::stop_signal)
  kWallTimeLimit,  // stop.wall_time reached first
  // An invariant check failed (sim/invariants.h): a bug of the simulator;
  // RunResult::invariant says which. Only with checks on.
  kInvariantViolated,
};
const char* to_string(RunStatus s);
// Process exit code for a status (docs/scenario.md, "Exit codes");
// kInterrupted gives SIGINT's 130 (the CLI gives 128 + the signal).
int exit_code(RunStatus s);
// The run was cut short from outside: its outputs are marked partial.
inline bool is_partial(RunStatus s) {
  return s == RunStatus::kInterrupted || s == RunStatus::kWallTimeLimit;
}

struct FlowResult {
  uint32_t id = 0;
  std::string name;
  uint32_t src = 0, dst = 0;  // host indices
  int64_t bytes = 0;
  Verb op = Verb::kWrite;
  Time start;     // when posted
  Time first_tx;  // start of transmission of the first packet (if started)
  Time finish;    // requester completion (if done)
  bool started = false;
  bool done = false;
  bool failed = false;  // its QP entered the error state
  // The links its data took: /links rows (directions), host to host. Empty
  // if not recorded (output.flow_paths) or never sent.
  std::vector<uint32_t> path;
  std::string error;             // then the completion status, e.g. "retry_exceeded"
  uint64_t retransmissions = 0;  // packets its QP pair sent again
  uint32_t item = 0;             // the traffic[item] it came from
  // Its FCT alone on the idle fabric, in closed form (sim/scenario/ideal_fct.h).
  Time ideal_fct;
  // Congestion notification, over its parts (FlowGenerator::CcCounts): CNPs
  // the QPs sending its data received and those receiving it sent, CE-marked
  // packets the receivers got, ECN-echo ACKs the senders got, their cuts.
  uint64_t cnps_received = 0;
  uint64_t cnps_sent = 0;
  uint64_t ecn_marked = 0;
  uint64_t ecn_echo_acks = 0;
  uint64_t rate_cuts = 0;
  // Payload delivered in order at the data's receiver within the
  // measurement window (RunResult::window).
  int64_t window_bytes = 0;
  Time fct() const { return finish - first_tx; }
  // FCT / ideal FCT, for a completed flow.
  double slowdown() const {
    return static_cast<double>(fct().in_ps()) / static_cast<double>(ideal_fct.in_ps());
  }
};

// One collective (a `traffic` item of kind "collective"), as nccl-tests
// reports it (docs/collectives.md): per iteration, time t from the first
// rank's start to the last rank's end, algbw = size / t and busbw = algbw x
// 2(n-1)/n (all_reduce) or (n-1)/n (all_gather, reduce_scatter).
struct CollectiveResult {
  std::string name;
  std::string op, algorithm;
  uint32_t item = 0;
  uint32_t ranks = 0, channels = 0, steps = 0;
  int64_t bytes = 0;  // nccl-tests' size
  uint32_t iterations = 0;
  uint32_t completed = 0;  // iterations every rank finished
  struct Iteration {
    Time start, end;  // end: Time::infinite() if not finished
    bool done = false;
    double time_us = 0, algbw_gbps = 0, busbw_gbps = 0;  // GB/s = 1e9 bytes/s, as nccl-tests
  };
  std::vector<Iteration> iters;
  // Over the completed iterations: mean time, and algbw and busbw of that
  // mean (nccl-tests: the average time of its timed iterations).
  double time_us = 0, algbw_gbps = 0, busbw_gbps = 0;
  // Per step of each iteration a rank began (docs/trace.md
  // /collective_steps), in the order the ranks ended their iterations
  // (those not ended last), each rank-iteration's steps in order; kept only
  // with output.trace.
  struct Step {
    uint32_t iter, rank, step, host;
    Time start, end;  // infinite: not reached
    int64_t bytes;
    Time done;  // when the rank ended the iteration (infinite: it had not); not in the trace
  };
  RowSpool<Step> step_rows;
  std::vector<int64_t> rank_bytes_received;  // over all iterations
  // A sweep (docs/collectives.md#sweeps): one row per size, as nccl-tests
  // prints it; empty without a sweep. time_us is the mean of the size's
  // timed iterations, from the first rank's start of the first to the last
  // rank's end of the last, over their number (nccl-tests times them
  // together and divides); 0 and not done if one did not finish.
  struct SweepRow {
    int64_t bytes = 0, count = 0;  // nccl-tests' size and count (float elements)
    uint32_t first_iteration = 0;  // its first timed iteration
    uint32_t iters = 0;
    bool done = false;
    double time_us = 0, algbw_gbps = 0, busbw_gbps = 0;
  };
  std::vector<SweepRow> sweep;
  uint32_t warmup_iters = 0;
  // nccl-tests' "Avg bus bandwidth": busbw over every size and both columns
  // (in-place = out-of-place here), over the finished sizes.
  double avg_busbw_gbps = 0;
};

struct LinkResult {
  uint32_t link = 0;          // topology link index
  uint32_t from = 0, to = 0;  // node ids
  uint32_t from_port = 0;
  BitRate rate;
  uint64_t frames = 0;
  uint64_t data_frames = 0;
  uint64_t control_frames = 0;  // PFC frames, IB flow-control packets
  int64_t wire_bytes = 0;
  int64_t payload_bytes = 0;
  Time busy;
  // The same within the measurement window (frames counted whole when
  // their serialisation starts).
  uint64_t window_frames = 0;
  int64_t window_wire_bytes = 0;
  int64_t window_payload_bytes = 0;
  Time window_busy;
};

// One row of /cc_samples (models/cc/cc_sampler.h): a QP's congestion-control
// state at `time`.
struct CcSampleResult {
  Time time;
  uint32_t flow = 0;
  uint32_t part = 0;  // the flow's part (QP pair), 0 .. qps-1
  uint32_t host = 0;  // host index of the QP's NIC
  uint32_t qpn = 0;
  bool sender = false;  // the QP sends the flow's data
  CcState state;
  uint32_t changes = 0;
};

struct WallClock {
  double seconds = 0;  // building and running (run_scenario)
  double load_seconds =
      0;  // reading the scenario, generating the topology, routing (set by the caller)
  double build_seconds = 0;  // creating the devices
  double event_seconds = 0;  // the event loop alone
  // A run started again on one thread: the first attempt, building,
  // its first phase and its teardown (included in `seconds`; 0 otherwise).
  double first_attempt_seconds = 0;
  int64_t peak_rss_bytes = 0;
  // Heap the kernel moved onto huge pages when asked (sim/huge_pages.h;
  // depends on the kernel and its free memory).
  int64_t heap_huge_page_bytes = 0;
};

struct RunResult {
  RunStatus status = RunStatus::kComplete;
  Time sim_time;
  uint64_t events = 0;
  uint64_t fingerprint = 0;
  uint64_t packet_hops = 0;         // frames serialized onto links, all kinds
  uint64_t data_packet_hops = 0;    // ... that carried RDMA payload
  uint64_t control_frame_hops = 0;  // ... that were PFC or IB flow-control frames
  uint64_t packets_created = 0;
  uint32_t threads = 1;  // threads the run was given (RunOptions::threads)
  // Partitions the network was split into: `threads`, or on one thread
  // those that take turns for cache locality (RunOptions::partitions).
  uint32_t partitions = 1;
  uint64_t phases = 0;  // synchronization phases of a partitioned run
  // Threads it ran on: `threads`, or 1 when its partitions went on taking
  // turns on one thread (too few events per thread per lookahead).
  uint32_t threads_used = 1;
  // The first phase on `threads` partitions was too sparse for threads to
  // pay, and the run started again on one (RunOptions::restart_when_sparse):
  // its results and fingerprint are one thread's.
  bool restarted_on_one_thread = false;
  double events_per_partition_lookahead = 0;  // in its first phase with events
  // The same per thread (its partitions together): what the density
  // decision compares with Simulation::kMinEventsPerLookahead.
  double events_per_thread_lookahead = 0;
  uint64_t thread_sleeps = 0;  // waits that ended in a sleep (timing-dependent)
  // A thread kept off its CPU by other processes (sim/starvation.h): windows
  // that found one, and wall seconds the partitions then took turns
  // (timing-dependent).
  uint64_t starved_windows = 0;
  double starved_turns_seconds = 0;
  std::vector<uint64_t> partition_events;  // events each partition dispatched (threads > 1)
  uint64_t drops_no_route = 0;
  uint64_t out_of_sequence = 0;
  uint64_t retransmissions = 0;  // packets NICs sent again (all QPs)
  uint64_t qp_errors = 0;        // QPs that entered the error state
  // Drops in switches by reason (models/switch/mmu.h DropReason), and on links.
  std::vector<std::pair<std::string, uint64_t>> switch_drops;
  uint64_t link_lost_down = 0;
  uint64_t link_corrupted = 0;
  // Drops at NICs' receive buffers (NicCounters::rx_buffer_drops).
  uint64_t nic_rx_buffer_drops = 0;
  // Every packet lost: on links, in switches (InfiniBand's head-of-queue
  // discards among them) and at NICs' receive buffers.
  uint64_t total_drops() const {
    uint64_t n = link_lost_down + link_corrupted + nic_rx_buffer_drops + hoq_discards;
    for (const auto& [reason, count] : switch_drops) n += count;
    return n;
  }
  // Lossless drops on ports whose headroom is below the worst-case
  // automatic value (a configured one, or small_packet_percentage below
  // 100; SwitchCounters; NicCounters, at a NIC's receive buffer): expected,
  // not a violation.
  uint64_t lossless_drops_headroom_below_automatic = 0;
  // Lossless drops after a neighbour's PFC watchdog (action forward) sent
  // ignoring a pause (SwitchCounters, NicCounters): expected in a storm.
  uint64_t lossless_drops_watchdog_forward = 0;
  // The violated invariant's line (status kInvariantViolated), else empty.
  std::string invariant;
  bool checked = false;          // the run's invariants were checked (RunOptions::check)
  uint64_t pfc_frames_sent = 0;  // by switches (pause and resume)
  // InfiniBand (credits): flow-control packets switches sent, and packets
  // they discarded at a queue's head (head-of-queue lifetime).
  uint64_t ib_fc_packets_sent = 0;
  // Flow-control packets every credited port (switches' and NICs') sent, per VL.
  std::vector<uint64_t> ib_fc_packets_by_vl;
  uint64_t hoq_discards = 0;
  // Shared VL buffers (Credits, shared_buffer): lowered grants sent to take
  // back an idle VL's pool claim, on every credited port; and the most of
  // one port's pool that packets held at once, in bytes (64 per block).
  uint64_t ib_shared_pool_revocations = 0;
  int64_t ib_shared_pool_peak_bytes = 0;
  // PortXmitWait per port and VL (Credits::xmit_wait) of every credited
  // port of switches and NICs whose VL waited at all, in node, port, VL order.
  struct XmitWait {
    uint32_t node, port;
    uint8_t vl;
    Time wait;
  };
  std::vector<XmitWait> ib_xmit_wait;
  uint64_t ecn_marked = 0;
  // Congestion notification at the NICs (NicCounters, summed) and the cuts
  // and limiter releases of every QP's algorithm.
  struct CcTotals {
    uint64_t cnps_sent = 0;
    uint64_t cnps_received = 0;
    uint64_t ecn_marked_received = 0;
    uint64_t ecn_echo_acks_sent = 0;
    uint64_t ecn_echo_acks_received = 0;
    uint64_t rate_cuts = 0;
    uint64_t rate_releases = 0;
  } cc;
  // The measurement window as it applied (docs/scenario.md): (start, end],
  // end clipped to the end of the run; empty (end <= start) if the run
  // ended before its start.
  struct Window {
    Time start;
    Time end;
    bool given = false;           // output.window had a start or an end
    bool queue_averages = false;  // QueueTotals::window_mean_bytes computed
    uint64_t pfc_frames_sent = 0;
    // Congestion notification within it, summed over the flows (FlowResult's
    // counts): CNPs the senders received, CNPs the receivers sent, ECN-echo
    // ACKs the senders received, the senders' cuts.
    uint64_t cnps_received = 0;
    uint64_t cnps_sent = 0;
    uint64_t ecn_echo_acks = 0;
    uint64_t rate_cuts = 0;
    Time length() const { return end > start ? end - start : Time::zero(); }
  } window;
  // The time series (docs/trace.md) are spooled (sim/row_spool.h): spilled
  // to a temporary file in RunOptions::spool_dir as the run goes.
  RowSpool<CcSampleResult> cc_samples;  // if output.cc_interval: time order
  int64_t switch_buffer_peak = 0;       // the most any one switch held at once
  int64_t switch_buffer_size = 0;
  std::vector<FlowResult> flows;
  std::vector<CollectiveResult> collectives;
  std::vector<LinkResult> links;  // one per direction, in topology link order (a->b, b->a)
  // Recorded as configured in `output` (docs/trace.md).
  RowSpool<PfcEvent> pfc_events;
  RowSpool<DropEvent> drop_events;
  RowSpool<QueueSample> queue_samples;
  RowSpool<VlBufferSample> vl_buffer_samples;  // InfiniBand switches' receive buffers
  // Per switch egress queue that saw any packet: its counters.
  struct QueueTotals {
    uint32_t node, port;
    uint8_t priority;
    QueueCounters counters;
    double window_mean_bytes = -1;   // time-average length in the window; -1: not computed
    int64_t window_peak_bytes = -1;  // its peak in the window; -1: not computed
  };
  std::vector<QueueTotals> queue_totals;
  RowSpool<LinkSample> link_samples;  // link index as in `links`

  struct Deadlock {
    bool detected = false;
    Time at;
    std::vector<DeadlockQueue> cycle;
  } deadlock;

  WallClock wall;
};

}  // namespace rdmasim
