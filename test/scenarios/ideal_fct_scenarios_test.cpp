// Ideal FCT (docs/scenario.md, "Ideal FCT and slowdown") against the
// simulator: a flow run alone on its fabric completes in exactly its ideal
// FCT, to the picosecond, wherever the docs say the closed form is exact;
// slowdown is then exactly 1.
#include <nlohmann/json.hpp>
#include <string>

#include "sim/output/summary.h"
#include "sim/scenario/flow_route.h"
#include "sim/scenario/scenario_error.h"
#include "test/support/catch_units.h"
#include "test/support/run_helpers.h"

using namespace rdmasim;
using namespace rdmasim::testing;

namespace {

// One flow alone: its FCT and its ideal.
struct Alone {
  Time fct, ideal;
  FlowResult flow;
};

Alone run_alone(const std::string& fabric, const std::string& topology, const std::string& flow) {
  const Ran r = run_text(R"({"fabric": )" + fabric + R"(, "topology": )" + topology +
                         R"(, "traffic": [)" + flow + "]}");
  REQUIRE(r.result.status == RunStatus::kComplete);
  REQUIRE(r.result.flows.size() == 1);
  const FlowResult& f = r.result.flows[0];
  REQUIRE(f.done);
  REQUIRE(f.retransmissions == 0);
  return Alone{f.fct(), f.ideal_fct, f};
}

std::string flow(const std::string& src, const std::string& dst, int64_t size,
                 const std::string& op, const std::string& more = "") {
  return R"({"kind": "flow", "src": ")" + src + R"(", "dst": ")" + dst + R"(", "size": )" +
         std::to_string(size) + R"(, "op": ")" + op + "\"" + more + "}";
}

}  // namespace

TEST_CASE("Ideal FCT equals the FCT alone on a star: sizes and verbs", "[quick][ideal_fct]") {
  // 1 byte, one MTU, one MTU + 1, many MTUs (with a short last packet).
  const int64_t size = GENERATE(int64_t{0}, int64_t{1}, int64_t{4096}, int64_t{4097},
                                int64_t{100 * 4096 + 123}, int64_t{1 << 20});
  const std::string op = GENERATE("write", "write_imm", "send", "read");
  INFO(op << " of " << size << " bytes");
  const Alone a = run_alone(R"({"link": {"rate": "100Gbps", "delay": "1us"}})",
                            R"({"kind": "star", "hosts": 3})", flow("h0", "h2", size, op));
  CHECK(a.fct == a.ideal);
  CHECK(a.flow.slowdown() == 1.0);
}

TEST_CASE("Ideal FCT equals the FCT alone: WRITE and SEND, one hop to a 4-hop tail",
          "[quick][ideal_fct]") {
  // A short last packet (1 byte, smaller than an ACK) behind full ones: the
  // ACK of the packet before it is still being sent when it arrives.
  const int64_t size = GENERATE(int64_t{2 * 256 + 1}, int64_t{3 * 256 + 2}, int64_t{5000});
  const std::string op = GENERATE("write", "write_imm", "send");
  INFO(op << " of " << size << " bytes");
  const Alone a = run_alone(R"({"mtu": 256, "link": {"rate": "400Gbps", "delay": "300ns"}})",
                            R"({"kind": "star", "hosts": 2})", flow("h0", "h1", size, op));
  CHECK(a.fct == a.ideal);
}

TEST_CASE("Ideal FCT equals the FCT alone across a fat-tree's core", "[quick][ideal_fct]") {
  const int k = GENERATE(4, 8);
  const std::string forwarding = GENERATE("store_and_forward", "cut_through");
  const std::string op = GENERATE("write", "read");
  const std::string last = k == 4 ? "pod3.leaf1.h1" : "pod7.leaf3.h3";
  INFO("k " << k << ", " << forwarding << ", " << op);
  const Alone a =
      run_alone(R"({"link": {"rate": "100Gbps", "delay": "1us"}, "switch": {"forwarding": ")" +
                    forwarding + R"("}})",
                R"({"kind": "fat_tree", "k": )" + std::to_string(k) + "}",
                flow("pod0.leaf0.h0", last, 1'000'003, op));
  // Host, leaf, spine, core, spine, leaf, host: six link directions.
  CHECK(a.flow.path.size() == 6);
  CHECK(a.fct == a.ideal);
}

