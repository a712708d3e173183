// CASES.md V12, small-message AllReduce latency: AllReduce of 8 B, 1 KiB and
// 64 KiB on n = 16 ... 256 ranks, one rank per server, every rank on rail 0
// of a two-tier rail-optimized leaf-spine fabric (the V10 generator: as many
// SUs of 32 servers as n needs, 1 to 8, 32 spines), so every step crosses
// the network. Expected
// values come from outside the code: the ring runs 2(n - 1) steps one after
// another, so its time grows linearly in n (least-squares fit, R^2 >= 0.98)
// and at 8 B is 2(n - 1) t_step within 10 %; the double binary tree's time
// grows with its depth, log2 n (R^2 >= 0.95). t_step is the simulator's own
// one-hop message latency: the mean, over the ring's neighbour pairs, of the
// time from posting one 8-byte message to its completion at the successor.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "sim/scenario/runner.h"
#include "test/support/imm_workload.h"
#include "test/support/run_helpers.h"

using namespace rdmasim;
using namespace rdmasim::testing;

namespace {

constexpr uint32_t kGpus = 8;
constexpr uint32_t kNodesPerSu = 32;

// `sus` SUs of 32 servers of 8 GPUs, 400G cables of 500 ns, PFC on; with
// more than 8 SUs the spines have more than 64 ports (switch_ports 0), the
// two-tier fabric "extended past 4 SUs" that V12 asks for.
std::string fabric(uint32_t sus, const std::string& traffic) {
  return R"({"fabric": {"mtu": 4096, "link": {"rate": "400Gbps", "delay": "500ns"},
             "switch": {"pfc": {"lossless": [3]}}},
             "topology": {"kind": "rail_optimized", "sus": )" +
         std::to_string(sus) + R"(, "nodes_per_su": 32, "gpus_per_node": 8, "spines": 32,
             "ufm": false)" +
         std::string(sus > 8 ? R"(, "switch_ports": 0)" : "") + R"(},
             "traffic": [)" +
         traffic + "]}";
}

uint32_t sus_for(uint32_t n) { return (n + kNodesPerSu - 1) / kNodesPerSu; }

// GPU 0 (rail 0) of servers 0 .. n-1: host indices 0, 8, 16, ...
std::string rail0_ranks(uint32_t n) {
  std::string s = "[";
  for (uint32_t i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(i * kGpus);
  return s + "]";
}

// t_step: every neighbour pair of the ring (rank i to rank i + 1 mod n)
// posts one 8-byte WRITE with immediate at 0, all in one run: each NIC sends
// one message and receives one, no two share a link direction at the same
// time (the ACKs come back a hop later), so each is the pair's latency
// alone. The mean of the post-to-receive-completion times.
double t_step_seconds(uint32_t n) {
  const Scenario sc = load_scenario_text(fabric(sus_for(n), ""), "t_step");
  std::vector<ImmLog> logs(n);
  RunOptions o;
  o.add_workloads = [&](Simulation& sim, const std::vector<RdmaNic*>& nics,
                        std::vector<Workload*>& all) {
    for (uint32_t i = 0; i < n; ++i) {
      all.push_back(&sim.add<ImmWorkload>(nics, i * kGpus, (i + 1) % n * kGpus, 1, 8, logs[i]));
    }
  };
  const RunResult r = run_scenario(sc, o);
  REQUIRE(r.status == RunStatus::kComplete);
  double sum = 0;
  for (const ImmLog& l : logs) {
    REQUIRE(l.receives.size() == 1);
    sum += l.receives[0].second.completed.in_seconds();  // posted at 0
  }
  return sum / n;
}

double all_reduce_seconds(uint32_t n, const std::string& algorithm, int64_t bytes) {
  const Ran ran = run_text(fabric(sus_for(n), R"({"kind": "collective", "op": "all_reduce",
      "algorithm": ")" + algorithm + R"(", "size": )" +
                                                  std::to_string(bytes) + R"(, "ranks": )" +
                                                  rail0_ranks(n) + "}"));
  REQUIRE(ran.result.status == RunStatus::kComplete);
  const CollectiveResult& c = ran.result.collectives.at(0);
  REQUIRE(c.completed == 1);
  return c.iters.at(0).time_us * 1e-6;
}

