// NVLink framing, for the GPU <-> NVSwitch links inside a server: every
// packet is its payload and nothing else on the wire (a 0-byte NVLink
// marker, so observers can tell the framing), and the link's rate is the
// PAYLOAD rate (topology.rail_optimized.nvlink.rate).
//
// Why no per-packet bytes: NVLink's own overheads (flit headers and CRC,
// the responses to writes, its credit-based link-level flow control) are
// what separates H100's 450 GB/s line rate per direction from the 370 GB/s
// NCCL reaches, "~20 % protocol overhead" (S. Jeaugey, NVIDIA,
// NVIDIA/nccl-tests#212). Folding them into the rate makes a long
// transfer's goodput the configured rate exactly, whatever the packet size
// and whatever flows the other way (ACKs take no time on an NVLink), which
// is the figure the collectives' bounds use (CASES.md V11). A packet carries
// up to the NIC's MTU (the model's unit of transfer, not NVLink's 256-byte
// requests): fewer events, same rate; only the store-and-forward delay of
// one packet at the NVSwitch (MTU / rate, 11 ns at 4 KiB) depends on it.
//
// Lossless by construction: an NVLink port has no PFC, no credits and no
// receive buffer model; the NVSwitch admits everything (its buffer is
// unbounded, docs/topologies.md), standing for NVLink's credits, which hold
// data back in the GPU instead of dropping it.
#pragma once

#include <cstdint>

#include "models/proto/ib_transport.h"
#include "models/proto/transport_format.h"
#include "models/proto/wire_format.h"

namespace rdmasim {

class NvlinkFormat final : public TransportFormat {
 public:
  NvlinkFormat() : TransportFormat(/*link_flow_control=*/false) {
    for (size_t op = 0; op < 256; ++op) set(static_cast<RcOpcode>(op), HeaderSet{Header::kNvlink});
  }
};

}  // namespace rdmasim
