// Collectives (models/collective/, docs/collectives.md) through whole runs.
// Expected values come from outside the code: the ring's alpha-beta time
// (Patarasuk & Yuan 2009; REFERENCES §4.2) with the RoCE v2 goodput of §3.4,
// nccl-tests' busbw definition (doc/PERFORMANCE.md), and the ring's byte
// counts; t_step is measured as in CASES.md V12.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "models/collective/collective.h"
#include "models/traffic/flow_generator.h"
#include "models/traffic/workload.h"
#include "sim/output/nccl_tests_table.h"
#include "sim/scenario/runner.h"
#include "test/support/collective_runs.h"
#include "test/support/imm_workload.h"
#include "test/support/run_helpers.h"

using namespace rdmasim;
using namespace rdmasim::testing;

namespace {

std::string star(uint32_t hosts, const std::string& delay, const std::string& traffic) {
  return R"({"fabric": {"link": {"rate": "100Gbps", "delay": ")" + delay +
         R"("}, "mtu": 4096}, "topology": {"kind": "star", "hosts": )" + std::to_string(hosts) +
         R"(}, "traffic": [)" + traffic + "]}";
}

// t_step as CASES.md V12 defines it: from posting one 8-byte message to its
// completion at the receiver, one hop (through the star's switch) away.
Time measure_t_step(uint32_t hosts, const std::string& delay) {
  const Scenario sc = load_scenario_text(star(hosts, delay, ""), "t_step");
  ImmLog log;
  RunOptions o;
  o.add_workloads = [&](Simulation& sim, const std::vector<RdmaNic*>& nics,
                        std::vector<Workload*>& all) {
    all.push_back(&sim.add<ImmWorkload>(nics, 0, 1, 1, 8, log));
  };
  const RunResult r = run_scenario(sc, o);
  REQUIRE(r.status == RunStatus::kComplete);
  REQUIRE(log.receives.size() == 1);
  return log.receives[0].second.completed;  // posted at 0
}

}  // namespace

TEST_CASE(
    "ring AllReduce on a star: time within 0.5 % of 2(N-1)/N S/B_eff + 2(N-1) t_step and above "
    "the bandwidth term by at most 2(N-1)+1 steps, busbw within 0.5 % of B_eff",
    "[scenario][collective]") {
  // B_eff: 4096 payload bytes per 4178 wire bytes of data (82 bytes of
  // preamble, Ethernet, IPv4, UDP, BTH, ICRC, FCS and gap; REFERENCES §3.4)
  // plus one 86-byte ACK (the same and a 4-byte AETH) per packet of the
  // opposite neighbour's data sharing each link direction (ack_interval 1).
  const double rate = 100e9 / 8;  // bytes/s
  const double b_eff = rate * 4096.0 / (4178.0 + 86.0);
  const std::string delay = "500ns";
  for (const uint32_t n : {4u, 8u}) {
    const int64_t size = int64_t{64} << 20;
    INFO("N = " << n);
    const Time t_step = measure_t_step(n, delay);
    const Ran ran = run_text(star(n, delay,
                                  R"({"kind": "collective", "op": "all_reduce", "size": ")" +
                                      std::to_string(size) + R"("})"));
    REQUIRE(ran.result.status == RunStatus::kComplete);
    REQUIRE(ran.result.collectives.size() == 1);
    const CollectiveResult& c = ran.result.collectives[0];
    REQUIRE(c.completed == 1);
    const double bw_term = 2.0 * (n - 1) / n * static_cast<double>(size) / b_eff;
    const double expected = bw_term + 2.0 * (n - 1) * t_step.in_seconds();
    const double t = c.iters[0].time_us * 1e-6;
    INFO("t = " << t * 1e6 << " us, expected " << expected * 1e6 << " us, t_step " << t_step.in_ns()
                << " ns");
    CHECK(t == Approx(expected).epsilon(0.005));
    // At 64 MiB the latency term is under 0.2 % of t, below that tolerance,
    // so it is checked on its own: the time above the bandwidth term is
    // positive and at most the ring's 2(N-1) steps plus the receivers' first
    // FIFO writes (one more step; pipelining hides part of the rest).
    CHECK(t - bw_term > 0);
    CHECK(t - bw_term <= (2.0 * (n - 1) + 1) * t_step.in_seconds());
    // nccl-tests' busbw: S/t x 2(N-1)/N, in GB/s (1e9 bytes/s).
    CHECK(c.busbw_gbps == Approx(static_cast<double>(size) / t * 2.0 * (n - 1) / n * 1e-9));
    CHECK(c.busbw_gbps * 1e9 == Approx(b_eff).epsilon(0.005));
    CHECK(c.busbw_gbps * 1e9 < b_eff);
  }
}

