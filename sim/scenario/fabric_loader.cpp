// Reads scenario key `fabric` (docs/scenario.md): transport, MTUs, RoCE
// framing, link defaults and the switch model; `fabric.nic` is read by
// nic_loader.cpp.
#include "sim/scenario/loader_parts.h"

namespace rdmasim {

void read_fabric(JsonReader r, FabricConfig& f) {
  f.transport =
      r.choice<Transport>("transport", {{"roce_v2", Transport::kRoceV2}}, Transport::kRoceV2);
  f.nic.mtu = static_cast<uint32_t>(r.integer("mtu", 4096, 256, 4096));
  f.ethernet_mtu = static_cast<uint32_t>(r.integer("ethernet_mtu", 9216, 1518, 16384));
  {
    JsonReader roce = r.object("roce");
    f.ip = roce.choice<IpVersion>("ip", {{"ipv4", IpVersion::kIpv4}, {"ipv6", IpVersion::kIpv6}},
                                  IpVersion::kIpv4);
    f.vlan = roce.boolean("vlan", false);
    roce.finish();
  }
  f.link = read_link_object(r.object("link"), LinkSpec{});
  read_nic(r.object("nic"), f.nic);
  {
    JsonReader sw = r.object("switch");
    f.sw.latency = sw.time("latency", Time::zero());
    sw.finish();
  }
  r.finish();
  // The largest packet (a WRITE's first, with its RETH) must fit in a frame.
  const RoceV2Format format(f.ip, f.vlan);
  const uint32_t frame = format.packet(RcOpcode::kWriteFirst).frame_bytes(f.nic.mtu);
  if (frame > f.ethernet_mtu) {
    const uint32_t overhead = frame - f.nic.mtu;
    throw ScenarioError("fabric.mtu: " + std::to_string(f.nic.mtu) + " needs " +
                        std::to_string(frame) + "-byte frames, more than fabric.ethernet_mtu " +
                        std::to_string(f.ethernet_mtu) + " (expected at most " +
                        std::to_string(f.ethernet_mtu - overhead) + ", or a larger ethernet_mtu)");
  }
}

}  // namespace rdmasim
