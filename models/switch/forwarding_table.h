// ForwardingTable: a switch's FIB. For every destination host it gives the
// set of equal-cost egress ports, and picks one per flow by a hash.
//
// Layout (sized by switches x attachment switches, not switches x hosts):
//  - HostAttachments, shared by all switches, lists for every host the
//    switches (or hosts) it is cabled to and through which ports.
//  - Each switch stores, per *attachment group* (a switch with hosts on it,
//    e.g. a leaf), the hop count to that switch and the id of an interned set
//    of egress ports towards it. Sets are interned per switch, so a leaf's
//    "all my uplinks" set is stored once however many leaves it leads to.
//  - A destination attached to this very switch goes out of its own port(s).
//  - Static routes (scenario overrides) replace all of the above for their
//    destination.
//
// Contract:
//  1. Built once, before the run, by topologies/routing.h; immutable while
//     running. Lookups never allocate.
//  2. An empty result means "unreachable": the switch drops and counts.
//  3. select() picks within the set by a hash of the packet's flow fields and
//     the switch's seed, so one flow always takes one port (ECMP, RFC 2992).
//  4. A destination cabled to several groups (dual-homed) is reached through
//     the nearest; ties are merged into one candidate list.
//  5. A linear table (set_linear(), InfiniBand's LFT) replaces every
//     candidate list by its one port per destination; static routes still
//     take precedence.
//  6. The common case is served from a fast table (fast_view(), fast_select(),
//     the same port as the general path): for ECMP, indexed by the
//     destination's attachment group through HostAttachments::route (one
//     entry per host, shared by every switch) plus one entry per group in
//     each switch, so its size per switch does not grow with the hosts; for
//     a linear table, one entry per destination.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "sim/hash.h"

namespace rdmasim {

inline constexpr uint8_t kUnreachable = std::numeric_limits<uint8_t>::max();
inline constexpr uint32_t kNoGroup = std::numeric_limits<uint32_t>::max();
inline constexpr uint32_t kNoPort = std::numeric_limits<uint32_t>::max();

// Where each host is cabled. Shared, read-only configuration.
struct HostAttachments {
  struct Attachment {
    uint32_t node;       // the switch (or host) at the other end
    uint32_t node_port;  // its port towards the host
    uint32_t host_port;  // the host's port
    uint32_t group;      // attachment group id of `node`, or kNoGroup if it is a host
  };
  // attachments of host h: items[offsets[h] .. offsets[h+1])
  std::vector<uint32_t> offsets;
  std::vector<Attachment> items;

  std::span<const Attachment> of(uint32_t host) const {
    return {items.data() + offsets[host], offsets[host + 1] - offsets[host]};
  }

  // Contract 6: for a host with one attachment, and that to a switch, its
  // group and that switch's port towards it, packed in 4 bytes (group << 12
  // | port: the array is read on every hop of every switch, and half the
  // size stays cached twice as long); any other host has group == groups
  // (an entry every fast table leaves to the general path). Fabrics whose
  // groups or ports do not fit get no route array (no fast table).
  static constexpr int kRoutePortBits = 12;
  static constexpr uint32_t kRoutePortMask = (uint32_t{1} << kRoutePortBits) - 1;
  static constexpr uint32_t kRouteMaxGroups = (uint32_t{1} << (32 - kRoutePortBits)) - 1;
  static uint32_t route_group(uint32_t r) { return r >> kRoutePortBits; }
  static uint32_t route_port(uint32_t r) { return r & kRoutePortMask; }
  std::vector<uint32_t> route;
  uint32_t groups = 0;
  // Fills `route` from the attachments, for `groups` attachment groups.
  void build_routes(uint32_t num_groups) {
    groups = num_groups;
    route.clear();
    if (num_groups >= kRouteMaxGroups) return;
    const uint32_t n = offsets.empty() ? 0 : static_cast<uint32_t>(offsets.size() - 1);
    route.assign(n, num_groups << kRoutePortBits);
    for (uint32_t h = 0; h < n; ++h) {
      const auto atts = of(h);
      if (atts.size() != 1 || atts[0].group == kNoGroup) continue;
      if (atts[0].node_port > kRoutePortMask) {
        route.clear();
        return;
      }
      route[h] = (atts[0].group << kRoutePortBits) | atts[0].node_port;
    }
  }
};

// The ECMP flow key of a packet at a switch: the 5-tuple in effect (source and
// destination host, and the UDP source port that RoCE v2 fills with per-QP
// entropy), salted with the switch's own seed so that switches do not all
// make the same choice (hash polarisation).
inline uint64_t ecmp_key(uint64_t switch_seed, uint32_t src, uint32_t dst, uint32_t flow_hash) {
  return switch_seed ^ (uint64_t{src} << 40) ^ (uint64_t{dst} << 20) ^ flow_hash;
}

class ForwardingTable {
 public:
  ForwardingTable() = default;
  ForwardingTable(uint32_t self, std::shared_ptr<const HostAttachments> hosts,
                  std::vector<uint8_t> group_dist, std::vector<uint32_t> group_set,
                  std::vector<uint32_t> set_offsets, std::vector<uint32_t> set_ports)
      : self_(self),
        hosts_(std::move(hosts)),
        group_dist_(std::move(group_dist)),
        group_set_(std::move(group_set)),
        set_offsets_(std::move(set_offsets)),
        set_ports_(std::move(set_ports)) {
    build_fast();
  }

