// Reads scenario key `fabric` (docs/scenario.md): transport, MTUs, RoCE
// framing, link defaults and the switch model; `fabric.nic` is read by
// nic_loader.cpp. Keys, defaults and ranges: scenario_params.cpp and
// models/switch/switch_params.cpp.
#include <tuple>

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
      // No leading zero: "03" and "3" would name one DSCP twice.
      const bool digits = !k.empty() && k.size() <= 2 &&
                          k.find_first_not_of("0123456789") == std::string::npos &&
                          (k.size() == 1 || k[0] != '0');
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

std::string vlarb_string(const std::vector<VlArbEntry>& t) {
  std::string s;
  for (const VlArbEntry& e : t) {
    if (!s.empty()) s += ",";
    s += std::to_string(e.vl) + ":" + std::to_string(e.weight);
  }
  return s;
}

// A whole decimal number from `lo` to `hi`, or -1.
int small_number(const std::string& s, int lo, int hi) {
  if (s.empty() || s.size() > 3 || s.find_first_not_of("0123456789") != std::string::npos)
    return -1;
  const int v = std::stoi(s);
  return v >= lo && v <= hi ? v : -1;
}

std::string trim(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t");
  if (a == std::string::npos) return std::string();
  return s.substr(a, s.find_last_not_of(" \t") - a + 1);
}

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  size_t from = 0;
  for (;;) {
    const size_t c = s.find(',', from);
    out.push_back(trim(s.substr(from, c == std::string::npos ? std::string::npos : c - from)));
    if (c == std::string::npos) return out;
    from = c + 1;
  }
}

// A VL arbitration table in OpenSM's syntax, "VL:weight,VL:weight,..."
// (qos_vlarb_high / qos_vlarb_low): up to 64 entries, VLs of these ports'
// data VLs, weights 0..255.
std::vector<VlArbEntry> read_vlarb(JsonReader& q, const char* key, uint32_t op_vls,
                                   std::vector<VlArbEntry> table) {
  const std::string expected = "\"VL:weight,...\" with VLs 0 to " + std::to_string(op_vls - 1) +
                               " (fabric.infiniband.op_vls " + std::to_string(op_vls) +
                               ") and weights 0 to 255, at most 64 entries, e.g. \"1:64,2:128\"";
  if (const nlohmann::json* v = q.raw(key)) {
    if (!v->is_string()) q.fail(key, show(*v) + " is not a string", expected);
    // An empty string is an empty table (no VL at this priority).
    const std::string text = trim(v->get<std::string>());
    const std::vector<std::string> items =
        text.empty() ? std::vector<std::string>{} : split_commas(text);
    if (items.size() > kMaxVlArbEntries)
      q.fail(key, std::to_string(items.size()) + " entries", expected);
    table.clear();
    for (size_t i = 0; i < items.size(); ++i) {
      const std::string& it = items[i];
      const size_t colon = it.find(':');
      const int vl =
          colon == std::string::npos ? -1 : small_number(trim(it.substr(0, colon)), 0, 15);
      const int w =
          colon == std::string::npos ? -1 : small_number(trim(it.substr(colon + 1)), 0, 255);
      if (vl < 0 || w < 0) {
        q.fail(key,
               show(*v) + ": entry " + std::to_string(i + 1) + " \"" + it + "\" is not VL:weight",
               expected);
      }
      if (static_cast<uint32_t>(vl) >= op_vls) {
        q.fail(key,
               show(*v) + ": entry " + std::to_string(i + 1) + " names VL " + std::to_string(vl) +
                   ", not a data VL of these ports (" +
                   (vl == 15 ? "VL15 is never arbitrated" : "more VLs than configured") + ")",
               expected);
      }
      table.push_back({static_cast<uint8_t>(vl), static_cast<uint8_t>(w)});
    }
  }
  q.resolve(key, vlarb_string(table));
  return table;
}

