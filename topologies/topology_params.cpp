#include "topologies/topology_params.h"

namespace rdmasim {
namespace {

// JSON Schema fragments of the values read by hand.
constexpr const char* kNamesSchema =
    R"({"type": "array", "items": {"type": "string", "minLength": 1}})";
constexpr const char* kSomeNamesSchema =
    R"({"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1})";
constexpr const char* kHostRefSchema =
    R"({"anyOf": [{"type": "string", "minLength": 1}, {"type": "integer", "minimum": 0}]})";

constexpr int64_t kMaxCount = 1'000'000;

const ParamTable& star_params() {
  static const ParamTable t = [] {
    ParamTable f("topology.star", "N hosts on one switch");
    f.add("hosts", ParamKind::kInt).range(1, kMaxCount).doc("number of hosts, `h0` … `h<N-1>`");
    f.add_object("link", cable_params())
        .computed("fabric.link")
        .doc("`{rate, delay}` of the star's cables");
    return f;
  }();
  return t;
}

const ParamTable& graph_link_params() {
  static const ParamTable t = [] {
    ParamTable f("topology.links", "one cable of a graph");
    f.add("a", ParamKind::kString).doc("one end (a node name)");
    f.add("b", ParamKind::kString).doc("the other end (a node name)");
    f.include(cable_params());
    return f;
  }();
  return t;
}

const ParamTable& graph_params() {
  static const ParamTable t = [] {
    ParamTable f("topology.graph", "explicit nodes and links");
    f.add("hosts", ParamKind::kCustom)
        .takes("list of names", kSomeNamesSchema)
        .doc("host names, in host-index order");
    f.add("switches", ParamKind::kCustom)
        .takes("list of names", kNamesSchema)
        .optional("none")
        .doc("switch names");
    f.add_objects("links", graph_link_params())
        .required()
        .doc(
            "the cables: `{\"a\": NAME, \"b\": NAME}`, with `rate` and `delay` if not "
            "fabric.link's");
    return f;
  }();
  return t;
}

const Fields<FatTreeConfig>& fat_tree_params() {
  static const Fields<FatTreeConfig> t = [] {
    using C = FatTreeConfig;
    Fields<C> f("topology.fat_tree",
                "two-tier leaf–spine, three-tier pods and cores, or the classic k-ary tree");
    f.add("k", ParamKind::kInt)
        .range(2, 256)
        .multiple_of(2)
        .optional("the tree is given by its tiers")
        .doc(
            "the classic k-ary fat-tree (Al-Fares et al.): k pods of k/2 leaves and k/2 spines, "
            "(k/2)² cores, k³/4 hosts; an even number. The other keys then do not apply")
        .source("Al-Fares, Loukissas, Vahdat, SIGCOMM 2008");
    f.add_object("link", cable_params())
        .when_given("k")
        .computed("fabric.link")
        .doc("`{rate, delay}` of every cable of a k-ary tree");
    f.integer("tiers", &C::tiers, 2, 3).when_absent("k").doc("2: leaf–spine; 3: pods and cores");
    f.integer("hosts_per_leaf", &C::hosts_per_leaf, 1, kMaxCount)
        .required()
        .when_absent("k")
        .doc("hosts under each leaf, `leaf<i>.h<n>` (`pod<p>.leaf<l>.h<n>`)");
    f.integer("leaves", &C::leaves, 1, kMaxCount)
        .required()
        .when_absent("k")
        .when("tiers", {"2"})
        .doc("leaf (ToR) switches, `leaf0` …");
    f.integer("spines", &C::spines, 1, kMaxCount)
        .required()
        .when_absent("k")
        .when("tiers", {"2"})
        .doc("spine switches, `spine0` …");
    f.integer("pods", &C::pods, 1, kMaxCount)
        .required()
        .when_absent("k")
        .when("tiers", {"3"})
        .doc("pods, `pod0` …");
    f.integer("leaves_per_pod", &C::leaves_per_pod, 1, kMaxCount)
        .required()
        .when_absent("k")
        .when("tiers", {"3"})
        .doc("leaves of each pod, `pod<p>.leaf<l>`");
    f.integer("spines_per_pod", &C::spines_per_pod, 1, kMaxCount)
        .required()
        .when_absent("k")
        .when("tiers", {"3"})
        .doc("spines of each pod, `pod<p>.spine<s>`");
    f.integer("cores", &C::cores, 1, kMaxCount)
        .required()
        .when_absent("k")
        .when("tiers", {"3"})
        .doc("core switches, `core0` …; a multiple of `spines_per_pod`");
    f.integer("uplinks_per_spine", &C::uplinks_per_spine, 0, kMaxCount)
        .when_absent("k")
        .when("tiers", {"3"})
        .doc(
            "spine cables to the cores; 0: non-blocking. Spine s of every pod connects to "
            "cores s·c … s·c+c−1, c = cores/spines_per_pod; a multiple of c");
    f.add_object("core_link", cable_params())
        .when_absent("k")
        .when("tiers", {"3"})
        .computed("fabric.link")
        .doc("`{rate, delay}` of spine–core cables");
    f.integer("uplinks_per_leaf", &C::uplinks_per_leaf, 0, kMaxCount)
        .when_absent("k")
        .doc(
            "cables from each leaf to the spines (of its pod); 0: from `oversubscription`. A "
            "multiple of the spines (parallel cables): every leaf reaches every spine, as two "
            "leaves meet only at a spine they share");
    f.number("oversubscription", &C::oversubscription, 0, 1e9)
        .number_range(0.0, 1e9, true)
        .optional("1: non-blocking")
        .when_absent("k")
        .when("uplinks_per_leaf", {"0"})
        .doc(
            "host-facing over fabric-facing capacity of a leaf (3 means 3:1); sets "
            "`uplinks_per_leaf`, which must come out whole");
    f.integer("switch_ports", &C::switch_ports, 0, 4096)
        .when_absent("k")
        .doc("switch radix: an error if a switch needs more ports; 0: not checked");
    f.add_object("host_link", cable_params())
        .when_absent("k")
        .computed("fabric.link")
        .doc("`{rate, delay}` of host–leaf cables");
    f.add_object("leaf_link", cable_params())
        .when_absent("k")
        .computed("fabric.link")
        .doc("`{rate, delay}` of leaf–spine cables");
    return f;
  }();
  return t;
}