namespace {

// Five ranks (an odd ring), two channels, three iterations with a gap, a
// reduction cost, and a buffer small enough that chunks take several slots
// and slots are reused within a step.
std::string small_collective(const std::string& op, const std::string& algorithm = "ring") {
  return star(6, "1us",
              R"({"kind": "collective", "op": ")" + op + R"(", "algorithm": ")" + algorithm +
                  R"(", "size": 1200000, "ranks": ["h1", "h2", 3, "h4", "h5"],
                   "channels": 2, "iterations": 3, "gap": "3us", "start": "2us",
                   "reduce_rate": "800Gbps", "nccl_buffsize": "256KiB"})");
}

}  // namespace

TEST_CASE("ring collectives: bytes per rank, one completion per iteration, same on 1-3 threads",
          "[scenario][collective]") {
  for (const std::string op : {"all_reduce", "all_gather", "reduce_scatter"}) {
    INFO(op);
    const Scenario sc = load_scenario_text(small_collective(op), "small");
    const std::vector<RunResult> runs = run_on_1_2_3_threads(sc);
    const CollectiveResult& c = runs[0].collectives.at(0);
    const uint32_t n = 5;
    const int64_t size = 1200000;
    // The ring's bytes per rank and iteration: 2(n-1) chunks of size/n for
    // AllReduce, n-1 for AllGather and ReduceScatter.
    const int64_t per_iter = (op == "all_reduce" ? 2 * (n - 1) : n - 1) * (size / n);
    REQUIRE(c.rank_bytes_received.size() == n);
    for (const int64_t b : c.rank_bytes_received) CHECK(b == 3 * per_iter);
    CHECK(c.completed == 3);
    CHECK(c.iters.size() == 3);
    // Iteration i+1 starts on each rank `gap` after that rank's end of
    // iteration i, so at least `gap` after iteration i started.
    CHECK(c.iters[0].start == Time::us(2));
    for (uint32_t i = 0; i + 1 < 3; ++i)
      CHECK(c.iters[i + 1].start >= c.iters[i].start + Time::us(3));
    // Every rank and step of every iteration: received one chunk per
    // channel, started and ended once.
    REQUIRE(c.step_rows.size() == size_t{3} * n * c.steps);
    for (const CollectiveResult::Step& s : c.step_rows.all()) {
      CHECK(s.bytes == size / n);
      CHECK(!s.start.is_infinite());
      CHECK(!s.end.is_infinite());
    }
    check_same_as_first(runs);
  }
}

TEST_CASE("each iteration of a collective ends exactly once on every rank (ring and tree)",
          "[quick][scenario][collective]") {
  for (const std::string algorithm : {"ring", "tree"}) {
    INFO(algorithm);
    const Scenario sc = load_scenario_text(small_collective("all_reduce", algorithm), "small");
    const std::vector<uint32_t> ends = rank_iteration_ends(sc);
    REQUIRE(ends.size() == 15);
    for (const uint32_t e : ends) CHECK(e == 1);
  }
}