// The SL-to-VL table: OpenSM's "VL,VL,..." (qos_sl2vl) or an array; 16 VLs,
// each a data VL or 15.
Sl2VlTable read_sl2vl(JsonReader& q, uint32_t op_vls, Sl2VlTable table) {
  const std::string expected = "16 VLs, one per SL, each 0 to " + std::to_string(op_vls - 1) +
                               " (fabric.infiniband.op_vls " + std::to_string(op_vls) +
                               ") or 15, as \"0,1,2,...\" or an array";
  if (const nlohmann::json* v = q.raw("sl2vl")) {
    std::vector<std::string> items;
    if (v->is_string()) {
      items = split_commas(v->get<std::string>());
    } else if (v->is_array()) {
      for (const nlohmann::json& e : *v)
        items.push_back(e.is_number_unsigned() ? std::to_string(e.get<uint64_t>()) : show(e));
    } else {
      q.fail("sl2vl", show(*v) + " is not a table", expected);
    }
    if (items.size() != 16)
      q.fail("sl2vl", show(*v) + " has " + std::to_string(items.size()) + " entries", expected);
    for (size_t sl = 0; sl < 16; ++sl) {
      const int vl = small_number(items[sl], 0, 15);
      if (vl < 0 || (vl != 15 && static_cast<uint32_t>(vl) >= op_vls)) {
        q.fail("sl2vl",
               show(*v) + ": SL " + std::to_string(sl) + " maps to " + items[sl] +
                   (vl < 0 ? ", not a VL"
                           : ", not a data VL of these ports (more VLs than configured)"),
               expected);
      }
      table[sl] = static_cast<uint8_t>(vl);
    }
  }
  nlohmann::json resolved = nlohmann::json::array();
  for (uint8_t vl : table) resolved.push_back(vl);
  q.resolve("sl2vl", resolved);
  return table;
}

// The tables of `q` over `base` (a key not given keeps base's).
IbQos read_ib_qos_keys(JsonReader& q, uint32_t op_vls, const IbQos& base) {
  IbQos qos = base;
  qos.sl2vl = read_sl2vl(q, op_vls, base.sl2vl);
  qos.vlarb.high = read_vlarb(q, "vlarb_high", op_vls, base.vlarb.high);
  qos.vlarb.low = read_vlarb(q, "vlarb_low", op_vls, base.vlarb.low);
  if (q.has("high_limit")) qos.vlarb.high_limit = static_cast<uint8_t>(q.integer("high_limit"));
  q.resolve("high_limit", qos.vlarb.high_limit);
  return qos;
}

// `fabric.infiniband.qos`, for ports of `op_vls` data VLs: the NICs' and
// the switches' tables (`ca`, `swe` over the fabric-wide keys, as OpenSM's
// qos_ca_* and qos_swe_* over qos_*). OpenSM's defaults are its 15-VL
// templates trimmed as it trims them.
void read_ib_qos(JsonReader q, uint32_t op_vls, FabricConfig& f) {
  IbQos opensm;
  opensm.op_vls = static_cast<uint8_t>(op_vls);
  const Sl2VlTable t = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 7};
  for (size_t sl = 0; sl < 16; ++sl)
    opensm.sl2vl[sl] = t[sl] == 15 ? 15 : static_cast<uint8_t>(t[sl] & (op_vls - 1));
  opensm.vlarb.low = VlArbConfig::opensm_low(static_cast<uint8_t>(op_vls));
  const IbQos all = read_ib_qos_keys(q, op_vls, opensm);
  for (const auto& [key, qos, from] : {std::tuple{"ca", &f.ib_qos_ca, &f.ib_qos_ca_from},
                                       std::tuple{"swe", &f.ib_qos_swe, &f.ib_qos_swe_from}}) {
    JsonReader o = q.object(key);
    *qos = read_ib_qos_keys(o, op_vls, all);
    from->sl2vl = o.has("sl2vl") ? o.path() : q.path();
    from->vlarb_high = o.has("vlarb_high") ? o.path() : q.path();
    from->vlarb_low = o.has("vlarb_low") ? o.path() : q.path();
    o.finish();
  }
  q.finish();
}

