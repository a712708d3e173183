// Reads scenario key `traffic` (docs/traffic.md): every item becomes flows.
// The patterns themselves are models/traffic/patterns.h; this file turns
// JSON and the topology into their parameters, and names the JSON path in
// every error.
#include <algorithm>
#include <cmath>
#include <map>

#include "models/traffic/flow_size_cdf.h"
#include "models/traffic/patterns.h"
#include "models/traffic/traffic_params.h"
#include "sim/scenario/host_set.h"
#include "sim/scenario/input_limits.h"
#include "sim/scenario/loader_parts.h"

namespace rdmasim {
namespace {

using nlohmann::json;

std::string host_name(const Topology& t, uint32_t host) { return t.node(t.hosts()[host]).name; }

uint32_t read_host(JsonReader& r, const std::string& key, const Topology& t) {
  const json* v = r.raw(key);
  if (v == nullptr) r.fail(key, "missing", host_expected(t));
  const uint32_t host = parse_host(*v, r.path_of(key), t);
  r.resolve(key, host_name(t, host));
  return host;
}

// A time that, added (`times` times) to `start`, must stay representable.
void check_end(JsonReader& r, const std::string& key, Time start, Time t, int64_t times = 1) {
  const __int128 end = static_cast<__int128>(start.in_ps()) +
                       static_cast<__int128>(t.in_ps()) * static_cast<__int128>(times);
  if (end >= Time::infinite().in_ps()) {
    r.fail(key, to_string(t) + " ends beyond the largest time", "a smaller time");
  }
}

FlowCommon read_common(JsonReader& r, const std::string& default_name) {
  FlowCommon c;
  c.start = r.time("start");
  c.op = r.choice<Verb>("op");
  c.name = r.string("name", default_name);
  if (r.has("rate")) c.rate = r.rate("rate");
  c.qps = static_cast<uint32_t>(r.integer("qps"));
  if (r.has("sl")) c.sl = static_cast<int>(r.integer("sl"));
  return c;
}

// `cdf`: a built-in name, a path to a file in the same format, or the points
// inline as [[bytes, percent], ...]. A file is resolved to its points, so the
// resolved scenario holds what runs.
FlowSizeCdf read_cdf(JsonReader& r, const std::string& key) {
  std::string names;
  std::vector<std::string> known;
  for (const BuiltinCdf& c : builtin_cdfs()) {
    names += (names.empty() ? "\"" : ", \"") + std::string(c.name) + "\"";
    known.emplace_back(c.name);
  }
  const std::string expected =
      "one of " + names + ", a path to a CDF file, or [[bytes, percent], ...]";
  const std::string format =
      "\"<size in bytes> <cumulative percent>\" per line, sizes and percents not decreasing, "
      "from 0% to 100%";
  const json* v = r.raw(key);
  if (v == nullptr) r.fail(key, "missing", expected);
  if (v->is_string()) {
    const std::string s = v->get<std::string>();
    if (const BuiltinCdf* b = find_builtin_cdf(s)) {
      r.resolve(key, s);
      return FlowSizeCdf::parse(b->text);
    }
    if (s.find('/') == std::string::npos && s.find('.') == std::string::npos) {
      std::string problem = show(*v) + " is not a known CDF";
      if (auto near = nearest_key(s, known)) problem += ", did you mean \"" + *near + "\"?";
      r.fail(key, problem, expected);
    }
    std::string text;
    if (auto problem = read_file_bounded(s, kMaxCdfFileBytes, text)) {
      r.fail(key, "cannot read the file " + show(*v) + ": " + *problem,
             "a readable CDF file of at most 16 MiB");
    }
    try {
      FlowSizeCdf cdf = FlowSizeCdf::parse(text);
      json points = json::array();
      for (const auto& p : cdf.points()) points.push_back(json::array({p.bytes, p.percent}));
      r.resolve(key, points);
      return cdf;
    } catch (const CdfError& e) {
      r.fail(key, show(*v) + " " + e.what(), format);
    }
  }
  if (!v->is_array()) r.fail(key, show(*v) + " is not a CDF", expected);
  std::vector<FlowSizeCdf::Point> points;
  for (size_t i = 0; i < v->size(); ++i) {
    const json& p = (*v)[i];
    const bool ok = p.is_array() && p.size() == 2 && p[0].is_number() && p[1].is_number() &&
                    std::abs(p[0].get<double>()) < 9e15 &&
                    p[0].get<double>() == std::floor(p[0].get<double>());
    if (!ok) {
      throw ScenarioError(r.path_of(key) + "[" + std::to_string(i) + "]: " + show(p) +
                          " is not a point (expected [bytes, cumulative percent], bytes whole)");
    }
    points.push_back({p[0].get<int64_t>(), p[1].get<double>()});
  }
  try {
    FlowSizeCdf cdf(std::move(points));
    r.resolve(key, *v);
    return cdf;
  } catch (const CdfError& e) {
    const std::string path =
        r.path_of(key) + (e.index == CdfError::npos ? "" : "[" + std::to_string(e.index) + "]");
    throw ScenarioError(path + ": " + e.what() +
                        " (expected [[bytes, cumulative percent], ...], sizes and percents not "
                        "decreasing, from 0% to 100%)");
  }
}

// The switch a host hangs from, for `across: "leaf"`: the far end of its
// first link, or, when that is the PCIe switch of a shared NIC, the leaf
// above it.
uint32_t leaf_of(const Topology& t, uint32_t host) {
  const auto& adj = t.adjacency();
  uint32_t sw = adj[t.hosts()[host]][0].neighbor;
  if (t.node(sw).tier == Tier::kNicSwitch) {
    for (const auto& a : adj[sw]) {
      if (t.node(a.neighbor).tier == Tier::kLeaf) return a.neighbor;
    }
  }
  return sw;
}

std::vector<FlowSpec> read_flow(JsonReader& r, const Topology& t) {
  FlowSpec f;
  f.src = read_host(r, "src", t);
  f.dst = read_host(r, "dst", t);
  if (f.src == f.dst) r.fail("dst", "the same host as src", "a different host");
  f.bytes = r.bytes("size").count();
  FlowCommon c = read_common(r, std::string());
  f.name = std::move(c.name);
  f.start = c.start;
  f.op = c.op;
  f.rate = c.rate;
  f.qps = c.qps;
  f.sl = c.sl;
  r.finish();
  return {std::move(f)};
}

std::vector<FlowSpec> read_incast(JsonReader& r, const Topology& t, const std::string& name,
                                  RngStream& rng) {
  IncastParams p;
  p.dst = read_host(r, "dst", t);
  p.senders = read_host_set(r, "senders", t, HostSetRules::senders(1, p.dst), &rng);
  p.bytes = r.bytes("size").count();
  p.common = read_common(r, name);
  p.jitter = r.time("jitter");
  check_end(r, "jitter", p.common.start, p.jitter);
  r.finish();
  return incast(p, rng);
}

std::vector<FlowSpec> read_permutation(JsonReader& r, const Topology& t, const std::string& name,
                                       RngStream& rng) {
  using Pattern = PermutationParams::Pattern;
  PermutationParams p;
  p.hosts = read_host_set(r, "hosts", t, HostSetRules::at_least(2), &rng);
  const auto n = static_cast<int64_t>(p.hosts.size());
  p.pattern = r.choice<Pattern>("pattern");
  if (p.pattern == Pattern::kShift) {
    p.shift = static_cast<uint32_t>(r.integer("shift", 1, n - 1));
  } else {
    enum class Across { kNone, kLeaf, kGroup };  // as in traffic_params.cpp
    const auto across = r.choice<Across>("across");
    if (across != Across::kNone) {
      // Group ids in order of first appearance; their names for messages.
      std::map<std::string, uint32_t> ids;
      std::vector<std::string> names;
      std::vector<size_t> count;
      for (uint32_t h : p.hosts) {
        std::string g;
        if (across == Across::kLeaf) {
          g = t.node(leaf_of(t, h)).name;
        } else {
          g = t.node(t.hosts()[h]).group;
          if (g.empty()) {
            r.fail("across", "host \"" + host_name(t, h) + "\" has no group in this topology",
                   "\"leaf\", or \"group\" with a fat_tree or rail_optimized topology");
          }
        }
        auto [it, fresh] = ids.emplace(g, static_cast<uint32_t>(names.size()));
        if (fresh) {
          names.push_back(g);
          count.push_back(0);
        }
        ++count[it->second];
        p.group.push_back(it->second);
      }
      const auto largest = std::max_element(count.begin(), count.end()) - count.begin();
      if (2 * count[largest] > p.hosts.size()) {
        const std::string level = across == Across::kLeaf ? "leaf" : "group";
        r.fail("across",
               level + " \"" + names[largest] + "\" holds " + std::to_string(count[largest]) +
                   " of the " + std::to_string(n) + " hosts, so some must send within it",
               "no " + level + " with more than half of the hosts");
      }
    }
  }
  p.bytes = r.bytes("size").count();
  p.common = read_common(r, name);
  r.finish();
  return permutation(p, rng);
}

std::vector<FlowSpec> read_all_to_all(JsonReader& r, const Topology& t, const std::string& name,
                                      RngStream& rng) {
  AllToAllParams p;
  p.hosts = read_host_set(r, "hosts", t, HostSetRules::at_least(2), &rng);
  p.bytes = r.bytes("size").count();
  p.common = read_common(r, name);
  p.stagger = r.time("stagger");
  check_end(r, "stagger", p.common.start, p.stagger, static_cast<int64_t>(p.hosts.size()));
  // Counted before a flow is made: n hosts make n(n-1) flows, 67 M on a
  // fat-tree of k = 32.
  const auto max_flows = static_cast<uint64_t>(r.integer("max_flows"));
  const uint64_t n = p.hosts.size();
  if (n * (n - 1) > max_flows) {
    r.fail("max_flows",
           std::to_string(max_flows) + " is exceeded: the item makes " +
               std::to_string(n * (n - 1)) + " flows (" + std::to_string(n) + " hosts)",
           "a larger max_flows, or fewer hosts");
  }
  r.finish();
  return all_to_all(p);
}

std::vector<FlowSpec> read_background(JsonReader& r, const Topology& t, const std::string& name,
                                      RngStream& rng) {
  BackgroundParams p;
  p.hosts = read_host_set(r, "hosts", t, HostSetRules::at_least(2), &rng);
  for (uint32_t h : p.hosts) {
    // The rate of the host's first link (its NIC port).
    const uint32_t link = t.adjacency()[t.hosts()[h]][0].link;
    p.rates.push_back(t.links()[link].rate);
  }
  p.load = r.number("load");
  const FlowSizeCdf sizes = read_cdf(r, "cdf");
  if (sizes.mean() <= 0) r.fail("cdf", "every size is 0", "a CDF with a positive mean size");
  p.sizes = &sizes;
  p.duration = r.time("duration");
  p.common = read_common(r, name);
  check_end(r, "duration", p.common.start, p.duration);
  p.max_flows = static_cast<uint64_t>(r.integer("max_flows"));
  r.finish();
  try {
    return background(p, rng);
  } catch (const FlowLimitError& e) {
    r.fail("max_flows", std::to_string(p.max_flows) + " is exceeded: the item makes " + e.what(),
           "a larger max_flows, a shorter duration or a lower load");
  }
}

// The ranks of a collective, in ring order: a host set of at least 2, laid
// out by `placement`.
std::vector<uint32_t> read_ranks(JsonReader& r, const Topology& t, RngStream& rng) {
  std::vector<uint32_t> ranks = read_host_set(r, "ranks", t, HostSetRules::at_least(2), &rng);
  const auto placement = r.choice<RankPlacement>("placement");
  if (placement == RankPlacement::kGiven) return ranks;
  if (placement == RankPlacement::kRandom) {
    // Fisher-Yates on the item's stream, after the set's own draws.
    for (size_t i = ranks.size() - 1; i > 0; --i) std::swap(ranks[i], ranks[rng.uniform(i + 1)]);
    return ranks;
  }
  const HostGroups& groups = t.host_groups();
  const uint32_t servers = groups.count(HostGroupKind::kNode);
  if (servers == 0) {
    if (placement == RankPlacement::kRail) {
      r.fail("placement", "\"rail\" on a topology without servers",
             "a rail_optimized fabric (or \"server\", \"given\", \"random\")");
    }
    std::sort(ranks.begin(), ranks.end());  // each host its own server
    return ranks;
  }
  // Host index -> (server, GPU in the server); sort keys by placement.
  std::vector<std::pair<uint32_t, uint32_t>> where(t.num_hosts(), {UINT32_MAX, 0});
  for (uint32_t s = 0; s < servers; ++s) {
    const std::vector<uint32_t>& m = groups.members(HostGroupKind::kNode, s);
    for (uint32_t l = 0; l < m.size(); ++l) where[m[l]] = {s, l};
  }
  for (const uint32_t h : ranks) {
    if (where[h].first == UINT32_MAX) {
      r.fail("placement", host_name(t, h) + " among the ranks is not a GPU of a server",
             "ranks that are GPUs of servers for \"" +
                 std::string(placement == RankPlacement::kRail ? "rail" : "server") + "\"");
    }
  }
  const bool by_rail = placement == RankPlacement::kRail;
  std::sort(ranks.begin(), ranks.end(), [&](uint32_t a, uint32_t b) {
    const auto [sa, ga] = where[a];
    const auto [sb, gb] = where[b];
    return by_rail ? std::pair(ga, sa) < std::pair(gb, sb) : std::pair(sa, ga) < std::pair(sb, gb);
  });
  return ranks;
}

// The ranks as whole servers of a rail-optimized fabric (plan.h rule 4):
// servers in the order their first rank appears, each server's GPUs in its
// own order. Empty (gpus 0) with the reason in `why` if they are not.
ServerLayout server_layout(const Topology& t, const std::vector<uint32_t>& ranks,
                           std::string& why) {
  const HostGroups& groups = t.host_groups();
  const uint32_t servers = groups.count(HostGroupKind::kNode);
  if (servers == 0) {
    why = "a topology without servers";
    return {};
  }
  // Host index -> (server, GPU in the server).
  std::vector<std::pair<uint32_t, uint32_t>> where(t.num_hosts(), {UINT32_MAX, 0});
  for (uint32_t s = 0; s < servers; ++s) {
    const std::vector<uint32_t>& m = groups.members(HostGroupKind::kNode, s);
    for (uint32_t l = 0; l < m.size(); ++l) where[m[l]] = {s, l};
  }
  std::vector<uint32_t> order;             // servers, first appearance first
  std::vector<uint32_t> seen(servers, 0);  // ranks per server
  for (const uint32_t h : ranks) {
    const uint32_t s = where[h].first;
    if (s == UINT32_MAX) {
      why = host_name(t, h) + " is not a GPU of a server";
      return {};
    }
    if (seen[s]++ == 0) order.push_back(s);
  }
  ServerLayout out;
  out.gpus = static_cast<uint32_t>(groups.members(HostGroupKind::kNode, order[0]).size());
  out.rank.assign(ranks.size(), 0);
  std::vector<uint32_t> index(servers, 0);  // server -> its place in `order`
  for (uint32_t i = 0; i < order.size(); ++i) {
    const std::vector<uint32_t>& m = groups.members(HostGroupKind::kNode, order[i]);
    if (seen[order[i]] != m.size() || m.size() != out.gpus) {
      why = "server " + t.node(t.hosts()[m[0]]).group + " has " + std::to_string(seen[order[i]]) +
            " of its " + std::to_string(m.size()) + " GPUs among the ranks";
      return {};
    }
    index[order[i]] = i;
  }
  for (uint32_t r = 0; r < ranks.size(); ++r) {
    const auto [s, l] = where[ranks[r]];
    out.rank[size_t{index[s]} * out.gpus + l] = r;
  }
  return out;
}

// nccl-tests' sizes (common.cu: from -b while at most -e, times -f or plus
// -i), each rounded down to a multiple of `unit`: 4 (nccl-tests' float
// count) where the op takes any count, else 4 x ranks x channels (every
// rank's part whole in every channel).
// Sets the spec's sweep, `bytes` (the largest size) and `iterations` (all).
constexpr size_t kMaxSweepSizes = 256;
void read_sweep(JsonReader& r, CollectiveSpec& c, int64_t unit) {
  JsonReader w = r.object("sweep");
  const int64_t lo = w.bytes("min_bytes").count();
  const int64_t hi = w.bytes("max_bytes").count();
  const bool by_bytes = w.has("step_bytes");
  if (by_bytes && w.has("step_factor")) {
    w.fail("step_bytes", "is given with step_factor", "one of step_factor and step_bytes");
  }
  // Read (and so resolved) only when it applies: a resolved sweep by
  // step_bytes must load again.
  const int64_t factor = by_bytes ? 0 : w.integer("step_factor");
  const int64_t step = by_bytes ? w.bytes("step_bytes").count() : 0;
  c.sweep_iters = static_cast<uint32_t>(w.integer("iters"));
  c.warmup_iters = static_cast<uint32_t>(w.integer("warmup_iters"));
  if (lo > hi) {
    w.fail("max_bytes", to_string(Bytes(hi)) + " is below min_bytes " + to_string(Bytes(lo)),
           "at least min_bytes");
  }
  if (lo < unit) {
    w.fail("min_bytes",
           to_string(Bytes(lo)) + " rounds down to 0: a size is a multiple of " +
               std::to_string(unit) + " bytes",
           "at least " + std::to_string(unit) + " bytes");
  }
  for (int64_t s = lo; s <= hi;) {
    if (c.sweep_bytes.size() == kMaxSweepSizes) {
      w.fail(by_bytes ? "step_bytes" : "step_factor",
             "makes more than " + std::to_string(kMaxSweepSizes) + " sizes",
             "a larger step or a narrower range");
    }
    c.sweep_bytes.push_back(s / unit * unit);
    if (by_bytes ? s > hi - step : s > hi / factor) break;
    s = by_bytes ? s + step : s * factor;
  }
  w.finish();
  c.bytes = *std::max_element(c.sweep_bytes.begin(), c.sweep_bytes.end());
  const uint64_t total = uint64_t{c.sweep_bytes.size()} * (c.warmup_iters + c.sweep_iters);
  if (total > 1'000'000) {
    w.fail("iters", std::to_string(total) + " iterations in all (sizes x (warmup_iters + iters))",
           "at most 1000000");
  }
  c.iterations = static_cast<uint32_t>(total);
}

CollectiveSpec read_collective(JsonReader& r, const Topology& t, const std::string& name,
                               BitRate slowest_link, RngStream& rng) {
  CollectiveSpec c;
  c.op = r.choice<CollectiveOp>("op");
  c.algorithm = r.choice<CollectiveAlgorithm>("algorithm");
  if (c.algorithm == CollectiveAlgorithm::kTree && c.op != CollectiveOp::kAllReduce) {
    r.fail("algorithm", std::string("\"tree\" does not run op \"") + to_string(c.op) + "\"",
           "\"ring\" (NCCL's trees run all_reduce only)");
  }
  c.ranks = read_ranks(r, t, rng);
  c.cross_nic = r.boolean("cross_nic");
  std::string why;
  c.servers = server_layout(t, c.ranks, why);
  if (c.algorithm == CollectiveAlgorithm::kHierarchical) {
    const std::string expected = "whole servers of a rail_optimized fabric for \"hierarchical\"";
    if (c.op != CollectiveOp::kAllReduce) {
      r.fail("algorithm",
             std::string("\"hierarchical\" does not run op \"") + to_string(c.op) + "\"",
             "\"ring\" (the hierarchical algorithm runs all_reduce only)");
    }
    if (t.host_groups().count(HostGroupKind::kNode) == 0) {
      r.fail("algorithm", "\"hierarchical\" on a topology without servers",
             "a rail_optimized fabric, whose servers' GPUs meet over NVLink");
    }
    if (c.servers.gpus == 0) r.fail("ranks", why, expected);
    if (c.servers.servers() < 2) {
      r.fail("ranks",
             std::to_string(c.ranks.size()) + " ranks on 1 server (" +
                 t.node(t.hosts()[c.ranks[0]]).group + ")",
             "at least 2 whole servers for \"hierarchical\"");
    }
    if (c.servers.gpus < 2) {
      r.fail("ranks", "servers of 1 GPU",
             "servers of at least 2 GPUs for \"hierarchical\" (topology gpus_per_node)");
    }
  }
  // Rail alignment and the hierarchical phases inside a server go over
  // NVLink: without it (topology nvswitch false) there is none to use.
  const bool nvlink = std::any_of(t.links().begin(), t.links().end(),
                                  [](const TopoLink& l) { return l.kind == LinkKind::kNvlink; });
  if (!nvlink && c.algorithm == CollectiveAlgorithm::kHierarchical) {
    r.fail("algorithm", "\"hierarchical\" on servers without NVLink (topology nvswitch false)",
           "a rail_optimized fabric with nvswitch true");
  }
  if (!nvlink) c.servers = {};
  c.channels = static_cast<uint32_t>(r.integer("channels"));
  c.qps = static_cast<uint32_t>(r.integer("qps_per_connection"));
  if (r.has("sl")) c.sl = static_cast<int>(r.integer("sl"));
  // AllReduce by ring or tree takes any number of float32 elements, as
  // NCCL does (a short message leaves chunks empty); AllGather and
  // ReduceScatter give every rank the same part, and the hierarchical plan
  // splits the buffer evenly over ranks and channels.
  const bool any_count =
      c.op == CollectiveOp::kAllReduce && c.algorithm != CollectiveAlgorithm::kHierarchical;
  const int64_t unit = any_count ? 4 : 4 * static_cast<int64_t>(c.ranks.size()) * c.channels;
  if (r.has("sweep")) {
    read_sweep(r, c, unit);
  } else {
    c.bytes = r.bytes("size").count();
    if (c.bytes % unit != 0) {
      r.fail("size",
             any_count ? to_string(Bytes(c.bytes)) + " is not a whole number of float32 elements"
                       : to_string(Bytes(c.bytes)) + " does not split into " +
                             std::to_string(c.ranks.size()) + " ranks x " +
                             std::to_string(c.channels) + " channel(s) of float32 elements",
             any_count ? "a multiple of 4 bytes"
                       : "a multiple of 4 x ranks x channels = " + std::to_string(unit) + " bytes");
    }
    c.iterations = static_cast<uint32_t>(r.integer("iterations"));
  }
  c.gap = r.time("gap");
  c.start = r.time("start");
  check_end(r, "gap", c.start, c.gap, c.iterations);
  if (r.has("reduce_rate")) c.reduce_rate = r.rate("reduce_rate");
  c.buffsize = r.bytes("nccl_buffsize").count();
  c.steps = static_cast<uint32_t>(r.integer("nccl_steps"));
  if (c.buffsize % c.steps != 0) {
    r.fail(
        "nccl_buffsize",
        to_string(Bytes(c.buffsize)) + " does not split into " + std::to_string(c.steps) + " slots",
        "a multiple of nccl_steps");
  }
  c.name = r.string("name", name);
  // Bounds, so that no time or index the engine forms leaves its range: a
  // connection carries at most 2 S / channels per iteration (AllReduce's
  // 2(n-1)/n, rounded up), all iterations of it at the slowest link, and
  // its reductions at reduce_rate, each within kMaxTime; its elements (one
  // per slot of nccl_buffsize / nccl_steps) are counted in 32 bits.
  // A sweep's bounds are those of its largest size times all its iterations.
  const __int128 conn_bytes = static_cast<__int128>(c.bytes) * 2 / c.channels;
  const auto takes_ps = [](__int128 bytes, BitRate rate) {
    return bytes * 8 * 1'000'000'000'000 / rate.in_bps();
  };
  const std::string size_key = c.sweep_bytes.empty() ? "size" : "sweep";
  if (takes_ps(conn_bytes * c.iterations, slowest_link) > kMaxTime.in_ps()) {
    r.fail(size_key,
           to_string(Bytes(c.bytes)) + " x " + std::to_string(c.iterations) + " iteration(s) at " +
               to_string(slowest_link) + " takes longer than " + to_string(kMaxTime),
           "a collective whose transfers take at most " + to_string(kMaxTime));
  }
  if (c.reduce_rate.in_bps() > 0 &&
      takes_ps(conn_bytes * c.iterations, c.reduce_rate) > kMaxTime.in_ps()) {
    r.fail("reduce_rate",
           to_string(c.reduce_rate) + " reduces " + to_string(Bytes(c.bytes)) + " x " +
               std::to_string(c.iterations) + " iteration(s) in longer than " + to_string(kMaxTime),
           "a rate at which the reductions take at most " + to_string(kMaxTime));
  }
  // Every algorithm step is at least one transfer, empty or not (at most
  // 2 n steps per iteration).
  const int64_t slot = c.buffsize / c.steps;
  const __int128 steps_bound = 2 * static_cast<__int128>(c.ranks.size());
  if ((conn_bytes / slot + steps_bound) * c.iterations > static_cast<__int128>(UINT32_MAX / 4)) {
    r.fail("nccl_buffsize",
           to_string(Bytes(c.buffsize)) + " / " + std::to_string(c.steps) + " steps over " +
               std::to_string(c.iterations) + " iteration(s) of " + std::to_string(c.ranks.size()) +
               " ranks makes more than 2^30 slot transfers per connection",
           "larger slots (at least " +
               to_string(Bytes(static_cast<int64_t>(conn_bytes / (UINT32_MAX / 4)) + 1)) +
               "), fewer iterations or fewer ranks");
  }
  return c;
}

// A flow's payload at the slower of its rate cap and the topology's slowest
// link must take at most kMaxTime, so that no time the engine forms for it
// (its start, plus its transfer, plus delays: each at most kMaxTime) leaves
// the range of Time.
void check_transfer(JsonReader& r, BitRate slowest_link, const FlowSpec& f) {
  BitRate slowest = slowest_link;
  if (f.rate.in_bps() > 0) slowest = std::min(slowest, f.rate);
  const __int128 ps = static_cast<__int128>(f.bytes) * 8 * 1'000'000'000'000 / slowest.in_bps();
  if (ps > kMaxTime.in_ps()) {
    r.fail(r.kind_name() == "background" ? "cdf" : "size",
           to_string(Bytes(f.bytes)) + " at " + to_string(slowest) + " takes longer than " +
               to_string(kMaxTime),
           "a flow that takes at most " + to_string(kMaxTime) + " at " + to_string(slowest));
  }
}

}  // namespace

void read_traffic(std::vector<JsonReader> items, const Topology& t, uint64_t seed,
                  const std::shared_ptr<const CcConfig>& fabric_cc, std::vector<FlowSpec>& flows,
                  std::vector<CollectiveSpec>& collectives) {
  BitRate slowest_link = kMaxRate;
  for (const TopoLink& l : t.links()) slowest_link = std::min(slowest_link, l.rate);
  for (size_t i = 0; i < items.size(); ++i) {
    JsonReader& r = items[i];
    const auto kind = r.kind_as<TrafficKind>();
    // The item's own congestion control, read over the fabric's.
    const std::shared_ptr<const CcConfig> cc =
        r.has("cc") ? read_cc(r.object("cc"), fabric_cc.get()) : fabric_cc;
    // Flows of item i are named "<kind>[i].<suffix>" unless it has a name,
    // and draw from their own stream, keyed by the item's position.
    const std::string name = r.kind_name() + "[" + std::to_string(i) + "]";
    RngStream rng(seed, "traffic[" + std::to_string(i) + "]");
    std::vector<FlowSpec> made;
    switch (kind) {
      case TrafficKind::kFlow:
        made = read_flow(r, t);
        break;
      case TrafficKind::kIncast:
        made = read_incast(r, t, name, rng);
        break;
      case TrafficKind::kPermutation:
        made = read_permutation(r, t, name, rng);
        break;
      case TrafficKind::kAllToAll:
        made = read_all_to_all(r, t, name, rng);
        break;
      case TrafficKind::kBackground:
        made = read_background(r, t, name, rng);
        break;
      case TrafficKind::kCollective: {
        CollectiveSpec c = read_collective(r, t, name, slowest_link, rng);
        c.item = static_cast<uint32_t>(i);
        c.cc = cc;
        r.finish();
        collectives.push_back(std::move(c));
        continue;
      }
    }
    for (FlowSpec& f : made) {
      f.item = static_cast<uint32_t>(i);
      f.cc = cc;
      check_transfer(r, slowest_link, f);
    }
    flows.insert(flows.end(), std::make_move_iterator(made.begin()),
                 std::make_move_iterator(made.end()));
  }
}

}  // namespace rdmasim