TEST_CASE(
    "one float over 3 channels, ring and tree: the channels and chunks left empty cannot hang an "
    "iteration; each ends once on every rank and the bytes are 2(n-1) floats per iteration",
    "[quick][scenario][collective]") {
  // 4 bytes: channel 0 (tree channel 0) carries the one float, the others
  // nothing; the ring's chunks but the first are empty, still sent step by
  // step. Every edge of a ring step, or of a tree up and down, moves the
  // float once: 2(n-1) x 4 bytes received in all per iteration.
  const uint32_t n = 5;
  for (const std::string algorithm : {"ring", "tree"}) {
    INFO(algorithm);
    const Scenario sc = load_scenario_text(
        star(n, "1us",
             R"({"kind": "collective", "op": "all_reduce", "size": 4, "channels": 3,
                 "iterations": 2, "qps_per_connection": 2, "algorithm": ")" +
                 algorithm + R"("})"),
        "float");
    RunOptions o = testing::checked();
    const RunResult r = run_scenario(sc, o);
    REQUIRE(r.status == RunStatus::kComplete);
    const CollectiveResult& c = r.collectives.at(0);
    CHECK(c.completed == 2);
    int64_t received = 0;
    for (const int64_t b : c.rank_bytes_received) received += b;
    CHECK(received == 2 * int64_t{2} * (n - 1) * 4);
    const std::vector<uint32_t> ends = rank_iteration_ends(sc);
    REQUIRE(ends.size() == 2 * n);
    for (const uint32_t e : ends) CHECK(e == 1);
  }
}

TEST_CASE("a workload sharing NICs with a collective: each gets only its own completions",
          "[quick][scenario][collective][workload]") {
  const Scenario sc = load_scenario_text(
      star(
          4, "1us",
          R"({"kind": "collective", "op": "all_reduce", "size": "1MiB", "nccl_buffsize": "64KiB"})"),
      "shared");
  for (const uint32_t threads : {1u, 2u}) {
    INFO(threads << " threads");
    constexpr uint32_t kMessages = 10;
    constexpr int64_t kBytes = 32 * 1024;
    ImmLog log;
    RunOptions o;
    o.threads = threads;
    o.add_workloads = [&](Simulation& sim, const std::vector<RdmaNic*>& nics,
                          std::vector<Workload*>& all) {
      all.push_back(&sim.add<ImmWorkload>(nics, 0, 1, kMessages, kBytes, log));
    };
    const RunResult r = run_scenario(sc, o);
    REQUIRE(r.status == RunStatus::kComplete);
    // The collective: every rank got the ring's bytes, 2(n-1)/n x 1 MiB.
    const CollectiveResult& c = r.collectives.at(0);
    CHECK(c.completed == 1);
    for (const int64_t b : c.rank_bytes_received) CHECK(b == 6 * (int64_t{1} << 20) / 4);
    // The test workload: its messages' completions only, on its own QPs.
    REQUIRE(log.sends.size() == kMessages);
    REQUIRE(log.receives.size() == kMessages);
    for (uint32_t i = 0; i < kMessages; ++i) {
      const auto& [sh, s] = log.sends[i];
      CHECK(sh == 0);
      CHECK(s.qpn == log.qs);
      CHECK(s.wr_id == i);
      CHECK(s.bytes == kBytes);
      const auto& [rh, rc] = log.receives[i];
      CHECK(rh == 1);
      CHECK(rc.qpn == log.qd);
      CHECK(rc.imm == 1000 + i);
      CHECK(rc.bytes == kBytes);
    }
  }
}

TEST_CASE("small ring AllReduce: 2(n-1) steps of t_step one after another (V12)",
          "[quick][scenario][collective]") {
  // CASES.md V12: at a tiny size the ring runs its 2(n-1) steps one after
  // another, t within 10 % of 2(n-1) t_step. One float per rank (4n bytes).
  // The model adds one step at the start (the receivers' first FIFO writes,
  // 64 bytes, before any data may go): about 1/(2(n-1)) above, 3 % at n = 16.
  for (const uint32_t n : {16u, 32u}) {
    INFO("n = " << n);
    const Time t_step = measure_t_step(n, "1us");
    const Ran ran = run_text(star(
        n, "1us",
        R"({"kind": "collective", "op": "all_reduce", "size": )" + std::to_string(4 * n) + "}"));
    REQUIRE(ran.result.status == RunStatus::kComplete);
    const double t = ran.result.collectives.at(0).iters.at(0).time_us * 1e-6;
    const double expected = 2.0 * (n - 1) * t_step.in_seconds();
    INFO("t = " << t * 1e6 << " us, 2(n-1) t_step = " << expected * 1e6 << " us");
    CHECK(t == Approx(expected).epsilon(0.10));
    // And the model's own count, 2(n-1) + 1 steps, within 1 % (a FIFO
    // write is 64 bytes, not 8: a few ns more than t_step).
    CHECK(t == Approx((2.0 * (n - 1) + 1) * t_step.in_seconds()).epsilon(0.01));
  }
}

