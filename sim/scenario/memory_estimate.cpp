#include "sim/scenario/memory_estimate.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "sim/packet.h"
#include "sim/scenario/scenario_error.h"

namespace rdmasim {
namespace {

// Resident bytes per part that the run builds, measured on x86-64 (gcc 12,
// Release): the growth of the peak RSS from `rdmasim validate` to
// `rdmasim run --set stop.time="1ns"` over stars of 2 to 8,192 hosts and
// fat-trees of k = 16 and 32, with 0, 1 and 4 QPs per flow, solved for each
// part (docs/reliability.md#resource-bounds). They include what the
// containers of each device hold once it is set up.
constexpr int64_t kPerNic = 2374;           // a host's RdmaNic, its port and its link out
constexpr int64_t kPerSwitch = 11513;       // a Switch without its ports
constexpr int64_t kPerSwitchPort = 2295;    // 8 egress queues, MMU state, the link out
constexpr int64_t kPerFlow = 977;           // generator record, result row, path
constexpr int64_t kPerQpPair = 2997;        // requester and responder QP of one part
constexpr int64_t kPerCcQpPair = 772;       // congestion control state of the pair
constexpr int64_t kPerLinkResult = 128;     // LinkResult and its trace row, per direction
constexpr int64_t kTraceLibrary = 6 << 20;  // HDF5's own state when output.trace is on
// Headers a data frame adds to its payload (Ethernet, IP, UDP, BTH, ICRC, FCS).
constexpr int64_t kFrameOverhead = 64;

int64_t bdp_bytes(const TopoLink& l) {
  const __int128 bits =
      static_cast<__int128>(l.rate.in_bps()) * l.delay.in_ps() / 1'000'000'000'000;
  return static_cast<int64_t>(bits / 8);
}

std::string times(uint64_t n, int64_t each, const std::string& what) {
  return std::to_string(n) + " " + what + " x " + human_bytes(each);
}

// The bytes a switch's buffer holds at most in a congested steady state:
// the lossless thresholds (or the lossy drop rule) stop it below the whole.
int64_t usable_buffer(const Scenario& sc, uint32_t id) {
  const SwitchConfig& c = sc.fabric.sw;
  const TopoNode& n = sc.topology.node(id);
  if (sc.fabric.transport == Transport::kInfiniband && n.tier != Tier::kNvSwitch) {
    // Credits: each ingress port holds at most a VL buffer on each VL in
    // use (the VLs of the NIC's default SLs and of the flows' own),
    // and their share of the port's pool, whatever the switch buffer's size.
    const Sl2VlTable& vl = sc.fabric.ib_qos_swe.sl2vl;
    uint32_t used =
        (1U << vl[sc.fabric.nic.data_priority & 15]) | (1U << vl[sc.fabric.nic.ack_priority & 15]);
    for (const FlowSpec& f : sc.flows) {
      if (f.sl >= 0) used |= 1U << vl[f.sl & 15];
    }
    for (const CollectiveSpec& coll : sc.collectives) {
      if (coll.sl >= 0) used |= 1U << vl[coll.sl & 15];
    }
    const int vls = __builtin_popcount(used);
    const double credited = static_cast<double>(n.num_ports) *
                            (vls * static_cast<double>(sc.fabric.credits.vl_buffer.count()) +
                             static_cast<double>(sc.fabric.credits.shared_buffer.count()));
    return static_cast<int64_t>(std::min(static_cast<double>(c.buffer.count()), credited));
  }
  int lossless = 0;
  for (uint8_t p = 0; p < 8; ++p) lossless += c.lossless(p) ? 1 : 0;
  const double buffer = static_cast<double>(c.buffer.count());
  if (lossless == 0) return static_cast<int64_t>(buffer * c.lossy_alpha / (1.0 + c.lossy_alpha));
  const double queues = static_cast<double>(n.num_ports) * lossless;
  if (c.pfc.threshold == PfcThreshold::kDynamic) {
    // Each ingress queue pauses at (free) >> alpha_shift: with q queues
    // congested, q / (2^alpha + q) of the buffer is in use.
    const double a = static_cast<double>(int64_t{1} << c.pfc.alpha_shift);
    return static_cast<int64_t>(buffer * queues / (a + queues));
  }
  // Static: xoff plus the headroom that fills after it, per ingress queue.
  int64_t per_port = 0;
  for (const auto& adj : sc.topology.adjacency()[id]) {
    const TopoLink& l = sc.topology.links()[adj.link];
    const int64_t headroom =
        c.pfc.headroom.count() > 0 ? c.pfc.headroom.count() : 2 * bdp_bytes(l) + 3 * c.max_frame;
    per_port = std::max(per_port, c.pfc.xoff.count() + headroom);
  }
  return static_cast<int64_t>(std::min(buffer, queues * static_cast<double>(per_port)));
}

}  // namespace

int64_t MemoryEstimate::total() const {
  int64_t t = 0;
  for (const MemoryPart& p : parts) t += p.bytes;
  return t;
}

const MemoryPart& MemoryEstimate::largest() const {
  return *std::max_element(
      parts.begin(), parts.end(),
      [](const MemoryPart& a, const MemoryPart& b) { return a.bytes < b.bytes; });
}

MemoryEstimate estimate_memory(const Scenario& sc, int64_t loaded_bytes) {
  const Topology& topo = sc.topology;
  MemoryEstimate e;
  e.parts.push_back({"program and loaded scenario", loaded_bytes,
                     "resident now: code, libraries, topology, routes, flows"});

  const uint64_t hosts = topo.num_hosts();
  uint64_t switches = 0, ports = 0;
  for (const TopoNode& n : topo.nodes()) {
    if (n.kind != NodeKind::kSwitch) continue;
    ++switches;
    ports += n.num_ports;
  }
  e.parts.push_back({"NICs", static_cast<int64_t>(hosts) * kPerNic, times(hosts, kPerNic, "NICs")});
  e.parts.push_back(
      {"switches", static_cast<int64_t>(switches * kPerSwitch + ports * kPerSwitchPort),
       times(switches, kPerSwitch, "switches") + " + " + times(ports, kPerSwitchPort, "ports")});

  uint64_t pairs = 0, cc_pairs = 0;
  for (const FlowSpec& f : sc.flows) {
    pairs += f.qps;
    if (f.cc) cc_pairs += f.qps;
  }
  const uint64_t flows = sc.flows.size();
  e.parts.push_back(
      {"flows", static_cast<int64_t>(flows) * kPerFlow, times(flows, kPerFlow, "flows")});
  // Collectives: qps_per_connection QP pairs per connection (ring: n x
  // channels, plus a PXN relay per server and channel when rail-aligned;
  // double binary tree: 2 trees x (n - 1) edges x up and down x channels;
  // hierarchical: 3 n x channels), and per element of the plan its record
  // and time; per iteration, rank and step a row of trace.h5's
  // /collective_steps (spooled to disk as the run goes, but the file is
  // assembled in memory at the end; none without output.trace: an upper
  // bound).
  int64_t coll_bytes = 0;
  uint64_t coll_elems = 0, coll_steps = 0;
  for (const CollectiveSpec& c : sc.collectives) {
    const uint64_t n = c.ranks.size();
    const bool tree = c.algorithm == CollectiveAlgorithm::kTree;
    if (c.algorithm == CollectiveAlgorithm::kHierarchical) {
      // 3 n connections per channel, each carrying at most size / channels
      // (the intra-server ones (g-1)/g of it), in slots.
      const uint64_t conns = 3 * n * c.channels;
      pairs += conns * c.qps;
      if (c.cc) cc_pairs += conns * c.qps;
      for (size_t p = 0; p < c.phases(); ++p) {
        const int64_t per_conn = c.phase_bytes(p) / static_cast<int64_t>(c.channels);
        coll_elems += conns * static_cast<uint64_t>(per_conn / c.slot_bytes() + n);
      }
      const uint64_t steps = 2 * (uint64_t{c.servers.gpus} - 1) + 2 * (c.servers.servers() - 1);
      coll_steps += uint64_t{c.iterations} * n * steps;
      continue;
    }
    // A rail-aligned ring's PXN relays: one more connection per server.
    const uint64_t relays = !tree && c.rail_rings() != nullptr ? c.servers.servers() : 0;
    const uint64_t conns = tree ? 4 * (n - 1) * c.channels : (n + relays) * c.channels;
    pairs += conns * c.qps;
    if (c.cc) cc_pairs += conns * c.qps;
    const uint64_t steps = tree ? 2 : c.op == CollectiveOp::kAllReduce ? 2 * (n - 1) : n - 1;
    // Bytes a connection carries per step: a ring's chunk (at most its
    // share rounded up to 16 bytes, as the AllReduce ring cuts it; at least
    // one transfer a step, empty or not), a tree's half (a plan per size of
    // a sweep).
    for (size_t p = 0; p < c.phases(); ++p) {
      const auto parts = static_cast<int64_t>(tree ? 2 * c.channels : n * c.channels);
      const int64_t per_step = (c.phase_bytes(p) + parts - 1) / parts;
      const int64_t chunk = tree ? per_step : (per_step + 15) / 16 * 16;
      const auto slots = std::max<uint64_t>(
          1, static_cast<uint64_t>((chunk + c.slot_bytes() - 1) / c.slot_bytes()));
      coll_elems += conns * (tree ? 1 : steps) * slots;
    }
    coll_steps += uint64_t{c.iterations} * n * steps;
  }
  constexpr int64_t kPerElement = 48;   // PlanElement and its ready time
  constexpr int64_t kPerStepRow = 100;  // the engine's record, the result's row and the trace's
  coll_bytes = static_cast<int64_t>(coll_elems) * kPerElement +
               static_cast<int64_t>(coll_steps) * kPerStepRow;
  if (!sc.collectives.empty()) {
    e.parts.push_back({"collectives", coll_bytes,
                       times(coll_elems, kPerElement, "plan elements") + " + " +
                           times(coll_steps, kPerStepRow, "step records")});
  }
  e.parts.push_back({"QPs", static_cast<int64_t>(pairs * kPerQpPair + cc_pairs * kPerCcQpPair),
                     times(pairs, kPerQpPair, "QP pairs") +
                         (cc_pairs ? " + " + times(cc_pairs, kPerCcQpPair, "with CC") : "")});

  // Packets alive at once: what the flows active at one time can have sent
  // (each from its start for its ideal transfer time at its host's line rate
  // or its `rate`, cut at stop.time; the most at any moment), at most what
  // the switch buffers and the cables hold. Packets carry no payload
  // (sizeof(Packet) bytes each, whatever the frame).
  const int64_t frame = static_cast<int64_t>(sc.fabric.nic.mtu) + kFrameOverhead;
  std::vector<std::pair<int64_t, int64_t>> steps;  // (time in ps, bytes joining or leaving)
  steps.reserve(2 * sc.flows.size());
  for (const FlowSpec& f : sc.flows) {
    if (f.start >= sc.stop.time) continue;
    BitRate rate;
    const uint32_t node = topo.hosts()[f.src];
    for (const auto& adj : topo.adjacency()[node])
      rate = std::max(rate, topo.links()[adj.link].rate);
    if (f.rate.in_bps() > 0) rate = std::min(rate, f.rate);
    if (rate.in_bps() <= 0) continue;
    const __int128 ideal_ps =
        static_cast<__int128>(f.bytes) * 8 * 1'000'000'000'000 / rate.in_bps();
    const __int128 end = std::min<__int128>(static_cast<__int128>(f.start.in_ps()) + ideal_ps + 1,
                                            sc.stop.time.in_ps());
    const int64_t left_ps = static_cast<int64_t>(end) - f.start.in_ps();
    const __int128 bits = static_cast<__int128>(rate.in_bps()) * left_ps / 1'000'000'000'000;
    const int64_t bytes = static_cast<int64_t>(std::min<__int128>(f.bytes, bits / 8));
    steps.emplace_back(f.start.in_ps(), bytes);
    steps.emplace_back(static_cast<int64_t>(end), -bytes);
  }
  std::sort(steps.begin(), steps.end());  // at one time, leaving before joining
  __int128 sendable = 0, active = 0;
  for (const auto& [t, b] : steps) {
    active += b;
    sendable = std::max(sendable, active);
  }
  // A collective's connections each have at most NCCL_STEPS slots in
  // flight, all at once from its start, beside the flows' peak.
  for (const CollectiveSpec& c : sc.collectives) {
    const uint64_t n = c.ranks.size();
    if (c.algorithm == CollectiveAlgorithm::kTree) {
      const int64_t half = c.bytes / static_cast<int64_t>(2 * c.channels);
      sendable += static_cast<__int128>(std::min<int64_t>(half, c.buffsize)) *
                  static_cast<__int128>(4 * (n - 1) * c.channels);
      continue;
    }
    if (c.algorithm == CollectiveAlgorithm::kHierarchical) {
      sendable += static_cast<__int128>(std::min<int64_t>(c.bytes / c.channels, c.buffsize)) *
                  static_cast<__int128>(3 * n * c.channels);
      continue;
    }
    const int64_t chunk = c.bytes / static_cast<int64_t>(n * c.channels);
    const int64_t per_conn = std::min<int64_t>(
        chunk * (c.op == CollectiveOp::kAllReduce ? 2 : 1) * static_cast<int64_t>(n - 1),
        c.buffsize);
    const uint64_t relays = c.rail_rings() != nullptr ? c.servers.servers() : 0;
    sendable += static_cast<__int128>(per_conn) * static_cast<__int128>((n + relays) * c.channels);
  }
  __int128 holdable = 0;
  for (uint32_t id = 0; id < topo.nodes().size(); ++id) {
    if (topo.node(id).kind == NodeKind::kSwitch) holdable += usable_buffer(sc, id);
  }
  for (const TopoLink& l : topo.links()) holdable += 2 * bdp_bytes(l);
  const int64_t in_flight = static_cast<int64_t>(std::min(sendable, holdable) / frame);
  // The pool grows by chunks of PacketPool::kChunk packets.
  const int64_t chunk = PacketPool::kChunk;
  const int64_t packets = (in_flight / chunk + 1) * chunk;
  e.parts.push_back({"packet pool", packets * static_cast<int64_t>(sizeof(Packet)),
                     std::to_string(packets) + " packets x " + std::to_string(sizeof(Packet)) +
                         " B (in flight: min(what the flows send by the stop time, what buffers "
                         "and cables hold))"});

  const uint64_t directions = 2 * topo.links().size();
  e.parts.push_back({"results", static_cast<int64_t>(directions) * kPerLinkResult,
                     times(directions, kPerLinkResult, "link directions")});
  if (sc.output.trace) {
    e.parts.push_back({"trace writer", kTraceLibrary, "HDF5 library state"});
  }
  return e;
}

int64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t size = 0, resident = 0;
  if (!(statm >> size >> resident)) return 0;
  return resident * static_cast<int64_t>(sysconf(_SC_PAGESIZE));
}

