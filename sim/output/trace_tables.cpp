#include "sim/output/trace_tables.h"

namespace rdmasim {

const char* to_string(ColumnType t) {
  switch (t) {
    case ColumnType::kUint8:
      return "uint8";
    case ColumnType::kUint16:
      return "uint16";
    case ColumnType::kUint32:
      return "uint32";
    case ColumnType::kInt32:
      return "int32";
    case ColumnType::kUint64:
      return "uint64";
    case ColumnType::kInt64:
      return "int64";
    case ColumnType::kFloat64:
      return "float64";
    case ColumnType::kString:
      return "string";
  }
  return "?";
}

namespace trace {

#define RDMASIM_TABLE(Row, name, ...)                            \
  const TraceTable& Row::table() {                               \
    static const TraceTable t{name, sizeof(Row), {__VA_ARGS__}}; \
    return t;                                                    \
  }

RDMASIM_TABLE(NodeRow, "nodes",                         //
              RDMASIM_COLUMN(NodeRow, id, ""),          //
              RDMASIM_COLUMN(NodeRow, name, ""),        //
              RDMASIM_COLUMN(NodeRow, kind, ""),        //
              RDMASIM_COLUMN(NodeRow, tier, ""),        //
              RDMASIM_COLUMN(NodeRow, group, ""),       //
              RDMASIM_COLUMN(NodeRow, host_index, ""),  //
              RDMASIM_COLUMN(NodeRow, num_ports, ""))

RDMASIM_TABLE(FlowRow, "flows",                                     //
              RDMASIM_COLUMN(FlowRow, id, ""),                      //
              RDMASIM_COLUMN(FlowRow, src, "node id"),              //
              RDMASIM_COLUMN(FlowRow, dst, "node id"),              //
              RDMASIM_COLUMN(FlowRow, bytes, "bytes"),              //
              RDMASIM_COLUMN(FlowRow, op, ""),                      //
              RDMASIM_COLUMN(FlowRow, name, ""),                    //
              RDMASIM_COLUMN(FlowRow, start, "ps"),                 //
              RDMASIM_COLUMN(FlowRow, first_tx, "ps"),              //
              RDMASIM_COLUMN(FlowRow, finish, "ps"),                //
              RDMASIM_COLUMN(FlowRow, fct, "ps"),                   //
              RDMASIM_COLUMN(FlowRow, done, "0/1"),                 //
              RDMASIM_COLUMN(FlowRow, retransmissions, "packets"),  //
              RDMASIM_COLUMN(FlowRow, error, ""),                   //
              RDMASIM_COLUMN(FlowRow, item, ""),                    //
              RDMASIM_COLUMN(FlowRow, ideal_fct, "ps"),             //
              RDMASIM_COLUMN(FlowRow, slowdown, ""),                //
              RDMASIM_COLUMN(FlowRow, cnps_received, "packets"),    //
              RDMASIM_COLUMN(FlowRow, cnps_sent, "packets"),        //
              RDMASIM_COLUMN(FlowRow, ecn_marked, "packets"),       //
              RDMASIM_COLUMN(FlowRow, ecn_echo_acks, "packets"),    //
              RDMASIM_COLUMN(FlowRow, rate_cuts, ""),               //
              RDMASIM_COLUMN(FlowRow, window_bytes, "bytes"))

RDMASIM_TABLE(LinkRow, "links",                                        //
              RDMASIM_COLUMN(LinkRow, link, ""),                       //
              RDMASIM_COLUMN(LinkRow, from_node, "node id"),           //
              RDMASIM_COLUMN(LinkRow, to_node, "node id"),             //
              RDMASIM_COLUMN(LinkRow, from_port, ""),                  //
              RDMASIM_COLUMN(LinkRow, to_port, ""),                    //
              RDMASIM_COLUMN(LinkRow, rate_bps, "bit/s"),              //
              RDMASIM_COLUMN(LinkRow, delay_ps, "ps"),                 //
              RDMASIM_COLUMN(LinkRow, failed, "0/1"),                  //
              RDMASIM_COLUMN(LinkRow, frames, "frames"),               //
              RDMASIM_COLUMN(LinkRow, data_frames, "frames"),          //
              RDMASIM_COLUMN(LinkRow, control_frames, "frames"),       //
              RDMASIM_COLUMN(LinkRow, wire_bytes, "bytes"),            //
              RDMASIM_COLUMN(LinkRow, payload_bytes, "bytes"),         //
              RDMASIM_COLUMN(LinkRow, busy_ps, "ps"),                  //
              RDMASIM_COLUMN(LinkRow, window_frames, "frames"),        //
              RDMASIM_COLUMN(LinkRow, window_wire_bytes, "bytes"),     //
              RDMASIM_COLUMN(LinkRow, window_payload_bytes, "bytes"),  //
              RDMASIM_COLUMN(LinkRow, window_busy_ps, "ps"))

RDMASIM_TABLE(PfcRow, "pfc",                            //
              RDMASIM_COLUMN(PfcRow, time, "ps"),       //
              RDMASIM_COLUMN(PfcRow, node, "node id"),  //
              RDMASIM_COLUMN(PfcRow, port, ""),         //
              RDMASIM_COLUMN(PfcRow, priority, ""),     //
              RDMASIM_COLUMN(PfcRow, pause, "0/1"),     //
              RDMASIM_COLUMN(PfcRow, sent, "0/1"),      //
              RDMASIM_COLUMN(PfcRow, quanta, "512 bit times"))

RDMASIM_TABLE(DropRow, "drops",                          //
              RDMASIM_COLUMN(DropRow, time, "ps"),       //
              RDMASIM_COLUMN(DropRow, node, "node id"),  //
              RDMASIM_COLUMN(DropRow, port, ""),         //
              RDMASIM_COLUMN(DropRow, priority, ""),     //
              RDMASIM_COLUMN(DropRow, reason, ""),       //
              RDMASIM_COLUMN(DropRow, bytes, "bytes"))

RDMASIM_TABLE(QueueRow, "queues",                         //
              RDMASIM_COLUMN(QueueRow, time, "ps"),       //
              RDMASIM_COLUMN(QueueRow, node, "node id"),  //
              RDMASIM_COLUMN(QueueRow, port, ""),         //
              RDMASIM_COLUMN(QueueRow, priority, ""),     //
              RDMASIM_COLUMN(QueueRow, bytes, "bytes"))

RDMASIM_TABLE(VlBufferRow, "vl_buffers",                              //
              RDMASIM_COLUMN(VlBufferRow, time, "ps"),                //
              RDMASIM_COLUMN(VlBufferRow, node, "node id"),           //
              RDMASIM_COLUMN(VlBufferRow, port, ""),                  //
              RDMASIM_COLUMN(VlBufferRow, vl, ""),                    //
              RDMASIM_COLUMN(VlBufferRow, blocks, "64-byte blocks"),  //
              RDMASIM_COLUMN(VlBufferRow, bytes, "bytes"))

RDMASIM_TABLE(QueueTotalsRow, "queue_totals",                                //
              RDMASIM_COLUMN(QueueTotalsRow, node, "node id"),               //
              RDMASIM_COLUMN(QueueTotalsRow, port, ""),                      //
              RDMASIM_COLUMN(QueueTotalsRow, priority, ""),                  //
              RDMASIM_COLUMN(QueueTotalsRow, enqueued, "packets"),           //
              RDMASIM_COLUMN(QueueTotalsRow, ecn_marked, "packets"),         //
              RDMASIM_COLUMN(QueueTotalsRow, peak_bytes, "bytes"),           //
              RDMASIM_COLUMN(QueueTotalsRow, drop_headroom, "packets"),      //
              RDMASIM_COLUMN(QueueTotalsRow, drop_buffer, "packets"),        //
              RDMASIM_COLUMN(QueueTotalsRow, drop_egress_limit, "packets"),  //
              RDMASIM_COLUMN(QueueTotalsRow, drop_watchdog, "packets"),      //
              RDMASIM_COLUMN(QueueTotalsRow, drop_port_down, "packets"),     //
              RDMASIM_COLUMN(QueueTotalsRow, watchdog_triggers, ""),         //
              RDMASIM_COLUMN(QueueTotalsRow, hoq_discards, "packets"),       //
              RDMASIM_COLUMN(QueueTotalsRow, xmit_wait_ps, "ps"),            //
              RDMASIM_COLUMN(QueueTotalsRow, window_mean_bytes, "bytes"),    //
              RDMASIM_COLUMN(QueueTotalsRow, window_peak_bytes, "bytes"))

RDMASIM_TABLE(LinkSampleRow, "link_samples",                       //
              RDMASIM_COLUMN(LinkSampleRow, time, "ps"),           //
              RDMASIM_COLUMN(LinkSampleRow, row, ""),              //
              RDMASIM_COLUMN(LinkSampleRow, frames, "frames"),     //
              RDMASIM_COLUMN(LinkSampleRow, wire_bytes, "bytes"),  //
              RDMASIM_COLUMN(LinkSampleRow, payload_bytes, "bytes"))

RDMASIM_TABLE(CcRow, "cc_samples",                         //
              RDMASIM_COLUMN(CcRow, time, "ps"),           //
              RDMASIM_COLUMN(CcRow, flow, ""),             //
              RDMASIM_COLUMN(CcRow, part, ""),             //
              RDMASIM_COLUMN(CcRow, node, "node id"),      //
              RDMASIM_COLUMN(CcRow, qpn, ""),              //
              RDMASIM_COLUMN(CcRow, sender, "0/1"),        //
              RDMASIM_COLUMN(CcRow, rate_bps, "bit/s"),    //
              RDMASIM_COLUMN(CcRow, target_bps, "bit/s"),  //
              RDMASIM_COLUMN(CcRow, alpha, ""),            //
              RDMASIM_COLUMN(CcRow, window, "bytes"),      //
              RDMASIM_COLUMN(CcRow, changes, ""))

RDMASIM_TABLE(PathRow, "flow_paths",              //
              RDMASIM_COLUMN(PathRow, flow, ""),  //
              RDMASIM_COLUMN(PathRow, hop, ""),   //
              RDMASIM_COLUMN(PathRow, row, ""))

RDMASIM_TABLE(CollectiveStepRow, "collective_steps",               //
              RDMASIM_COLUMN(CollectiveStepRow, item, ""),         //
              RDMASIM_COLUMN(CollectiveStepRow, iteration, ""),    //
              RDMASIM_COLUMN(CollectiveStepRow, rank, ""),         //
              RDMASIM_COLUMN(CollectiveStepRow, step, ""),         //
              RDMASIM_COLUMN(CollectiveStepRow, node, "node id"),  //
              RDMASIM_COLUMN(CollectiveStepRow, start, "ps"),      //
              RDMASIM_COLUMN(CollectiveStepRow, end, "ps"),        //
              RDMASIM_COLUMN(CollectiveStepRow, bytes, "bytes"))

RDMASIM_TABLE(CollectiveSweepRow, "collective_sweep",                   //
              RDMASIM_COLUMN(CollectiveSweepRow, item, ""),             //
              RDMASIM_COLUMN(CollectiveSweepRow, first_iteration, ""),  //
              RDMASIM_COLUMN(CollectiveSweepRow, iters, ""),            //
              RDMASIM_COLUMN(CollectiveSweepRow, done, ""),             //
              RDMASIM_COLUMN(CollectiveSweepRow, size_bytes, "bytes"),  //
              RDMASIM_COLUMN(CollectiveSweepRow, count, ""),            //
              RDMASIM_COLUMN(CollectiveSweepRow, time_us, "us"),        //
              RDMASIM_COLUMN(CollectiveSweepRow, algbw_gbps, "GB/s"),   //
              RDMASIM_COLUMN(CollectiveSweepRow, busbw_gbps, "GB/s"))

RDMASIM_TABLE(DeadlockRow, "deadlock",                       //
              RDMASIM_COLUMN(DeadlockRow, node, "node id"),  //
              RDMASIM_COLUMN(DeadlockRow, port, ""),         //
              RDMASIM_COLUMN(DeadlockRow, priority, ""),     //
              RDMASIM_COLUMN(DeadlockRow, blocked_by, ""))

#undef RDMASIM_TABLE

const std::vector<const TraceTable*>& all_tables() {
  static const std::vector<const TraceTable*> t = {
      &NodeRow::table(),
      &FlowRow::table(),
      &LinkRow::table(),
      &PfcRow::table(),
      &DropRow::table(),
      &QueueRow::table(),
      &VlBufferRow::table(),
      &LinkSampleRow::table(),
      &QueueTotalsRow::table(),
      &CcRow::table(),
      &PathRow::table(),
      &CollectiveStepRow::table(),
      &CollectiveSweepRow::table(),
      &DeadlockRow::table(),
  };
  return t;
}

}  // namespace trace
}  // namespace rdmasim
