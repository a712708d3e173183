// The tables of trace.h5 (docs/trace.md): each one's row struct and, in
// trace_tables.cpp, its declaration (sim/output/trace_table.h), from which
// the writer (trace_writer.cpp) builds the file's compound type and against
// which a test checks docs/trace.md. A new table is a row struct here, its
// declaration, and the lines of the writer that fill its rows.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/output/trace_table.h"

namespace rdmasim::trace {

struct NodeRow {
  uint32_t id;
  const char* name;
  const char* kind;
  const char* tier;
  const char* group;
  int32_t host_index;
  uint32_t num_ports;
  static const TraceTable& table();
};

struct FlowRow {
  uint32_t id;
  uint32_t src, dst;  // node ids
  int64_t bytes;
  const char* op;
  const char* name;
  int64_t start;     // ps: when posted (the scenario's start)
  int64_t first_tx;  // ps: first packet's start of transmission; -1 if never sent
  int64_t finish;    // ps: requester completion; -1 if not done
  int64_t fct;       // finish - first_tx; -1 if not done
  uint8_t done;
  uint64_t retransmissions;  // packets its QP pair sent again
  const char* error;         // "" or the error completion status of a failed flow
  uint32_t item;             // the traffic[item] it came from
  int64_t ideal_fct;         // ps: its FCT alone on the idle fabric (closed form)
  double slowdown;           // fct / ideal_fct; -1 if not done
  uint64_t cnps_received;    // by the QPs sending its data
  uint64_t cnps_sent;        // by the QPs receiving it
  uint64_t ecn_marked;       // CE-marked packets the receiving QPs got
  uint64_t ecn_echo_acks;    // ACKs with an ECN echo the sending QPs got
  uint64_t rate_cuts;        // the sending QPs' algorithms' cuts
  int64_t window_bytes;      // payload delivered within the measurement window
  static const TraceTable& table();
};

struct LinkRow {
  uint32_t link;  // topology link index; each has two rows, one per direction
  uint32_t from_node, to_node, from_port, to_port;
  int64_t rate_bps, delay_ps;
  uint8_t failed;
  uint64_t frames, data_frames;
  uint64_t control_frames;  // PFC frames, IB flow-control packets
  int64_t wire_bytes, payload_bytes, busy_ps;
  uint64_t window_frames;  // within the measurement window
  int64_t window_wire_bytes, window_payload_bytes, window_busy_ps;
  static const TraceTable& table();
};

struct PfcRow {
  int64_t time;
  uint32_t node, port;
  uint8_t priority;
  uint8_t pause;  // 1 pause, 0 resume
  uint8_t sent;   // 1 sent by `node`, 0 received by it
  uint16_t quanta;
  static const TraceTable& table();
};

struct DropRow {
  int64_t time;
  uint32_t node, port;
  uint8_t priority;
  const char* reason;
  uint32_t bytes;
  static const TraceTable& table();
};

struct QueueRow {
  int64_t time;
  uint32_t node, port;
  uint8_t priority;
  int64_t bytes;
  static const TraceTable& table();
};

struct VlBufferRow {
  int64_t time;
  uint32_t node, port;
  uint8_t vl;
  uint64_t blocks;
  int64_t bytes;
  static const TraceTable& table();
};

struct QueueTotalsRow {
  uint32_t node, port;
  uint8_t priority;
  uint64_t enqueued, ecn_marked;
  int64_t peak_bytes;
  uint64_t drop_headroom, drop_buffer, drop_egress_limit, drop_watchdog, drop_port_down;
  uint64_t watchdog_triggers;
  uint64_t hoq_discards;      // InfiniBand: discarded at the head (lifetime passed)
  int64_t xmit_wait_ps;       // InfiniBand: PortVLXmitWait, time its head waited for credits
  double window_mean_bytes;   // time-average within the window; -1 if not computed
  int64_t window_peak_bytes;  // peak within the window; -1 if not computed
  static const TraceTable& table();
};

struct LinkSampleRow {
  int64_t time;
  uint32_t row;  // the /links row (link direction) sampled
  uint64_t frames;
  int64_t wire_bytes, payload_bytes;  // cumulative
  static const TraceTable& table();
};

struct CcRow {
  int64_t time;
  uint32_t flow, part;
  uint32_t node, qpn;  // the QP: its host's node id and its QPN
  uint8_t sender;      // 1: it sends the flow's data
  double rate_bps, target_bps, alpha;
  int64_t window;
  uint32_t changes;
  static const TraceTable& table();
};

struct PathRow {
  uint32_t flow, hop, row;  // row: the /links row (direction) of hop `hop`
  static const TraceTable& table();
};

struct CollectiveStepRow {
  uint32_t item;  // the traffic[item] of the collective
  uint32_t iteration, rank, step;
  uint32_t node;  // the rank's host: its node id
  int64_t start;  // ps: its first post of an element of the step; -1 if none
  int64_t end;    // ps: arrival of the last element of the step it receives; -1 if not yet
  int64_t bytes;  // payload it received in the step
  static const TraceTable& table();
};

// One size of a collective's sweep (docs/collectives.md#sweeps): the row
// nccl-tests prints for it.
struct CollectiveSweepRow {
  uint32_t item;             // the traffic[item] of the collective
  uint32_t first_iteration;  // its first timed iteration (/collective_steps' iteration)
  uint32_t iters;            // timed iterations
  uint32_t done;             // 1 if they all finished
  int64_t size_bytes, count;
  double time_us, algbw_gbps, busbw_gbps;  // 0 if not done
  static const TraceTable& table();
};

struct DeadlockRow {
  uint32_t node, port;
  uint8_t priority;
  const char* blocked_by;  // "paused" (PFC) or "credits" (InfiniBand)
  static const TraceTable& table();
};

// Every table, in the order the writer writes those present.
const std::vector<const TraceTable*>& all_tables();

}  // namespace rdmasim::trace
