#include "sim/output/trace_writer.h"

#include <hdf5.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <vector>

#include "sim/output/version.h"

namespace rdmasim {
namespace {

// Owns one HDF5 identifier and closes it with the matching function.
class Id {
 public:
  Id(hid_t id, herr_t (*close)(hid_t), const char* what) : id_(id), close_(close) {
    if (id_ < 0) throw std::runtime_error(std::string("HDF5: cannot create ") + what);
  }
  Id(const Id&) = delete;
  Id& operator=(const Id&) = delete;
  ~Id() { close_(id_); }
  operator hid_t() const { return id_; }  // NOLINT: used like the raw id

 private:
  hid_t id_;
  herr_t (*close_)(hid_t);
};

void check(herr_t status, const char* what) {
  if (status < 0) throw std::runtime_error(std::string("HDF5: cannot write ") + what);
}

// Creation properties shared by every group and dataset: no timestamps, so
// identical runs give identical bytes.
hid_t untimed(hid_t cls) {
  hid_t p = H5Pcreate(cls);
  if (p >= 0) H5Pset_obj_track_times(p, 0);
  return p;
}

hid_t vlen_string_type() {
  hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, H5T_VARIABLE);
  H5Tset_cset(t, H5T_CSET_UTF8);
  return t;
}

void string_attribute(hid_t obj, const char* name, const std::string& value) {
  Id type(vlen_string_type(), H5Tclose, "string type");
  Id space(H5Screate(H5S_SCALAR), H5Sclose, "scalar space");
  Id attr(H5Acreate2(obj, name, type, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose, name);
  const char* p = value.c_str();
  check(H5Awrite(attr, type, &p), name);
}

void int_attribute(hid_t obj, const char* name, int64_t value) {
  Id space(H5Screate(H5S_SCALAR), H5Sclose, "scalar space");
  Id attr(H5Acreate2(obj, name, H5T_STD_I64LE, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose, name);
  check(H5Awrite(attr, H5T_NATIVE_INT64, &value), name);
}

// A compound table: `Row` in memory, described field by field; written with
// a packed file type so struct padding never reaches the file.
template <class Row>
class Table {
 public:
  Table() : mem_(H5Tcreate(H5T_COMPOUND, sizeof(Row)), H5Tclose, "compound type") {}
  void field(const char* name, size_t offset, hid_t type) {
    check(H5Tinsert(mem_, name, offset, type), name);
  }
  void write(hid_t parent, const char* name, const std::vector<Row>& rows, hid_t dcpl) {
    Id file_type(H5Tcopy(mem_), H5Tclose, "file type");
    check(H5Tpack(file_type), "packed type");
    const hsize_t dims[1] = {rows.size()};
    Id space(H5Screate_simple(1, dims, nullptr), H5Sclose, "dataspace");
    Id ds(H5Dcreate2(parent, name, file_type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT), H5Dclose,
          name);
    if (!rows.empty()) check(H5Dwrite(ds, mem_, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows.data()), name);
  }

 private:
  Id mem_;
};

// Rows with every byte zero (padding included) before the fields are set, so
// that nothing uninitialised can reach the file.
template <class Row>
std::vector<Row> zeroed(size_t n) {
  std::vector<Row> rows(n);
  // An empty vector's data() may be null, and memset(nullptr, 0, 0) is
  // undefined behaviour (UBSan reports it).
  if (n > 0) std::memset(static_cast<void*>(rows.data()), 0, n * sizeof(Row));
  return rows;
}

#define RDMASIM_FIELD(table, Row, member, type) table.field(#member, offsetof(Row, member), type)

constexpr int64_t kTraceFormatVersion = 1;

struct NodeRow {
  uint32_t id;
  const char* name;
  const char* kind;
  const char* tier;
  const char* group;
  int32_t host_index;
  uint32_t num_ports;
};

struct PfcRow {
  int64_t time;
  uint32_t node, port;
  uint8_t priority;
  uint8_t pause;  // 1 pause, 0 resume
  uint8_t sent;   // 1 sent by `node`, 0 received by it
  uint16_t quanta;
};

struct DropRow {
  int64_t time;
  uint32_t node, port;
  uint8_t priority;
  const char* reason;
  uint32_t bytes;
};

struct QueueRow {
  int64_t time;
  uint32_t node, port;
  uint8_t priority;
  int64_t bytes;
};

struct LinkSampleRow {
  int64_t time;
  uint32_t row;  // the /links row (link direction) sampled
  uint64_t frames;
  int64_t wire_bytes, payload_bytes;  // cumulative
};

struct QueueTotalsRow {
  uint32_t node, port;
  uint8_t priority;
  uint64_t enqueued, ecn_marked;
  int64_t peak_bytes;
  uint64_t drop_headroom, drop_buffer, drop_egress_limit, drop_watchdog;
  uint64_t watchdog_triggers;
  double window_mean_bytes;   // time-average within the window; -1 if not computed
  int64_t window_peak_bytes;  // peak within the window; -1 if not computed
};

struct PathRow {
  uint32_t flow, hop, row;  // row: the /links row (direction) of hop `hop`
};

struct DeadlockRow {
  uint32_t node, port;
  uint8_t priority;
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
};

struct CcRow {
  int64_t time;
  uint32_t flow, part;
  uint32_t node, qpn;  // the QP: its host's node id and its QPN
  uint8_t sender;      // 1: it sends the flow's data
  double rate_bps, target_bps, alpha;
  int64_t window;
  uint32_t changes;
};

struct LinkRow {
  uint32_t link;  // topology link index; each has two rows, one per direction
  uint32_t from_node, to_node, from_port, to_port;
  int64_t rate_bps, delay_ps;
  uint8_t failed;
  uint64_t frames, data_frames;
  int64_t wire_bytes, payload_bytes, busy_ps;
  uint64_t window_frames;  // within the measurement window
  int64_t window_wire_bytes, window_payload_bytes, window_busy_ps;
};

void write_file(hid_t file, const Scenario& sc, const RunResult& r) {
  Id gcpl(untimed(H5P_GROUP_CREATE), H5Pclose, "group properties");
  Id dcpl(untimed(H5P_DATASET_CREATE), H5Pclose, "dataset properties");
  Id str(vlen_string_type(), H5Tclose, "string type");
  const Topology& topo = sc.topology;

  // Bumped whenever a table's columns change meaning or a column goes away.
  int_attribute(file, "format_version", kTraceFormatVersion);
  string_attribute(file, "rdmasim_version", version());
  string_attribute(file, "git_revision", git_revision());
  string_attribute(file, "scenario_name", sc.name);
  string_attribute(file, "scenario_hash", sc.hash);
  string_attribute(file, "status", to_string(r.status));
  int_attribute(file, "seed", static_cast<int64_t>(sc.seed));
  int_attribute(file, "sim_time_ps", r.sim_time.in_ps());
  int_attribute(file, "window_start_ps", r.window.start.in_ps());
  int_attribute(file, "window_end_ps", r.window.end.in_ps());

  {
    Id meta(H5Gcreate2(file, "meta", H5P_DEFAULT, gcpl, H5P_DEFAULT), H5Gclose, "/meta");
    Id space(H5Screate(H5S_SCALAR), H5Sclose, "scalar space");
    Id ds(H5Dcreate2(meta, "scenario", str, space, H5P_DEFAULT, dcpl, H5P_DEFAULT), H5Dclose,
          "/meta/scenario");
    const char* text = sc.resolved_json.c_str();
    check(H5Dwrite(ds, str, H5S_ALL, H5S_ALL, H5P_DEFAULT, &text), "/meta/scenario");
  }

  {
    auto rows = zeroed<NodeRow>(topo.nodes().size());
    for (uint32_t i = 0; i < rows.size(); ++i) {
      const TopoNode& n = topo.node(i);
      rows[i].id = i;
      rows[i].name = n.name.c_str();
      rows[i].kind = n.kind == NodeKind::kHost ? "host" : "switch";
      rows[i].tier = to_string(n.tier);
      rows[i].group = n.group.c_str();
      rows[i].host_index = n.kind == NodeKind::kHost ? static_cast<int32_t>(n.host_index) : -1;
      rows[i].num_ports = n.num_ports;
    }
    Table<NodeRow> t;
    RDMASIM_FIELD(t, NodeRow, id, H5T_NATIVE_UINT32);
    RDMASIM_FIELD(t, NodeRow, name, str);
    RDMASIM_FIELD(t, NodeRow, kind, str);
    RDMASIM_FIELD(t, NodeRow, tier, str);
    RDMASIM_FIELD(t, NodeRow, group, str);
    RDMASIM_FIELD(t, NodeRow, host_index, H5T_NATIVE_INT32);
    RDMASIM_FIELD(t, NodeRow, num_ports, H5T_NATIVE_UINT32);
    t.write(file, "nodes", rows, dcpl);
  }

  {
    auto rows = zeroed<FlowRow>(r.flows.size());
    for (size_t i = 0; i < rows.size(); ++i) {
      const FlowResult& f = r.flows[i];
      FlowRow& row = rows[i];
      row.id = f.id;
      row.src = topo.hosts()[f.src];
      row.dst = topo.hosts()[f.dst];
      row.bytes = f.bytes;
      row.op = to_string(f.op);
      row.name = f.name.c_str();
      row.start = f.start.in_ps();
      row.first_tx = f.started ? f.first_tx.in_ps() : -1;
      row.finish = f.done ? f.finish.in_ps() : -1;
      row.fct = f.done ? f.fct().in_ps() : -1;
      row.done = f.done ? 1 : 0;
      row.retransmissions = f.retransmissions;
      row.error = f.error.c_str();
      row.item = f.item;
      row.ideal_fct = f.ideal_fct.is_infinite() ? -1 : f.ideal_fct.in_ps();
      row.slowdown = f.done && row.ideal_fct > 0 ? f.slowdown() : -1.0;
      row.cnps_received = f.cnps_received;
      row.cnps_sent = f.cnps_sent;
      row.ecn_marked = f.ecn_marked;
      row.ecn_echo_acks = f.ecn_echo_acks;
      row.rate_cuts = f.rate_cuts;
      row.window_bytes = f.window_bytes;
    }
    Table<FlowRow> t;
    RDMASIM_FIELD(t, FlowRow, id, H5T_NATIVE_UINT32);
    RDMASIM_FIELD(t, FlowRow, src, H5T_NATIVE_UINT32);
    RDMASIM_FIELD(t, FlowRow, dst, H5T_NATIVE_UINT32);
    RDMASIM_FIELD(t, FlowRow, bytes, H5T_NATIVE_INT64);
    RDMASIM_FIELD(t, FlowRow, op, str);
    RDMASIM_FIELD(t, FlowRow, name, str);
    RDMASIM_FIELD(t, FlowRow, start, H5T_NATIVE_INT64);
    RDMASIM_FIELD(t, FlowRow, first_tx, H5T_NATIVE_INT64);
    RDMASIM_FIELD(t, FlowRow, finish, H5T_NATIVE_INT64);
    RDMASIM_FIELD(t, FlowRow, fct, H5T_NATIVE_INT64);
    RDMASIM_FIELD(t, FlowRow, done, H5T_NATIVE_UINT8);
    RDMASIM_FIELD(t, FlowRow, retransmissions, H5T_NATIVE_UINT64);
    RDMASIM_FIELD(t, FlowRow, error, str);
    RDMASIM_FIELD(t, FlowRow, item, H5T_NATIVE_UINT32);
    RDMASIM_FIELD(t, FlowRow, ideal_fct, H5T_NATIVE_INT64);
    RDMASIM_FIELD(t, FlowRow, slowdown, H5T_NATIVE_DOUBLE);
    RDMASIM_FIELD(t, FlowRow, cnps_received, H5T_NATIVE_UINT64);
    RDMASIM_FIELD(t, FlowRow, cnps_sent, H5T_NATIVE_UINT64);
    RDMASIM_FIELD(t, FlowRow, ecn_marked, H5T_NATIVE_UINT64);
    RDMASIM_FIELD(t, FlowRow, ecn_echo_acks, H5T_NATIVE_UINT64);
    RDMASIM_FIELD(t, FlowRow, rate_cuts, H5T_NATIVE_UINT64);
    RDMASIM_FIELD(t, FlowRow, window_bytes, H5T_NATIVE_INT64);
    t.write(file, "flows", rows, dcpl);
  }

  {
    auto rows = zeroed<LinkRow>(r.links.size());
    for (size_t i = 0; i < rows.size(); ++i) {
      const LinkResult& l = r.links[i];
      const TopoLink& tl = topo.links()[l.link];
      LinkRow& row = rows[i];
      row.link = l.link;
      row.from_node = l.from;
      row.to_node = l.to;
      row.from_port = l.from_port;
      row.to_port = l.from == tl.a ? tl.b_port : tl.a_port;
      row.rate_bps = l.rate.in_bps();
      row.delay_ps = tl.delay.in_ps();
      row.failed = tl.failed ? 1 : 0;
      row.frames = l.frames;
      row.data_frames = l.data_frames;
      row.wire_bytes = l.wire_bytes;
      row.payload_bytes = l.payload_bytes;
      row.busy_ps = l.busy.in_ps();
      row.window_frames = l.window_frames;
      row.window_wire_bytes = l.window_wire_bytes;
      row.window_payload_bytes = l.window_payload_bytes;
      row.window_busy_ps = l.window_busy.in_ps();
    }
    Table<LinkRow> t;
    RDMASIM_FIELD(t, LinkRow, link, H5T_NATIVE_UINT32);
    RDMASIM_FIELD(t, LinkRow, from_node, H5T_NATIVE_UINT32);
    RDMASIM_FIELD(t, LinkRow, to_node, H5T_NATIVE_UINT32);
    RDMASIM_FIELD(t, LinkRow, from_port, H5T_NATIVE_UINT32);
    RDMASIM_FIELD(t, LinkRow, to_port, H5T_NATIVE_UINT32);
    RDMASIM_FIELD(t, LinkRow, rate_bps, H5T_NATIVE_INT64);
    RDMASIM_FIELD(t, LinkRow, delay_ps, H5T_NATIVE_INT64);
    RDMASIM_FIELD(t, LinkRow, failed, H5T_NATIVE_UINT8);
    RDMASIM_FIELD(t, LinkRow, frames, H5T_NATIVE_UINT64);
    RDMASIM_FIELD(t, LinkRow, data_frames, H5T_NATIVE_UINT64);
    RDMASIM_FIELD(t, LinkRow, wire_bytes, H5T_NATIVE_INT64);
    RDMASIM_FIELD(t, LinkRow, payload_bytes, H5T_NATIVE_INT64);
    RDMASIM_FIELD(t, LinkRow, busy_ps, H5T_NATIVE_INT64);
    RDMASIM_FIELD(t, LinkRow, window_frames, H5T_NATIVE_UINT64);
    RDMASIM_FIELD(t, LinkRow, window_wire_bytes, H5T_NATIVE_INT64);
    RDMASIM_FIELD(t, LinkRow, window_payload_bytes, H5T_NATIVE_INT64);
    RDMASIM_FIELD(t, LinkRow, window_busy_ps, H5T_NATIVE_INT64);
    t.write(file, "links", rows, dcpl);
  }

  if (sc.output.pfc_events) {
    auto rows = zeroed<PfcRow>(r.pfc_events.size());
    for (size_t i = 0; i < rows.size(); ++i) {
      const PfcEvent& e = r.pfc_events[i];
      rows[i] = PfcRow{e.time.in_ps(),
                       e.node,
                       e.port,
                       e.priority,
                       e.pause ? uint8_t{1} : uint8_t{0},
                       e.sent ? uint8_t{1} : uint8_t{0},
                       e.quanta};
    }
    Table<PfcRow> t;
    RDMASIM_FIELD(t, PfcRow, time, H5T_NATIVE_INT64);
    RDMASIM_FIELD(t, PfcRow, node, H5T_NATIVE_UINT32);
    RDMASIM_FIELD(t, PfcRow, port, H5T_NATIVE_UINT32);
    RDMASIM_FIELD(t, PfcRow, priority, H5T_NATIVE_UINT8);
    RDMASIM_FIELD(t, PfcRow, pause, H5T_NATIVE_UINT8);
    RDMASIM_FIELD(t, PfcRow, sent, H5T_NATIVE_UINT8);
    RDMASIM_FIELD(t, PfcRow, quanta, H5T_NATIVE_UINT16);
    t.write(file, "pfc", rows, dcpl);
  }

  if (sc.output.drop_events) {
    auto rows = zeroed<DropRow>(r.drop_events.size());
    for (size_t i = 0; i < rows.size(); ++i) {
      const DropEvent& e = r.drop_events[i];
      rows[i] = DropRow{e.time.in_ps(), e.node, e.port, e.priority, to_string(e.reason), e.bytes};
    }
    Table<DropRow> t;
    RDMASIM_FIELD(t, DropRow, time, H5T_NATIVE_INT64);
    RDMASIM_FIELD(t, DropRow, node, H5T_NATIVE_UINT32);
    RDMASIM_FIELD(t, DropRow, port, H5T_NATIVE_UINT32);
    RDMASIM_FIELD(t, DropRow, priority, H5T_NATIVE_UINT8);
    RDMASIM_FIELD(t, DropRow, reason, str);
    RDMASIM_FIELD(t, DropRow, bytes, H5T_NATIVE_UINT32);
    t.write(file, "drops", rows, dcpl);
  }

  if (!sc.output.queue_interval.is_infinite()) {
    auto rows = zeroed<QueueRow>(r.queue_samples.size());
    for (size_t i = 0; i < rows.size(); ++i) {
      const QueueSample& q = r.queue_samples[i];
      rows[i] = QueueRow{q.time.in_ps(), q.node, q.port, q.priority, q.bytes};
    }
    Table<QueueRow> t;
    RDMASIM_FIELD(t, QueueRow, time, H5T_NATIVE_INT64);
    RDMASIM_FIELD(t, QueueRow, node, H5T_NATIVE_UINT32);
    RDMASIM_FIELD(t, QueueRow, port, H5T_NATIVE_UINT32);
    RDMASIM_FIELD(t, QueueRow, priority, H5T_NATIVE_UINT8);
    RDMASIM_FIELD(t, QueueRow, bytes, H5T_NATIVE_INT64);
    t.write(file, "queues", rows, dcpl);
    Id ds(H5Dopen2(file, "queues", H5P_DEFAULT), H5Dclose, "/queues");
    int_attribute(ds, "interval_ps", sc.output.queue_interval.in_ps());
  }

  if (!sc.output.link_interval.is_infinite()) {
    auto rows = zeroed<LinkSampleRow>(r.link_samples.size());
    for (size_t i = 0; i < rows.size(); ++i) {
      const LinkSample& l = r.link_samples[i];
      rows[i] = LinkSampleRow{l.time.in_ps(), l.link, l.frames, l.wire_bytes, l.payload_bytes};
    }
    Table<LinkSampleRow> t;
    RDMASIM_FIELD(t, LinkSampleRow, time, H5T_NATIVE_INT64);
    RDMASIM_FIELD(t, LinkSampleRow, row, H5T_NATIVE_UINT32);
    RDMASIM_FIELD(t, LinkSampleRow, frames, H5T_NATIVE_UINT64);
    RDMASIM_FIELD(t, LinkSampleRow, wire_bytes, H5T_NATIVE_INT64);
    RDMASIM_FIELD(t, LinkSampleRow, payload_bytes, H5T_NATIVE_INT64);
    t.write(file, "link_samples", rows, dcpl);
    Id ds(H5Dopen2(file, "link_samples", H5P_DEFAULT), H5Dclose, "/link_samples");
    int_attribute(ds, "interval_ps", sc.output.link_interval.in_ps());
  }

  {
    auto rows = zeroed<QueueTotalsRow>(r.queue_totals.size());
    for (size_t i = 0; i < rows.size(); ++i) {
      const auto& q = r.queue_totals[i];
      const auto& c = q.counters;
      auto drops = [&](DropReason why) { return c.drops[static_cast<size_t>(why)]; };
      rows[i] = QueueTotalsRow{q.node,
                               q.port,
                               q.priority,
                               c.enqueued,
                               c.ecn_marked,
                               c.peak_bytes,
                               drops(DropReason::kHeadroom),
                               drops(DropReason::kBuffer),
                               drops(DropReason::kEgressLimit),
                               drops(DropReason::kWatchdog),
                               c.watchdog_triggers,
                               q.window_mean_bytes,
                               q.window_peak_bytes};
    }
    Table<QueueTotalsRow> t;
    RDMASIM_FIELD(t, QueueTotalsRow, node, H5T_NATIVE_UINT32);
    RDMASIM_FIELD(t, QueueTotalsRow, port, H5T_NATIVE_UINT32);
    RDMASIM_FIELD(t, QueueTotalsRow, priority, H5T_NATIVE_UINT8);
    RDMASIM_FIELD(t, QueueTotalsRow, enqueued, H5T_NATIVE_UINT64);
    RDMASIM_FIELD(t, QueueTotalsRow, ecn_marked, H5T_NATIVE_UINT64);
    RDMASIM_FIELD(t, QueueTotalsRow, peak_bytes, H5T_NATIVE_INT64);
    RDMASIM_FIELD(t, QueueTotalsRow, drop_headroom, H5T_NATIVE_UINT64);
    RDMASIM_FIELD(t, QueueTotalsRow, drop_buffer, H5T_NATIVE_UINT64);
    RDMASIM_FIELD(t, QueueTotalsRow, drop_egress_limit, H5T_NATIVE_UINT64);
    RDMASIM_FIELD(t, QueueTotalsRow, drop_watchdog, H5T_NATIVE_UINT64);
    RDMASIM_FIELD(t, QueueTotalsRow, watchdog_triggers, H5T_NATIVE_UINT64);
    RDMASIM_FIELD(t, QueueTotalsRow, window_mean_bytes, H5T_NATIVE_DOUBLE);
    RDMASIM_FIELD(t, QueueTotalsRow, window_peak_bytes, H5T_NATIVE_INT64);
    t.write(file, "queue_totals", rows, dcpl);
  }

  if (!sc.output.cc_interval.is_infinite()) {
    auto rows = zeroed<CcRow>(r.cc_samples.size());
    for (size_t i = 0; i < rows.size(); ++i) {
      const CcSampleResult& c = r.cc_samples[i];
      CcRow& row = rows[i];
      row.time = c.time.in_ps();
      row.flow = c.flow;
      row.part = c.part;
      row.node = topo.hosts()[c.host];
      row.qpn = c.qpn;
      row.sender = c.sender ? 1 : 0;
      row.rate_bps = c.state.rate_bps;
      row.target_bps = c.state.target_bps;
      row.alpha = c.state.alpha;
      row.window = c.state.window;
      row.changes = c.changes;
    }
    Table<CcRow> t;
    RDMASIM_FIELD(t, CcRow, time, H5T_NATIVE_INT64);
    RDMASIM_FIELD(t, CcRow, flow, H5T_NATIVE_UINT32);
    RDMASIM_FIELD(t, CcRow, part, H5T_NATIVE_UINT32);
    RDMASIM_FIELD(t, CcRow, node, H5T_NATIVE_UINT32);
    RDMASIM_FIELD(t, CcRow, qpn, H5T_NATIVE_UINT32);
    RDMASIM_FIELD(t, CcRow, sender, H5T_NATIVE_UINT8);
    RDMASIM_FIELD(t, CcRow, rate_bps, H5T_NATIVE_DOUBLE);
    RDMASIM_FIELD(t, CcRow, target_bps, H5T_NATIVE_DOUBLE);
    RDMASIM_FIELD(t, CcRow, alpha, H5T_NATIVE_DOUBLE);
    RDMASIM_FIELD(t, CcRow, window, H5T_NATIVE_INT64);
    RDMASIM_FIELD(t, CcRow, changes, H5T_NATIVE_UINT32);
    t.write(file, "cc_samples", rows, dcpl);
    Id ds(H5Dopen2(file, "cc_samples", H5P_DEFAULT), H5Dclose, "/cc_samples");
    int_attribute(ds, "interval_ps", sc.output.cc_interval.in_ps());
  }

  if (sc.output.flow_paths) {
    std::vector<PathRow> rows;
    for (const FlowResult& f : r.flows) {
      for (uint32_t h = 0; h < f.path.size(); ++h) rows.push_back(PathRow{f.id, h, f.path[h]});
    }
    Table<PathRow> t;
    RDMASIM_FIELD(t, PathRow, flow, H5T_NATIVE_UINT32);
    RDMASIM_FIELD(t, PathRow, hop, H5T_NATIVE_UINT32);
    RDMASIM_FIELD(t, PathRow, row, H5T_NATIVE_UINT32);
    t.write(file, "flow_paths", rows, dcpl);
  }

  if (r.deadlock.detected) {
    auto rows = zeroed<DeadlockRow>(r.deadlock.cycle.size());
    for (size_t i = 0; i < rows.size(); ++i) {
      const DeadlockQueue& q = r.deadlock.cycle[i];
      rows[i] = DeadlockRow{q.node, q.port, q.priority};
    }
    Table<DeadlockRow> t;
    RDMASIM_FIELD(t, DeadlockRow, node, H5T_NATIVE_UINT32);
    RDMASIM_FIELD(t, DeadlockRow, port, H5T_NATIVE_UINT32);
    RDMASIM_FIELD(t, DeadlockRow, priority, H5T_NATIVE_UINT8);
    t.write(file, "deadlock", rows, dcpl);
    Id ds(H5Dopen2(file, "deadlock", H5P_DEFAULT), H5Dclose, "/deadlock");
    int_attribute(ds, "detected_at_ps", r.deadlock.at.in_ps());
  }
}

}  // namespace

void write_trace(const std::string& path, const Scenario& sc, const RunResult& r) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // errors become exceptions, not stderr dumps
  const std::string tmp = path + ".tmp";
  try {
    {
      Id fcpl(untimed(H5P_FILE_CREATE), H5Pclose, "file creation properties");
      Id fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, "file access properties");
      Id file(H5Fcreate(tmp.c_str(), H5F_ACC_TRUNC, fcpl, fapl), H5Fclose, tmp.c_str());
      write_file(file, sc, r);
    }
    std::filesystem::rename(tmp, path);
  } catch (...) {
    std::remove(tmp.c_str());
    throw;
  }
}

}  // namespace rdmasim
