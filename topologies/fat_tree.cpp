// fat_tree: two-tier leaf-spine and three-tier (pods joined by cores) Clos
// fabrics, including the classic k-ary fat-tree. See docs/topologies.md.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "topologies/generators.h"

namespace rdmasim {
namespace {

std::string n2s(uint64_t v) { return std::to_string(v); }

void require_positive(uint32_t v, const char* param) {
  if (v == 0) throw TopologyError(param, "0 is out of range (expected an integer >= 1)");
}

// Links needed to carry `down` bit/s of host-facing capacity at `rate` each.
uint32_t links_for(double down_bps, BitRate rate) {
  return static_cast<uint32_t>(std::ceil(down_bps / static_cast<double>(rate.in_bps()) - 1e-9));
}

void check_ports(uint32_t used, uint32_t radix, const std::string& what) {
  if (radix != 0 && used > radix) {
    throw TopologyError("switch_ports", n2s(radix) + " ports are too few: a " + what + " needs " +
                                            n2s(used) + " (expected at least " + n2s(used) + ")");
  }
}

double bps(BitRate r) { return static_cast<double>(r.in_bps()); }

// Leaf uplinks that give the requested oversubscription exactly.
uint32_t uplinks_for(const FatTreeConfig& c) {
  if (!(c.oversubscription > 0)) {
    throw TopologyError("oversubscription",
                        "must be positive (expected e.g. 1 for non-blocking, or 3 for 3:1)");
  }
  const double exact =
      c.hosts_per_leaf * bps(c.host_link.rate) / (c.oversubscription * bps(c.leaf_link.rate));
  const double rounded = std::round(exact);
  if (rounded > 1'000'000) {  // uplinks_per_leaf's own maximum
    char buf[96];
    std::snprintf(buf, sizeof buf, "%g:1 needs %g", c.oversubscription, exact);
    throw TopologyError(
        "oversubscription",
        std::string(buf) + " uplinks per leaf (expected a ratio that needs at most 1000000)");
  }
  if (rounded < 1 || std::abs(exact - rounded) > 1e-9 * exact) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%g", c.oversubscription);
    throw TopologyError(
        "oversubscription",
        std::string(buf) + ":1 needs " + std::to_string(exact) +
            " uplinks per leaf (expected a ratio that gives a whole number of uplinks, or "
            "uplinks_per_leaf)");
  }
  return static_cast<uint32_t>(rounded);
}

TopologyInfo build_two_tier(const FatTreeConfig& c, Topology& t) {
  require_positive(c.leaves, "leaves");
  require_positive(c.spines, "spines");
  require_positive(c.hosts_per_leaf, "hosts_per_leaf");
  const uint32_t L = c.leaves, S = c.spines, H = c.hosts_per_leaf;
  const uint32_t U = c.uplinks_per_leaf != 0 ? c.uplinks_per_leaf : uplinks_for(c);
  // Every pair of leaves must share a spine: with fewer uplinks than spines,
  // leaves in different blocks of spines would not reach each other.
  if (U % S != 0) {
    char ratio[64];
    std::snprintf(ratio, sizeof ratio, " (from oversubscription %g)", c.oversubscription);
    throw TopologyError(
        "uplinks_per_leaf",
        n2s(U) + " uplinks" + (c.uplinks_per_leaf == 0 ? ratio : "") + " cannot go to all " +
            n2s(S) +
            " spines alike, and two leaves without a common spine are not connected (expected a "
            "multiple of spines: " +
            n2s(S) + ", " + n2s(2 * uint64_t{S}) + ", ...)");
  }
  check_ports(H + U, c.switch_ports, "leaf (" + n2s(H) + " hosts + " + n2s(U) + " uplinks)");
  const uint64_t spine_ports = static_cast<uint64_t>(L) * U / S;
  check_ports(static_cast<uint32_t>(spine_ports), c.switch_ports, "spine");

  std::vector<uint32_t> leaf(L), spine(S);
  for (uint32_t i = 0; i < L; ++i) leaf[i] = t.add_switch("leaf" + n2s(i), Tier::kLeaf);
  for (uint32_t j = 0; j < S; ++j) spine[j] = t.add_switch("spine" + n2s(j), Tier::kSpine);
  t.host_groups().declare(HostGroupKind::kLeaf, L);
  for (uint32_t i = 0; i < L; ++i) {
    const std::string group = "leaf" + n2s(i);
    for (uint32_t h = 0; h < H; ++h) {
      const uint32_t host = t.add_host(group + ".h" + n2s(h), group);
      t.host_groups().assign(HostGroupKind::kLeaf, i, t.node(host).host_index);
      t.add_link(host, leaf[i], c.host_link.rate, c.host_link.delay);
    }
    for (uint32_t j = 0; j < S; ++j) {
      for (uint32_t m = 0; m < U / S; ++m)
        t.add_link(leaf[i], spine[j], c.leaf_link.rate, c.leaf_link.delay);
    }
  }
  TopologyInfo info;
  info.kind = "fat_tree";
  info.has_bisection = true;
  const double down = H * bps(c.host_link.rate), up = U * bps(c.leaf_link.rate);
  info.oversubscription = down / up;
  return info;
}

TopologyInfo build_three_tier(const FatTreeConfig& c, Topology& t) {
  require_positive(c.pods, "pods");
  require_positive(c.leaves_per_pod, "leaves_per_pod");
  require_positive(c.spines_per_pod, "spines_per_pod");
  require_positive(c.cores, "cores");
  require_positive(c.hosts_per_leaf, "hosts_per_leaf");
  const uint32_t P = c.pods, Lp = c.leaves_per_pod, A = c.spines_per_pod, C = c.cores,
                 H = c.hosts_per_leaf;
  if (C % A != 0) {
    throw TopologyError("cores", n2s(C) + " cores cannot be split into " + n2s(A) +
                                     " equal groups, one per pod spine (expected a multiple of "
                                     "spines_per_pod)");
  }
  const uint32_t group = C / A;  // cores each pod spine connects to
  const uint32_t U = c.uplinks_per_leaf != 0 ? c.uplinks_per_leaf : uplinks_for(c);
  if (U % A != 0) {
    throw TopologyError("uplinks_per_leaf",
                        n2s(U) + " uplinks cannot spread evenly over " + n2s(A) +
                            " spines per pod (expected a multiple of spines_per_pod)");
  }
  const uint32_t spine_down = Lp * (U / A);
  uint32_t Us = c.uplinks_per_spine;
  if (Us == 0) {
    const uint32_t needed =
        std::max<uint32_t>(1, links_for(spine_down * bps(c.leaf_link.rate), c.core_link.rate));
    Us = (std::max(needed, group) + group - 1) / group * group;
  } else if (Us % group != 0) {
    throw TopologyError("uplinks_per_spine",
                        n2s(Us) + " uplinks cannot spread evenly over the " + n2s(group) +
                            " cores of a spine's group (expected a multiple of " + n2s(group) +
                            ")");
  }
  check_ports(H + U, c.switch_ports, "leaf (" + n2s(H) + " hosts + " + n2s(U) + " uplinks)");
  check_ports(spine_down + Us, c.switch_ports, "spine");
  check_ports(P * (Us / group), c.switch_ports, "core");

  std::vector<uint32_t> core(C);
  for (uint32_t k = 0; k < C; ++k) core[k] = t.add_switch("core" + n2s(k), Tier::kCore);
  // Leaves are numbered across pods: pod p's leaf l is leaf p * Lp + l.
  t.host_groups().declare(HostGroupKind::kLeaf, P * Lp);
  t.host_groups().declare(HostGroupKind::kPod, P);
  for (uint32_t p = 0; p < P; ++p) {
    const std::string pod = "pod" + n2s(p);
    std::vector<uint32_t> leaf(Lp), spine(A);
    for (uint32_t l = 0; l < Lp; ++l)
      leaf[l] = t.add_switch(pod + ".leaf" + n2s(l), Tier::kLeaf, pod);
    for (uint32_t a = 0; a < A; ++a)
      spine[a] = t.add_switch(pod + ".spine" + n2s(a), Tier::kSpine, pod);
    for (uint32_t l = 0; l < Lp; ++l) {
      for (uint32_t h = 0; h < H; ++h) {
        const uint32_t host = t.add_host(pod + ".leaf" + n2s(l) + ".h" + n2s(h), pod);
        t.host_groups().assign(HostGroupKind::kLeaf, p * Lp + l, t.node(host).host_index);
        t.host_groups().assign(HostGroupKind::kPod, p, t.node(host).host_index);
        t.add_link(host, leaf[l], c.host_link.rate, c.host_link.delay);
      }
      for (uint32_t a = 0; a < A; ++a) {
        for (uint32_t m = 0; m < U / A; ++m)
          t.add_link(leaf[l], spine[a], c.leaf_link.rate, c.leaf_link.delay);
      }
    }
    // Spine a of every pod joins core group a (the k-ary pattern).
    for (uint32_t a = 0; a < A; ++a) {
      for (uint32_t k = 0; k < group; ++k) {
        for (uint32_t m = 0; m < Us / group; ++m) {
          t.add_link(spine[a], core[a * group + k], c.core_link.rate, c.core_link.delay);
        }
      }
    }
  }
  TopologyInfo info;
  info.kind = "fat_tree";
  const double leaf_down = H * bps(c.host_link.rate), leaf_up = U * bps(c.leaf_link.rate);
  const double spine_dn = spine_down * bps(c.leaf_link.rate), spine_up = Us * bps(c.core_link.rate);
  info.oversubscription = std::max(leaf_down / leaf_up, spine_dn / spine_up);
  info.has_bisection = true;
  return info;
}

}  // namespace

