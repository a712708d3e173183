#include "sim/output/trace_writer.h"

#include <hdf5.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <vector>

#include "models/proto/infiniband.h"
#include "sim/output/output_error.h"
#include "sim/output/summary.h"
#include "sim/output/trace_tables.h"
#include "sim/output/version.h"

namespace rdmasim {
namespace {

using namespace trace;  // NOLINT: the row structs

// Owns one HDF5 identifier and closes it with the matching function.
class Id {
 public:
  Id(hid_t id, herr_t (*closer)(hid_t), const char* what) : id_(id), close_(closer) {
    if (id_ < 0) throw std::runtime_error(std::string("HDF5: cannot create ") + what);
  }
  Id(const Id&) = delete;
  Id& operator=(const Id&) = delete;
  ~Id() {
    if (id_ >= 0) close_(id_);  // on the way out of an error: the first error is reported
  }
  operator hid_t() const { return id_; }  // NOLINT: used like the raw id
  // Closes it now, checked (a file's close is where HDF5 writes what it
  // still holds).
  void close(const char* what) {
    const hid_t id = id_;
    id_ = -1;
    if (close_(id) < 0) throw std::runtime_error(std::string("HDF5: cannot close ") + what);
  }

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

// HDF5's native type of a column type; `str` is the file's string type.
hid_t native_type(ColumnType t, hid_t str) {
  switch (t) {
    case ColumnType::kUint8:
      return H5T_NATIVE_UINT8;
    case ColumnType::kUint16:
      return H5T_NATIVE_UINT16;
    case ColumnType::kUint32:
      return H5T_NATIVE_UINT32;
    case ColumnType::kInt32:
      return H5T_NATIVE_INT32;
    case ColumnType::kUint64:
      return H5T_NATIVE_UINT64;
    case ColumnType::kInt64:
      return H5T_NATIVE_INT64;
    case ColumnType::kFloat64:
      return H5T_NATIVE_DOUBLE;
    case ColumnType::kString:
      return str;
  }
  return str;
}

// A table of n rows as its row struct declares it (trace_tables.h): the
// compound type of its columns in memory, written with a packed file type so
// struct padding never reaches the file. fill(write) hands its rows over in
// order, in parts: write(rows, count) writes the next `count` (one
// hyperslab of the dataset each), so only a part is ever held.
template <class Row, class Fill>
void write_table_in_parts(hid_t parent, size_t n, hid_t str, hid_t dcpl, Fill fill) {
  const TraceTable& t = Row::table();
  const char* name = t.name.c_str();
  Id mem(H5Tcreate(H5T_COMPOUND, t.row_size), H5Tclose, "compound type");
  for (const TraceColumn& c : t.columns) {
    check(H5Tinsert(mem, c.name.c_str(), c.offset, native_type(c.type, str)), c.name.c_str());
  }
  Id file_type(H5Tcopy(mem), H5Tclose, "file type");
  check(H5Tpack(file_type), "packed type");
  const hsize_t dims[1] = {n};
  Id space(H5Screate_simple(1, dims, nullptr), H5Sclose, "dataspace");
  Id ds(H5Dcreate2(parent, name, file_type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT), H5Dclose, name);
  hsize_t at = 0;
  const auto write = [&](const Row* rows, size_t count) {
    if (count == 0) return;
    if (at + count > n) throw std::runtime_error(std::string("HDF5: too many rows for ") + name);
    if (at == 0 && count == n) {  // the whole table at once
      check(H5Dwrite(ds, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows), name);
    } else {
      const hsize_t start[1] = {at};
      const hsize_t size[1] = {count};
      check(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, nullptr, size, nullptr), name);
      Id part(H5Screate_simple(1, size, nullptr), H5Sclose, "dataspace");
      check(H5Dwrite(ds, mem, part, space, H5P_DEFAULT, rows), name);
    }
    at += count;
  };
  fill(write);
  if (at != n) throw std::runtime_error(std::string("HDF5: too few rows for ") + name);
}

template <class Row>
void write_table(hid_t parent, const std::vector<Row>& rows, hid_t str, hid_t dcpl) {
  write_table_in_parts<Row>(parent, rows.size(), str, dcpl,
                            [&](const auto& write) { write(rows.data(), rows.size()); });
}

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

// A spool's rows (sim/row_spool.h) to write(rows, n), a chunk at a time:
// convert(source row) gives the table's row.
template <class Row, class Source, class Write, class Convert>
void write_chunks(const RowSpool<Source>& spool, const Write& write, Convert convert) {
  spool.for_each_chunk([&](const Source* from, size_t n) {
    std::vector<Row> rows = zeroed<Row>(n);
    for (size_t i = 0; i < n; ++i) rows[i] = convert(from[i]);
    write(rows.data(), n);
  });
}

// A time series from its spool, a chunk at a time.
template <class Row, class Source, class Convert>
void write_spooled(hid_t parent, const RowSpool<Source>& spool, hid_t str, hid_t dcpl,
                   Convert convert) {
  write_table_in_parts<Row>(parent, spool.size(), str, dcpl,
                            [&](const auto& write) { write_chunks<Row>(spool, write, convert); });
}

// The core driver's buffer, allocated through these callbacks so that at
// the file's close it is kept (not freed) for write_trace to write out.
struct CoreImage {
  void* kept = nullptr;
  CoreImage() = default;
  CoreImage(const CoreImage&) = delete;
  CoreImage& operator=(const CoreImage&) = delete;
  ~CoreImage() { std::free(kept); }

