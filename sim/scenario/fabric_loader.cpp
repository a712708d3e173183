// Reads scenario key `fabric` (docs/scenario.md): transport, MTUs, RoCE
// framing, link defaults and the switch model; `fabric.nic` is read by
// nic_loader.cpp.
#include "sim/scenario/loader_parts.h"

namespace rdmasim {
namespace {

using nlohmann::json;

// A list of priorities 0..7 as a bit mask.
uint8_t read_priorities(JsonReader& r, const std::string& key, uint8_t def) {
  const json* v = r.raw(key);
  if (v == nullptr) {
    json list = json::array();
    for (int p = 0; p < 8; ++p) {
      if ((def >> p) & 1) list.push_back(p);
    }
    r.resolve(key, list);
    return def;
  }
  if (!v->is_array())
    r.fail(key, show(*v) + " is not a list", "a list of priorities 0 to 7, e.g. [3]");
  uint8_t mask = 0;
  for (size_t i = 0; i < v->size(); ++i) {
    const json& e = (*v)[i];
    if (!e.is_number_unsigned() || e.get<uint64_t>() > 7) {
      throw ScenarioError(r.path_of(key) + "[" + std::to_string(i) + "]: " + show(e) +
                          " is not a priority (expected an integer from 0 to 7)");
    }
    mask |= static_cast<uint8_t>(1U << e.get<uint64_t>());
  }
  r.resolve(key, *v);
  return mask;
}

// Buffer presets: a few well-known switch ASICs (sources in docs/switch.md).
struct Preset {
  const char* name;
  Bytes buffer;
  uint32_t cell;
};
constexpr Preset kPresets[] = {
    {"trident_plus", Bytes(9'000'000), 208},  // 9 MB as 46,080 cells of 208 B
    {"trident2", Bytes(12'000'000), 208},     // 12 MB (DCQCN paper, section 4)
    {"tomahawk2", Bytes(42'000'000), 208},    // 42 MB shared
    {"hpcc", Bytes(32LL << 20), 1},           // HPCC simulator's config: 32 MiB, bytes
};

void read_switch(JsonReader r, SwitchConfig& s) {
  s.latency = r.time("latency", Time::zero());
  s.forwarding = r.choice<Forwarding>("forwarding",
                                      {{"store_and_forward", Forwarding::kStoreAndForward},
                                       {"cut_through", Forwarding::kCutThrough}},
                                      Forwarding::kStoreAndForward);
  s.cut_through_bytes = r.bytes("cut_through_bytes", Bytes(64), Bytes(1));

  // Buffer: a preset gives defaults; explicit keys override them.
  Bytes buffer = Bytes::mb(32);
  int64_t cell = 1;
  if (const json* p = r.raw("preset")) {
    bool found = false;
    std::string names;
    for (const Preset& x : kPresets) {
      names += (names.empty() ? "\"" : ", \"") + std::string(x.name) + "\"";
      if (p->is_string() && *p == x.name) {
        buffer = x.buffer;
        cell = x.cell;
        found = true;
      }
    }
    if (!found) r.fail("preset", show(*p) + " is not a known switch", "one of " + names);
    r.resolve("preset", *p);
  }
  s.buffer = r.bytes("buffer", buffer, Bytes(1));
  s.cell = static_cast<uint32_t>(r.integer("cell", cell, 1, 4096));
  s.reserve = r.bytes("reserve", Bytes::kib(4));
  s.lossy_alpha = r.number("lossy_alpha", 1.0, 1.0 / 128, 128);

  s.trust = r.choice<Trust>("trust", {{"dscp", Trust::kDscp}, {"pcp", Trust::kPcp}}, Trust::kDscp);
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
    s.strict_mask = read_priorities(sch, "strict", s.strict_mask);
    if (const json* w = sch.raw("weights")) {
      if (!w->is_array() || w->size() != 8)
        sch.fail("weights", show(*w) + " is not 8 weights", "8 integers >= 1, one per priority");
      for (size_t i = 0; i < 8; ++i) {
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
    s.dwrr_quantum = sch.bytes("quantum", Bytes(9216), Bytes(9216));
    sch.finish();
  }
  {
    JsonReader pfc = r.object("pfc");
    s.pfc.lossless_mask = read_priorities(pfc, "lossless", 1 << 3);
    s.pfc.threshold = pfc.choice<PfcThreshold>(
        "threshold", {{"dynamic", PfcThreshold::kDynamic}, {"static", PfcThreshold::kStatic}},
        PfcThreshold::kDynamic);
    s.pfc.alpha_shift = static_cast<int>(pfc.integer("alpha_shift", 3, 0, 16));
    s.pfc.resume_offset = pfc.bytes("resume_offset", Bytes(3072));
    s.pfc.xoff = pfc.bytes("xoff", Bytes::kb(100), Bytes(1));
    s.pfc.xon = pfc.bytes("xon", Bytes::kb(80));
    if (s.pfc.xon > s.pfc.xoff)
      pfc.fail("xon", to_string(s.pfc.xon) + " is above xoff " + to_string(s.pfc.xoff),
               "xon <= xoff");
    if (pfc.has("headroom") && pfc.raw("headroom")->is_string() && *pfc.raw("headroom") == "auto") {
      s.pfc.headroom = Bytes(0);
      pfc.resolve("headroom", "auto");
    } else if (pfc.has("headroom")) {
      s.pfc.headroom = pfc.bytes("headroom", std::nullopt, Bytes(1));
    } else {
      s.pfc.headroom = Bytes(0);
      pfc.resolve("headroom", "auto");
    }
    s.pfc.quanta = static_cast<uint16_t>(pfc.integer("quanta", 0xFFFF, 1, 0xFFFF));
    s.pfc.refresh = pfc.number("refresh", 0.5, 0.01, 0.99);
    s.pfc.response_delay = pfc.time("response_delay", Time::zero());
    pfc.finish();
  }
  {
    JsonReader ecn = r.object("ecn");
    s.ecn.enabled = ecn.boolean("enabled", false);
    s.ecn_mask = read_priorities(ecn, "priorities", 1 << 3);
    s.ecn.kmin = ecn.bytes("kmin", Bytes::kb(5));
    s.ecn.kmax = ecn.bytes("kmax", Bytes::kb(200));
    if (s.ecn.kmax < s.ecn.kmin)
      ecn.fail("kmax", to_string(s.ecn.kmax) + " is below kmin", "kmax >= kmin");
    s.ecn.pmax = ecn.number("pmax", 0.01, 0, 1);
    s.ecn_point = ecn.choice<EcnPoint>(
        "mark", {{"enqueue", EcnPoint::kEnqueue}, {"dequeue", EcnPoint::kDequeue}},
        EcnPoint::kEnqueue);
    ecn.finish();
  }
  {
    JsonReader ecmp = r.object("ecmp");
    s.ecmp = ecmp.choice<EcmpMode>(
        "mode",
        {{"hash", EcmpMode::kHash}, {"spray", EcmpMode::kSpray}, {"adaptive", EcmpMode::kAdaptive}},
        EcmpMode::kHash);
    s.hash_dest_qp = ecmp.boolean("hash_dest_qp", false);
    s.per_switch_hash_seed = ecmp.boolean("per_switch_seed", true);
    ecmp.finish();
  }
  {
    JsonReader dd = r.object("deadlock_detection");
    s.deadlock_detection = dd.boolean("enabled", true);
    s.deadlock_timeout = dd.time("timeout", Time::ms(1), Time::us(1));
    s.deadlock_stop = dd.boolean("stop", true);
    dd.finish();
  }
  {
    JsonReader wd = r.object("watchdog");
    s.watchdog.enabled = wd.boolean("enabled", false);
    s.watchdog.timeout = wd.time("timeout", Time::ms(100), Time::us(1));
    s.watchdog.restore = wd.time("restore", Time::ms(100), Time::us(1));
    s.watchdog.action = wd.choice<WatchdogAction>(
        "action", {{"drop", WatchdogAction::kDrop}, {"forward", WatchdogAction::kForward}},
        WatchdogAction::kDrop);
    wd.finish();
  }
  r.finish();
}

}  // namespace

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
  read_switch(r.object("switch"), f.sw);
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