FatTreeConfig k_ary_fat_tree(uint32_t k, const LinkSpec& link) {
  if (k < 2 || k % 2 != 0)
    throw TopologyError("k", n2s(k) + " is not valid (expected an even integer >= 2)");
  FatTreeConfig c;
  c.tiers = 3;
  c.pods = k;
  c.leaves_per_pod = k / 2;
  c.spines_per_pod = k / 2;
  c.hosts_per_leaf = k / 2;
  c.cores = (k / 2) * (k / 2);
  c.uplinks_per_leaf = k / 2;
  c.uplinks_per_spine = k / 2;
  c.switch_ports = k;
  c.host_link = c.leaf_link = c.core_link = link;
  return c;
}

TopologyInfo build_fat_tree(const FatTreeConfig& cfg, Topology& t) {
  if (cfg.tiers == 2) return build_two_tier(cfg, t);
  if (cfg.tiers == 3) return build_three_tier(cfg, t);
  throw TopologyError("tiers",
                      n2s(static_cast<uint64_t>(cfg.tiers)) + " is not valid (expected 2 or 3)");
}

TopologyInfo build_star(uint32_t hosts, const LinkSpec& link, Topology& t) {
  require_positive(hosts, "hosts");
  const uint32_t sw = t.add_switch("sw0", Tier::kLeaf);
  t.host_groups().declare(HostGroupKind::kLeaf, 1);
  for (uint32_t i = 0; i < hosts; ++i) {
    const uint32_t host = t.add_host("h" + n2s(i));
    t.add_link(host, sw, link.rate, link.delay);
    t.host_groups().assign(HostGroupKind::kLeaf, 0, t.node(host).host_index);
  }
  TopologyInfo info;
  info.kind = "star";
  info.has_bisection = true;
  return info;
}

}  // namespace rdmasim