TEST_CASE(
    "double binary tree AllReduce on a star: busbw at most B_eff (n-1)/n and within 10 % of it",
    "[scenario][collective]") {
  // REFERENCES §4.2: each tree carries S/2; every rank sends and receives
  // about 2S in all (an inner node of one tree and a leaf of the other), so
  // t >= 2S / B_eff and busbw = S/t x 2(n-1)/n <= B_eff (n-1)/n. B_eff as
  // in the ring test above: every link direction carries data and the ACKs
  // of data going the other way, 4096 / (4178 + 86) of the line rate.
  const double rate = 100e9 / 8;  // bytes/s
  const double b_eff = rate * 4096.0 / (4178.0 + 86.0);
  const uint32_t n = 8;
  const int64_t size = int64_t{64} << 20;
  const Ran ran = run_text(star(n, "500ns",
                                R"({"kind": "collective", "op": "all_reduce", "algorithm": "tree",
                                    "size": ")" +
                                    std::to_string(size) + R"("})"));
  REQUIRE(ran.result.status == RunStatus::kComplete);
  const CollectiveResult& c = ran.result.collectives.at(0);
  REQUIRE(c.completed == 1);
  const double bound = b_eff * (n - 1) / n;
  INFO("n = " << n << ": busbw " << c.busbw_gbps << " GB/s, bound " << bound * 1e-9 << " GB/s");
  CHECK(c.busbw_gbps * 1e9 <= bound);
  CHECK(c.busbw_gbps * 1e9 >= 0.9 * bound);
  // Every rank received what the trees send it (tree_test.cpp derives it):
  // S for ranks 0 and n-1 (a root with one child in one tree, a leaf in the
  // other), 2S for the others.
  for (uint32_t r = 0; r < n; ++r) {
    CHECK(c.rank_bytes_received.at(r) == (r == 0 || r == n - 1 ? size : 2 * size));
  }
}

TEST_CASE("tree AllReduce: bytes per rank, one completion per iteration, same on 1-3 threads",
          "[quick][scenario][collective]") {
  // Five ranks (n odd: tree 1 is tree 0 shifted by one rank), two channels,
  // three iterations, a reduction cost and slots reused within a tree.
  const Scenario sc = load_scenario_text(small_collective("all_reduce", "tree"), "tree");
  const std::vector<RunResult> runs = run_on_1_2_3_threads(sc);
  const CollectiveResult& c = runs[0].collectives.at(0);
  CHECK(c.completed == 3);
  CHECK(c.iters.size() == 3);
  CHECK(c.steps == 2);
  // NCCL's trees for 5 ranks (trees.cc): tree 0 is 0-4, 4-2, 2-{1,3}; tree
  // 1 (shifted) is 1-0, 0-3, 3-{2,4}. A rank receives a tree's half H = S/2
  // from each child and from its parent: rank 0 1 + 2 halves, rank 1 1 + 1,
  // rank 2 3 + 1, rank 3 1 + 3, rank 4 2 + 1; 16 halves = 2(n-1) S in all.
  const int64_t half = 1200000 / 2;
  const std::vector<int64_t> halves{3, 2, 4, 4, 3};
  REQUIRE(c.rank_bytes_received.size() == 5);
  for (uint32_t r = 0; r < 5; ++r) CHECK(c.rank_bytes_received[r] == 3 * halves[r] * half);
  // The step rows (0: reduce, 1: broadcast) add up to the same per iteration.
  std::vector<int64_t> per_rank(5, 0);
  REQUIRE(c.step_rows.size() == size_t{3} * 5 * 2);
  for (const CollectiveResult::Step& s : c.step_rows.all()) per_rank.at(s.rank) += s.bytes;
  for (uint32_t r = 0; r < 5; ++r) CHECK(per_rank[r] == 3 * halves[r] * half);
  check_same_as_first(runs);
}

