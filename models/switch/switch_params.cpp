#include "models/switch/switch_params.h"

namespace rdmasim {
namespace {

using C = SwitchConfig;
using Choices = std::vector<std::pair<std::string, int64_t>>;

template <class E>
std::vector<std::pair<std::string, E>> choices(std::initializer_list<std::pair<const char*, E>> l) {
  std::vector<std::pair<std::string, E>> out;
  for (const auto& [n, v] : l) out.emplace_back(n, v);
  return out;
}

const Fields<C>& scheduler_params() {
  static const Fields<C> t = [] {
    Fields<C> f("fabric.switch.scheduler", "the egress scheduler of every port");
    f.priorities("strict", &C::strict_mask)
        .doc("priorities served first, highest first")
        .source("NVIDIA's RoCE defaults: CNPs (6) and control (7) strict");
    f.add("weights", ParamKind::kCustom)
        .takes("8 integers 1..1000",
               R"({"type": "array", "items": {"type": "integer", "minimum": 1, "maximum": 1000},)"
               R"( "minItems": 8, "maxItems": 8})")
        .computed("[1, 1, 1, 1, 1, 1, 1, 1]")
        .doc("deficit weighted round robin weights of the other priorities, one per priority")
        .source("DWRR (Shreedhar & Varghese, SIGCOMM 1995)");
    f.bytes("quantum", &C::dwrr_quantum, Bytes(9216))
        .doc("DWRR quantum per weight unit; at least the largest frame")
        .source("model");
    return f;
  }();
  return t;
}

const Fields<PfcConfig>& pfc_params() {
  static const Fields<PfcConfig> t = [] {
    using P = PfcConfig;
    Fields<P> f("fabric.switch.pfc", "priority flow control (IEEE 802.1Qbb) at ingress");
    f.priorities("lossless", &P::lossless_mask)
        .doc("priorities with PFC; the others are lossy (drop-tail)")
        .source("common RoCE lossless class 3");
    f.choice("threshold", &P::threshold,
             choices<PfcThreshold>(
                 {{"dynamic", PfcThreshold::kDynamic}, {"static", PfcThreshold::kStatic}}))
        .doc(
            "`dynamic`: pause when an ingress queue's shared use reaches (buffer − all headroom − "
            "all reserve − shared in use) >> `alpha_shift`, or once headroom is in use; resume "
            "when headroom is empty and shared use + `resume_offset` is at or below that "
            "threshold. `static`: pause when the queue holds `xoff` (later packets go to "
            "headroom), resume at `xon` or below")
        .source("HPCC simulator `switch-mmu.cc`");
    f.integer("alpha_shift", &P::alpha_shift, 0, 16)
        .doc("dynamic threshold divisor 2^shift (3: α = 1/8)")
        .source("HPCC simulator");
    f.bytes("resume_offset", &P::resume_offset)
        .doc("dynamic: resume when shared use + offset is at or below the threshold")
        .source("HPCC simulator: 3 KB");
    f.bytes("xoff", &P::xoff, Bytes(1))
        .doc("static: pause when the ingress queue holds this much")
        .source("illustrative");
    f.bytes("xon", &P::xon)
        .doc("static: resume at or below this; at most `xoff`")
        .source("illustrative");
    f.bytes("headroom", &P::headroom, Bytes(1))
        .word("auto", Bytes(0),
              "the worst case of Cisco c11-542809 from the port's link and the response "
              "delay of the neighbour it pauses (below)")
        .doc("headroom per ingress port and lossless priority")
        .source("Cisco white paper c11-542809");
    f.integer("small_packet_percentage", &P::small_packet_percentage, 0, 100)
        .unit("%")
        .doc(
            "share of the headroom's wire time that the automatic `headroom` takes to be "
            "minimum-size frames (64 B), each charged a whole `cell`; the rest frames of at least "
            "1 KB (below). Below 100 a lossless drop is possible and counted "
            "(lossless_drops_headroom_below_automatic)")
        .source("SONiC LOSSLESS_TRAFFIC_PATTERN: 100, the worst case");
    f.integer("quanta", &P::quanta, 1, 0xFFFF)
        .unit("512 bit times")
        .doc("pause time sent in each PFC frame")
        .source("802.1Qbb: 65535 is the largest");
    f.number("refresh", &P::refresh, 0.01, 0.99)
        .doc(
            "re-send the pause when this fraction of its time has passed and the queue is still "
            "congested")
        .source("model");
    f.time("response_delay", &P::response_delay)
        .doc(
            "how long this switch's MAC takes to act on a PFC frame it receives; the automatic "
            "headroom of a neighbouring switch's port covers it")
        .source("0 is an ideal MAC; 802.1Qbb bounds the real delay");
    return f;
  }();
  return t;
}

const Fields<EcnConfig::ByRate>& ecn_by_rate_params() {
  static const Fields<EcnConfig::ByRate> t = [] {
    using B = EcnConfig::ByRate;
    Fields<B> f("fabric.switch.ecn.by_rate", "RED thresholds for the ports of one link rate");
    f.rate("rate", &B::rate).required().doc("the link rate these thresholds apply to");
    f.bytes("kmin", &B::kmin).required().doc("no marks at or below this queue length");
    f.bytes("kmax", &B::kmax).required().doc("every packet marked above this; at least `kmin`");
    f.number("pmax", &B::pmax, 0, 1).required().doc("mark probability at kmax");
    return f;
  }();
  return t;
}

const Fields<C>& ecn_params() {
  static const Fields<C> t = [] {
    Fields<C> f("fabric.switch.ecn", "RED-style ECN marking on the egress queues");
    f.boolean("enabled", [](C& c) -> bool& { return c.ecn.enabled; })
        .doc("mark ECN-capable packets")
        .source("DCQCN paper §3");
    f.priorities("priorities", &C::ecn_mask).doc("queues that mark").source("RoCE class 3");
    f.bytes("kmin", [](C& c) -> Bytes& { return c.ecn.kmin; })
        .doc("no marks at or below this queue length")
        .source("DCQCN paper: 5 KB");
    f.bytes("kmax", [](C& c) -> Bytes& { return c.ecn.kmax; })
        .doc("every packet marked above this queue length; at least `kmin`")
        .source("DCQCN paper: 200 KB");
    f.number(
         "pmax", [](C& c) -> double& { return c.ecn.pmax; }, 0, 1)
        .doc("mark probability at kmax, rising linearly from 0 at kmin")
        .source("DCQCN paper: 1 %");
    f.choice("mark", &C::ecn_point,
             choices<EcnPoint>({{"enqueue", EcnPoint::kEnqueue}, {"dequeue", EcnPoint::kDequeue}}))
        .doc("decide when a packet joins its egress queue or when it leaves it")
        .source("model");
    f.add_objects("by_rate", ecn_by_rate_params())
        .doc(
            "thresholds keyed by link rate, for a fabric that mixes rates: a port whose link "
            "has one of these rates uses its entry, the others kmin, kmax and pmax above")
        .source("ns-3 KMIN_MAP / KMAX_MAP / PMAX_MAP (HPCC simulator)");
    return f;
  }();
  return t;
}

const Fields<C>& ecmp_params() {
  static const Fields<C> t = [] {
    Fields<C> f("fabric.switch.ecmp", "how a switch picks among equal-cost ports");
    f.choice("mode", &C::ecmp,
             choices<EcmpMode>({{"hash", EcmpMode::kHash},
                                {"spray", EcmpMode::kSpray},
                                {"adaptive", EcmpMode::kAdaptive}}))
        .doc(
            "`hash`: per flow, a hash of (source, destination, UDP source port) salted with a "
            "per-switch seed; `spray`: a random equal-cost port per packet; `adaptive`: per "
            "packet, the equal-cost port whose queue (same priority) holds the fewest bytes. "
            "Spraying and adaptive routing reorder packets: use `fabric.nic.loss_recovery` "
            "`\"selective_repeat\"`")
        .source("model");
    f.boolean("hash_dest_qp", &C::hash_dest_qp)
        .doc("also hash the BTH destination QP, spreading the QPs of one host pair")
        .source("NVIDIA Spectrum can");
    f.boolean("per_switch_seed", &C::per_switch_hash_seed)
        .doc(
            "each switch salts the hash with its own seed; `false`: one hash for all, which "
            "reproduces hash polarisation")
        .source("model");
    return f;
  }();
  return t;
}

const Fields<C>& deadlock_params() {
  static const Fields<C> t = [] {
    Fields<C> f("fabric.switch.deadlock_detection", "PFC deadlock detection");
    f.boolean("enabled", &C::deadlock_detection).doc("look for cycles of stuck paused queues");
    f.time("timeout", &C::deadlock_timeout, Time::us(1))
        .doc("how long every queue of a cycle must have been silent");
    f.boolean("stop", &C::deadlock_stop)
        .doc("stop the run when one is found; `false`: record the first and run on");
    return f;
  }();
  return t;
}

const Fields<WatchdogConfig>& watchdog_params() {
  static const Fields<WatchdogConfig> t = [] {
    using W = WatchdogConfig;
    Fields<W> f("fabric.switch.watchdog", "the PFC watchdog, as switch vendors implement it");
    f.boolean("enabled", &W::enabled).doc("watch for stormed queues");
    f.time("timeout", &W::timeout, Time::us(1))
        .doc("paused with packets waiting and nothing sent this long: the queue is stormed");
    f.time("restore", &W::restore, Time::us(1)).doc("how long a stormed queue is handled");
    f.choice("action", &W::action,
             choices<WatchdogAction>(
                 {{"drop", WatchdogAction::kDrop}, {"forward", WatchdogAction::kForward}}))
        .doc("drop the stormed queue's packets, or send them ignoring pauses");
    return f;
  }();
  return t;
}

}  // namespace

const Fields<SwitchConfig>& switch_params() {
  static const Fields<C> t = [] {
    Fields<C> f("fabric.switch", "the switch model (docs/switch.md)");
    f.time("latency", &C::latency)
        .group("forwarding")
        .doc(
            "act on a frame once it is whole, or once its first `cut_through_bytes` are in; a "
            "frame cannot finish leaving before it has finished arriving (a faster egress waits)")
        .source(
            "about 500 ns for a Broadcom Tomahawk, 300 ns in its reduced L2 mode (Juniper QFX5200 "
            "presentation, via ipSpace.net \"Broadcom Tomahawk 101\", 2015); 0 keeps formula-based "
            "checks simple");
    f.choice("forwarding", &C::forwarding,
             choices<Forwarding>({{"store_and_forward", Forwarding::kStoreAndForward},
                                  {"cut_through", Forwarding::kCutThrough}}))
        .group("forwarding")
        .doc("act on a frame once it is whole, or once its first `cut_through_bytes` are in")
        .source("model");
    f.bytes("cut_through_bytes", &C::cut_through_bytes, Bytes(1))
        .computed("64; on InfiniBand 8")
        .group("forwarding")
        .doc(
            "bytes (from the start of the frame on the wire) needed before a cut-through "
            "decision: on Ethernet the preamble and the Ethernet, IP and UDP headers; on "
            "InfiniBand the LRH, which holds the destination LID and the packet length")
        .source("model; IBA §7.7 (LRH)");
    f.add_choice("preset", Choices{})
        .optional("none")
        .group("buffer")
        .preset("trident_plus", {{"buffer", "\"9MB\""}, {"cell", "208"}},
                "46,080 cells of 208 B (port-buffers.forwardingplane.net, \"Broadcom Trident+\")")
        .preset("trident2", {{"buffer", "\"12MB\""}, {"cell", "208"}},
                "DCQCN paper §4 (40 GbE Trident II, 12 MB shared); cell as Trident+")
        .preset("tomahawk2", {{"buffer", "\"42MB\""}, {"cell", "208"}},
                "port-buffers.forwardingplane.net, \"Broadcom Tomahawk 2\" (42 MB on-chip); cell "
                "size assumed")
        .preset("hpcc", {{"buffer", "\"32MiB\""}, {"cell", "1"}},
                "the HPCC simulator's configuration (`BUFFER_SIZE 32`, MiB)")
        .doc("a known ASIC's buffer and cell size; explicit keys override it");
    f.bytes("buffer", &C::buffer, Bytes(1))
        .group("buffer")
        .doc("total packet buffer")
        .source("HPCC simulator: 32 MB");
    f.integer("cell", &C::cell, 1, 4096)
        .unit("bytes")
        .group("buffer")
        .doc("bytes per cell; each packet is charged whole cells")
        .source("model");
    f.bytes("reserve", &C::reserve)
        .group("buffer")
        .doc("guaranteed buffer per ingress port and priority")
        .source("HPCC simulator: 4 KiB");
    f.number("lossy_alpha", &C::lossy_alpha, 1.0 / 128, 128)
        .group("buffer")
        .doc(
            "lossy queues: drop when the egress queue holds more than alpha × the free shared "
            "pool, or when the pool is full")
        .source("Broadcom dynamic threshold");
    f.choice("trust", &C::trust, choices<Trust>({{"dscp", Trust::kDscp}, {"pcp", Trust::kPcp}}))
        .group("classification")
        .doc("classify by DSCP, or by the 802.1Q PCP (needs `fabric.roce.vlan`)")
        .source("model");
    f.add("dscp_map", ParamKind::kCustom)
        .takes("object of DSCP (\"0\"..\"63\") → priority 0..7",
               R"({"type": "object", "propertyNames": {"pattern": "^([0-9]|[1-5][0-9]|6[0-3])$"},)"
               R"( "additionalProperties": {"type": "integer", "minimum": 0, "maximum": 7}})")
        .optional("class selector: DSCP d to priority d >> 3")
        .group("classification")
        .doc(
            "overrides of the DSCP → priority map; by default RoCE data (26) is priority 3 and "
            "CNPs (48) priority 6")
        .source("NVIDIA's RoCE defaults");
    f.add_object("scheduler", scheduler_params()).group("classification").doc("egress scheduling");
    f.add_object("pfc", pfc_params()).doc("priority flow control");
    f.add_object("ecn", ecn_params()).doc("ECN marking");
    f.add_object("ecmp", ecmp_params()).group("forwarding").doc("equal-cost multipath");
    f.add_object("deadlock_detection", deadlock_params()).doc("PFC deadlock detection");
    f.add_object("watchdog", watchdog_params()).doc("the PFC watchdog");
    return f;
  }();
  return t;
}

}  // namespace rdmasim
