#include "models/nic/nic_params.h"

namespace rdmasim {

const Fields<NicConfig>& nic_params() {
  static const Fields<NicConfig> t = [] {
    Fields<NicConfig> f("fabric.nic", "the RoCE v2 NIC (docs/nic.md)");
    using C = NicConfig;
    f.integer("ack_interval", &C::ack_interval, 1, 1'000'000)
        .unit("packets")
        .doc("acknowledge every n in-sequence packets; the last of a message at once")
        .source("model choice (ConnectX coalesces adaptively)");
    f.integer("data_priority", &C::data_priority, 0, 7)
        .doc("traffic class of data, READ requests and READ responses")
        .source("common RoCE lossless class");
    f.integer("ack_priority", &C::ack_priority, 0, 7)
        .doc("traffic class of ACK and NAK")
        .source("ConnectX sends ACKs in the data's class");
    f.integer("cnp_priority", &C::cnp_priority, 0, 7)
        .doc("traffic class of CNPs")
        .source("ConnectX `cnp_802p_prio` default 6");
    f.integer("data_dscp", &C::data_dscp, 0, 63)
        .doc("DSCP of data packets")
        .source("ConnectX RoCE default DSCP 26");
    f.integer("ack_dscp", &C::ack_dscp, 0, 63)
        .def_from("data_dscp")
        .doc("DSCP of ACK and NAK")
        .source("as data (ConnectX)");
    f.integer("cnp_dscp", &C::cnp_dscp, 0, 63)
        .doc("DSCP of CNPs")
        .source("ConnectX `cnp_dscp` default 48");
    f.integer("timeout", &C::timeout, 0, 31)
        .doc("local ACK timeout exponent: 4.096 µs × 2^timeout (14: 67.108864 ms); 0 = infinite")
        .source("IBA §9.7.6.1.3; perftest/ConnectX 14");
    f.time("retransmit_timeout", &C::retransmit_timeout)
        .doc("if positive, the ACK timeout itself, replacing `timeout` (for tests and studies)")
        .source("model");
    f.integer("retry_cnt", &C::retry_cnt, 0, 7)
        .doc("retries (timeouts, sequence-error NAKs) without progress before the QP errors")
        .source("IBA §9.7.6.1.3; perftest 7");
    f.integer("rnr_retry", &C::rnr_retry, 0, 7)
        .doc("RNR NAK retries without progress; 7 = forever")
        .source("IBA §9.7.5.2.8; perftest 7");
    f.integer("min_rnr_timer", &C::min_rnr_timer, 0, 31)
        .doc("RNR timer code the responder puts in its RNR NAKs (12: 640 µs)")
        .source("IBA table 45; perftest 12");
    f.integer("max_rd_atomic", &C::max_rd_atomic, 1, 255)
        .doc("ORD: READs a requester QP may have outstanding")
        .source("ConnectX max 16");
    f.integer("max_dest_rd_atomic", &C::max_dest_rd_atomic, 1, 255)
        .doc("IRD: READs a responder QP accepts; ORD is the smaller of the two")
        .source("ConnectX max 16");
    f.choice("loss_recovery", &C::loss_recovery,
             std::vector<std::pair<std::string, LossRecovery>>{
                 {"go_back_n", LossRecovery::kGoBackN},
                 {"selective_repeat", LossRecovery::kSelectiveRepeat}})
        .doc("go-back-N (the responder drops out-of-order packets) or IRN-style selective repeat")
        .source("IBA; IRN (SIGCOMM 2018)");
    f.integer("sr_window", &C::sr_window, 64, 65536)
        .power_of_two()
        .unit("PSNs")
        .doc(
            "selective repeat: PSNs outstanding per QP and reorder window (512 × 4 KiB = 2 MiB, "
            "a 400G × 40 µs BDP)")
        .source("IRN's BDP cap");
    // Read by hand: its range ends below sr_window.
    f.add("sr_reorder_threshold", ParamKind::kInt)
        .range(1, 65535)
        .def(int64_t{0})
        .word("auto", int64_t{0},
              "8 with per-flow ECMP hashing; `sr_window` − 1 when switches spray or route "
              "adaptively (`fabric.switch.ecmp.mode`), where queues reorder packets by far more "
              "than any threshold and losses are left to the timeout")
        .unit("PSNs")
        .doc(
            "selective repeat: how far beyond a gap a packet must arrive before the gap is NAKed "
            "as lost, 1 … `sr_window` − 1; 1 is IRN (NAK at once)")
        .source("RFC 5681 §3.2");
    f.integer("receive_queue_depth", &C::receive_queue_depth, 0, int64_t{1} << 40)
        .unit("WQEs")
        .doc(
            "receive WQEs posted on each QP at the start (the default never runs out in "
            "practice)")
        .source("model");
    f.time("receive_replenish", &C::receive_replenish)
        .doc("the application posts one more receive WQE on each QP every interval; 0 = never")
        .source("model");
    f.time("pfc_response_delay", &C::pfc_response_delay)
        .doc(
            "from a PFC frame's full reception to the MAC acting on it; the automatic "
            "headroom of the switch port facing the NIC covers it")
        .source("0 is an ideal MAC; 802.1Qbb bounds the real delay");
    f.rate("rx_drain_rate", &C::rx_drain_rate)
        .word("unlimited", BitRate(), "no receive buffer builds and no PFC is generated")
        .doc("rate the receive buffer drains into host memory (PCIe)")
        .source("model");
    f.bytes("rx_buffer", &C::rx_buffer, Bytes(1))
        .computed(
            "262144 (256 KiB); on InfiniBand, 66 B per 64-byte block of the NIC's credits "
            "(op_vls x vl_buffer + shared_buffer: 540672 with the defaults)")
        .doc(
            "receive buffer per port; on InfiniBand with `rx_drain_rate`, at least its "
            "InfiniBand default, the most its credits let in (a packet is at most 66 B per block "
            "it is charged: its blocks of 64 B and the 2-byte VCRC)")
        .source("illustrative on RoCE; on InfiniBand the buffer the port advertises");
    f.bytes("rx_xoff", &C::rx_xoff, Bytes(1))
        .doc("per-priority occupancy that sends a pause; at most `rx_buffer`")
        .source("illustrative (leaves 96 KiB headroom)");
    f.bytes("rx_xon", &C::rx_xon)
        .doc("per-priority occupancy at or below which a resume is sent; at most `rx_xoff`")
        .source("illustrative");
    return f;
  }();
  return t;
}

}  // namespace rdmasim