TEST_CASE("tree AllReduce: a node reduces its two children's chunks one after another",
          "[quick][scenario][collective]") {
  // Five ranks: in tree 0 rank 2 has the children 1 and 3 (trees.cc, as
  // above). Each child sends it its reduced half S/2 of the tree's data, so
  // rank 2's reduction takes in S bytes; at reduce_rate R, one after another
  // on its channel, that is 8 S / R at least, far above the links' 100 Gb/s.
  // Reducing the two children at once (twice R) would end in about half.
  const int64_t size = 2400000;
  const Scenario sc = load_scenario_text(
      star(6, "1us",
           R"({"kind": "collective", "op": "all_reduce", "algorithm": "tree", "size": )" +
               std::to_string(size) + R"(, "ranks": ["h1", "h2", 3, "h4", "h5"],
                 "reduce_rate": "10Gbps", "nccl_buffsize": "256KiB"})"),
      "tree-reduce");
  const RunResult r = run_scenario(sc, {});
  REQUIRE(r.status == RunStatus::kComplete);
  const CollectiveResult& c = r.collectives.at(0);
  REQUIRE(c.iters.size() == 1);
  const Time bound = Time::ps(8 * size * 100);  // 8 S / 10 Gb/s: 100 ps per bit
  CHECK(c.iters[0].end - c.iters[0].start >= bound);
}

TEST_CASE(
    "QPs per connection: each element split over the QPs as NCCL splits a transfer, one UDP "
    "source port per QP",
    "[quick][scenario][collective]") {
  // NCCL's IB transport (net_ib.cc, NCCL_IB_SPLIT_DATA_ON_QPS) gives each
  // of q QPs ceil(ceil(b / q) / 128) x 128 bytes of a transfer of b bytes,
  // the last QP what is left. Ring AllReduce over 4 ranks, one channel,
  // 8 KiB slots (64 KiB buffer): each rank's 33,768-byte chunk per step is
  // 4 slots of 8192 bytes (a 32 KiB chunk, half the buffer) and one element
  // of 1008 bytes (a multiple of 16, so that NCCL's last-loop chunks are
  // equal); 2(n-1) = 6 steps. Over q = 3 QPs an 8192-byte element goes as
  // 2816 + 2816 + 2560 (ceil(8192/3) = 2731, rounded up to 22 x 128) and a
  // 1008-byte one as 384 + 384 + 240.
  const int64_t size = 4 * (32768 + 1008);
  const std::string text =
      star(4, "1us",
           R"({"kind": "collective", "op": "all_reduce", "size": )" + std::to_string(size) +
               R"(, "nccl_buffsize": "64KiB", "qps_per_connection": 3})");
  const Scenario sc = load_scenario_text(text, "qps");
  struct QpReader final : Component {
    QpReader(Simulation& sim, const Collective*& c, const std::vector<RdmaNic*>& nics,
             std::vector<std::vector<int64_t>>& bytes, std::vector<std::vector<uint32_t>>& ports)
        : Component(sim, "qp_reader"), c_(c), nics_(nics), bytes_(bytes), ports_(ports) {}
    void finish() override {
      for (uint32_t i = 0; i < c_->plan().conns.size(); ++i) {
        bytes_.emplace_back();
        ports_.emplace_back();
        const uint32_t sender = c_->spec().ranks[c_->plan().conns[i].sender];
        for (uint32_t q = 0; q < c_->spec().qps; ++q) {
          const QueuePair& qp = nics_[sender]->qp(c_->connection_qps(i, q).first);
          bytes_.back().push_back(qp.posted_bytes());
          ports_.back().push_back(qp.flow_hash());
        }
      }
    }
    const Collective*& c_;
    const std::vector<RdmaNic*>& nics_;
    std::vector<std::vector<int64_t>>& bytes_;
    std::vector<std::vector<uint32_t>>& ports_;
  };
  const Collective* coll = nullptr;
  std::vector<RdmaNic*> nics;
  std::vector<std::vector<int64_t>> bytes;
  std::vector<std::vector<uint32_t>> ports;
  RunOptions o;
  o.add_workloads = [&](Simulation&, const std::vector<RdmaNic*>& n, std::vector<Workload*>& all) {
    nics = n;
    for (Workload* w : all) {
      if (auto* c = dynamic_cast<const Collective*>(w)) coll = c;
    }
  };
  o.on_built = [&](Simulation& sim, const std::vector<Switch*>&) {
    sim.add<QpReader>(coll, nics, bytes, ports);
  };
  const RunResult r = run_scenario(sc, o);
  REQUIRE(r.status == RunStatus::kComplete);
  const CollectiveResult& c = r.collectives.at(0);
  CHECK(c.completed == 1);
  // The ring's bytes per rank do not depend on the QPs: 6 x 33,776.
  for (const int64_t b : c.rank_bytes_received) CHECK(b == 6 * (32768 + 1008));
  REQUIRE(bytes.size() == 4);
  const std::vector<int64_t> per_qp{24 * 2816 + 6 * 384, 24 * 2816 + 6 * 384, 24 * 2560 + 6 * 240};
  for (size_t i = 0; i < bytes.size(); ++i) {
    INFO("connection " << i);
    CHECK(bytes[i] == per_qp);
    // Three QPs, three UDP source ports for the switches' ECMP hash.
    REQUIRE(ports[i].size() == 3);
    CHECK(ports[i][0] != ports[i][1]);
    CHECK(ports[i][0] != ports[i][2]);
    CHECK(ports[i][1] != ports[i][2]);
  }
}