TEST_CASE("Ideal FCT: the path the closed form follows is the one the data took",
          "[quick][ideal_fct]") {
  const Ran r = run_text(R"({
    "fabric": {"link": {"rate": "100Gbps", "delay": "1us"}},
    "topology": {"kind": "fat_tree", "k": 4},
    "traffic": [{"kind": "all_to_all", "size": 5000, "qps": 2}]
  })");
  REQUIRE(r.result.status == RunStatus::kComplete);
  const FlowRouter router(r.scenario.topology, r.scenario.routes, r.scenario.fabric.sw,
                          r.scenario.seed);
  // FlowGenerator makes QPs flow by flow and part by part, one on the
  // requester and one on the responder each, numbered from 2 per NIC. The
  // recorded path is each flow's first part's, as the switches routed it.
  size_t differ = 0;
  std::vector<uint32_t> qpn(r.scenario.topology.num_hosts(), 2);
  for (const FlowResult& f : r.result.flows) {
    const uint32_t qs = qpn[f.src], qd = qpn[f.dst];
    qpn[f.src] += 2;  // two parts each: requester QPs on src ...
    qpn[f.dst] += 2;  // ... and responder QPs on dst
    const auto rows = router.rows(f.src, f.dst, roce_source_port(f.src, qs), qd);
    differ += rows != f.path ? 1 : 0;
  }
  CHECK(differ == 0);
  CHECK(r.result.flows.size() == 16 * 15);
}

TEST_CASE("Ideal FCT equals the FCT alone: switch latency, cut-through, a rate cap",
          "[quick][ideal_fct]") {
  const std::string sw =
      GENERATE(R"({"latency": "500ns"})", R"({"latency": "300ns", "forwarding": "cut_through"})",
               R"({"forwarding": "cut_through", "cut_through_bytes": 200})");
  const std::string rate = GENERATE(std::string(""), std::string(R"(, "rate": "37Gbps")"),
                                    std::string(R"(, "rate": "99.99Gbps")"));
  const std::string op = GENERATE("write", "send", "read");
  INFO(sw << rate << " " << op);
  const Alone a = run_alone(
      R"({"link": {"rate": "100Gbps", "delay": "1us"}, "switch": )" + sw + "}",
      R"({"kind": "fat_tree", "k": 4})", flow("pod0.leaf0.h0", "pod2.leaf1.h0", 300'001, op, rate));
  CHECK(a.fct == a.ideal);
}

TEST_CASE(
    "Ideal FCT equals the FCT alone over NVLink: its framing, an NVSwitch that stores and "
    "forwards",
    "[quick][ideal_fct]") {
  // Two GPUs of one server of a rail-optimized fabric: the path is NVLink
  // (GPU, NVSwitch, GPU), framed as NVLink (no RoCE headers), and the
  // NVSwitch stores and forwards even where the fabric's switches cut
  // through. The ideal once framed the data as RoCE: 4178 wire bytes per
  // 4096 of payload, a lone flow's slowdown 0.98.
  const std::string topo = R"({"kind": "rail_optimized", "sus": 1, "nodes_per_su": 2,
                               "gpus_per_node": 2, "ufm": false, "spines": 1})";
  for (const char* fabric :
       {"{}", R"({"switch": {"latency": "300ns", "forwarding": "cut_through"}})"}) {
    for (const char* op : {"write", "read"}) {
      INFO(fabric << " " << op);
      const Alone a =
          run_alone(fabric, topo, flow("su0.node0.gpu0", "su0.node0.gpu1", 3 << 20, op));
      CHECK(a.fct == a.ideal);
    }
  }
}

TEST_CASE("Ideal FCT equals the FCT alone at 25.78125 Gb/s, where the carry matters",
          "[quick][ideal_fct]") {
  // 4178 wire bytes take 1296.44... ns: frame times alternate between two
  // whole picosecond counts, and the pipelining of the first packet picks
  // the longer.
  const std::string op = GENERATE("write", "send", "read");
  const std::string forwarding = GENERATE("store_and_forward", "cut_through");
  const int64_t size = GENERATE(int64_t{1}, int64_t{4096 * 37 + 5}, int64_t{4096 * 200});
  INFO(op << " " << forwarding << " " << size);
  const Alone a = run_alone(
      R"({"link": {"rate": "25.78125Gbps", "delay": "777ns"}, "switch": {"forwarding": ")" +
          forwarding + R"("}})",
      R"({"kind": "fat_tree", "k": 4})", flow("pod0.leaf0.h0", "pod3.leaf0.h1", size, op));
  CHECK(a.fct == a.ideal);
}

