// Topology: the network as a graph, built before any device model exists.
// Generators (star, graph, fat-tree, rail-optimized; generators.h) only build
// this description; the run builder then creates one device per node and one
// cable per link through the same API a test uses (sim/cable.h).
//
// Contract:
//  1. Node ids are dense, in creation order. Hosts also get a dense host
//     index (their address in packets), in creation order among hosts.
//  2. Ports are numbered per node in the order links are added; link i joins
//     port links()[i].a_port of node a to port b_port of node b. The run
//     builder wires links in the same order, so the numbering carries over.
//  3. Every link has a positive rate and delay.
//  4. Immutable once built (generators return it by value).
//  5. Its host groups (leaves, pods, rails, scalable units; host_groups.h)
//     are the generator's: a hand-built graph has none.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "sim/units.h"
#include "topologies/host_groups.h"

namespace rdmasim {

enum class NodeKind : uint8_t { kHost, kSwitch };

// A node's role, for summaries, drawings and sanity checks. Routing does not
// look at it: it follows the graph.
enum class Tier : uint8_t {
  kHost,       // an RDMA endpoint: a NIC, or a GPU with its NIC
  kSwitch,     // a switch in an explicit graph
  kLeaf,       // top-of-rack / edge / rail leaf
  kSpine,      // second tier (aggregation in a 3-tier tree)
  kCore,       // third tier
  kNvSwitch,   // the NVLink switch inside a GPU node
  kNicSwitch,  // the PCIe switch joining GPUs that share one NIC port
  kCount
};
const char* to_string(Tier t);

// Rate and propagation delay of a cable (both directions).
struct LinkSpec {
  BitRate rate = BitRate::gbps(400);
  Time delay = Time::us(1);
};

struct TopoNode {
  std::string name;
  NodeKind kind;
  Tier tier;
  uint32_t host_index;  // hosts only; UINT32_MAX for switches
  uint32_t num_ports;
  std::string group;  // enclosing unit for drawings: "pod3", "su0.node7", or ""
};

// What a cable is, for the fabric builder: a network cable (RoCE v2 or
// InfiniBand, as fabric.transport says, with its link-level flow control) or
// an NVLink inside a server (NVLink framing, no PFC or credits; docs/topologies.md).
enum class LinkKind : uint8_t { kNetwork, kNvlink };

struct TopoLink {
  uint32_t a, b;
  uint32_t a_port, b_port;
  BitRate rate;
  Time delay;
  bool failed = false;  // present (ports keep their numbers) but carries nothing
  LinkKind kind = LinkKind::kNetwork;
};

class Topology {
 public:
  uint32_t add_host(std::string name, std::string group = {});
  uint32_t add_switch(std::string name, Tier tier = Tier::kSwitch, std::string group = {});
  // Adds a full-duplex link and returns its index.
  uint32_t add_link(uint32_t a, uint32_t b, BitRate rate, Time delay,
                    LinkKind kind = LinkKind::kNetwork);
  // Marks a link failed: routing ignores it; its ports keep their numbers.
  void fail_link(uint32_t index) { links_[index].failed = true; }
  void set_link_failed(uint32_t index, bool failed) { links_[index].failed = failed; }

  const std::vector<TopoNode>& nodes() const { return nodes_; }
  const std::vector<TopoLink>& links() const { return links_; }
  // The slowest rate of a network (not NVLink) link; 0 with none.
  BitRate slowest_network_rate() const;
  const TopoNode& node(uint32_t id) const { return nodes_[id]; }
  // Node id of each host, by host index.
  const std::vector<uint32_t>& hosts() const { return hosts_; }
  size_t num_hosts() const { return hosts_.size(); }
  std::optional<uint32_t> find(std::string_view name) const;

  // Per node, its ports in order: (link index, neighbour node id).
  struct Adjacent {
    uint32_t link;
    uint32_t neighbor;
  };
  const std::vector<std::vector<Adjacent>>& adjacency() const { return adjacency_; }

  // Contract 5; generators fill them in as they add hosts.
  const HostGroups& host_groups() const { return host_groups_; }
  HostGroups& host_groups() { return host_groups_; }

 private:
  uint32_t add_node(std::string name, NodeKind kind, Tier tier, std::string group);

  std::vector<TopoNode> nodes_;
  std::vector<TopoLink> links_;
  std::vector<uint32_t> hosts_;
  std::vector<std::vector<Adjacent>> adjacency_;
  std::unordered_map<std::string, uint32_t> by_name_;
  HostGroups host_groups_;
};

}  // namespace rdmasim