namespace {

std::optional<int64_t> read_number(const std::string& path) {
  std::ifstream f(path);
  std::string s;
  if (!(f >> s) || s.empty() || s.find_first_not_of("0123456789") != std::string::npos) {
    return std::nullopt;  // missing, or "max"
  }
  return static_cast<int64_t>(std::stoull(s));
}

std::optional<int64_t> mem_available() {
  std::ifstream f("/proc/meminfo");
  std::string key, unit;
  int64_t kb = 0;
  while (f >> key >> kb) {
    std::getline(f, unit);
    if (key == "MemAvailable:") return kb * 1024;
  }
  return std::nullopt;
}

}  // namespace

std::optional<MemoryLimit> machine_memory() {
  const int64_t own = resident_bytes();
  std::optional<MemoryLimit> best;
  if (const auto avail = mem_available()) best = MemoryLimit{*avail + own, "MemAvailable"};
  // cgroup v2, then v1: the limit less what the group's other processes use.
  struct Files {
    const char* limit;
    const char* usage;
    const char* name;
  };
  for (const Files& c :
       {Files{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current", "cgroup memory.max"},
        Files{"/sys/fs/cgroup/memory/memory.limit_in_bytes",
              "/sys/fs/cgroup/memory/memory.usage_in_bytes", "cgroup memory.limit_in_bytes"}}) {
    const auto limit = read_number(c.limit);
    if (!limit || *limit >= (int64_t{1} << 60)) continue;  // none ("max", or v1's huge number)
    const int64_t others = std::max<int64_t>(0, read_number(c.usage).value_or(0) - own);
    const int64_t room = std::max<int64_t>(0, *limit - others);
    if (!best || room < best->bytes) best = MemoryLimit{room, c.name};
    break;
  }
  return best;
}

std::string human_bytes(int64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 5) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : (v < 10 ? "%.2f %s" : "%.1f %s"), v,
                units[u]);
  return buf;
}