// The keys of fabric.switch and fabric.nic that have no meaning on
// InfiniBand, with why: refused when given (reject_pfc_keys), and their
// defaults left out of the resolved scenario.
struct RoceOnlyKey {
  const char* object;
  const char* key;
  const char* why;
};
constexpr const char* kCredits = "InfiniBand ports run credits, fabric.infiniband.credits";
constexpr const char* kSlToVl =
    "InfiniBand switches queue a packet on its SL's VL, fabric.infiniband.qos";
constexpr const char* kSl = "InfiniBand packets carry an SL, not a DSCP (traffic[i].sl)";
constexpr RoceOnlyKey kRoceOnlyKeys[] = {
    {"switch", "pfc", kCredits},
    {"switch", "watchdog", kCredits},
    {"switch", "scheduler",
     "InfiniBand ports arbitrate their VLs by fabric.infiniband.qos.vlarb_high and vlarb_low"},
    // Classification: an IB packet's VL is its SL's (fabric.infiniband.qos.sl2vl).
    {"switch", "trust", kSlToVl},
    {"switch", "dscp_map", kSlToVl},
    {"nic", "data_dscp", kSl},
    {"nic", "ack_dscp", kSl},
    // DCQCN is RoCE's; InfiniBand's own congestion control is not modelled.
    {"switch", "ecn", "ECN marking feeds DCQCN, which is RoCE's"},
    {"nic", "cnp_priority", "CNPs are RoCE's (DCQCN)"},
    {"nic", "cnp_dscp", "CNPs are RoCE's (DCQCN)"},
    {"nic", "pfc_response_delay", kCredits},
    {"nic", "rx_xoff", kCredits},
    {"nic", "rx_xon", kCredits},
};

// PFC is what Ethernet ports run; InfiniBand ports run credits instead
// (fabric.infiniband.credits), so PFC's keys have no meaning there.
void reject_pfc_keys(JsonReader& r) {
  for (const RoceOnlyKey& k : kRoceOnlyKeys) {
    const nlohmann::json* o = r.raw(k.object);
    // null is absent, as everywhere in a scenario.
    if (o == nullptr || !o->is_object() || !o->contains(k.key) || o->at(k.key).is_null()) continue;
    throw ScenarioError(r.path_of(k.object) + "." + k.key +
                        ": applies to transport \"roce_v2\" only (expected no " + k.key + ": " +
                        k.why + ")");
  }
  if (r.has("cc")) {
    throw ScenarioError(r.path_of("cc") +
                        ": applies to transport \"roce_v2\" only (expected no cc: DCQCN is RoCE's; "
                        "InfiniBand congestion control is not modelled)");
  }
}

}  // namespace

std::string ib_sl_unusable(const FabricConfig& f, uint8_t sl) {
  const std::string s = std::to_string(sl);
  for (const auto& [qos, from, where] :
       {std::tuple{&f.ib_qos_ca, &f.ib_qos_ca_from, "NICs'"},
        std::tuple{&f.ib_qos_swe, &f.ib_qos_swe_from, "switches'"}}) {
    const uint8_t vl = qos->sl2vl[sl & 15];
    if (vl == kIbManagementVl) {
      return "SL " + s + " maps to VL15 at the " + where + " ports (" + from->sl2vl +
             ".sl2vl), which carries only subnet management packets of at most " +
             std::to_string(kIbVl15MaxPayload) +
             " payload bytes, never data (expected an SL mapped to a data VL)";
    }
    if (((VlArbConfig::vls_of(qos->vlarb.high) | VlArbConfig::vls_of(qos->vlarb.low)) >> vl & 1) ==
        0) {
      // One object gave both tables, or each its own (an override of one).
      const std::string tables =
          from->vlarb_high == from->vlarb_low
              ? from->vlarb_high + " vlarb_high or vlarb_low"
              : from->vlarb_high + ".vlarb_high or " + from->vlarb_low + ".vlarb_low";
      return "SL " + s + " travels on VL " + std::to_string(vl) + " at the " + where +
             " ports, which has no weight in their " + tables +
             ", so they would never send it (expected an entry " + std::to_string(vl) +
             ":<weight above 0> in one of them)";
    }
  }
  return std::string();
}

