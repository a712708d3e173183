// The QoS configuration of InfiniBand ports, as a subnet manager sets it
// (OpenSM's qos_* options, doc/QoS_management_in_OpenSM.txt §7):
//  - the operational data VLs of every port (IBA PortInfo OperationalVLs:
//    1, 2, 4 or 8 here);
//  - the SL-to-VL mapping table (IBA §7.6.6, SLtoVLMappingTable): the VL a
//    packet of service level SL (its LRH's, 0..15) takes on a link; a
//    switch looks it up for each packet on the output port, a channel
//    adapter for what it sends. VL15 in the table means packets of that SL
//    are dropped (only subnet management travels on VL15);
//  - the VL arbitration tables and high limit of every output port (IBA
//    §7.6.9; models/flow_control/vl_arbiter.h).
// Every port of the fabric gets the same tables, as OpenSM's qos_ options
// configure them when no port-class override (qos_ca_, qos_swe_, ...) is given.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace rdmasim {

struct VlArbEntry {
  uint8_t vl = 0;
  uint8_t weight = 0;  // 64-byte units, 0..255
  bool operator==(const VlArbEntry&) const = default;
};

struct VlArbConfig {
  // OpenSM's defaults (qos_vlarb_high "0:4", qos_vlarb_low "0:0,1:4,...,14:4",
  // qos_high_limit 0), for `vls` data VLs (the loader trims them so).
  static std::vector<VlArbEntry> opensm_low(uint8_t vls = 15) {
    std::vector<VlArbEntry> t = {{0, 0}};
    for (uint8_t vl = 1; vl < vls; ++vl) t.push_back({vl, 4});
    return t;
  }
  std::vector<VlArbEntry> high = {{0, 4}};
  std::vector<VlArbEntry> low = opensm_low();
  uint8_t high_limit = 0;  // 4096-byte units; 255: no limit
  bool operator==(const VlArbConfig&) const = default;

  // The VLs a table lets send (an entry of nonzero weight).
  static uint16_t vls_of(const std::vector<VlArbEntry>& table) {
    uint16_t m = 0;
    for (const VlArbEntry& e : table) {
      if (e.weight > 0) m |= static_cast<uint16_t>(1U << e.vl);
    }
    return m;
  }
};

// The largest VL arbitration table (VLArbitrationHighCap / LowCap, IBA
// §14.2.5.9: up to 64 entries).
inline constexpr size_t kMaxVlArbEntries = 64;

// SL -> VL, indexed by SL.
using Sl2VlTable = std::array<uint8_t, 16>;

struct IbQos {
  uint8_t op_vls = 8;  // data VLs per port: VL0 .. VL(op_vls - 1)
  // OpenSM's qos_sl2vl default, "0,1,2,...,14,7", trimmed to op_vls as
  // OpenSM trims it (a VL other than 15 is ANDed with op_vls - 1).
  Sl2VlTable sl2vl = {0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7};
  VlArbConfig vlarb;
  bool operator==(const IbQos&) const = default;
};

}  // namespace rdmasim
