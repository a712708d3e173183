// Parameters of the RDMA NIC model (scenario key `fabric.nic`, plus the
// fabric-wide path MTU). Every field, its unit, default and source is
// documented in docs/nic.md; names follow the verbs attributes of
// ibv_modify_qp (IBA Vol 1 §11.2.4.2) where one exists.
#pragma once

#include <cstdint>

#include "models/proto/ib_qos.h"
#include "sim/units.h"

namespace rdmasim {

enum class LossRecovery : uint8_t {
  kGoBackN,          // IBA RC: the responder drops out-of-order packets
  kSelectiveRepeat,  // IRN (SIGCOMM 2018): out-of-order placement, SACK, selective retransmission
};

struct NicConfig {
  // RDMA path MTU: the largest payload per packet (`fabric.mtu`). IBTA
  // defines 256..4096 in powers of two; any value in that range is accepted
  // so that published set-ups with e.g. 1000-byte payloads can be rebuilt.
  uint32_t mtu = 4096;
  // The responder acknowledges every `ack_interval` in-order packets; the last
  // packet of a message is always acknowledged at once.
  int ack_interval = 1;

  // ---- classification: traffic class (PCP / priority) and DSCP ----
  uint8_t data_priority = 3;  // data, READ requests and READ responses
  uint8_t ack_priority = 3;   // ACK and NAK
  uint8_t cnp_priority = 6;   // RoCE v2 CNP (ConnectX `cnp_802p_prio`)
  uint8_t data_dscp = 26;     // ConnectX default RoCE DSCP
  uint8_t ack_dscp = 26;      // defaults to data_dscp
  uint8_t cnp_dscp = 48;      // ConnectX `cnp_dscp`
  // InfiniBand: the port's SL-to-VL table (IBA §7.6.6). Data and ACKs
  // travel on the SLs data_priority and ack_priority (or a flow's own SL,
  // RdmaNic::set_qp_sl), on the VLs this maps them to. Identity on RoCE,
  // where the lane is the priority.
  Sl2VlTable sl2vl = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};

  // ---- reliability (ibv_modify_qp attributes) ----
  // Local ACK timeout: 4.096 us x 2^timeout (IBA §9.7.6.1.3); 0 = infinite.
  int timeout = 14;
  // If positive, replaces 4.096 us x 2^timeout (for tests and studies).
  Time retransmit_timeout = Time::zero();
  // Retries after a timeout or a sequence-error NAK without progress before
  // the QP goes to the error state (3 bits, IBA §9.7.6.1.3).
  int retry_cnt = 7;
  // Retries after an RNR NAK; 7 means retry forever (IBA §9.7.5.2.8).
  int rnr_retry = 7;
  // RNR NAK timer code this NIC's responder puts in its RNR NAKs (IBA table 45).
  int min_rnr_timer = 12;
  // Outstanding READs a requester QP may have (ORD, `max_rd_atomic`) and a
  // responder QP accepts (IRD, `max_dest_rd_atomic`). ConnectX: 16.
  int max_rd_atomic = 16;
  int max_dest_rd_atomic = 16;
  LossRecovery loss_recovery = LossRecovery::kGoBackN;
  // Selective repeat: PSNs a requester may have outstanding beyond the
  // cumulative ACK, and the responder's reorder window (a power of two).
  uint32_t sr_window = 512;
  // Selective repeat: a packet this many PSNs beyond a gap makes the
  // responder NAK it (the gap is taken as a loss); a nearer one is
  // acknowledged with SACK only (reordering tolerated). 1: NAK at once (IRN).
  uint32_t sr_reorder_threshold = 8;

  // ---- receive queue (SEND needs a posted receive WQE) ----
  // Receive WQEs posted on each QP at the start.
  int64_t receive_queue_depth = int64_t{1} << 30;
  // The application posts one more receive WQE on each QP every interval
  // (zero: none are added).
  Time receive_replenish = Time::zero();

  // ---- PFC at the NIC ----
  // Time from a PFC frame's full arrival to the MAC acting on it.
  Time pfc_response_delay = Time::zero();
  // Receive buffer drained into host memory at rx_drain_rate (zero:
  // unlimited, the buffer never builds and no PFC is generated). Per
  // priority, occupancy at or above rx_xoff sends a pause, refreshed while
  // above rx_xon; falling below rx_xon sends a resume.
  BitRate rx_drain_rate;
  Bytes rx_buffer = Bytes::kib(256);
  Bytes rx_xoff = Bytes::kib(160);
  Bytes rx_xon = Bytes::kib(128);
};

}  // namespace rdmasim