  // A table of static routes only: routes[d] are the ports towards host d.
  // For micro-networks in tests and hand-built switches.
  static ForwardingTable from_static(const std::vector<std::vector<uint32_t>>& routes) {
    ForwardingTable t;
    for (uint32_t d = 0; d < routes.size(); ++d) t.set_static_route(d, routes[d]);
    return t;
  }

  // Replaces the route to `dst` by a static list of ports (empty: drop).
  void set_static_route(uint32_t dst, std::vector<uint32_t> ports) {
    static_[dst] = std::move(ports);
  }
  // Contract 5: lft[d] is the one egress port towards host d (kNoPort: none,
  // the switch drops). Served from the fast table, one entry per destination
  // and one single-port set per port used, so a lookup costs what an ECMP
  // lookup costs.
  void set_linear(std::vector<uint32_t> lft) {
    linear_ = std::move(lft);
    fast_.assign(linear_.size(), kNoFast);
    fast_hosts_ = nullptr;
    std::vector<uint32_t> at;  // port -> offset of its single-port set
    for (uint32_t d = 0; d < linear_.size(); ++d) {
      const uint32_t p = linear_[d];
      if (p == kNoPort) continue;
      if (p >= at.size()) at.resize(p + 1, kNoPort);
      if (at[p] == kNoPort) {
        at[p] = static_cast<uint32_t>(fast_.size());
        fast_.push_back(p);
      }
      fast_[d] = (at[p] << 8) | 1U;
    }
    // Offsets beyond 24 bits do not fit an entry: select() then reads linear_.
    if (fast_.size() >= (size_t{1} << 24)) fast_.clear();
    fast_size_ = fast_.empty() ? 0 : static_cast<uint32_t>(linear_.size());
  }
  bool linear() const { return !linear_.empty(); }

  // Hops from this switch to group g's switch (0 if it is this switch).
  uint8_t group_distance(uint32_t g) const {
    return g < group_dist_.size() ? group_dist_[g] : kUnreachable;
  }
  std::span<const uint32_t> group_ports(uint32_t g) const {
    if (g >= group_set_.size() || group_set_[g] == kNoGroup) return {};
    const uint32_t s = group_set_[g];
    return {set_ports_.data() + set_offsets_[s], set_offsets_[s + 1] - set_offsets_[s]};
  }
  size_t num_port_sets() const { return set_offsets_.empty() ? 0 : set_offsets_.size() - 1; }

  // Visits every candidate egress port towards `dst`, in a fixed order.
  template <class F>
  void for_each_port(uint32_t dst, F&& f) const {
    if (!static_.empty()) {
      if (auto it = static_.find(dst); it != static_.end()) {
        for (uint32_t p : it->second) f(p);
        return;
      }
    }
    if (!linear_.empty()) {
      if (dst < linear_.size() && linear_[dst] != kNoPort) f(linear_[dst]);
      return;
    }
    if (!hosts_ || dst + 1 >= hosts_->offsets.size()) return;
    const auto atts = hosts_->of(dst);
    bool direct = false;
    for (const auto& a : atts) {
      // A cable to another host names that host's index, not a node id.
      if (a.group != kNoGroup && a.node == self_) {
        f(a.node_port);
        direct = true;
      }
    }
    if (direct) return;
    uint8_t best = kUnreachable;
    for (const auto& a : atts) {
      if (a.group != kNoGroup && group_distance(a.group) < best) best = group_distance(a.group);
    }
    if (best == kUnreachable) return;
    for (const auto& a : atts) {
      if (a.group != kNoGroup && group_distance(a.group) == best) {
        for (uint32_t p : group_ports(a.group)) f(p);
      }
    }
  }