void check_memory_limit(const MemoryEstimate& estimate, const MemoryLimit& limit) {
  if (estimate.total() <= limit.bytes) return;
  const MemoryPart& big = estimate.largest();
  throw ScenarioError("memory: the run would need about " + human_bytes(estimate.total()) + " (" +
                      big.name + " " + human_bytes(big.bytes) + ": " + big.basis +
                      ") but the limit is " + human_bytes(limit.bytes) + " (" + limit.source +
                      ") (expected a smaller scenario, or --memory-limit above the estimate; "
                      "rdmasim validate --estimate shows every part)");
}

std::string format_estimate(const MemoryEstimate& estimate,
                            const std::optional<MemoryLimit>& limit) {
  std::ostringstream out;
  out << "memory estimate (peak resident):\n";
  for (const MemoryPart& p : estimate.parts) {
    char line[48];
    std::snprintf(line, sizeof line, "  %-28s %10s", p.name.c_str(), human_bytes(p.bytes).c_str());
    out << line << "  " << p.basis << "\n";
  }
  char line[48];
  std::snprintf(line, sizeof line, "  %-28s %10s", "total", human_bytes(estimate.total()).c_str());
  out << line << "  (" << estimate.total() << " bytes)\n";
  if (limit) {
    out << "  limit " << human_bytes(limit->bytes) << " (" << limit->source << "): "
        << (estimate.total() <= limit->bytes ? "fits" : "does not fit; run would refuse it")
        << "\n";
  }
  return out.str();
}

}  // namespace rdmasim
