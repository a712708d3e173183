// Reads scenario key `fabric` (docs/scenario.md): transport, MTUs, RoCE
// framing, link defaults and the switch model; `fabric.nic` is read by
// nic_loader.cpp. Keys, defaults and ranges: scenario_params.cpp and
// models/switch/switch_params.cpp.
#include "models/proto/infiniband.h"
#include "sim/scenario/loader_parts.h"

namespace rdmasim {
namespace {

using nlohmann::json;

void read_switch(JsonReader r, SwitchConfig& s) {
  r.read(s);  // forwarding, preset, buffer, classification
  if (const json* m = r.raw("dscp_map")) {
    if (!m->is_object())
      r.fail("dscp_map", show(*m) + " is not an object", "e.g. {\"26\": 3, \"48\": 6}");
    for (const auto& [k, v] : m->items()) {
      const std::string path = r.path_of("dscp_map") + "." + k;
      const bool digits =
          !k.empty() && k.size() <= 2 && k.find_first_not_of("0123456789") == std::string::npos;
      if (!digits || std::stoi(k) > 63)
        throw ScenarioError(path + ": \"" + k + "\" is not a DSCP (expected 0 to 63)");
      if (!v.is_number_unsigned() || v.get<uint64_t>() > 7) {
        throw ScenarioError(path + ": " + show(v) +
                            " is not a priority (expected an integer from 0 to 7)");
      }
      s.dscp_to_priority[std::stoi(k)] = static_cast<uint8_t>(v.get<uint64_t>());
    }
    r.resolve("dscp_map", *m);
  }
  {
    JsonReader sch = r.object("scheduler");
    sch.read(s);
    if (const json* w = sch.raw("weights")) {
      if (!w->is_array() || w->size() != kEthernetPriorities)
        sch.fail("weights", show(*w) + " is not 8 weights", "8 integers >= 1, one per priority");
      for (size_t i = 0; i < kEthernetPriorities; ++i) {
        if (!(*w)[i].is_number_unsigned() || (*w)[i].get<uint64_t>() < 1 ||
            (*w)[i].get<uint64_t>() > 1000) {
          throw ScenarioError(sch.path_of("weights") + "[" + std::to_string(i) +
                              "]: " + show((*w)[i]) +
                              " is not a weight (expected an integer from 1 to 1000)");
        }
        s.dwrr_weight[i] = static_cast<uint32_t>((*w)[i].get<uint64_t>());
      }
      sch.resolve("weights", *w);
    } else {
      sch.resolve("weights", s.dwrr_weight);
    }
    sch.finish();
  }
  {
    JsonReader pfc = r.object("pfc");
    pfc.read(s.pfc);
    if (s.pfc.xon > s.pfc.xoff)
      pfc.fail("xon", to_string(s.pfc.xon) + " is above xoff " + to_string(s.pfc.xoff),
               "xon <= xoff");
    pfc.finish();
  }
  {
    JsonReader ecn = r.object("ecn");
    ecn.read(s);
    if (s.ecn.kmax < s.ecn.kmin)
      ecn.fail("kmax", to_string(s.ecn.kmax) + " is below kmin", "kmax >= kmin");
    for (JsonReader& e : ecn.objects("by_rate")) {
      EcnConfig::ByRate b;
      e.read(b);
      if (b.kmax < b.kmin) e.fail("kmax", to_string(b.kmax) + " is below kmin", "kmax >= kmin");
      for (const EcnConfig::ByRate& other : s.ecn.by_rate) {
        if (other.rate == b.rate) {
          e.fail("rate", to_string(b.rate) + " is listed twice", "one entry per rate");
        }
      }
      e.finish();
      s.ecn.by_rate.push_back(b);
    }
    ecn.finish();
  }
  for (const char* key : {"ecmp", "deadlock_detection"}) {
    JsonReader o = r.object(key);
    o.read(s);
    o.finish();
  }
  {
    JsonReader wd = r.object("watchdog");
    wd.read(s.watchdog);
    wd.finish();
  }
  r.finish();
}

// PFC is what Ethernet ports run; InfiniBand ports run credits instead
// (fabric.infiniband.credits), so PFC's keys have no meaning there.
void reject_pfc_keys(JsonReader& r) {
  auto reject = [&](const char* object, const char* key) {
    const nlohmann::json* o = r.raw(object);
    if (o == nullptr || !o->is_object() || !o->contains(key)) return;
    throw ScenarioError(r.path_of(object) + "." + key +
                        ": applies to transport \"roce_v2\" only (expected no " + key +
                        ": InfiniBand ports run credits, fabric.infiniband.credits)");
  };
  reject("switch", "pfc");
  reject("switch", "watchdog");
  for (const char* k : {"pfc_response_delay", "rx_xoff", "rx_xon"}) reject("nic", k);
}

}  // namespace

void read_fabric(JsonReader r, FabricConfig& f) {
  r.read(f);  // transport, mtu, ethernet_mtu
  if (f.transport == Transport::kInfiniband) reject_pfc_keys(r);
  {
    JsonReader roce = r.object("roce");
    roce.read(f);
    roce.finish();
  }
  {
    JsonReader ib = r.object("infiniband");
    ib.read(f);
    {
      JsonReader c = ib.object("credits");
      c.read(f.credits);
      if (f.credits.vl_buffer > Bytes::kib(128)) {
        c.fail("vl_buffer", to_string(f.credits.vl_buffer) + " is above 131072 bytes",
               "at most 131072: 2048 blocks are the widest grant (IBA §7.9.4)");
      }
      c.finish();
    }
    ib.finish();
  }
  {
    JsonReader link = r.object("link");
    link.read(f.link);
    link.finish();
  }
  read_nic(r.object("nic"), f.nic);
  read_switch(r.object("switch"), f.sw);
  f.cc = read_cc(r.object("cc"), nullptr);
  f.sw.max_frame = f.ethernet_mtu;
  if (f.sw.trust == Trust::kPcp && !f.vlan) {
    throw ScenarioError(
        "fabric.switch.trust: \"pcp\" needs frames with an 802.1Q tag (expected fabric.roce.vlan "
        "true, or trust \"dscp\")");
  }
  if (f.nic.sr_reorder_threshold == 0) {
    // Per-packet spraying and adaptive routing reorder by whole queues:
    // tolerate reordering across the window and recover losses by timeout.
    f.nic.sr_reorder_threshold = f.sw.ecmp == EcmpMode::kHash ? 8 : f.nic.sr_window - 1;
  }
  r.finish();
  if (f.transport == Transport::kInfiniband) {
    // IB path MTUs are the five powers of two (IBA §7.7.8, PMTU encoding).
    if (!is_ib_mtu(f.nic.mtu)) {
      throw ScenarioError("fabric.mtu: " + std::to_string(f.nic.mtu) +
                          " is not an InfiniBand MTU (expected 256, 512, 1024, 2048 or 4096)");
    }
    // A VL must hold the largest packet, or it could never send one.
    const InfinibandFormat format(f.grh);
    const uint64_t need =
        uint64_t{ib_credits(format.wire_bytes(RcOpcode::kWriteOnlyImm, f.nic.mtu))} *
        kIbCreditBlockBytes;
    if (static_cast<uint64_t>(f.credits.vl_buffer.count()) < need) {
      throw ScenarioError(
          "fabric.infiniband.credits.vl_buffer: " + std::to_string(f.credits.vl_buffer.count()) +
          " bytes do not hold the largest packet (expected at least " + std::to_string(need) +
          " for fabric.mtu " + std::to_string(f.nic.mtu) + ")");
    }
    // Credits make every VL lossless and leave the switch's buffer to
    // them: its MMU admits every packet a credit let in (no PFC threshold,
    // nothing lossy) as long as the buffer holds every port's VL buffers
    // (checked where the ports are known, loader.cpp).
    f.sw.pfc.lossless_mask = 0xFF;
    f.sw.pfc.threshold = PfcThreshold::kStatic;
    f.sw.pfc.xoff = f.sw.buffer;
    f.sw.pfc.xon = f.sw.buffer;
    f.sw.pfc.headroom = Bytes(1);  // never used: the pool holds what credits admit
    return;
  }
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
