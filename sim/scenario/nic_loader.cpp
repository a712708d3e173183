// Reads scenario key `fabric.nic` (docs/nic.md) into NicConfig.
#include "sim/scenario/loader_parts.h"

namespace rdmasim {

void read_nic(JsonReader r, NicConfig& nic) {
  nic.ack_interval = static_cast<int>(r.integer("ack_interval", 1, 1, 1'000'000));
  nic.data_priority = static_cast<uint8_t>(r.integer("data_priority", 3, 0, 7));
  nic.ack_priority = static_cast<uint8_t>(r.integer("ack_priority", 3, 0, 7));
  r.finish();
}

}  // namespace rdmasim