const Fields<RailOptimizedConfig>& rail_params() {
  static const Fields<RailOptimizedConfig> t = [] {
    using C = RailOptimizedConfig;
    Fields<C> f("topology.rail_optimized", "a DGX SuperPOD-style rail-aligned GPU fabric");
    f.integer("sus", &C::sus, 1, kMaxCount).doc("scalable units").source("NVIDIA RA-11333");
    f.integer("nodes_per_su", &C::nodes_per_su, 1, kMaxCount)
        .doc("node slots per SU")
        .source("DGX SuperPOD: 32");
    f.boolean("ufm", &C::ufm)
        .doc(
            "the last SU's last slot holds the UFM appliance: a host `ufm` with 4 cables, to rails "
            "0–3 of that SU");
    f.integer("gpus_per_node", &C::gpus_per_node, 1, 64)
        .doc("GPUs (endpoints) per node: `su<s>.node<n>.gpu<g>`");
    f.integer("rails", &C::rails, 1, 64)
        .def_from("gpus_per_node")
        .doc(
            "NIC ports per node, one rail leaf each; divides `gpus_per_node`. With fewer rails "
            "than GPUs, GPUs share a NIC port through a PCIe switch `su<s>.node<n>.nic<r>`");
    f.integer("planes", &C::planes, 1, 8)
        .doc(
            "each NIC port goes to a separate plane: its own leaves `su<s>.plane<p>.rail<r>` and "
            "spines `plane<p>.spine<j>`; flows pick a plane by hash");
    f.integer("spines", &C::spines, 0, kMaxCount)
        .doc(
            "spines per plane (per SU when `cores` > 0); 0: the reference table, 4, 8, 16, 16 for "
            "1–4 SUs (beyond 4 SUs give it, or `cores`); with `cores`, the fewest of 4, 8, 16, … "
            "per SU whose ports hold their leaf cables and as many core cables within "
            "`switch_ports` (8 at the defaults)")
        .source("RA-11333 table 4");
    f.integer("leaf_uplinks", &C::leaf_uplinks, 0, kMaxCount)
        .doc(
            "cables from each leaf to the spines; 0: one per node slot (non-blocking), rounded up "
            "to a multiple of `spines`. A multiple of `spines`, as two rail leaves meet only at a "
            "spine they share; with `cores` also a divisor of them (leaf r takes spines r·u … "
            "r·u+u−1 mod `spines`), the cores joining the blocks");
    f.integer("cores", &C::cores, 0, kMaxCount)
        .doc(
            "with cores, every SU gets its own spines (`su<s>.spine<j>`), joined by a core layer; "
            "0: none");
    f.integer("spine_uplinks", &C::spine_uplinks, 0, kMaxCount)
        .doc(
            "cables from each spine to the cores; 0: non-blocking (as many as its leaf cables). A "
            "multiple of `cores`, or a divisor of them (spine j of SU s takes cores "
            "(s·spines+j)·u … mod `cores`) if every SU's spines still meet another's");
    f.boolean("nvswitch", &C::nvswitch)
        .doc("model the NVLink domain; `false` leaves GPUs with their NIC ports only");
    f.integer("switch_ports", &C::switch_ports, 0, 4096)
        .doc("radix check; 0: not checked")
        .source("QM9700: 64 NDR ports");
    f.add_object("nic_link", cable_params()).computed("fabric.link").doc("NIC–leaf cables");
    f.add_object("leaf_link", cable_params()).computed("fabric.link").doc("leaf–spine cables");
    f.add_object("core_link", cable_params()).computed("fabric.link").doc("spine–core cables");
    f.add_object("nvlink", cable_params())
        .computed("2960Gbps, 100ns")
        .doc(
            "a GPU's NVLink to its NVSwitch, in NVLink framing: `rate` is the payload rate per "
            "direction (no bytes besides the payload on the wire), no PFC, credits or ECN; the "
            "delay is an assumption")
        .source("H100: 370 GB/s effective of 450 GB/s line rate (NVIDIA/nccl-tests#212)");
    f.add_object("pcie", cable_params())
        .computed("512Gbps, 200ns")
        .doc("GPU to shared NIC; the delay is an assumption")
        .source("PCIe Gen5 x16, 64 GB/s per direction");
    return f;
  }();
  return t;
}

