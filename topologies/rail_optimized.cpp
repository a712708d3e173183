// rail_optimized: DGX SuperPOD-style rail-aligned fabrics (NVIDIA RA-11333,
// "Network Fabrics"). Each GPU has its own NIC port (or shares one through a
// PCIe switch); NIC r of every node in a scalable unit (SU) goes to that
// SU's rail leaf r; leaves go to spines; optionally per-SU spines go to a
// core layer; each NIC port can go to a separate plane. Inside a node, GPUs
// meet at an NVSwitch over NVLink links of their own rate and delay.
#include <algorithm>
#include <cmath>
#include <iterator>
#include <numeric>
#include <optional>
#include <string>
#include <utility>

#include "topologies/generators.h"

namespace rdmasim {
namespace {

std::string n2s(uint64_t v) { return std::to_string(v); }

// Uplinks spread evenly over `targets` switches: a multiple of them (parallel
// links), or a divisor of them with every target equally loaded. A divisor
// reaches a block of the targets only: it needs a layer above to connect.
bool spreads_evenly(uint32_t uplinks, uint32_t targets, uint32_t sources) {
  if (uplinks % targets == 0) return true;
  return targets % uplinks == 0 && (static_cast<uint64_t>(sources) * uplinks) % targets == 0;
}

// Leaf uplinks when not given: one per node slot (non-blocking), rounded up
// to a multiple of the spines so that every leaf reaches every spine.
uint32_t default_leaf_uplinks(uint32_t nodes, uint32_t spines) {
  return (nodes + spines - 1) / spines * spines;
}

void check_ports(uint64_t used, uint32_t radix, const std::string& what) {
  if (radix != 0 && used > radix) {
    throw TopologyError("switch_ports", n2s(radix) + " ports are too few: a " + what + " needs " +
                                            n2s(used) + " (expected at least " + n2s(used) + ")");
  }
}

// Joins `from` to `to` with `uplinks` links spread evenly (source index i of
// the set of sources), as spreads_evenly() allows.
void spread(Topology& t, uint32_t from, uint32_t i, const std::vector<uint32_t>& to,
            uint32_t uplinks, const LinkSpec& l) {
  const auto S = static_cast<uint32_t>(to.size());
  if (uplinks >= S) {
    for (uint32_t j = 0; j < S; ++j) {
      for (uint32_t m = 0; m < uplinks / S; ++m) t.add_link(from, to[j], l.rate, l.delay);
    }
  } else {
    for (uint32_t j = 0; j < uplinks; ++j)
      t.add_link(from, to[(i * uplinks + j) % S], l.rate, l.delay);
  }
}

double bps(BitRate r) { return static_cast<double>(r.in_bps()); }

}  // namespace

uint32_t superpod_spines(uint32_t sus) {
  switch (sus) {
    case 1:
      return 4;
    case 2:
      return 8;
    case 3:
    case 4:
      return 16;
    default:
      return 0;
  }
}

namespace {

// Spines per SU under a core layer, when not given: the fewest of 4 (the
// 1-SU reference), 8, 16, ... whose ports hold their leaf cables and as many
// core uplinks (non-blocking), so the default fits the radix; 4 if none does
// (the port check then says why).
uint32_t core_layer_spines(const RailOptimizedConfig& c) {
  const uint32_t R = c.rails, N = c.nodes_per_su;
  for (uint64_t S = superpod_spines(1); S <= uint64_t{R} * std::max(N, c.leaf_uplinks); S *= 2) {
    const auto s = static_cast<uint32_t>(S);
    const uint32_t U = c.leaf_uplinks == 0 ? default_leaf_uplinks(N, s) : c.leaf_uplinks;
    if (!spreads_evenly(U, s, R)) continue;
    const uint64_t down = uint64_t{R} * U / s;
    const uint64_t up = c.spine_uplinks == 0 ? down : c.spine_uplinks;
    if (c.switch_ports == 0 || (uint64_t{N} + U <= c.switch_ports && down + up <= c.switch_ports))
      return s;
  }
  return superpod_spines(1);
}

// Two hosts that no path of switches joins (hosts do not forward), or none.
// Exact for these plane-symmetric fabrics, where a connected one has a
// switch component that every host touches.
std::optional<std::pair<uint32_t, uint32_t>> unconnected_hosts(const Topology& t) {
  std::vector<uint32_t> parent(t.nodes().size());
  std::iota(parent.begin(), parent.end(), 0u);
  auto root = [&](uint32_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  auto is_switch = [&](uint32_t n) { return t.node(n).kind == NodeKind::kSwitch; };
  for (const TopoLink& l : t.links()) {
    if (is_switch(l.a) && is_switch(l.b)) parent[root(l.a)] = root(l.b);
  }
  // Per host, the components of its switches.
  auto touched = [&](uint32_t host) {
    std::vector<uint32_t> c;
    for (const auto& adj : t.adjacency()[host]) c.push_back(root(adj.neighbor));
    std::sort(c.begin(), c.end());
    c.erase(std::unique(c.begin(), c.end()), c.end());
    return c;
  };
  std::vector<uint32_t> hosts_touching(t.nodes().size(), 0);
  for (uint32_t node : t.hosts()) {
    for (uint32_t c : touched(node)) {
      if (++hosts_touching[c] == t.num_hosts()) return std::nullopt;
    }
  }
  const std::vector<uint32_t> first = touched(t.hosts()[0]);
  for (uint32_t node : t.hosts()) {
    const std::vector<uint32_t> other = touched(node);
    std::vector<uint32_t> common;
    std::set_intersection(first.begin(), first.end(), other.begin(), other.end(),
                          std::back_inserter(common));
    if (common.empty()) return std::pair{t.hosts()[0], node};
  }
  return std::nullopt;
}

}  // namespace

TopologyInfo build_rail_optimized(const RailOptimizedConfig& c, Topology& t) {
  auto positive = [](uint32_t v, const char* p) {
    if (v == 0) throw TopologyError(p, "0 is out of range (expected an integer >= 1)");
  };
  positive(c.sus, "sus");
  positive(c.nodes_per_su, "nodes_per_su");
  positive(c.gpus_per_node, "gpus_per_node");
  positive(c.rails, "rails");
  positive(c.planes, "planes");
  if (c.gpus_per_node % c.rails != 0) {
    throw TopologyError(
        "rails", n2s(c.rails) + " does not divide gpus_per_node " + n2s(c.gpus_per_node) +
                     " (expected a divisor of gpus_per_node, e.g. " + n2s(c.gpus_per_node) + ")");
  }
  if (c.ufm && c.sus * c.nodes_per_su < 2) {
    throw TopologyError("nodes_per_su",
                        "1 slot leaves no room for a node besides the UFM (expected at least 2)");
  }
  if (c.ufm && c.rails < 4) {
    throw TopologyError("ufm", "the UFM needs 4 rail leaves to attach to, but there are " +
                                   n2s(c.rails) +
                                   " rails (expected ufm false, or at least 4 rails)");
  }
  const uint32_t R = c.rails, P = c.planes, N = c.nodes_per_su, G = c.gpus_per_node;
  const bool per_su_spines = c.cores > 0;
  uint32_t S = c.spines;
  if (S == 0 && per_su_spines) {
    S = core_layer_spines(c);
  } else if (S == 0) {
    S = superpod_spines(c.sus);
    if (S == 0) {
      throw TopologyError(
          "spines",
          "no default beyond 4 SUs: the reference architecture's table covers 1 to 4 "
          "(expected an explicit spine count, or cores for a core layer)");
    }
  }
  const uint32_t leaves_in_scope = per_su_spines ? R : R * c.sus;  // leaves sharing one spine set
  const uint32_t U = c.leaf_uplinks == 0 ? default_leaf_uplinks(N, S) : c.leaf_uplinks;
  // Without a core layer two rail leaves meet only at a spine they share, so
  // every leaf goes to every spine; with one, a block of spines will do.
  if (!per_su_spines && U % S != 0) {
    throw TopologyError("leaf_uplinks",
                        n2s(U) + " uplinks cannot go to all " + n2s(S) +
                            " spines alike, and two rail leaves without a common spine are not "
                            "connected (expected a multiple of spines: " +
                            n2s(S) + ", " + n2s(2 * uint64_t{S}) + ", ...; or cores > 0)");
  }
  if (per_su_spines && !spreads_evenly(U, S, leaves_in_scope)) {
    throw TopologyError("leaf_uplinks",
                        n2s(U) + " uplinks cannot spread evenly over " + n2s(S) +
                            " spines (expected a multiple of spines, or a divisor of spines "
                            "with rails x leaf_uplinks a multiple of spines)");
  }
  check_ports(static_cast<uint64_t>(N) + U, c.switch_ports, "leaf");
  const uint64_t spine_down = static_cast<uint64_t>(leaves_in_scope) * U / S;
  uint32_t Us = 0;
  if (per_su_spines) {
    Us = c.spine_uplinks == 0 ? static_cast<uint32_t>(spine_down) : c.spine_uplinks;
    if (!spreads_evenly(Us, c.cores, S * c.sus)) {
      throw TopologyError("spine_uplinks",
                          n2s(Us) + " uplinks cannot spread evenly over " + n2s(c.cores) +
                              " cores (expected a multiple of cores, or a divisor of cores)");
    }
    check_ports(static_cast<uint64_t>(c.sus) * S * Us / c.cores, c.switch_ports, "core");
  }
  check_ports(spine_down + Us, c.switch_ports, "spine");

  auto plane_prefix = [&](uint32_t p) { return P > 1 ? "plane" + n2s(p) + "." : std::string(); };

  // Switches: cores, shared spines, then per SU its leaves (and spines).
  std::vector<std::vector<uint32_t>> cores(P);
  std::vector<std::vector<std::vector<uint32_t>>> spines(P);  // [plane][su or 0][j]
  std::vector<std::vector<std::vector<uint32_t>>> leaves(P);  // [plane][su][rail]
  for (uint32_t p = 0; p < P; ++p) {
    for (uint32_t k = 0; k < c.cores; ++k)
      cores[p].push_back(t.add_switch(plane_prefix(p) + "core" + n2s(k), Tier::kCore));
    spines[p].resize(per_su_spines ? c.sus : 1);
    if (!per_su_spines) {
      for (uint32_t j = 0; j < S; ++j)
        spines[p][0].push_back(t.add_switch(plane_prefix(p) + "spine" + n2s(j), Tier::kSpine));
    }
    leaves[p].resize(c.sus);
  }
  for (uint32_t s = 0; s < c.sus; ++s) {
    const std::string su = "su" + n2s(s);
    for (uint32_t p = 0; p < P; ++p) {
      if (per_su_spines) {
        for (uint32_t j = 0; j < S; ++j) {
          spines[p][s].push_back(
              t.add_switch(su + "." + plane_prefix(p) + "spine" + n2s(j), Tier::kSpine, su));
        }
      }
      for (uint32_t r = 0; r < R; ++r) {
        leaves[p][s].push_back(
            t.add_switch(su + "." + plane_prefix(p) + "rail" + n2s(r), Tier::kLeaf, su));
      }
    }
  }

  // Nodes: per SU and slot, the NVSwitch, the NIC switches when GPUs share a
  // NIC port, and the GPUs. Leaf ports follow slot order.
  const uint32_t share = G / R;  // GPUs per NIC port
  // Host groups: rail r across every SU; the leaf of SU s, rail r is leaf
  // s * R + r (its planes counted once); server n of SU s is node s * N + n
  // (the UFM takes the last slot, so the numbers stay consecutive); the UFM is
  // in none.
  HostGroups& groups = t.host_groups();
  groups.declare(HostGroupKind::kRail, R);
  groups.declare(HostGroupKind::kSu, c.sus);
  groups.declare(HostGroupKind::kLeaf, c.sus * R);
  groups.declare(HostGroupKind::kNode, c.sus * N - (c.ufm ? 1 : 0));
  uint64_t gpus = 0;
  for (uint32_t s = 0; s < c.sus; ++s) {
    for (uint32_t n = 0; n < N; ++n) {
      const bool ufm_slot = c.ufm && s == c.sus - 1 && n == N - 1;
      if (ufm_slot) {
        const uint32_t ufm = t.add_host("ufm", "su" + n2s(s));
        groups.add_management(t.node(ufm).host_index);
        for (uint32_t r = 0; r < 4; ++r)
          t.add_link(ufm, leaves[0][s][r], c.nic_link.rate, c.nic_link.delay);
        continue;
      }
      const std::string node = "su" + n2s(s) + ".node" + n2s(n);
      uint32_t nvs = 0;
      const bool with_nvswitch = c.nvswitch && G > 1;
      if (with_nvswitch) nvs = t.add_switch(node + ".nvswitch", Tier::kNvSwitch, node);
      std::vector<uint32_t> nic(R);
      if (share > 1) {
        for (uint32_t r = 0; r < R; ++r) {
          nic[r] = t.add_switch(node + ".nic" + n2s(r), Tier::kNicSwitch, node);
          for (uint32_t p = 0; p < P; ++p)
            t.add_link(nic[r], leaves[p][s][r], c.nic_link.rate, c.nic_link.delay);
        }
      }
      for (uint32_t g = 0; g < G; ++g) {
        const uint32_t gpu = t.add_host(node + ".gpu" + n2s(g), node);
        const uint32_t index = t.node(gpu).host_index;
        groups.assign(HostGroupKind::kRail, g / share, index);
        groups.assign(HostGroupKind::kSu, s, index);
        groups.assign(HostGroupKind::kLeaf, s * R + g / share, index);
        groups.assign(HostGroupKind::kNode, s * N + n, index);
        ++gpus;
        // A GPU's ports: its NIC port(s) first, one per plane, then NVLink.
        if (share == 1) {
          for (uint32_t p = 0; p < P; ++p)
            t.add_link(gpu, leaves[p][s][g], c.nic_link.rate, c.nic_link.delay);
        } else {
          t.add_link(gpu, nic[g / share], c.pcie.rate, c.pcie.delay);
        }
        if (with_nvswitch) t.add_link(gpu, nvs, c.nvlink.rate, c.nvlink.delay, LinkKind::kNvlink);
      }
    }
  }

  // Fabric: leaf uplinks to spines, then spine uplinks to cores.
  for (uint32_t p = 0; p < P; ++p) {
    for (uint32_t s = 0; s < c.sus; ++s) {
      const auto& sp = spines[p][per_su_spines ? s : 0];
      for (uint32_t r = 0; r < R; ++r) {
        const uint32_t index_in_scope = per_su_spines ? r : s * R + r;
        spread(t, leaves[p][s][r], index_in_scope, sp, U, c.leaf_link);
      }
    }
    if (per_su_spines) {
      for (uint32_t s = 0; s < c.sus; ++s) {
        for (uint32_t j = 0; j < S; ++j)
          spread(t, spines[p][s][j], s * S + j, cores[p], Us, c.core_link);
      }
    }
  }

  // Divisor wiring at both levels can split the core layer into blocks that
  // no SU's spines bridge.
  if (const auto pair = per_su_spines ? unconnected_hosts(t) : std::nullopt) {
    throw TopologyError("spine_uplinks",
                        n2s(Us) + " uplinks per spine over " + n2s(c.cores) + " cores leave \"" +
                            t.node(pair->first).name + "\" and \"" + t.node(pair->second).name +
                            "\" unconnected (expected a multiple of cores: " + n2s(c.cores) +
                            ", ...)");
  }

  TopologyInfo info;
  info.kind = "rail_optimized";
  const double down = N * bps(c.nic_link.rate), up = U * bps(c.leaf_link.rate);
  info.oversubscription = down / up;
  if (per_su_spines) {
    info.oversubscription = std::max(
        info.oversubscription, spine_down * bps(c.leaf_link.rate) / (Us * bps(c.core_link.rate)));
  }
  info.has_bisection = true;
  return info;
}

}  // namespace rdmasim