  static H5FD_file_image_callbacks_t callbacks(CoreImage* self) {
    H5FD_file_image_callbacks_t c{};
    c.image_malloc = [](size_t size, H5FD_file_image_op_t, void*) { return std::malloc(size); };
    c.image_memcpy = [](void* dest, const void* src, size_t size, H5FD_file_image_op_t, void*) {
      return std::memcpy(dest, src, size);
    };
    c.image_realloc = [](void* ptr, size_t size, H5FD_file_image_op_t, void*) {
      return std::realloc(ptr, size);
    };
    c.image_free = [](void* ptr, H5FD_file_image_op_t op, void* udata) -> herr_t {
      auto* image = static_cast<CoreImage*>(udata);
      if (op == H5FD_FILE_IMAGE_OP_FILE_CLOSE && image->kept == nullptr) {
        image->kept = ptr;
      } else {
        std::free(ptr);
      }
      return 0;
    };
    c.udata_copy = [](void* udata) { return udata; };  // one CoreImage for every copy
    c.udata_free = [](void*) -> herr_t { return 0; };
    c.udata = self;
    return c;
  }
};

constexpr int64_t kTraceFormatVersion = 1;

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
  // Only on a run cut short from outside (a signal, stop.wall_time), so a
  // whole run's file is what it always was.
  if (is_partial(r.status)) int_attribute(file, "partial", 1);
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
    write_table(file, rows, str, dcpl);
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
    write_table(file, rows, str, dcpl);
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
      row.control_frames = l.control_frames;
      row.window_frames = l.window_frames;
      row.window_wire_bytes = l.window_wire_bytes;
      row.window_payload_bytes = l.window_payload_bytes;
      row.window_busy_ps = l.window_busy.in_ps();
    }
    write_table(file, rows, str, dcpl);
  }

  if (sc.output.pfc_events) {
    write_spooled<PfcRow>(file, r.pfc_events, str, dcpl, [](const PfcEvent& e) {
      return PfcRow{e.time.in_ps(),
                    e.node,
                    e.port,
                    e.priority,
                    e.pause ? uint8_t{1} : uint8_t{0},
                    e.sent ? uint8_t{1} : uint8_t{0},
                    e.quanta};
    });
  }

  if (sc.output.drop_events) {
    write_spooled<DropRow>(file, r.drop_events, str, dcpl, [](const DropEvent& e) {
      return DropRow{e.time.in_ps(), e.node, e.port, e.priority, to_string(e.reason), e.bytes};
    });
  }

  if (!sc.output.queue_interval.is_infinite()) {
    write_spooled<QueueRow>(file, r.queue_samples, str, dcpl, [](const QueueSample& q) {
      return QueueRow{q.time.in_ps(), q.node, q.port, q.priority, q.bytes};
    });
    Id ds(H5Dopen2(file, QueueRow::table().name.c_str(), H5P_DEFAULT), H5Dclose, "/queues");
    int_attribute(ds, "interval_ps", sc.output.queue_interval.in_ps());
  }

  if (!sc.output.queue_interval.is_infinite() && sc.fabric.transport == Transport::kInfiniband) {
    write_spooled<VlBufferRow>(file, r.vl_buffer_samples, str, dcpl, [](const VlBufferSample& v) {
      return VlBufferRow{v.time.in_ps(), v.node,
                         v.port,         v.vl,
                         v.blocks,       static_cast<int64_t>(v.blocks * kIbCreditBlockBytes)};
    });
    Id ds(H5Dopen2(file, VlBufferRow::table().name.c_str(), H5P_DEFAULT), H5Dclose, "/vl_buffers");
    int_attribute(ds, "interval_ps", sc.output.queue_interval.in_ps());
  }

  if (!sc.output.link_interval.is_infinite()) {
    write_spooled<LinkSampleRow>(file, r.link_samples, str, dcpl, [](const LinkSample& l) {
      return LinkSampleRow{l.time.in_ps(), l.link, l.frames, l.wire_bytes, l.payload_bytes};
    });
    Id ds(H5Dopen2(file, LinkSampleRow::table().name.c_str(), H5P_DEFAULT), H5Dclose,
          "/link_samples");
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
                               drops(DropReason::kPortDown),
                               c.watchdog_triggers,
                               c.hoq_discards,
                               c.xmit_wait.in_ps(),
                               q.window_mean_bytes,
                               q.window_peak_bytes};
    }
    write_table(file, rows, str, dcpl);
  }

  if (!sc.output.cc_interval.is_infinite()) {
    write_spooled<CcRow>(file, r.cc_samples, str, dcpl, [&topo](const CcSampleResult& c) {
      CcRow row{};
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
      return row;
    });
    Id ds(H5Dopen2(file, CcRow::table().name.c_str(), H5P_DEFAULT), H5Dclose, "/cc_samples");
    int_attribute(ds, "interval_ps", sc.output.cc_interval.in_ps());
  }

  if (sc.output.flow_paths) {
    std::vector<PathRow> rows;
    for (const FlowResult& f : r.flows) {
      for (uint32_t h = 0; h < f.path.size(); ++h) rows.push_back(PathRow{f.id, h, f.path[h]});
    }
    write_table(file, rows, str, dcpl);
  }

  if (!r.collectives.empty()) {
    // Each collective's spooled step rows, a chunk at a time, item by item.
    size_t steps = 0;
    for (const CollectiveResult& c : r.collectives) steps += c.step_rows.size();
    write_table_in_parts<CollectiveStepRow>(file, steps, str, dcpl, [&](const auto& write) {
      for (const CollectiveResult& c : r.collectives) {
        write_chunks<CollectiveStepRow>(c.step_rows, write, [&](const CollectiveResult::Step& st) {
          CollectiveStepRow row{};
          row.item = c.item;
          row.iteration = st.iter;
          row.rank = st.rank;
          row.step = st.step;
          row.node = topo.hosts()[st.host];
          row.start = st.start.is_infinite() ? -1 : st.start.in_ps();
          row.end = st.end.is_infinite() ? -1 : st.end.in_ps();
          row.bytes = st.bytes;
          return row;
        });
      }
    });
    std::vector<CollectiveSweepRow> sweep;
    for (const CollectiveResult& c : r.collectives) {
      for (const CollectiveResult::SweepRow& w : c.sweep) {
        CollectiveSweepRow row{};
        row.item = c.item;
        row.first_iteration = w.first_iteration;
        row.iters = w.iters;
        row.done = w.done ? 1 : 0;
        row.size_bytes = w.bytes;
        row.count = w.count;
        row.time_us = w.time_us;
        row.algbw_gbps = w.algbw_gbps;
        row.busbw_gbps = w.busbw_gbps;
        sweep.push_back(row);
      }
    }
    if (!sweep.empty()) write_table(file, sweep, str, dcpl);
  }

  if (r.deadlock.detected) {
    auto rows = zeroed<DeadlockRow>(r.deadlock.cycle.size());
    for (size_t i = 0; i < rows.size(); ++i) {
      const DeadlockQueue& q = r.deadlock.cycle[i];
      rows[i] = DeadlockRow{q.node, q.port, q.priority, blocked_by_name(q.blocked_by)};
    }
    write_table(file, rows, str, dcpl);
    Id ds(H5Dopen2(file, DeadlockRow::table().name.c_str(), H5P_DEFAULT), H5Dclose, "/deadlock");
    int_attribute(ds, "detected_at_ps", r.deadlock.at.in_ps());
  }
}

}  // namespace