namespace {

// An nccl-tests sweep over five ranks of a star, two channels.
std::string sweep_collective(const std::string& sweep) {
  return star(6, "1us",
              R"({"kind": "collective", "op": "all_reduce", "ranks": [1, 2, 3, 4, 5],
                  "channels": 2, "nccl_buffsize": "256KiB", "sweep": )" +
                  sweep + "}");
}

}  // namespace

TEST_CASE(
    "sweep: sizes in whole floats as nccl-tests takes them, time the timed iterations over "
    "their number, algbw and busbw as nccl-tests, same on 1-3 threads",
    "[scenario][collective][sweep]") {
  const Scenario sc = load_scenario_text(
      sweep_collective(R"({"min_bytes": "16KiB", "max_bytes": "256KiB", "step_factor": 4,
                          "iters": 2, "warmup_iters": 1})"),
      "sweep");
  // all_reduce takes any float count (nccl-tests: size / 4 elements), so
  // the sizes are exactly 16, 64 and 256 KiB.
  const std::vector<RunResult> runs = run_on_1_2_3_threads(sc);
  const CollectiveResult& c = runs[0].collectives.at(0);
  const uint32_t n = 5;
  REQUIRE(c.sweep.size() == 3);
  CHECK(c.iterations == 3 * (1 + 2));
  CHECK(c.completed == 9);
  const std::vector<int64_t> sizes = {16384, 65536, 262144};
  double avg = 0;
  for (size_t p = 0; p < 3; ++p) {
    const CollectiveResult::SweepRow& w = c.sweep[p];
    INFO("size " << p);
    CHECK(w.bytes == sizes[p]);
    CHECK(w.count == sizes[p] / 4);  // float elements of the whole buffer (all_reduce)
    CHECK(w.first_iteration == p * 3 + 1);
    CHECK(w.iters == 2);
    REQUIRE(w.done);
    // nccl-tests times the timed iterations together and divides: from the
    // first rank's start of the first to the last rank's end of the last.
    const Time span = c.iters[w.first_iteration + 1].end - c.iters[w.first_iteration].start;
    const double t = span.in_seconds() / 2;
    CHECK(w.time_us == t * 1e6);
    CHECK(w.algbw_gbps == static_cast<double>(sizes[p]) / t * 1e-9);
    CHECK(w.busbw_gbps == w.algbw_gbps * (2.0 * (n - 1) / n));
    avg += w.busbw_gbps;
  }
  // nccl-tests' "Avg bus bandwidth": over every size and both columns (equal).
  CHECK(c.avg_busbw_gbps == Approx(avg / 3).epsilon(1e-15));
  // The sizes follow one another on every rank.
  for (size_t i = 0; i + 1 < c.iters.size(); ++i) CHECK(c.iters[i + 1].start >= c.iters[i].start);
  check_same_as_first(runs);
}

