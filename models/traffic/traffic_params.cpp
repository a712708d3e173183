#include "models/traffic/traffic_params.h"

#include "models/cc/cc_algorithm.h"
#include "models/collective/collective_spec.h"
#include "models/nic/work_request.h"
#include "models/traffic/flow_size_cdf.h"
#include "models/traffic/patterns.h"

namespace rdmasim {
namespace {

constexpr const char* kHostSchema =
    R"({"anyOf": [{"type": "string", "minLength": 1}, {"type": "integer", "minimum": 0}]})";

// A host set's schema is recursive: sim/scenario/host_set.h defines it in
// the scenario schema's $defs.
std::string host_set_schema() { return R"({"$ref": "#/$defs/host_set"})"; }

// A built-in name, a path (a string with '/' or '.'), or the points inline.
std::string cdf_schema() {
  std::string names;
  for (const BuiltinCdf& c : builtin_cdfs()) {
    names += (names.empty() ? "\"" : ", \"") + std::string(c.name) + "\"";
  }
  return R"({"anyOf": [{"enum": [)" + names + R"(]}, {"type": "string", "pattern": "[/.]"},)" +
         R"( {"type": "array", "items": {"type": "array", "items": {"type": "number"},)" +
         R"( "minItems": 2, "maxItems": 2}}]})";
}

// The keys every kind shares: size (except background; what it means
// differs), start, op, name, rate, qps.
void add_common(ParamTable& f, const char* size_doc) {
  if (size_doc != nullptr) f.add("size", ParamKind::kBytes).doc(size_doc);
  f.add("start", ParamKind::kTime)
      .group("common")
      .def(Time::zero())
      .doc(
          "when the item starts: the post time of its flows (plus `jitter`, `stagger`, or the "
          "arrival times of `background`)");
  f.add_choice("op", std::vector<std::pair<std::string, Verb>>{{"write", Verb::kWrite},
                                                               {"write_imm", Verb::kWriteImm},
                                                               {"send", Verb::kSend},
                                                               {"read", Verb::kRead}})
      .group("common")
      .def(static_cast<int64_t>(Verb::kWrite))
      .doc(
          "RDMA WRITE, WRITE with immediate (consumes a receive WQE at the responder, which gets a "
          "completion), SEND or READ, for every flow of the item; a READ's data flows from `dst` "
          "to `src` (the requester), at most 2^31 bytes per QP (the largest RC message)");
  f.add("name", ParamKind::kString)
      .group("common")
      .computed("\"<kind>[i]\" (a flow: \"\")")
      .doc("prefix of the flows' names (`i` is the item's position in `traffic`)");
  f.add("rate", ParamKind::kRate)
      .group("common")
      .optional("line rate")
      .doc(
          "pace every flow of the item to this rate (its QPs share it): the NIC's per-QP rate "
          "limiter");
  f.add_object("cc", cc_item_params())
      .group("common")
      .optional("fabric.cc")
      .doc(
          "congestion control of this item's flows, read over fabric.cc's (its keys not given "
          "are fabric.cc's when the algorithm is the same)");
  f.add("qps", ParamKind::kInt)
      .group("common")
      .range(1, 256)
      .def(int64_t{1})
      .doc(
          "stripe each flow over this many QP pairs, each with its own UDP source port (ECMP "
          "entropy), like NCCL's `NCCL_IB_QPS_PER_CONNECTION`; the flow completes when all its "
          "parts have")
      .source("NCCL");
  f.add("sl", ParamKind::kInt)
      .group("common")
      .range(0, 15)
      .optional("fabric.nic.data_priority for data, ack_priority for ACKs")
      .doc(
          "InfiniBand: the service level of the item's QPs, data and ACKs both (the SL of their "
          "address vector); each port maps it to a VL by fabric.infiniband.qos.sl2vl")
      .source("IBA Vol 1 §7.6 (service levels and virtual lanes)");
}

const ParamTable& flow_params() {
  static const ParamTable t = [] {
    ParamTable f("traffic.flow", "one message between two hosts");
    f.add("src", ParamKind::kCustom).takes("host", kHostSchema).doc("the requester");
    f.add("dst", ParamKind::kCustom)
        .takes("host", kHostSchema)
        .doc("the responder (for a READ, where the data comes from); not `src`");
    add_common(f, "message length in bytes");
    return f;
  }();
  return t;
}

const ParamTable& incast_params() {
  static const ParamTable t = [] {
    ParamTable f("traffic.incast", "N senders to one receiver");
    f.add("dst", ParamKind::kCustom).takes("host", kHostSchema).doc("the receiver");
    f.add("senders", ParamKind::kCustom)
        .takes("host set", host_set_schema())
        .doc("who sends; `dst` may not be among them");
    add_common(f, "bytes **per sender**");
    f.add("jitter", ParamKind::kTime)
        .def(Time::zero())
        .doc(
            "each sender's flow is posted at `start + U`, U uniform on the whole picoseconds 0 … "
            "jitter, drawn per sender in `senders` order; `0s` posts all at `start` exactly");
    return f;
  }();
  return t;
}

const ParamTable& permutation_params() {
  static const ParamTable t = [] {
    using Pattern = PermutationParams::Pattern;
    ParamTable f("traffic.permutation", "every host sends to one other, every host receives once");
    f.add("hosts", ParamKind::kCustom)
        .takes("host set", host_set_schema())
        .def(std::string("all"))
        .doc("the hosts that take part (n ≥ 2)");
    f.add_choice("pattern",
                 std::vector<std::pair<std::string, Pattern>>{{"random", Pattern::kRandom},
                                                              {"shift", Pattern::kShift}})
        .def(static_cast<int64_t>(Pattern::kRandom))
        .doc("how receivers are chosen");
    f.add("shift", ParamKind::kInt)
        .range(1, 1'000'000)
        .when("pattern", {"shift"})
        .doc("the k-th host sends to host (k + shift) mod n of `hosts`; 1 … n−1");
    f.add_choice(
         "across",
         std::vector<std::pair<std::string, int64_t>>{{"none", 0}, {"leaf", 1}, {"group", 2}})
        .def(int64_t{0})
        .when("pattern", {"random"})
        .doc("no host sends to a host of its own leaf / group");
    add_common(f, "bytes each host sends");
    return f;
  }();
  return t;
}

const ParamTable& all_to_all_params() {
  static const ParamTable t = [] {
    ParamTable f("traffic.all_to_all", "every host sends to every other, in rounds");
    f.add("hosts", ParamKind::kCustom)
        .takes("host set", host_set_schema())
        .def(std::string("all"))
        .doc("n ≥ 2 hosts");
    add_common(f, "bytes each host sends to each other");
    f.add("stagger", ParamKind::kTime)
        .def(Time::zero())
        .doc("round r is posted at start + (r − 1) × stagger; `0s` posts everything at `start`");
    f.add("max_flows", ParamKind::kInt)
        .range(1, std::numeric_limits<int64_t>::max())
        .def(kDefaultMaxFlows)
        .doc(
            "an error if the item would make more flows than this (n × (n − 1) for n hosts; a "
            "guard against running out of memory on a large topology)");
    return f;
  }();
  return t;
}

const ParamTable& background_params() {
  static const ParamTable t = [] {
    ParamTable f("traffic.background",
                 "Poisson arrivals per host at a target load, sizes from a flow-size CDF");
    f.add("hosts", ParamKind::kCustom)
        .takes("host set", host_set_schema())
        .def(std::string("all"))
        .doc("the hosts that send and receive (n ≥ 2)");
    f.add("load", ParamKind::kNumber)
        .number_range(0.0, 1.0, true)
        .doc("offered load of each host, as a fraction of the rate of its link (its NIC port)");
    f.add("cdf", ParamKind::kCustom)
        .takes("CDF name, file, or [[bytes, percent], ...]", cdf_schema())
        .doc(
            "flow sizes: `websearch`, `fb_hadoop`, `alistorage`, `google_rpc`, a file of "
            "\"<bytes> <percent>\" lines, or the points inline");
    f.add("duration", ParamKind::kTime)
        .min(Time::ps(1))
        .doc("arrivals in the closed window [start, start + duration] are kept");
    add_common(f, nullptr);
    f.add("max_flows", ParamKind::kInt)
        .range(1, std::numeric_limits<int64_t>::max())
        .def(kDefaultMaxFlows)
        .doc(
            "an error if the item would make more flows (a guard against a mistyped load or "
            "duration)");
    return f;
  }();
  return t;
}

// An nccl-tests size sweep of a collective (docs/collectives.md#sweeps):
// the options of all_reduce_perf & co., -b -e -f -i -n -w.
const ParamTable& sweep_params() {
  static const ParamTable t = [] {
    ParamTable f("traffic.collective.sweep", "an nccl-tests size sweep of the collective");
    f.add("min_bytes", ParamKind::kBytes)
        .min(Bytes(1))
        .required()
        .doc(
            "the first size (nccl-tests -b); every size is rounded down to whole float32 "
            "elements, a multiple of 4 (all_reduce by ring or tree, as nccl-tests) or of 4 x n x "
            "channels (the others, as `size`), and this one must stay at least that")
        .source("nccl-tests: -b, --minbytes");
    f.add("max_bytes", ParamKind::kBytes)
        .min(Bytes(1))
        .required()
        .doc("the last size at most (nccl-tests -e); at least min_bytes")
        .source("nccl-tests: -e, --maxbytes");
    f.add("step_bytes", ParamKind::kBytes)
        .min(Bytes(1))
        .optional("sizes by step_factor")
        .doc(
            "each size is the one before plus this, instead of times step_factor (nccl-tests -i "
            "with -f 1)")
        .source("nccl-tests: -i, --stepbytes");
    f.add("step_factor", ParamKind::kInt)
        .range(2, 1024)
        .def(int64_t{2})
        .when_absent("step_bytes")
        .doc("each size is the one before times this (nccl-tests -f; not with step_bytes)")
        .source("nccl-tests: -f, --stepfactor");
    f.add("iters", ParamKind::kInt)
        .range(1, 1'000'000)
        .def(int64_t{20})
        .doc("timed iterations per size; its time is their mean (nccl-tests -n)")
        .source("nccl-tests: -n, --iters, default 20");
    f.add("warmup_iters", ParamKind::kInt)
        .range(0, 1'000'000)
        .def(int64_t{5})
        .doc("untimed iterations per size, before its timed ones (nccl-tests -w)")
        .source("nccl-tests: -w, --warmup_iters, default 5");
    return f;
  }();
  return t;
}

// A collective (docs/collectives.md): its own workload, not flows.
const ParamTable& collective_params() {
  static const ParamTable t = [] {
    ParamTable f("traffic.collective", "a collective operation over ranks, as NCCL runs it");
    f.add_choice("op",
                 std::vector<std::pair<std::string, CollectiveOp>>{
                     {"all_reduce", CollectiveOp::kAllReduce},
                     {"all_gather", CollectiveOp::kAllGather},
                     {"reduce_scatter", CollectiveOp::kReduceScatter}})
        .required()
        .doc("the operation, as nccl-tests names it (all_reduce_perf, ...)")
        .source("nccl-tests");
    f.add_object("sweep", sweep_params())
        .optional("one size, `size`")
        .doc(
            "run sizes from min_bytes to max_bytes one after another, as nccl-tests does, and "
            "report its table")
        .source("nccl-tests");
    f.add("size", ParamKind::kBytes)
        .min(Bytes(1))
        .when_absent("sweep")
        .doc(
            "bytes as nccl-tests reports them: the whole buffer (all_reduce), the gathered output "
            "(all_gather) or the input (reduce_scatter); each rank owns size / n. all_reduce by "
            "ring or tree: a multiple of 4 (float32 elements, any count, as NCCL takes it); "
            "otherwise a multiple of 4 x n x channels (split evenly over ranks and channels)")
        .source("nccl-tests");
    f.add_choice("algorithm",
                 std::vector<std::pair<std::string, CollectiveAlgorithm>>{
                     {"ring", CollectiveAlgorithm::kRing},
                     {"tree", CollectiveAlgorithm::kTree},
                     {"hierarchical", CollectiveAlgorithm::kHierarchical}})
        .def(static_cast<int64_t>(CollectiveAlgorithm::kRing))
        .doc(
            "ring: one ring over the ranks in their order, per channel (NCCL_ALGO=Ring; on whole "
            "servers rail-aligned, see cross_nic); tree: NCCL's double binary tree over the ranks "
            "in their order (on whole servers over the servers, with a chain of each server's "
            "GPUs, see cross_nic), both trees in every channel, each on half its data "
            "(NCCL_ALGO=Tree; all_reduce only); hierarchical: reduce-scatter inside each server "
            "over NVLink, a "
            "ring all-reduce of each GPU's shard across the servers on its rail, all-gather "
            "inside the server, pipelined chunk by chunk (all_reduce only, on whole servers of a "
            "rail_optimized fabric with NVLink, at least 2 of at least 2 GPUs)")
        .source("NCCL; CASES.md V11");
    f.add("cross_nic", ParamKind::kBool)
        .def(false)
        .doc(
            "false: where the ranks are whole servers of a rail_optimized fabric with NVLink (at "
            "least 2 of at least 2 GPUs), ring and tree channel j enter and leave every server on "
            "rail j: its ring runs server by server, each from GPU j mod g on, and the server's "
            "last GPU reaches rail j's NIC over NVLink through GPU j (NCCL's PXN); its trees are "
            "over the servers, each server's GPUs chained from GPU j mod g on, which links to the "
            "parent and child servers (NCCL's TREE pattern); true: one ring, or two trees, over "
            "the ranks in their order, whatever NIC that takes")
        .source("NCCL: NCCL_CROSS_NIC, NCCL_PXN_DISABLE");
    f.add("ranks", ParamKind::kCustom)
        .takes("host set", host_set_schema())
        .def(std::string("all"))
        .doc(
            "the ranks in ring order, at least 2 (a host set, docs/traffic.md#host-sets; \"all\" "
            "leaves out a rail_optimized fabric's `ufm`); rank r runs on the r-th host of the set "
            "(one GPU per host)");
    f.add_choice(
         "placement",
         std::vector<std::pair<std::string, RankPlacement>>{{"given", RankPlacement::kGiven},
                                                            {"server", RankPlacement::kServer},
                                                            {"rail", RankPlacement::kRail},
                                                            {"random", RankPlacement::kRandom}})
        .def(static_cast<int64_t>(RankPlacement::kGiven))
        .doc(
            "how ranks map onto the hosts of `ranks`: given: rank r on the r-th host of the set; "
            "server: server by server, GPUs in index order (on a fabric without servers, host "
            "index order); rail: GPU 0 of every server, then GPU 1, ... (a rail_optimized "
            "fabric's servers only); random: a uniformly random permutation of the set, drawn "
            "with the item's stream. Whole servers with cross_nic false are rail-aligned "
            "whatever the placement")
        .source("mpirun --map-by slot / node; NCCL ranks follow the launcher's");
    f.add("channels", ParamKind::kInt)
        .range(1, 32)
        .def(int64_t{1})
        .doc("rings side by side, each carrying size / channels on QPs of its own (NCCL channels)")
        .source("NCCL: NCCL_MIN_NCHANNELS, MAXCHANNELS 32");
    f.add("qps_per_connection", ParamKind::kInt)
        .range(1, 32)
        .def(int64_t{1})
        .doc(
            "QP pairs per connection; each element is split over them as NCCL splits a "
            "transfer: every QP but the last takes ceil(ceil(b / qps) / 128) x 128 bytes of an "
            "element of b bytes, the last what is left, each part a WRITE with immediate on its "
            "own QP (and UDP source port)")
        .source("NCCL: NCCL_IB_QPS_PER_CONNECTION, default 1; NCCL_IB_SPLIT_DATA_ON_QPS=1");
    f.add("sl", ParamKind::kInt)
        .range(0, 15)
        .optional("fabric.nic.data_priority for data, ack_priority for ACKs")
        .doc(
            "InfiniBand: the service level of every QP of the collective, its data, FIFO writes "
            "and ACKs (NCCL_IB_SL); each port maps it to a VL by fabric.infiniband.qos.sl2vl")
        .source("NCCL: NCCL_IB_SL, default 0; IBA Vol 1 §7.6");
    f.add("iterations", ParamKind::kInt)
        .range(1, 1'000'000)
        .def(int64_t{1})
        .when_absent("sweep")
        .doc("times the collective runs, one after another on every rank");
    f.add("gap", ParamKind::kTime)
        .def(Time::zero())
        .doc("each rank's compute time between the end of its iteration and the start of its next");
    f.add("start", ParamKind::kTime)
        .def(Time::zero())
        .doc("when every rank starts its first iteration");
    f.add("reduce_rate", ParamKind::kRate)
        .optional("free")
        .doc(
            "speed of the reduction at one rank, per channel, as a rate of input data: an element "
            "of b bytes to reduce is usable 8 b / reduce_rate after it arrived (or after the "
            "reduction before it, one after another per channel)");
    f.add("nccl_buffsize", ParamKind::kBytes)
        .min(Bytes(8))
        .def(Bytes(kNcclBuffsize))
        .doc("each connection's receive buffer, cut into nccl_steps slots (NCCL_BUFFSIZE)")
        .source("NCCL: NCCL_BUFFSIZE, default 4 MiB");
    f.add("nccl_steps", ParamKind::kInt)
        .range(2, 1024)
        .def(int64_t{kNcclSteps})
        .doc(
            "slots per connection buffer: elements of at most nccl_buffsize / nccl_steps bytes in "
            "flight (NCCL_STEPS)")
        .source("NCCL: NCCL_STEPS = 8 (src/include/device.h)");
    f.add("name", ParamKind::kString)
        .computed("\"collective[i]\"")
        .doc("the collective's name in the outputs (`i` is the item's position in `traffic`)");
    f.add_object("cc", cc_item_params())
        .optional("fabric.cc")
        .doc("congestion control of the collective's QPs, read over fabric.cc's");
    return f;
  }();
  return t;
}

}  // namespace

const ParamTable& traffic_params() {
  static const ParamTable t = [] {
    ParamTable f("traffic", "one traffic item (docs/traffic.md)");
    f.set_discriminator("kind", "the pattern");
    f.add_variant("flow", TrafficKind::kFlow, flow_params(), "one message between two hosts");
    f.add_variant("incast", TrafficKind::kIncast, incast_params(), "N senders to one receiver");
    f.add_variant("permutation", TrafficKind::kPermutation, permutation_params(),
                  "every host sends to one other: random (optionally across leaves) or a shift");
    f.add_variant("all_to_all", TrafficKind::kAllToAll, all_to_all_params(),
                  "every host sends to every other, in rounds");
    f.add_variant("background", TrafficKind::kBackground, background_params(),
                  "Poisson arrivals per host at a target load, sizes from a flow-size CDF");
    f.add_variant("collective", TrafficKind::kCollective, collective_params(),
                  "AllReduce, AllGather or ReduceScatter over ranks, as NCCL runs it");
    return f;
  }();
  return t;
}

}  // namespace rdmasim
