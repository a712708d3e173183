// Parameters of the RDMA NIC model (scenario key `fabric.nic`, plus the
// fabric-wide path MTU). Documented with defaults in docs/scenario.md.
#pragma once

#include <cstdint>

namespace rdmasim {

struct NicConfig {
  // RDMA path MTU: the largest payload per packet (`fabric.mtu`). IBTA
  // defines 256..4096 in powers of two; any value in that range is accepted
  // so that published set-ups with e.g. 1000-byte payloads can be rebuilt.
  uint32_t mtu = 4096;
  // The responder acknowledges every `ack_interval` in-order packets; the last
  // packet of a message is always acknowledged at once.
  int ack_interval = 1;
  // Traffic class (0..7) of data packets and of ACKs.
  uint8_t data_priority = 3;
  uint8_t ack_priority = 3;
};

}  // namespace rdmasim
