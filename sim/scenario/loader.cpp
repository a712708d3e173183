// Turns scenario JSON into a Scenario (sim/scenario/scenario.h): the top
// level, `output` and `stop` here; `fabric`, `topology`, `traffic` and
// `faults` in the files named in loader_parts.h. Every key is declared in a
// parameter table (scenario_params.h), which gives its default and range.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>

#include "models/proto/infiniband.h"
#include "models/switch/switch.h"
#include "sim/hash.h"
#include "sim/scenario/input_limits.h"
#include "sim/scenario/json_reader.h"
#include "sim/scenario/loader_parts.h"
#include "sim/scenario/overrides.h"
#include "sim/scenario/scenario.h"
#include "sim/scenario/scenario_params.h"

namespace rdmasim {
namespace {

using nlohmann::json;

// output.size_buckets: rising sizes (numbers of bytes or sizes with a unit).
void read_size_buckets(JsonReader& out, std::vector<Bytes>& edges) {
  const json* v = out.raw("size_buckets");
  if (v == nullptr) {
    // The default as written in OutputConfig, in decimal units.
    out.resolve("size_buckets", json::array({"10KB", "100KB", "1MB"}));
    return;
  }
  if (!v->is_array()) out.fail("size_buckets", show(*v) + " is not a list", "a list of sizes");
  edges.clear();
  for (size_t i = 0; i < v->size(); ++i) {
    const json& e = (*v)[i];
    const std::string at = out.path_of("size_buckets") + "[" + std::to_string(i) + "]: ";
    std::optional<Bytes> b;
    if (e.is_number_unsigned()) {
      b = Bytes(static_cast<int64_t>(e.get<uint64_t>()));
    } else if (e.is_string()) {
      b = parse_bytes(e.get<std::string>()).value;
    }
    if (!b || b->count() < 1) {
      throw ScenarioError(
          at + show(e) +
          " is not a size (expected e.g. 10000, \"10KB\" or \"1MiB\", at least 1 byte)");
    }
    if (!edges.empty() && *b <= edges.back()) {
      throw ScenarioError(at + show(e) +
                          " is not above the edge before it (expected rising sizes)");
    }
    edges.push_back(*b);
  }
  out.resolve("size_buckets", *v);  // as given, like other lists
}

// A switch built from fabric.switch: not an NVSwitch, which has its own
// lossless, credit-free configuration (fabric.nvswitch, fabric_builder.cpp).
bool is_fabric_switch(const TopoNode& n) {
  return n.kind == NodeKind::kSwitch && n.tier != Tier::kNvSwitch;
}

// Every switch's buffer must hold its reserves and headroom (the MMU would
// refuse it at set-up; say so at load, naming the switch).
void check_switch_buffers(const Scenario& sc) {
  const SwitchConfig& c = sc.fabric.sw;
  if (sc.fabric.transport == Transport::kInfiniband) {
    // Credits admit up to a VL buffer per port and VL: the shared pool must
    // hold them all, charged in cells (a packet of k blocks is at most
    // 64 k + 2 bytes, whole cells: at most 65 + cell bytes per block).
    const __int128 per_vl =
        static_cast<__int128>(sc.fabric.credits.vl_buffer.count() / kIbCreditBlockBytes) *
        (65 + c.cell);
    for (uint32_t id = 0; id < sc.topology.nodes().size(); ++id) {
      const TopoNode& n = sc.topology.node(id);
      if (!is_fabric_switch(n)) continue;
      // Every lane keeps its MMU reserve; the operational VLs have a VL buffer each.
      const __int128 shared =
          static_cast<__int128>(sc.fabric.credits.shared_buffer.count() / kIbCreditBlockBytes) *
          (65 + c.cell);
      const __int128 need = (per_vl * sc.fabric.op_vls + shared +
                             (c.reserve.count() + c.pfc.headroom.count()) * kEthernetPriorities) *
                            n.num_ports;
      if (need > c.buffer.count()) {
        throw ScenarioError(
            "fabric.switch.buffer: " + std::to_string(c.buffer.count()) +
            " bytes are fewer than the credited VL buffers of \"" + n.name + "\" (" +
            std::to_string(static_cast<int64_t>(std::min<__int128>(need, INT64_MAX))) +
            " bytes for " + std::to_string(n.num_ports) + " ports x " +
            std::to_string(sc.fabric.op_vls) +
            " VLs, and each port's shared pool) (expected a larger buffer, or a smaller "
            "fabric.infiniband.credits.vl_buffer or shared_buffer)");
      }
    }
    return;
  }
  int lossless = 0;
  for (uint8_t p = 0; p < kEthernetPriorities; ++p) lossless += c.lossless(p) ? 1 : 0;
  // Cut-through frames may come in at the fabric's slowest rate
  // (Switch::set_slowest_ingress, as the fabric builder sets it).
  const BitRate slowest_in = sc.topology.slowest_network_rate();
  for (uint32_t id = 0; id < sc.topology.nodes().size(); ++id) {
    const TopoNode& n = sc.topology.node(id);
    if (!is_fabric_switch(n)) continue;
    __int128 need = static_cast<__int128>(c.reserve.count()) * kEthernetPriorities *
                    n.num_ports;  // no overflow
    for (const auto& adj : sc.topology.adjacency()[id]) {
      const TopoLink& l = sc.topology.links()[adj.link];
      // The neighbour this port's queues pause: a NIC or another switch.
      const Time response = sc.topology.node(adj.neighbor).kind == NodeKind::kSwitch
                                ? c.pfc.response_delay
                                : sc.fabric.nic.pfc_response_delay;
      need += pfc_headroom(c, l.rate, l.delay, response, slowest_in).count() * lossless;
    }
    if (need > c.buffer.count()) {
      throw ScenarioError(
          "fabric.switch.buffer: " + std::to_string(c.buffer.count()) +
          " bytes are fewer than the reserves and headroom of \"" + n.name + "\" (" +
          std::to_string(static_cast<int64_t>(std::min<__int128>(need, INT64_MAX))) +
          " bytes) (expected a larger buffer, or smaller reserve or headroom)");
    }
  }
}

// InfiniBand with a periodic flow-control packet per data VL: the packets
// go ahead of all data, so a period no longer than they take on a link
// leaves that link nothing else to send (a run that never ends, its queue
// of flow-control packets growing): refused at load, for the slowest
// credited link. (A period just above leaves data a sliver of the link: a
// valid run that crawls; docs/infiniband.md.)
void check_credit_period(const Scenario& sc) {
  const Time period = sc.fabric.credits.period;
  if (sc.fabric.transport != Transport::kInfiniband || period.is_infinite()) return;
  const TopoLink* slowest = nullptr;
  for (const TopoLink& l : sc.topology.links()) {
    if (l.kind == LinkKind::kNvlink) continue;  // NVLink runs no credits
    if (slowest == nullptr || l.rate.in_bps() < slowest->rate.in_bps()) slowest = &l;
  }
  if (slowest == nullptr) return;
  const int64_t bytes = int64_t{InfinibandFormat::flow_control().wire_bytes(0)} * sc.fabric.op_vls;
  const Time busy = Serializer(slowest->rate).next(Bytes(bytes));
  if (period <= busy) {
    throw ScenarioError("fabric.infiniband.credits.period: " + to_string(period) +
                        " is no longer than the flow-control packets of " +
                        std::to_string(sc.fabric.op_vls) +
                        (sc.fabric.op_vls == 1 ? " data VL" : " data VLs") + " take on a " +
                        to_string(slowest->rate) + " link (" + to_string(busy) +
                        "): the link would carry nothing else (expected more than " +
                        to_string(busy) + ", or none)");
  }
}

Scenario load(json root, const std::string& default_name, const LoadOptions& options) {
  for (const std::string& s : options.overrides) {
    apply_override(root, s);
    // A --set path nests too: the limit holds for the scenario as changed.
    if (json_depth(root) > kMaxJsonDepth) {
      throw ScenarioError("--set " + clip(s) + ": nests the scenario deeper than " +
                          std::to_string(kMaxJsonDepth) + " levels (expected at most " +
                          std::to_string(kMaxJsonDepth) + " levels of arrays and objects)");
    }
  }
  if (!root.is_object())
    throw ScenarioError("scenario: " + show(root) + " is not an object (expected {...})");

  Scenario sc;
  json resolved = json::object();
  JsonReader top(&root, "", &resolved, scenario_params());
  sc.name = top.string("name", default_name);
  // The default output folder is out/<name>, and a run removes the old
  // outputs there: the name must be one folder inside out/, never "." or
  // ".." (which would make it out/ itself or the folder above).
  const bool control = std::any_of(sc.name.begin(), sc.name.end(),
                                   [](char c) { return static_cast<unsigned char>(c) < 0x20; });
  if (sc.name.empty() || sc.name.size() > 255 || sc.name == "." || sc.name == ".." || control ||
      sc.name.find('/') != std::string::npos) {
    top.fail("name", show(json(sc.name)) + " is not usable as a folder name",
             "a name of 1 to 255 bytes without '/' or control characters, not \".\" or \"..\"");
  }
  sc.seed = static_cast<uint64_t>(top.integer("seed"));
  read_fabric(top.object("fabric"), sc.fabric);
  sc.fabric.nvswitch = nvswitch_config(sc.fabric.sw);
  if (!top.has("topology")) top.fail("topology", "missing", "an object with a \"kind\"");
  sc.topology_info = read_topology(top.object("topology"), sc.fabric, sc.topology, sc.static_routes,
                                   sc.rewrites, sc.reconvergence_delay);
  {
    std::vector<JsonReader> items = top.objects("traffic");
    sc.traffic_items = static_cast<uint32_t>(items.size());
    read_traffic(std::move(items), sc.topology, sc.seed, sc.fabric.cc, sc.flows, sc.collectives);
    // A READ request's DMA length (RETH) is 32 bits, and an RC message at
    // most 2^31 bytes (IBA): a READ part (the message split over its QPs)
    // beyond that cannot be asked for. (WRITEs and SENDs, segmented by the
    // requester alone, are not held to it here.)
    for (const FlowSpec& f : sc.flows) {
      const int64_t part = (f.bytes + f.qps - 1) / std::max<uint32_t>(f.qps, 1);
      if (f.op == Verb::kRead && part > (int64_t{1} << 31)) {
        throw ScenarioError("traffic[" + std::to_string(f.item) + "]: a READ of " +
                            std::to_string(f.bytes) + " bytes over " + std::to_string(f.qps) +
                            " QP(s) asks " + std::to_string(part) +
                            " bytes of one QP (expected at most 2147483648 per QP, the largest "
                            "RDMA message: a smaller size, or more qps)");
      }
    }
    // An item's own SL: an InfiniBand notion, and one its ports can carry;
    // so must the NIC's priorities be, the SLs of the other QPs.
    bool default_sl = false;
    const bool ib = sc.fabric.transport == Transport::kInfiniband;
    auto no_cc = [&](uint32_t item, bool has_cc) {
      if (ib && has_cc) {
        throw ScenarioError("traffic[" + std::to_string(item) +
                            "].cc: applies to transport \"roce_v2\" only (expected no cc: DCQCN is "
                            "RoCE's; InfiniBand congestion control is not modelled)");
      }
    };
    // An item's own service level: InfiniBand's, and one its VLs can carry.
    auto check_sl = [&](uint32_t item, int sl) {
      if (sl < 0) return;
      const std::string path = "traffic[" + std::to_string(item) + "].sl";
      if (sc.fabric.transport != Transport::kInfiniband) {
        throw ScenarioError(path +
                            ": applies to transport \"infiniband\" only (expected no sl: RoCE "
                            "traffic travels on fabric.nic.data_priority and ack_priority)");
      }
      const std::string why = ib_sl_unusable(sc.fabric, static_cast<uint8_t>(sl));
      if (!why.empty()) throw ScenarioError(path + ": " + std::to_string(sl) + ": " + why);
    };
    for (const CollectiveSpec& c : sc.collectives) {
      no_cc(c.item, c.cc != nullptr);
      default_sl |= c.sl < 0;
      check_sl(c.item, c.sl);
    }
    for (const FlowSpec& f : sc.flows) {
      no_cc(f.item, f.cc != nullptr);
      default_sl |= f.sl < 0;
      check_sl(f.item, f.sl);
    }
    if (sc.fabric.transport == Transport::kInfiniband && default_sl) {
      for (const auto& [key, sl] :
           {std::pair<const char*, uint8_t>{"data_priority", sc.fabric.nic.data_priority},
            {"ack_priority", sc.fabric.nic.ack_priority}}) {
        const std::string why = ib_sl_unusable(sc.fabric, sl);
        if (!why.empty()) {
          throw ScenarioError("fabric.nic." + std::string(key) + ": " + std::to_string(sl) +
                              " is the SL of QPs without one of their own on InfiniBand, but " +
                              why);
        }
      }
    }
  }
  read_faults(top.objects("faults"), sc.topology, sc.faults);

  {
    JsonReader out = top.object("output");
    const json* dir = out.raw("dir");
    if (dir != nullptr && (!dir->is_string() || dir->get<std::string>().empty())) {
      out.fail("dir", show(*dir) + " is not a path", "a folder name");
    }
    sc.output.dir = dir != nullptr ? dir->get<std::string>() : "out/" + sc.name;
    if (!options.output_dir.empty()) sc.output.dir = options.output_dir;
    out.read(sc.output);
    read_size_buckets(out, sc.output.size_buckets);
    {
      JsonReader w = out.object("window");
      sc.output.window_start = w.optional_time("start");
      sc.output.window_end = w.optional_time("end");
      if (sc.output.window_start && sc.output.window_end &&
          *sc.output.window_end <= *sc.output.window_start) {
        w.fail("end",
               show(json(to_string(*sc.output.window_end))) + " is not after start " +
                   show(json(to_string(*sc.output.window_start))),
               "an end later than the start");
      }
      w.finish();
    }
    out.finish();
  }
  {
    JsonReader stop = top.object("stop");
    stop.read(sc.stop);
    stop.finish();
  }
  top.finish();

  check_switch_buffers(sc);
  check_credit_period(sc);
  sc.routes = compute_routes(sc.topology, sc.static_routes, routing_engine(sc.fabric));
  if (sc.routes.unreachable()) {
    const auto [a, b] = *sc.routes.unreachable();
    throw ScenarioError("topology: hosts \"" + sc.topology.node(sc.topology.hosts()[a]).name +
                        "\" and \"" + sc.topology.node(sc.topology.hosts()[b]).name +
                        "\" are not connected (expected a path between every pair of hosts)");
  }
  sc.resolved_json = resolved.dump(2);
  sc.hash = hex64(fnv1a64(sc.resolved_json));
  return sc;
}

}  // namespace

Scenario load_scenario_text(const std::string& text, const std::string& default_name,
                            const LoadOptions& options) {
  return load(parse_json_bounded(text, default_name), default_name, options);
}

Scenario load_scenario_file(const std::string& path, const LoadOptions& options) {
  std::string text;
  if (auto problem = read_file_bounded(path, kMaxScenarioFileBytes, text)) {
    throw ScenarioError(clip(path, 200) + ": cannot read the file: " + *problem +
                        " (expected a readable scenario file of at most 64 MiB)");
  }
  std::string name = path;
  if (auto slash = name.find_last_of('/'); slash != std::string::npos)
    name = name.substr(slash + 1);
  if (name.size() > 5 && name.ends_with(".json")) name.resize(name.size() - 5);
  return load(parse_json_bounded(text, path), name, options);
}

}  // namespace rdmasim