TEST_CASE("Ideal FCT equals the FCT alone: ack_interval, VLAN, IPv6", "[quick][ideal_fct]") {
  const std::string fabric =
      GENERATE(R"({"nic": {"ack_interval": 4}})", R"({"nic": {"ack_interval": 3}, "mtu": 1024})",
               R"({"roce": {"vlan": true}})", R"({"roce": {"ip": "ipv6"}})",
               R"({"roce": {"ip": "ipv6", "vlan": true}, "mtu": 2048})");
  const int64_t size =
      GENERATE(int64_t{1}, int64_t{4 * 4096}, int64_t{13 * 4096 + 1}, int64_t{2048 * 9 + 7});
  const std::string op = GENERATE("write", "send", "read");
  INFO(fabric << " " << size << " " << op);
  const Alone a = run_alone(fabric, R"({"kind": "fat_tree", "k": 4})",
                            flow("pod1.leaf0.h0", "pod1.leaf1.h1", size, op));
  CHECK(a.fct == a.ideal);
}

TEST_CASE("Ideal FCT equals the FCT alone with mixed link rates", "[quick][ideal_fct]") {
  // 100G hosts behind 400G switch links, and the reverse: rates whose byte
  // times are whole picoseconds mix exactly.
  const std::string host = GENERATE("100Gbps", "400Gbps");
  const std::string core = host == std::string("100Gbps") ? "400Gbps" : "100Gbps";
  const std::string op = GENERATE("write", "read");
  const std::string forwarding = GENERATE("store_and_forward", "cut_through");
  INFO(host << " hosts, " << core << " between switches, " << op << ", " << forwarding);
  const Alone a = run_alone(
      R"({"switch": {"forwarding": ")" + forwarding + R"("}})",
      R"({"kind": "graph", "hosts": ["a", "b"], "switches": ["s1", "s2", "s3"], "links": [
           {"a": "a", "b": "s1", "rate": ")" +
          host + R"("}, {"a": "s1", "b": "s2", "rate": ")" + core + R"(", "delay": "2us"},
           {"a": "s2", "b": "s3", "rate": ")" +
          core + R"("}, {"a": "s3", "b": "b", "rate": ")" + host + R"(", "delay": "100ns"}]})",
      flow("a", "b", 2'000'000 + 17, op));
  CHECK(a.fct == a.ideal);
}

TEST_CASE("Ideal FCT equals the FCT alone with several QPs on one path", "[quick][ideal_fct]") {
  // A star has one path: the parts share it round robin, one packet each.
  const int qps = GENERATE(2, 4, 7);
  const int64_t size = GENERATE(int64_t{100}, int64_t{4096 * 10 + 3}, int64_t{1'000'000});
  const std::string ack = GENERATE(std::string("1"), std::string("3"));
  INFO(qps << " QPs, " << size << " bytes, ack_interval " << ack);
  const Alone a =
      run_alone(R"({"nic": {"ack_interval": )" + ack + "}}", R"({"kind": "star", "hosts": 2})",
                flow("h0", "h1", size, "write", ", \"qps\": " + std::to_string(qps)));
  CHECK(a.fct == a.ideal);
}