const ParamTable& failed_link_params() {
  static const ParamTable t = [] {
    ParamTable f("topology.failed_links", "a failed cable");
    f.add("a", ParamKind::kString).doc("one end (a node name)");
    f.add("b", ParamKind::kString).doc("the other end (a node name)");
    return f;
  }();
  return t;
}

const ParamTable& route_params() {
  static const ParamTable t = [] {
    ParamTable f("topology.routes", "a static route");
    f.add("at", ParamKind::kString).doc("the switch (its name)");
    f.add("dst", ParamKind::kCustom)
        .takes("host, or host set", std::string(R"({"anyOf": [)") + kHostRefSchema +
                                        R"(, {"$ref": "#/$defs/host_set"}]})")
        .doc(
            "destination hosts: one host (a name, or a number: a host index, not a count), or a "
            "host set without `count` (docs/traffic.md#host-sets)");
    f.add("via", ParamKind::kCustom)
        .takes("list of node names", kNamesSchema)
        .optional("give `ports` instead")
        .doc("leave by every cable to these neighbours");
    f.add("ports", ParamKind::kCustom)
        .takes("list of port numbers",
               R"({"type": "array", "items": {"type": "integer", "minimum": 0}})")
        .optional("give `via` instead")
        .doc("leave by these ports");
    return f;
  }();
  return t;
}

const ParamTable& rewrite_params() {
  static const ParamTable t = [] {
    ParamTable f("topology.priority_rewrite", "a priority rewrite rule (as Tagger installs)");
    f.add("at", ParamKind::kString).doc("the switch (its name)");
    f.add("from_neighbors", ParamKind::kCustom)
        .takes("list of node names", kSomeNamesSchema)
        .doc("packets arriving from these neighbours");
    f.add("to_neighbors", ParamKind::kCustom)
        .takes("list of node names", kNamesSchema)
        .optional("any")
        .doc("and routed to these");
    f.add("from", ParamKind::kInt).range(0, 7).doc("on this priority");
    f.add("to", ParamKind::kInt).range(0, 7).doc("leave on this one");
    return f;
  }();
  return t;
}

}  // namespace

const ParamTable& cable_params() {
  static const ParamTable t = [] {
    ParamTable f("cable", "a cable's rate and delay");
    f.add("rate", ParamKind::kRate)
        .computed("the enclosing default")
        .doc("Ethernet MAC data rate of both directions");
    f.add("delay", ParamKind::kTime)
        .min(Time::ps(1))
        .computed("the enclosing default")
        .doc("propagation delay of each direction");
    return f;
  }();
  return t;
}

const Fields<LinkSpec>& fabric_link_params() {
  static const Fields<LinkSpec> t = [] {
    Fields<LinkSpec> f("fabric.link", "the default cable");
    f.rate("rate", &LinkSpec::rate).doc("default rate of every link (Ethernet MAC data rate)");
    f.time("delay", &LinkSpec::delay, Time::ps(1))
        .doc("default propagation delay of every link (about 200 m of fibre)");
    return f;
  }();
  return t;
}

const ParamTable& topology_params() {
  static const ParamTable t = [] {
    ParamTable f("topology", "the network (docs/topologies.md)");
    f.set_discriminator("kind", "the generator");
    f.add_variant("star", TopologyKind::kStar, star_params(), "N hosts on one switch");
    f.add_variant("graph", TopologyKind::kGraph, graph_params(), "explicit nodes and links");
    f.add_variant("fat_tree", TopologyKind::kFatTree, fat_tree_params(),
                  "two-tier leaf–spine; three-tier pods and cores; classic k-ary");
    f.add_variant("rail_optimized", TopologyKind::kRailOptimized, rail_params(),
                  "DGX SuperPOD-style rail-aligned GPU fabric");
    f.add_objects("failed_links", failed_link_params())
        .doc(
            "`{\"a\": NAME, \"b\": NAME}`: every cable between the two nodes is failed: present "
            "(ports keep their numbers) but unused by routing. A failure that disconnects two "
            "hosts is an error");
    f.add("reconvergence_delay", ParamKind::kTime)
        .min(Time::ns(1))
        .def(Time::ms(1))
        .doc("after a fault, how long until routes are recomputed (docs/faults.md)");
    f.add_objects("routes", route_params())
        .doc(
            "static routes: at that switch, packets for those hosts leave only by those ports "
            "(every cable to a `via` neighbour). Replaces the computed route for that "
            "destination at that switch only — enough to build bounce paths and routing loops "
            "for deadlock studies");
    f.add_objects("priority_rewrite", rewrite_params())
        .doc("priority rewrite rules (docs/switch.md)");
    return f;
  }();
  return t;
}

}  // namespace rdmasim
