#include "sim/scenario/scenario_params.h"

#include "models/cc/cc_algorithm.h"
#include "models/nic/nic_params.h"
#include "models/switch/switch_params.h"
#include "models/traffic/traffic_params.h"
#include "topologies/topology_params.h"

namespace rdmasim {
namespace {

constexpr const char* kNameSchema = R"({"type": "string", "minLength": 1})";

const Fields<FabricConfig>& roce_params() {
  static const Fields<FabricConfig> t = [] {
    Fields<FabricConfig> f("fabric.roce", "RoCE v2 framing");
    f.choice("ip", &FabricConfig::ip,
             std::vector<std::pair<std::string, IpVersion>>{{"ipv4", IpVersion::kIpv4},
                                                            {"ipv6", IpVersion::kIpv6}})
        .doc("IP header of RoCE v2 packets (20 or 40 bytes)")
        .source("IBA Annex A17");
    f.boolean("vlan", &FabricConfig::vlan)
        .doc("whether frames carry an 802.1Q tag (4 bytes)")
        .source("IEEE 802.1Q");
    return f;
  }();
  return t;
}

const Fields<Credits::Params>& credits_params() {
  static const Fields<Credits::Params> t = [] {
    using P = Credits::Params;
    Fields<P> f("fabric.infiniband.credits",
                "credit-based link flow control of every InfiniBand port (docs/infiniband.md)");
    f.bytes("vl_buffer", &P::vl_buffer, Bytes(kIbCreditBlockBytes))
        .unit("bytes")
        .doc(
            "receive buffer of each data VL of every port, in 64-byte blocks (rounded down); at "
            "most 131072: a grant reaches at most 2048 blocks beyond what was received, so a "
            "larger buffer gains nothing; at least the largest packet's blocks")
        .source("IBA Vol 1 §7.9 (64-byte credits, 12-bit FCCL)");
    f.bytes("shared_buffer", &P::shared_buffer)
        .unit("bytes")
        .doc(
            "receive buffer of every port shared by its data VLs beyond their own vl_buffer (0: a "
            "static split; at most 1 MiB); a busy VL claims at most an equal share among the busy "
            "VLs, the claims never exceed it, and an idle VL's claim is revoked by a handshake "
            "once another VL is busy (docs/infiniband.md)")
        .source("model (shared buffers with per-VL minimums, as switch ASICs offer)");
    f.time("shared_idle_time", &P::shared_idle)
        .doc(
            "with a shared_buffer: a VL that received a data packet this recently counts as "
            "busy: it keeps its equal share of the pool and its claim is not revoked; longer than "
            "a credit loop (2 x link delay, a packet's and a flow-control packet's time, rx_delay "
            "+ coalesce + tx_delay, a switch's forwarding time), so that a VL streaming within "
            "its own buffer is not taken for idle (0: busy only while it holds packets or "
            "received since the last update)")
        .source("model (docs/infiniband.md, Taking a claim back)");
    f.time("rx_delay", &P::rx_delay)
        .doc(
            "from blocks freed (or received blocks resynchronised) to the flow-control packet "
            "queued (t_proc,rx of CASES.md V2)");
    f.time("tx_delay", &P::tx_delay)
        .doc("from a flow-control packet received to its credits usable (t_proc,tx of V2)");
    f.time("coalesce", &P::coalesce)
        .doc("gather the blocks freed this long into one flow-control packet per VL");
    f.time("period", &P::period, Time::ps(1))
        .word("none", Time::infinite(), "flow-control packets only when blocks are freed")
        .doc(
            "also send every data VL's FCCL and FCTBS this often; recovers the credits of data "
            "packets lost to bit errors (without it they stay lost); longer than op_vls "
            "flow-control packets take on the slowest InfiniBand link (6 bytes each), which "
            "would otherwise carry nothing else (just above that, data gets a sliver of the "
            "link and the run crawls)")
        .source("IBA Vol 1 §7.9.4: at least every 65,536 symbol times");
    return f;
  }();
  return t;
}

// The QoS tables are read by fabric_loader.cpp (OpenSM's string syntax).
// `cls`: the port class of an override object (OpenSM's qos_ca_, qos_swe_),
// whose keys default to the fabric-wide ones; null for those.
void add_ib_qos_keys(ParamTable& f, const char* cls) {
  auto def = [&](ParamBuilder b, const char* key, const std::string& fabric_default) {
    b.optional(cls == nullptr ? fabric_default : std::string("fabric.infiniband.qos.") + key);
    return b;
  };
  def(f.add("sl2vl", ParamKind::kCustom)
          .takes("16 VLs, one per SL: OpenSM's \"0,1,...\" or an array",
                 R"({"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "integer",)"
                 R"( "minimum": 0, "maximum": 15}, "minItems": 16, "maxItems": 16}]})"),
      "sl2vl", "\"0,1,2,...,14,7\", each VL but 15 ANDed with op_vls - 1 (as OpenSM does)")
      .doc(
          "the VL each SL travels on; a VL must be a data VL (below op_vls) or 15, which drops "
          "that SL's packets (no traffic may use it)")
      .source("OpenSM qos_sl2vl; IBA Vol 1 §7.6.6 (SLtoVLMappingTable)");
  def(f.add("vlarb_high", ParamKind::kCustom)
          .takes("OpenSM's \"VL:weight,...\" (up to 64 entries)", R"({"type": "string"})"),
      "vlarb_high", "\"0:4\"")
      .doc(
          "high-priority VL arbitration table: entries (VL, weight in 64-byte units, 0..255) "
          "served in turn, each sending its weight's bytes (the packet that crosses it "
          "finishes)")
      .source("OpenSM qos_vlarb_high; IBA Vol 1 §7.6.9");
  def(f.add("vlarb_low", ParamKind::kCustom)
          .takes("OpenSM's \"VL:weight,...\" (up to 64 entries)", R"({"type": "string"})"),
      "vlarb_low", "\"0:0,1:4,2:4,...\" up to the last data VL")
      .doc(
          "low-priority VL arbitration table, served when the high one has nothing or is at its "
          "limit")
      .source("OpenSM qos_vlarb_low; IBA Vol 1 §7.6.9");
  ParamBuilder hl = f.add("high_limit", ParamKind::kInt);
  hl.range(0, 255);
  if (cls == nullptr) {
    hl.def(int64_t{0});
  } else {
    hl.optional("fabric.infiniband.qos.high_limit");
  }
  hl.doc(
        "while a low-priority packet waits, at most this many 4096-byte units of high-priority "
        "data go before it (a packet started below the limit finishes); 0: one packet; 255: no "
        "limit")
      .source("OpenSM qos_high_limit (default 0); IBA Vol 1 §7.6.9 (LimitOfHighPriority)");
}

const ParamTable& ib_qos_class_params(const char* cls) {
  static const ParamTable ca = [] {
    ParamTable f("fabric.infiniband.qos.ca",
                 "the QoS tables of the NICs' ports (channel adapters), where they differ");
    add_ib_qos_keys(f, "ca");
    return f;
  }();
  static const ParamTable swe = [] {
    ParamTable f("fabric.infiniband.qos.swe",
                 "the QoS tables of the switches' external ports, where they differ");
    add_ib_qos_keys(f, "swe");
    return f;
  }();
  return std::string(cls) == "ca" ? ca : swe;
}

const ParamTable& ib_qos_params() {
  static const ParamTable t = [] {
    ParamTable f("fabric.infiniband.qos",
                 "SL-to-VL mapping and VL arbitration of every InfiniBand port, with OpenSM's "
                 "qos_* names and defaults (docs/infiniband.md)");
    add_ib_qos_keys(f, nullptr);
    f.add_object("ca", ib_qos_class_params("ca"))
        .doc("overrides for the NICs' ports (OpenSM's qos_ca_* options)")
        .source("OpenSM qos_ca_sl2vl, qos_ca_vlarb_high, qos_ca_vlarb_low, qos_ca_high_limit");
    f.add_object("swe", ib_qos_class_params("swe"))
        .doc("overrides for the switches' ports (OpenSM's qos_swe_* options)")
        .source("OpenSM qos_swe_sl2vl, qos_swe_vlarb_high, qos_swe_vlarb_low, qos_swe_high_limit");
    return f;
  }();
  return t;
}

const Fields<FabricConfig>& infiniband_params() {
  static const Fields<FabricConfig> t = [] {
    Fields<FabricConfig> f("fabric.infiniband", "native InfiniBand framing");
    f.boolean("grh", &FabricConfig::grh)
        .doc("whether every packet carries a global route header (40 bytes)")
        .source("IBA Vol 1 §8.3");
    f.add_object("credits", credits_params())
        .doc("credit-based link flow control, instead of PFC, on every port");
    f.integer("op_vls", &FabricConfig::op_vls, 1, 8)
        .doc(
            "data VLs of every port, VL0 .. VL(op_vls - 1): 1, 2, 4 or 8 (each with a "
            "`credits.vl_buffer` of its own)")
        .source("IBA PortInfo OperationalVLs; OpenSM max_op_vls (codes 1..4)");
    f.add_object("qos", ib_qos_params())
        .doc("SL-to-VL mapping and VL arbitration (OpenSM's qos_* options)");
    f.integer("head_of_queue_lifetime", &FabricConfig::hoq_lifetime, 0, 31)
        .doc(
            "a switch discards a packet that has waited this long at the head of an egress "
            "queue of a port facing another switch: 4.096 us x 2^value, 20 or more: never "
            "(0x12: about 1.07 s)")
        .source("OpenSM head_of_queue_lifetime (default 0x12); IBA HOQLife");
    f.integer("leaf_head_of_queue_lifetime", &FabricConfig::leaf_hoq_lifetime, 0, 31)
        .doc("the same for switch ports facing hosts (0x10: about 268 ms)")
        .source("OpenSM leaf_head_of_queue_lifetime (default 0x10)");
    return f;
  }();
  return t;
}

// One fault's window: from `at`, until `until` (absent: for good).
void add_window(ParamTable& f) {
  f.add("at", ParamKind::kTime).def(Time::zero()).doc("when it starts");
  f.add("until", ParamKind::kTime).optional("for good").doc("when it ends, later than `at`");
}

const ParamTable& link_down_params() {
  static const ParamTable t = [] {
    ParamTable f("faults.link_down", "every cable between two nodes goes down");
    f.add("a", ParamKind::kString).doc("one end (a node name)");
    f.add("b", ParamKind::kString).doc("the other end (a node name)");
    add_window(f);
    return f;
  }();
  return t;
}

const ParamTable& node_down_params() {
  static const ParamTable t = [] {
    ParamTable f("faults.node_down", "every cable of a node goes down");
    f.add("node", ParamKind::kString).doc("the node (its name)");
    add_window(f);
    return f;
  }();
  return t;
}

const ParamTable& bit_errors_params() {
  static const ParamTable t = [] {
    ParamTable f("faults.bit_errors", "random bit errors on every cable between two nodes");
    f.add("a", ParamKind::kString).doc("one end (a node name)");
    f.add("b", ParamKind::kString).doc("the other end (a node name)");
    f.add("ber", ParamKind::kNumber)
        .number_range(0.0, 1e-2)
        .doc("bit error rate: a frame of b bits is lost with probability 1 − (1 − ber)^b");
    return f;
  }();
  return t;
}

const ParamTable& pfc_storm_params() {
  static const ParamTable t = [] {
    ParamTable f("faults.pfc_storm", "a NIC keeps its neighbour paused");
    f.add("host", ParamKind::kCustom)
        .takes(
            "host",
            R"({"anyOf": [{"type": "string", "minLength": 1}, {"type": "integer", "minimum": 0}]})")
        .optional("`hosts` names them")
        .doc("the host whose NIC storms: its name or host index");
    f.add("hosts", ParamKind::kCustom)
        .takes("host set", R"({"$ref": "#/$defs/host_set"})")
        .optional("`host` names it")
        .doc(
            "several storming hosts at once, a host set (docs/traffic.md#host-sets); exactly one "
            "of `host` and `hosts`");
    f.add("priority", ParamKind::kInt).range(0, 7).def(int64_t{3}).doc("the paused priority");
    add_window(f);
    return f;
  }();
  return t;
}

}  // namespace

const Fields<FabricConfig>& fabric_params() {
  static const Fields<FabricConfig> t = [] {
    using F = FabricConfig;
    Fields<F> f("fabric", "transport and device parameters");
    f.choice("transport", &F::transport,
             std::vector<std::pair<std::string, Transport>>{{"roce_v2", Transport::kRoceV2},
                                                            {"infiniband", Transport::kInfiniband}})
        .doc(
            "the wire protocol: RoCE v2 over Ethernet, or native InfiniBand (docs/infiniband.md: "
            "LRH, BTH, ICRC, VCRC framing)");
    f.integer(
         "mtu", [](F& c) -> uint32_t& { return c.nic.mtu; }, 256, 4096)
        .unit("bytes")
        .doc(
            "RDMA path MTU: the largest payload per packet. Any value in range is accepted so "
            "that published set-ups with e.g. 1000-byte payloads can be rebuilt; on InfiniBand "
            "only 256, 512, 1024, 2048 or 4096")
        .source("IBTA: 256 … 4096 in powers of two");
    f.integer("ethernet_mtu", &F::ethernet_mtu, 1518, 16384)
        .when("transport", {"roce_v2"})
        .unit("bytes")
        .doc(
            "largest Ethernet frame, destination MAC through FCS; a packet with a full path-MTU "
            "payload must fit")
        .source("9216: common jumbo frame");
    f.add_object("roce", roce_params()).when("transport", {"roce_v2"}).doc("RoCE v2 framing");
    f.add_object("infiniband", infiniband_params())
        .when("transport", {"infiniband"})
        .doc("native InfiniBand framing");
    f.add_object("link", fabric_link_params()).doc("the default cable");
    f.add_object("nic", nic_params()).doc("the NIC model (docs/nic.md)");
    f.add_object("switch", switch_params()).doc("the switch model (docs/switch.md)");
    f.add_object("cc", cc_params())
        .doc("congestion control of every QP (docs/congestion-control.md)");
    return f;
  }();
  return t;
}

const ParamTable& window_params() {
  static const ParamTable t = [] {
    ParamTable f("output.window", "the measurement window of steady-state statistics");
    f.add("start", ParamKind::kTime)
        .optional("the start of the run")
        .doc(
            "the window's start: what happens after it counts (what happens at this very "
            "picosecond does not)");
    f.add("end", ParamKind::kTime)
        .min(Time::ps(1))
        .optional("the end of the run")
        .doc("the window's end, after `start`: what happens up to it, this picosecond included");
    return f;
  }();
  return t;
}

const Fields<OutputConfig>& output_params() {
  static const Fields<OutputConfig> t = [] {
    using O = OutputConfig;
    Fields<O> f("output", "what is written, and where");
    f.add("dir", ParamKind::kCustom)
        .takes("path", kNameSchema)
        .optional("out/<name>")
        .doc(
            "folder for every artefact of the run; `--out` overrides it (not part of the "
            "resolved scenario: where results go does not change them)");
    f.boolean("trace", &O::trace).doc("write `trace.h5` (docs/trace.md)");
    f.time("queue_interval", &O::queue_interval, Time::ns(1))
        .optional("off")
        .doc(
            "sample switch egress queue depths this often (`/queues`, sparse: only non-empty "
            "queues)");
    f.time("link_interval", &O::link_interval, Time::ns(1))
        .optional("off")
        .doc(
            "sample every link's cumulative counters this often (`/link_samples`: a row per "
            "direction at 0, then sparse: only directions whose counters changed)");
    f.boolean("pfc_events", &O::pfc_events)
        .def_from("trace")
        .doc("record every PFC frame sent or received by a switch (`/pfc`)");
    f.boolean("drop_events", &O::drop_events)
        .def_from("trace")
        .doc("record every packet a switch drops, with the reason (`/drops`)");
    f.boolean("flow_paths", &O::flow_paths)
        .def_from("trace")
        .doc("record the links each flow's data took (`/flow_paths`)");
    f.add("size_buckets", ParamKind::kCustom)
        .takes(
            "list of sizes, rising",
            R"({"type": "array", "items": {"anyOf": [{"type": "integer", "minimum": 1},)"
            R"( {"type": "string", "pattern": "^[0-9.eE+-]+(?:B|KB|MB|GB|TB|KiB|MiB|GiB|TiB|kB)?$"}]}})")
        .computed(R"(["10KB", "100KB", "1MB"])")
        .doc(
            "edges of the size buckets of `summary.json`'s `slowdown_by_size`: a flow of s bytes "
            "is in the bucket of the edges e_i <= s < e_(i+1), below the first edge in the "
            "first, at or above the last in the last; `[]`: one bucket");
    f.time("cc_interval", &O::cc_interval, Time::zero())
        .optional("off")
        .doc(
            "record every QP's congestion-control state (DCQCN: RC, RT, alpha) when it changes, "
            "at most one row per QP per this interval after its first (`/cc_samples`: the first "
            "change, the state at the end of each interval with a change, the last; `\"0s\"`: "
            "every change)");
    f.add_object("window", window_params())
        .doc(
            "the measurement window: per-flow bytes and goodput, link, PFC and queue statistics "
            "over it (docs/scenario.md, \"Measurement window\"); giving `start` or `end` also "
            "turns on exact queue time-averages");
    return f;
  }();
  return t;
}

const Fields<StopConfig>& stop_params() {
  static const Fields<StopConfig> t = [] {
    Fields<StopConfig> f("stop", "when to stop early");
    f.time("time", &StopConfig::time, Time::ps(1))
        .optional("when every flow has completed")
        .doc("stop when simulated time reaches this, even if traffic is still running");
    f.time("wall_time", &StopConfig::wall_time, Time::ps(1))
        .optional("no limit")
        .doc(
            "stop when the run has taken this much real (wall-clock) time, building "
            "included: status wall_time_limit, exit code 6, outputs marked partial and not "
            "deterministic (docs/reliability.md)");
    return f;
  }();
  return t;
}

const ParamTable& fault_params() {
  static const ParamTable t = [] {
    ParamTable f("faults", "one fault (docs/faults.md)");
    f.set_discriminator("kind", "what fails");
    f.add_variant("link_down", FaultKind::kLinkDown, link_down_params(),
                  "every cable between two nodes goes down, and up again at `until`");
    f.add_variant("node_down", FaultKind::kNodeDown, node_down_params(),
                  "every cable of a node goes down");
    f.add_variant("bit_errors", FaultKind::kBitErrors, bit_errors_params(),
                  "random bit errors on a cable");
    f.add_variant("pfc_storm", FaultKind::kPfcStorm, pfc_storm_params(),
                  "a NIC keeps its neighbour paused");
    return f;
  }();
  return t;
}

const ParamTable& scenario_params() {
  static const ParamTable t = [] {
    ParamTable f("scenario", "one run: fabric, topology, traffic, outputs and stop time");
    f.add("name", ParamKind::kString)
        .computed("the file name without `.json`")
        .schema(
            R"({"minLength": 1, "maxLength": 255, "pattern": "^(?!\\.\\.?$)[^/\\u0000-\\u001f]+$"})")
        .doc(
            "names the run; the default output folder is `out/<name>`, so it is one folder name: "
            "1 to 255 bytes, no `/` or control characters, not `.` or `..`");
    f.add("seed", ParamKind::kInt)
        .range(0, std::numeric_limits<int64_t>::max())
        .def(int64_t{1})
        .doc(
            "master seed; every component draws from its own stream keyed by this seed and its "
            "name");
    f.add_object("fabric", fabric_params()).doc("transport and device parameters");
    f.add_object("topology", topology_params()).required().doc("the network (docs/topologies.md)");
    f.add_objects("traffic", traffic_params()).doc("what the hosts send (docs/traffic.md)");
    f.add_objects("faults", fault_params())
        .doc("links and nodes going down, bit errors, PFC storms (docs/faults.md)");
    f.add_object("output", output_params()).doc("what is written, and where");
    f.add_object("stop", stop_params()).doc("when to stop early");
    return f;
  }();
  return t;
}

}  // namespace rdmasim