TEST_CASE("Slowdown of an incast: the last of N equal flows ends (N-1) flows' time late",
          "[quick][ideal_fct][slowdown]") {
  // N senders start together at line rate into one 100G port: the port is
  // busy from the first packet's arrival until all N x n packets have left,
  // so the last flow completes exactly (N-1) x T(n) after its ideal, T(n)
  // being one flow's serialisation at 100G (80 ps a byte).
  const int n_senders = GENERATE(2, 4, 8);
  const Ran r = run_text(R"({
    "fabric": {"link": {"rate": "100Gbps", "delay": "1us"}},
    "topology": {"kind": "star", "hosts": 9},
    "traffic": [{"kind": "incast", "senders": )" +
                         std::to_string(n_senders) + R"(, "dst": "h8", "size": "2MiB"}]
  })");
  REQUIRE(r.result.status == RunStatus::kComplete);
  // 512 packets of 4096 + 82 bytes, the first with its 16-byte RETH.
  const int64_t wire = 512 * 4178 + 16;
  const int64_t t_flow = wire * 80;
  // Alone: every packet on one link, the first on the other too, two delays;
  // the 86-byte ACK back over two links and two delays.
  const int64_t ideal = t_flow + 4194 * 80 + 2'000'000 + 2 * (86 * 80 + 1'000'000);
  Time last;
  for (const FlowResult& f : r.result.flows) {
    CHECK(f.ideal_fct.in_ps() == ideal);
    CHECK(f.slowdown() >= 1.0);
    last = std::max(last, f.fct());
  }
  CHECK(last.in_ps() == ideal + (n_senders - 1) * t_flow);
  const auto j = nlohmann::json::parse(summary_json(r.scenario, r.result));
  // Nearest rank: with N <= 8 flows the p99 and p95 are the largest.
  const double worst = static_cast<double>(last.in_ps()) / static_cast<double>(ideal);
  CHECK(j["flows"]["slowdown"]["p99"].get<double>() == worst);
  CHECK(j["flows"]["slowdown"]["count"] == n_senders);
  CHECK(j["slowdown_by_item"][0]["p99"].get<double>() == worst);
  // 2 MiB is in the last default bucket, >= 1 MB.
  CHECK(j["slowdown_by_size"][3]["bucket"] == ">=1MB");
  CHECK(j["slowdown_by_size"][3]["count"] == n_senders);
  CHECK(j["slowdown_by_size"][0]["count"] == 0);
}

TEST_CASE("Slowdown is 1 for a flow alone, in summary.json", "[quick][ideal_fct][slowdown]") {
  const Ran r = run_text(R"({
    "topology": {"kind": "fat_tree", "k": 4},
    "traffic": [{"kind": "flow", "src": 0, "dst": 15, "size": "64KiB"}],
    "output": {"size_buckets": [1000, "64KiB", "1MiB"]}
  })");
  const auto j = nlohmann::json::parse(summary_json(r.scenario, r.result));
  CHECK(j["per_flow"][0]["slowdown"].get<double>() == 1.0);
  CHECK(j["per_flow"][0]["ideal_fct_ps"] == j["per_flow"][0]["fct_ps"]);
  CHECK(j["flows"]["slowdown"]["p50"].get<double>() == 1.0);
  // 64 KiB sits on an edge: in the bucket above it.
  CHECK(j["slowdown_by_size"][2]["bucket"] == "64KiB-1MiB");
  CHECK(j["slowdown_by_size"][2]["count"] == 1);
  // The edges are resolved as given.
  const auto resolved = nlohmann::json::parse(r.scenario.resolved_json);
  CHECK(resolved["output"]["size_buckets"] == nlohmann::json::parse(R"([1000, "64KiB", "1MiB"])"));
}

TEST_CASE("output.size_buckets: rising sizes", "[quick][slowdown]") {
  auto error_of = [](const std::string& buckets) -> std::string {
    try {
      load_scenario_text(
          R"({"topology": {"kind": "star", "hosts": 2}, "output": {"size_buckets": )" + buckets +
              "}}",
          "t");
    } catch (const ScenarioError& e) {
      return e.what();
    }
    return "no error";
  };
  CHECK(
      error_of(R"(["10KB", "10KB"])") ==
      R"(output.size_buckets[1]: "10KB" is not above the edge before it (expected rising sizes))");
  CHECK(error_of(R"([0])").rfind("output.size_buckets[0]: 0 is not a size", 0) == 0);
  CHECK(error_of(R"(["12 MB"])").rfind("output.size_buckets[0]: \"12 MB\" is not a size", 0) == 0);
  CHECK(error_of(R"("1MB")") ==
        R"(output.size_buckets: "1MB" is not a list (expected a list of sizes))");
  CHECK(error_of("[]") == "no error");
  const Scenario sc = load_scenario_text(R"({"topology": {"kind": "star", "hosts": 2}})", "t");
  CHECK(sc.output.size_buckets == std::vector<Bytes>{Bytes::kb(10), Bytes::kb(100), Bytes::mb(1)});
}