TEST_CASE(
    "sweep: a swept size's time equals that size run alone with warmup_iters + iters "
    "iterations, the last iters timed, to the picosecond",
    "[scenario][collective][sweep]") {
  // No barrier between sizes (docs/collectives.md#sweeps): a size's timed
  // loop starts with the ranks as skewed as the iteration before left them,
  // so the comparison is with the same size after the same number of
  // iterations; nothing of the previous size carries over on a star. The
  // sizes are multiples of 16 x 5 ranks x 2 channels, so that every rank's
  // chunk is the same (NCCL's 16-byte chunk alignment leaves uneven chunks
  // otherwise, whose skew depends on where the ranks started).
  const Ran swept = run_text(sweep_collective(
      R"({"min_bytes": "16000B", "max_bytes": "256000B", "step_factor": 4, "iters": 2,
          "warmup_iters": 1})"));
  REQUIRE(swept.result.status == RunStatus::kComplete);
  const CollectiveResult& c = swept.result.collectives.at(0);
  for (const CollectiveResult::SweepRow& w : c.sweep) {
    INFO("size " << w.bytes);
    const Ran alone = run_text(star(6, "1us",
                                    R"({"kind": "collective", "op": "all_reduce",
                                        "ranks": [1, 2, 3, 4, 5], "channels": 2,
                                        "nccl_buffsize": "256KiB", "iterations": 3, "size": )" +
                                        std::to_string(w.bytes) + "}"));
    REQUIRE(alone.result.status == RunStatus::kComplete);
    const CollectiveResult& a = alone.result.collectives.at(0);
    const Time t_swept = c.iters[w.first_iteration + 1].end - c.iters[w.first_iteration].start;
    const Time t_alone = a.iters[2].end - a.iters[1].start;
    CHECK(t_swept == t_alone);
  }
}

TEST_CASE("sweep: the table has nccl-tests' header lines, column ends and number formats",
          "[quick][collective][sweep]") {
  // A row and the header of all_reduce_perf as nccl-tests prints them
  // (common.cu's formats; -c 0 prints N/A for #wrong).
  const std::string header =
      "#                                                              out-of-place            "
      "           in-place\n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     "
      "time   algbw   busbw #wrong\n"
      "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            "
      "(us)  (GB/s)  (GB/s)\n";
  const std::string nccl_row =
      "   134217728      33554432     float     sum      -1   1211.2  110.81  110.81    N/A   "
      "1211.2  110.81  110.81    N/A";
  CollectiveResult c;
  c.name = "ar";
  c.op = "all_reduce";
  c.ranks = 2;
  c.warmup_iters = 5;
  CollectiveResult::SweepRow w;
  w.bytes = 134217728;
  w.count = 33554432;
  w.iters = 20;
  w.done = true;
  w.time_us = 1211.2;
  w.algbw_gbps = 110.81;
  w.busbw_gbps = 110.81;
  c.sweep.push_back(w);
  c.avg_busbw_gbps = 110.81;
  const std::string table = nccl_tests_table(c);
  std::vector<std::string> lines;
  for (size_t at = 0; at < table.size();) {
    const size_t end = table.find('\n', at);
    std::string line = table.substr(at, end - at);
    line.erase(line.find_last_not_of(' ') + 1);  // nccl-tests pads its header lines
    lines.push_back(line);
    at = end + 1;
  }
  REQUIRE(lines.size() == 8);
  CHECK(lines[1] == "#");
  CHECK(lines[2] + "\n" + lines[3] + "\n" + lines[4] + "\n" == header);
  CHECK(lines[5] == nccl_row);
  CHECK(lines[6] == "# Avg bus bandwidth    : 110.81");
  CHECK(lines[7] == "#");
  // The time column's three formats, and all_gather's redop.
  CHECK(nccl_tests_time(22.0712) == "  22.07");
  CHECK(nccl_tests_time(154.43) == "  154.4");
  CHECK(nccl_tests_time(12345.6) == "  12346");
  c.op = "all_gather";
  CHECK(nccl_tests_table(c).find("     float    none      -1") != std::string::npos);
}