void write_trace(const std::string& path, const Scenario& sc, const RunResult& r) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // errors become exceptions, not stderr dumps
  // The file is built in memory (HDF5's core driver, no backing store) and
  // written by write_file_atomic, whose every write is checked: HDF5 itself
  // never meets the disk, so a full disk cannot leave a file id whose close
  // failed (it stays open, and HDF5's exit handler then crashes in
  // H5F__close_cb), and every id is closed whatever fails. The driver's
  // buffer is kept at close (CoreImage) and written from, not copied.
  CoreImage image;
  size_t size = 0;
  try {
    Id fcpl(untimed(H5P_FILE_CREATE), H5Pclose, "file creation properties");
    Id fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, "file access properties");
    check(H5Pset_fapl_core(fapl, size_t{1} << 20, 0), "core driver");
    H5FD_file_image_callbacks_t callbacks = CoreImage::callbacks(&image);
    check(H5Pset_file_image_callbacks(fapl, &callbacks), "file image callbacks");
    // Closing the file closes whatever is still open in it.
    check(H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG), "close degree");
    Id file(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, fcpl, fapl), H5Fclose, path.c_str());
    write_file(file, sc, r);
    check(H5Fflush(file, H5F_SCOPE_GLOBAL), "the file (flush)");
    // The file's length (its end of allocation), as H5Fget_file_image gives it.
    const ssize_t n = H5Fget_file_image(file, nullptr, 0);
    if (n < 0) throw std::runtime_error("HDF5: cannot read the file's size");
    size = static_cast<size_t>(n);
    file.close("the file");
  } catch (const std::runtime_error& e) {
    throw OutputError(path, e.what());
  }
  if (image.kept == nullptr) throw OutputError(path, "HDF5: the file image was not kept");
  write_file_atomic(path, image.kept, size);
}

}  // namespace rdmasim
