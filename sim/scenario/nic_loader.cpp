// Reads scenario key `fabric.nic` (docs/nic.md) into NicConfig.
#include <bit>

#include "sim/scenario/loader_parts.h"

namespace rdmasim {

void read_nic(JsonReader r, NicConfig& nic) {
  nic.ack_interval = static_cast<int>(r.integer("ack_interval", 1, 1, 1'000'000));
  nic.data_priority = static_cast<uint8_t>(r.integer("data_priority", 3, 0, 7));
  nic.ack_priority = static_cast<uint8_t>(r.integer("ack_priority", 3, 0, 7));
  nic.cnp_priority = static_cast<uint8_t>(r.integer("cnp_priority", 6, 0, 7));
  nic.data_dscp = static_cast<uint8_t>(r.integer("data_dscp", 26, 0, 63));
  nic.ack_dscp = static_cast<uint8_t>(r.integer("ack_dscp", nic.data_dscp, 0, 63));
  nic.cnp_dscp = static_cast<uint8_t>(r.integer("cnp_dscp", 48, 0, 63));

  nic.timeout = static_cast<int>(r.integer("timeout", 14, 0, 31));
  nic.retransmit_timeout = r.time("retransmit_timeout", Time::zero());
  nic.retry_cnt = static_cast<int>(r.integer("retry_cnt", 7, 0, 7));
  nic.rnr_retry = static_cast<int>(r.integer("rnr_retry", 7, 0, 7));
  nic.min_rnr_timer = static_cast<int>(r.integer("min_rnr_timer", 12, 0, 31));
  nic.max_rd_atomic = static_cast<int>(r.integer("max_rd_atomic", 16, 1, 255));
  nic.max_dest_rd_atomic = static_cast<int>(r.integer("max_dest_rd_atomic", 16, 1, 255));
  nic.loss_recovery = r.choice<LossRecovery>(
      "loss_recovery",
      {{"go_back_n", LossRecovery::kGoBackN}, {"selective_repeat", LossRecovery::kSelectiveRepeat}},
      LossRecovery::kGoBackN);
  const int64_t window = r.integer("sr_window", 512, 64, 65536);
  if (!std::has_single_bit(static_cast<uint64_t>(window))) {
    r.fail("sr_window", std::to_string(window) + " is not a power of two",
           "a power of two from 64 to 65536");
  }
  nic.sr_window = static_cast<uint32_t>(window);
  // "auto" (0 here) is settled by read_fabric once the switch's ECMP mode is
  // known: 8 with per-flow hashing, the whole window with spraying.
  if (const nlohmann::json* t = r.raw("sr_reorder_threshold");
      t != nullptr && !(t->is_string() && *t == "auto")) {
    nic.sr_reorder_threshold =
        static_cast<uint32_t>(r.integer("sr_reorder_threshold", std::nullopt, 1, window - 1));
  } else {
    nic.sr_reorder_threshold = 0;
    r.resolve("sr_reorder_threshold", "auto");
  }

  nic.receive_queue_depth = r.integer("receive_queue_depth", int64_t{1} << 30, 0, int64_t{1} << 40);
  nic.receive_replenish = r.time("receive_replenish", Time::zero());

  nic.pfc_response_delay = r.time("pfc_response_delay", Time::zero());
  // The drain rate: a rate, or "unlimited" (the default: no buffer builds).
  const nlohmann::json* drain = r.raw("rx_drain_rate");
  if (drain == nullptr || (drain->is_string() && *drain == "unlimited")) {
    r.resolve("rx_drain_rate", "unlimited");
    nic.rx_drain_rate = BitRate();
  } else {
    nic.rx_drain_rate = r.rate("rx_drain_rate", std::nullopt);
  }
  nic.rx_buffer = r.bytes("rx_buffer", Bytes::kib(256), Bytes(1));
  nic.rx_xoff = r.bytes("rx_xoff", Bytes::kib(160), Bytes(1));
  nic.rx_xon = r.bytes("rx_xon", Bytes::kib(128));
  if (nic.rx_xoff > nic.rx_buffer) {
    r.fail("rx_xoff", std::to_string(nic.rx_xoff.count()) + " bytes exceeds rx_buffer",
           "at most rx_buffer (" + std::to_string(nic.rx_buffer.count()) + " bytes)");
  }
  if (nic.rx_xon > nic.rx_xoff) {
    r.fail("rx_xon", std::to_string(nic.rx_xon.count()) + " bytes exceeds rx_xoff",
           "at most rx_xoff (" + std::to_string(nic.rx_xoff.count()) + " bytes)");
  }
  r.finish();
}

}  // namespace rdmasim
