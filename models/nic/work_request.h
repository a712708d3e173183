// Work requests and completions: what an application posts on a QP's send
// queue and what it reads back from the completion queue (IBA Vol 1 §10.7,
// §11.4; verbs ibv_post_send / ibv_poll_cq).
#pragma once

#include <cstdint>

#include "sim/units.h"

namespace rdmasim {

// kWriteImm: RDMA WRITE with immediate (IBA §9.3.4): a WRITE whose last
// packet carries 4 bytes of immediate data, and which, like a SEND, consumes
// a receive WQE and completes at the responder.
enum class Verb : uint8_t { kWrite, kSend, kRead, kWriteImm };

inline const char* to_string(Verb v) {
  switch (v) {
    case Verb::kWrite:
      return "write";
    case Verb::kSend:
      return "send";
    case Verb::kRead:
      return "read";
    case Verb::kWriteImm:
      return "write_imm";
  }
  return "?";
}

// Completion status, after ibv_wc_status.
enum class WcStatus : uint8_t {
  kSuccess,           // IBV_WC_SUCCESS
  kRetryExceeded,     // IBV_WC_RETRY_EXC_ERR: retry_cnt timeouts/NAKs without progress
  kRnrRetryExceeded,  // IBV_WC_RNR_RETRY_EXC_ERR: rnr_retry RNR NAKs without progress
  kFlushed,           // IBV_WC_WR_FLUSH_ERR: the QP was in the error state
};

inline const char* to_string(WcStatus s) {
  switch (s) {
    case WcStatus::kSuccess:
      return "success";
    case WcStatus::kRetryExceeded:
      return "retry_exceeded";
    case WcStatus::kRnrRetryExceeded:
      return "rnr_retry_exceeded";
    case WcStatus::kFlushed:
      return "flushed";
  }
  return "?";
}

struct WorkRequest {
  uint64_t wr_id = 0;  // the poster's tag, returned in the completion
  Verb verb = Verb::kWrite;
  int64_t bytes = 0;  // message length; for a READ, the RETH DMA length
  uint32_t imm = 0;   // kWriteImm: the immediate data (ImmDt)
};

struct Completion {
  uint64_t wr_id = 0;       // requester side: the work request's tag
  uint64_t message_id = 0;  // the requesting NIC's message number
  uint32_t qpn = 0;         // the local QP
  uint32_t peer = 0;        // the remote host
  Verb verb = Verb::kWrite;
  WcStatus status = WcStatus::kSuccess;
  int64_t bytes = 0;
  bool started = false;  // its first packet (a READ: its request) was sent
  Time posted;           // when the work request was posted
  Time first_tx;         // start of transmission of its first packet (a READ: its request)
  Time completed;    // requester: last ACK / last READ response arrived; responder: message whole
  uint32_t imm = 0;  // responder, kWriteImm: the immediate data (ibv_wc.imm_data)
};

}  // namespace rdmasim
