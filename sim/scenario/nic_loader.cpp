// Reads scenario key `fabric.nic` (docs/nic.md) into NicConfig; its keys,
// defaults and ranges are models/nic/nic_params.cpp.
#include "sim/scenario/loader_parts.h"

namespace rdmasim {

void read_nic(JsonReader r, NicConfig& nic, bool pfc) {
  r.read(nic);
  // "auto" (0 here) is settled by read_fabric once the switch's ECMP mode is
  // known: 8 with per-flow hashing, the whole window with spraying.
  nic.sr_reorder_threshold =
      static_cast<uint32_t>(r.integer("sr_reorder_threshold", 1, nic.sr_window - 1));
  // The NIC's PFC thresholds; an InfiniBand port runs credits instead.
  if (pfc && nic.rx_xoff > nic.rx_buffer) {
    r.fail("rx_xoff", std::to_string(nic.rx_xoff.count()) + " bytes exceeds rx_buffer",
           "at most rx_buffer (" + std::to_string(nic.rx_buffer.count()) + " bytes)");
  }
  if (pfc && nic.rx_xon > nic.rx_xoff) {
    r.fail("rx_xon", std::to_string(nic.rx_xon.count()) + " bytes exceeds rx_xoff",
           "at most rx_xoff (" + std::to_string(nic.rx_xoff.count()) + " bytes)");
  }
  r.finish();
}

}  // namespace rdmasim