// Least squares y = a + b x: slope b and R^2.
struct Fit {
  double slope, r2;
};
Fit fit(const std::vector<double>& x, const std::vector<double>& y) {
  const auto m = static_cast<double>(x.size());
  double sx = 0, sy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    sx += x[i];
    sy += y[i];
  }
  const double mx = sx / m, my = sy / m;
  double sxx = 0, sxy = 0, syy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    sxx += (x[i] - mx) * (x[i] - mx);
    sxy += (x[i] - mx) * (y[i] - my);
    syy += (y[i] - my) * (y[i] - my);
  }
  const double b = sxy / sxx;
  double res = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double e = y[i] - (my + b * (x[i] - mx));
    res += e * e;
  }
  return {b, 1 - res / syy};
}

void check_v12(const std::vector<uint32_t>& sizes_n) {
  std::vector<double> n_x, log_x;
  for (const uint32_t n : sizes_n) {
    n_x.push_back(n);
    log_x.push_back(std::log2(n));
  }
  for (const int64_t bytes : {int64_t{8}, int64_t{1024}, int64_t{64} << 10}) {
    std::vector<double> ring, tree;
    for (const uint32_t n : sizes_n) {
      ring.push_back(all_reduce_seconds(n, "ring", bytes));
      tree.push_back(all_reduce_seconds(n, "tree", bytes));
      UNSCOPED_INFO(bytes << " B, n = " << n << ": ring " << ring.back() * 1e6 << " us, tree "
                          << tree.back() * 1e6 << " us");
    }
    INFO(bytes << " B");
    const Fit r = fit(n_x, ring);
    const Fit t = fit(log_x, tree);
    INFO("ring: slope " << r.slope * 1e9 << " ns per rank, R^2 " << r.r2 << "; tree: slope "
                        << t.slope * 1e6 << " us per doubling, R^2 " << t.r2);
    CHECK(r.slope > 0);
    CHECK(r.r2 >= 0.98);
    CHECK(t.slope > 0);
    CHECK(t.r2 >= 0.95);
    if (bytes == 8) {
      for (size_t i = 0; i < sizes_n.size(); ++i) {
        const uint32_t n = sizes_n[i];
        const double t_step = t_step_seconds(n);
        INFO("n = " << n << ": t_ring " << ring[i] * 1e6 << " us, 2(n-1) t_step "
                    << 2.0 * (n - 1) * t_step * 1e6 << " us (t_step " << t_step * 1e9 << " ns)");
        CHECK(ring[i] == Approx(2.0 * (n - 1) * t_step).epsilon(0.10));
        // V12's 10 % cannot tell one step more or less (1/(2(n-1)): 3.3 % at
        // n = 16). The model's own count, 2(n-1) steps and the first FIFO
        // writes' one, holds within 1 % (its pairs differ by up to 3 % in
        // latency, leaf or spine), which does tell it for n <= 32.
        CHECK(ring[i] == Approx((2.0 * (n - 1) + 1) * t_step).epsilon(0.01));
      }
    }
  }
}

}  // namespace

TEST_CASE(
    "V12 small-message AllReduce latency: ring linear in n, tree in log2 n, 8 B ring 2(n-1) "
    "t_step (n = 16..256)",
    "[validation][V12][collective][no_sanitizer]") {
  check_v12({16, 32, 64, 128, 256});
}

TEST_CASE("V12 small-message AllReduce latency at the extensive scale (n = 16..1024)",
          "[validation][V12][collective][extensive]") {
  check_v12({16, 32, 64, 128, 256, 512, 1024});
}