// The most an InfiniBand NIC's credits let into its receive buffer: every
// data VL's buffer and the pool, in 64-byte blocks, a packet being at most
// its blocks x 64 bytes plus its 2-byte VCRC (which credits do not count).
namespace {
uint64_t ib_nic_rx_need(const FabricConfig& f) {
  const uint64_t blocks =
      uint64_t{f.op_vls} *
          static_cast<uint64_t>(f.credits.vl_buffer.count() / kIbCreditBlockBytes) +
      static_cast<uint64_t>(f.credits.shared_buffer.count() / kIbCreditBlockBytes);
  return blocks * (kIbCreditBlockBytes + 2);
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
      // A VL's window is at most 2048 blocks: a pool beyond 8 VLs' windows
      // could never be granted.
      if (f.credits.shared_buffer > Bytes::mib(1)) {
        c.fail("shared_buffer", to_string(f.credits.shared_buffer) + " is above 1 MiB",
               "at most 1 MiB: 8 VLs x 2048 blocks are the widest grants (IBA §7.9.4)");
      }
      if (f.credits.vl_buffer > Bytes::kib(128)) {
        c.fail("vl_buffer", to_string(f.credits.vl_buffer) + " is above 131072 bytes",
               "at most 131072: 2048 blocks are the widest grant (IBA §7.9.4)");
      }
      c.finish();
    }
    if ((f.op_vls & (f.op_vls - 1)) != 0) {
      ib.fail("op_vls", std::to_string(f.op_vls) + " is not a VL count a port can operate",
              "1, 2, 4 or 8 (IBA OperationalVLs)");
    }
    f.credits.data_vls = static_cast<uint8_t>(f.op_vls);
    read_ib_qos(ib.object("qos"), f.op_vls, f);
    ib.finish();
  }
  {
    JsonReader link = r.object("link");
    link.read(f.link);
    link.finish();
  }
  // On InfiniBand the NIC's receive buffer defaults to what its credits let
  // in (checked below when given).
  if (f.transport == Transport::kInfiniband) f.nic.rx_buffer = Bytes(ib_nic_rx_need(f));
  read_nic(r.object("nic"), f.nic, f.transport != Transport::kInfiniband);
  // An InfiniBand switch routes on the LRH (its DLID; IBA §7.7), the
  // first 8 bytes of a packet: its cut-through default.
  if (f.transport == Transport::kInfiniband)
    f.sw.cut_through_bytes = Bytes(HeaderSet{Header::kLrh}.header_bytes());
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
    // The NIC's priorities are its QPs' default SLs on IB (checked with
    // the traffic that uses them, loader.cpp).
    f.nic.sl2vl = f.ib_qos_ca.sl2vl;
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
    // A NIC that drains its receive buffer (rx_drain_rate) frees a packet's
    // blocks only once drained, so a buffer given smaller than its default
    // (what the credits let in) would drop what credits let in.
    if (f.nic.rx_drain_rate.in_bps() > 0) {
      const uint64_t rx_need = ib_nic_rx_need(f);
      const uint64_t blocks = rx_need / (kIbCreditBlockBytes + 2);
      if (static_cast<uint64_t>(f.nic.rx_buffer.count()) < rx_need) {
        throw ScenarioError(
            "fabric.nic.rx_buffer: " + std::to_string(f.nic.rx_buffer.count()) +
            " bytes cannot hold what the NIC's credits let in on InfiniBand (expected at least " +
            std::to_string(rx_need) + ": 66 bytes for each of the " + std::to_string(blocks) +
            " blocks of op_vls x vl_buffer + shared_buffer, fabric.infiniband)");
      }
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
    // The resolved scenario leaves out what reject_pfc_keys refuses, so
    // that `rdmasim resolve`'s output loads (their defaults mean nothing here).
    for (const RoceOnlyKey& k : kRoceOnlyKeys) r.unresolve(k.object, k.key);
    r.unresolve("cc");
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