  // Number of equal-cost ports towards dst.
  uint32_t count(uint32_t dst) const {
    uint32_t n = 0;
    for_each_port(dst, [&](uint32_t) { ++n; });
    return n;
  }

  // Contract 6's fast table, for a caller that keeps it next to its own
  // per-packet state. `table` holds the index entries (offset << 8 | count
  // into `table` itself; kNoFast: ask select()) followed by the port sets.
  // With `hosts`, the index is the destination's group (its route's group;
  // the switch's own group means the route's port); without, the
  // destination. Empty (size 0) while static routes exist.
  struct FastView {
    const uint32_t* table = nullptr;
    const uint32_t* hosts = nullptr;
    uint32_t size = 0;  // destinations covered: dst < size
    uint32_t own_group = kNoGroup;
  };
  FastView fast_view() const {
    if (!static_.empty() || fast_size_ == 0) return {};
    return {fast_.data(), fast_hosts_, fast_size_, own_group_};
  }
  // The port from a fast view, or -1 to ask select().
  static int64_t fast_select(const FastView& v, uint32_t dst, uint64_t flow_key) {
    if (dst >= v.size) return -1;
    uint32_t i = dst;
    if (v.hosts != nullptr) {
      const uint32_t r = v.hosts[dst];
      i = HostAttachments::route_group(r);
      if (i == v.own_group) return HostAttachments::route_port(r);
    }
    const uint32_t e = v.table[i];
    if (e == kNoFast) return -1;
    return v.table[(e >> 8) + pick(flow_key, e & 0xFF)];
  }

  // mix64(flow_key) mod n, without a division when n is a power of two (the
  // same value: uplink counts usually are).
  static uint64_t pick(uint64_t flow_key, uint64_t n) {
    if (n == 1) return 0;
    const uint64_t h = mix64(flow_key);
    return (n & (n - 1)) == 0 ? h & (n - 1) : h % n;
  }

  // Egress port for a packet to `dst` with flow key `flow_key`, or -1.
  int64_t select(uint32_t dst, uint64_t flow_key) const {
    if (static_.empty()) {
      if (const int64_t p = fast_select(fast_view(), dst, flow_key); p >= 0) return p;
    }
    const uint32_t n = count(dst);
    if (n == 0) return -1;
    uint64_t k = pick(flow_key, n);
    int64_t chosen = -1;
    for_each_port(dst, [&](uint32_t p) {
      if (k-- == 0) chosen = p;
    });
    return chosen;
  }

 private:
  // Contract 6 for ECMP: one entry per group (plus the `groups` entry of
  // the hosts the fast path leaves out), then the port sets; a group whose
  // set is empty or over 255 ports stays kNoFast.
  static constexpr uint32_t kNoFast = 0;
  void build_fast() {
    if (!hosts_ || hosts_->route.empty() || hosts_->route.size() + 1 != hosts_->offsets.size())
      return;
    const uint32_t groups = hosts_->groups;
    if (groups + 1 + set_ports_.size() >= (size_t{1} << 24)) return;
    fast_.assign(groups + 1, kNoFast);
    fast_.insert(fast_.end(), set_ports_.begin(), set_ports_.end());
    for (uint32_t g = 0; g < groups && g < group_dist_.size(); ++g) {
      if (group_dist_[g] == 0) own_group_ = g;
      const auto set = group_ports(g);
      if (set.empty() || set.size() > 0xFF) continue;
      const auto offset = static_cast<uint32_t>(groups + 1 + (set.data() - set_ports_.data()));
      fast_[g] = (offset << 8) | static_cast<uint32_t>(set.size());
    }
    fast_hosts_ = hosts_->route.data();
    fast_size_ = static_cast<uint32_t>(hosts_->route.size());
  }

  uint32_t self_ = 0;
  std::shared_ptr<const HostAttachments> hosts_;
  std::vector<uint8_t> group_dist_;
  std::vector<uint32_t> group_set_;
  std::vector<uint32_t> set_offsets_;
  std::vector<uint32_t> set_ports_;
  std::vector<uint32_t> fast_;  // contract 6
  const uint32_t* fast_hosts_ = nullptr;
  uint32_t fast_size_ = 0;
  uint32_t own_group_ = kNoGroup;
  std::vector<uint32_t> linear_;  // contract 5; empty: candidate lists
  std::unordered_map<uint32_t, std::vector<uint32_t>> static_;
};

}  // namespace rdmasim
