// DCQCN outputs (docs/congestion-control.md, "Outputs"): the per-QP samples
// of /cc_samples, the CNP and ECN-echo counts, and the measurement window
// (output.window), through the scenario runner.
#include <unistd.h>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "sim/output/summary.h"
#include "sim/output/trace_writer.h"
#include "sim/scenario/scenario_error.h"
#include "test/support/catch_units.h"
#include "test/support/cc_decimation.h"
#include "test/support/run_helpers.h"

using namespace rdmasim;
using namespace rdmasim::testing;

namespace {

// A 4:1 DCQCN incast through one switch at 100 G: RED with kmin = kmax =
// 20 KB marks every packet that finds more than 20 KB queued; a 20 us
// increase timer, so that rates move both ways.
const char* kIncast = R"({
  "name": "cc_outputs",
  "fabric": {
    "link": {"rate": "100Gbps", "delay": "1us"},
    "switch": {"ecn": {"enabled": true, "kmin": "20KB", "kmax": "20KB", "pmax": 1}},
    "cc": {"algorithm": "dcqcn", "dcqcn": {"rpg_time_reset": "20us"}}
  },
  "topology": {"kind": "star", "hosts": 5},
  "traffic": [{"kind": "incast", "senders": ["h1", "h2", "h3", "h4"], "dst": "h0",
               "size": "1MiB"}]
})";

Ran run_with(const char* text, std::vector<std::string> sets) {
  LoadOptions o;
  o.overrides = std::move(sets);
  return run_text(text, o);
}

// A QP's rows: (flow, part, sender) -> its states, with their row times and
// change counts.
struct QpRows {
  std::vector<CcState> states;
  std::vector<Time> times;
  std::vector<uint32_t> changes;
};
using Key = std::tuple<uint32_t, uint32_t, bool>;

std::map<Key, QpRows> by_qp(const RunResult& r) {
  std::map<Key, QpRows> m;
  for (const CcSampleResult& s : r.cc_samples.all()) {
    QpRows& q = m[{s.flow, s.part, s.sender}];
    q.states.push_back(s.state);
    q.times.push_back(s.time);
    q.changes.push_back(s.changes);
  }
  return m;
}

bool same_samples(const RunResult& a, const RunResult& b) {
  const std::vector<CcSampleResult> as = a.cc_samples.all(), bs = b.cc_samples.all();
  if (as.size() != bs.size()) return false;
  for (size_t i = 0; i < as.size(); ++i) {
    const CcSampleResult &x = as[i], &y = bs[i];
    if (std::tie(x.time, x.flow, x.part, x.host, x.qpn, x.sender, x.changes) !=
            std::tie(y.time, y.flow, y.part, y.host, y.qpn, y.sender, y.changes) ||
        x.state.time != y.state.time || x.state.rate_bps != y.state.rate_bps ||
        x.state.target_bps != y.state.target_bps || x.state.alpha != y.state.alpha ||
        x.state.window != y.state.window) {
      return false;
    }
  }
  return true;
}

constexpr double kLine = 100e9;

}  // namespace

TEST_CASE("cc samples: on change, decimated, and recording changes no event",
          "[quick][cc][cc_samples]") {
  const Ran off = run_text(kIncast);
  const Ran every = run_with(kIncast, {"output.cc_interval=0s"});
  REQUIRE(off.result.status == RunStatus::kComplete);
  CHECK(off.result.cc_samples.empty());
  // The same events, in the same order, with the table on and off.
  CHECK(every.result.fingerprint == off.result.fingerprint);
  CHECK(every.result.events == off.result.events);
  REQUIRE(every.result.flows.size() == 4);
  for (size_t i = 0; i < 4; ++i) CHECK(every.result.flows[i].finish == off.result.flows[i].finish);

  // With "0s", every change: each QP's rows are DCQCN's rules applied in
  // turn. A row that lowers RC is a cut, RC <- max(RC (1 - alpha/2), RC/2,
  // 1 Mb/s) with the alpha it reports; one that does not is an increase,
  // RC <- (RT + RC) / 2 (or the maximum, once there). The first is the
  // first CNP's cut from line rate with alpha 1023/1024; RT stays at line
  // rate until a timer increase (clamp_tgt_rate_after_time_inc).
  const std::map<Key, QpRows> all = by_qp(every.result);
  REQUIRE(all.size() == 4);  // the four senders; the receiver's QPs never change
  for (const auto& [key, q] : all) {
    const auto [flow, part, sender] = key;
    INFO("flow " << flow);
    CHECK(sender);
    CHECK(part == 0);
    REQUIRE(q.states.size() >= 3);
    const CcState& first = q.states[0];
    CHECK(first.alpha == 1023.0 / 1024);
    CHECK(first.rate_bps == Approx(kLine * (1 - 1023.0 / 2048)).epsilon(1e-12));
    CHECK(first.target_bps == kLine);
    uint64_t cuts = 1;
    for (size_t i = 1; i < q.states.size(); ++i) {
      INFO("change " << i);
      const CcState &prev = q.states[i - 1], &s = q.states[i];
      CHECK(q.times[i] == s.time);
      CHECK(q.changes[i] == 1);
      CHECK(s.time >= prev.time);
      CHECK(s.window == -1);
      if (s.rate_bps < prev.rate_bps) {
        ++cuts;
        const double want = std::max({prev.rate_bps * (1 - s.alpha / 2), prev.rate_bps / 2, 1e6});
        CHECK(s.rate_bps == Approx(want).epsilon(1e-12));
        CHECK((s.target_bps == prev.target_bps || s.target_bps == prev.rate_bps));
      } else {
        CHECK(s.target_bps >= prev.target_bps);
        CHECK(s.target_bps <= kLine);
        const double half = (s.target_bps + prev.rate_bps) / 2;
        CHECK((s.rate_bps == Approx(half).epsilon(1e-12) || s.rate_bps == kLine));
      }
      CHECK((s.alpha > 0 && s.alpha <= 1));
    }
    CHECK(cuts == every.result.flows[flow].rate_cuts);
  }

  // With an interval, each QP's rows are those changes decimated (the
  // contract, test/support/cc_decimation.h), and the run is the same.
  for (const char* interval : {"1us", "3us", "10us", "40us"}) {
    INFO("interval " << interval);
    const Ran dec = run_with(kIncast, {std::string("output.cc_interval=") + interval});
    CHECK(dec.result.fingerprint == off.result.fingerprint);
    const Time I = dec.scenario.output.cc_interval;
    const std::map<Key, QpRows> got = by_qp(dec.result);
    REQUIRE(got.size() == all.size());
    for (const auto& [key, q] : all) {
      INFO("flow " << std::get<0>(key));
      const std::vector<ExpectedRow> want = decimate(q.states, I, dec.result.sim_time);
      const QpRows& g = got.at(key);
      REQUIRE(g.states.size() == want.size());
      for (size_t i = 0; i < want.size(); ++i) {
        INFO("row " << i);
        CHECK(g.times[i] == want[i].time);
        CHECK(g.states[i].time == want[i].state.time);
        CHECK(g.states[i].rate_bps == want[i].state.rate_bps);
        CHECK(g.states[i].target_bps == want[i].state.target_bps);
        CHECK(g.states[i].alpha == want[i].state.alpha);
        CHECK(g.changes[i] == want[i].changes);
      }
      CHECK(spacing_violation(g.times, I) == -1);
      CHECK(g.states.size() <= q.states.size());
    }
    // The table is in time order.
    const std::vector<CcSampleResult> rows = dec.result.cc_samples.all();
    CHECK(std::is_sorted(
        rows.begin(), rows.end(),
        [](const CcSampleResult& a, const CcSampleResult& b) { return a.time < b.time; }));
  }
}

// Two fresh folders of this process's own under the temporary directory
// (suites run side by side, a sanitizer tree or another checkout, do not
// share them): `spool` for the runs' spills, `out` for the traces written;
// both gone when the test ends.
struct ScratchDirs {
  explicit ScratchDirs(const std::string& name) : spool(path(name)), out(path(name + "_out")) {
    for (const auto& d : {spool, out}) {
      std::filesystem::remove_all(d);
      std::filesystem::create_directories(d);
    }
  }
  ~ScratchDirs() {
    std::filesystem::remove_all(spool);
    std::filesystem::remove_all(out);
  }
  ScratchDirs(const ScratchDirs&) = delete;
  ScratchDirs& operator=(const ScratchDirs&) = delete;
  static std::filesystem::path path(const std::string& name) {
    return std::filesystem::temp_directory_path() / (name + "_" + std::to_string(::getpid()));
  }
  const std::filesystem::path spool, out;
};

// The trace.h5 of a run, as bytes.
std::string trace_bytes(const std::filesystem::path& path, const Scenario& sc, const RunResult& r) {
  write_trace(path.string(), sc, r);
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

TEST_CASE("time series flushed as the run goes, spilled in tiny chunks, equal those kept whole",
          "[quick][cc][cc_samples][threads]") {
  const Scenario sc =
      load_scenario_text(kIncast, "t",
                         LoadOptions{{"output.cc_interval=2us", "output.queue_interval=1us",
                                      "output.pfc_events=true", "output.link_interval=1us"},
                                     ""});
  RunOptions whole = testing::checked();
  whole.trace_flush_events = uint64_t{1} << 40;  // only at the end
  const RunResult ref = run_scenario(sc, whole);
  REQUIRE(ref.cc_samples.size() > 100);
  REQUIRE(ref.link_samples.size() > 100);
  REQUIRE(ref.queue_samples.size() > 100);
  const ScratchDirs scratch("rdmasim_spool_scenario");
  const std::filesystem::path& dir = scratch.spool;
  const std::filesystem::path& out = scratch.out;
  const std::string expected = trace_bytes(out / "whole.h5", sc, ref);
  REQUIRE(expected.size() > 1000);
  for (uint32_t n : {1u, 3u}) {
    INFO(n << " threads");
    RunOptions o = testing::checked();
    o.threads = n;
    o.spool_dir = dir.string();
    o.spool_chunk_rows = 5;
    o.trace_flush_events = 1;  // at every poll (4096 events)
    const RunResult r = run_scenario(sc, o);
    CHECK(r.cc_samples.spilled() > 0);
    CHECK(r.queue_samples.spilled() > 0);
    // Byte for byte, the tables written in hyperslabs of 5 rows.
    CHECK(trace_bytes(out / "spooled.h5", sc, r) == expected);
  }
  CHECK(std::filesystem::is_empty(dir));  // every spill file gone with its run
}

// Two 15:1 incasts on a k = 4 fat-tree with Trident2 buffers: with PFC
// the pause frames of many switches, without it their drops. Partitions
// record them apart; a flush merges the rows before the next event time.
const char* kFatTreeIncasts = R"({
  "name": "spool_merge",
  "fabric": {"link": {"rate": "100Gbps", "delay": "1us"}, "switch": {"preset": "trident2"},
             "nic": {"retransmit_timeout": "50us"}},
  "topology": {"kind": "fat_tree", "k": 4},
  "traffic": [{"kind": "incast", "senders": "all", "dst": 0, "size": "1MiB"},
              {"kind": "incast", "senders": "all", "dst": 9, "size": "1MiB", "start": "3us"}],
  "output": {"pfc_events": true, "drop_events": true, "queue_interval": "2us"}
})";

TEST_CASE(
    "PFC headroom auto: minimum-size frames charged whole cells; with small_packet_percentage 0 "
    "an ACK burst overfills it, counted as a risk taken, not a fault",
    "[quick][pfc][switch]") {
  // kFatTreeIncasts on trident2's 208-byte cells: each destination also
  // sends, so ACKs (86 bytes, a 208-byte cell each) reach the spines among
  // the data. The default (100: a headroom window all of minimum-size
  // frames) drops nothing; with 0 (frames of at least 1 KB assumed) the
  // headroom is under half as large and overflows: those drops are the
  // risk the setting took, counted, and the run completes under --check.
  for (const int percent : {100, 0}) {
    INFO("small_packet_percentage " << percent);
    LoadOptions lo;
    lo.overrides = {"fabric.switch.pfc.small_packet_percentage=" + std::to_string(percent)};
    const Scenario sc = load_scenario_text(kFatTreeIncasts, "t", lo);
    const RunResult r = run_scenario(sc, testing::checked());
    REQUIRE(r.status == RunStatus::kComplete);
    uint64_t headroom = 0;
    for (const auto& [reason, n] : r.switch_drops) headroom += reason == "headroom" ? n : 0;
    if (percent == 100) {
      CHECK(r.total_drops() == 0);
    } else {
      CHECK(headroom > 0);
      CHECK(r.lossless_drops_headroom_below_automatic == headroom);
    }
  }
}

TEST_CASE(
    "PFC and drop events flushed as the run goes, merged across partitions in tiny chunks, "
    "equal those kept whole",
    "[quick][pfc][threads]") {
  const ScratchDirs scratch("rdmasim_spool_merge");
  const std::filesystem::path& dir = scratch.spool;
  const std::filesystem::path& out = scratch.out;
  for (const bool lossless : {true, false}) {
    INFO((lossless ? "PFC" : "lossy"));
    LoadOptions lo;
    if (!lossless) lo.overrides = {"fabric.switch.pfc.lossless=[]"};
    const Scenario sc = load_scenario_text(kFatTreeIncasts, "t", lo);
    RunOptions whole = testing::checked();
    whole.trace_flush_events = uint64_t{1} << 40;  // only at the end
    const RunResult ref = run_scenario(sc, whole);
    REQUIRE(ref.status == RunStatus::kComplete);
    const std::vector<PfcEvent> pfc = ref.pfc_events.all();
    const std::vector<DropEvent> drops = ref.drop_events.all();
    // Many rows, from many switches, through a run of many polls.
    REQUIRE(ref.events > 40 * 4096);
    std::set<uint32_t> nodes;
    if (lossless) {
      REQUIRE(pfc.size() > 1000);
      REQUIRE(drops.empty());
      for (const PfcEvent& e : pfc) nodes.insert(e.node);
    } else {
      REQUIRE(pfc.empty());
      REQUIRE(drops.size() > 1000);
      for (const DropEvent& e : drops) nodes.insert(e.node);
    }
    // Pauses spread back through many switches; drops happen where the two
    // incasts converge, at their destinations' ToRs.
    CHECK(nodes.size() >= (lossless ? 4u : 2u));
    const std::string expected = trace_bytes(out / "whole.h5", sc, ref);
    for (uint32_t n : {1u, 3u}) {
      INFO(n << " threads");
      RunOptions o = testing::checked();
      o.threads = n;
      o.force_threads = true;  // partitions even where one thread would be faster
      o.spool_dir = dir.string();
      o.spool_chunk_rows = 3;
      o.trace_flush_events = 1;  // at every poll (4096 events)
      const RunResult r = run_scenario(sc, o);
      CHECK(r.threads == n);
      CHECK((lossless ? r.pfc_events.spilled() : r.drop_events.spilled()) > 0);
      CHECK(r.pfc_events.size() == pfc.size());
      CHECK(r.drop_events.size() == drops.size());
      CHECK(trace_bytes(out / "spooled.h5", sc, r) == expected);
    }
  }
  CHECK(std::filesystem::is_empty(dir));  // every spill file gone with its run
}

// A ring AllReduce of 1 MiB over 8 hosts of a star, 12 iterations: 96
// rank-iterations of 14 steps end over some 120 polls. Rank r on host 7 - r:
// on the symmetric star every rank ends an iteration at the same time, so
// the table's tie-break by node puts them in the reverse of rank order.
const char* kRingIterations = R"({
  "name": "steps_spool",
  "fabric": {"link": {"rate": "100Gbps", "delay": "1us"}, "mtu": 4096},
  "topology": {"kind": "star", "hosts": 8},
  "traffic": [{"kind": "collective", "op": "all_reduce", "size": "1MiB", "iterations": 12,
               "gap": "2us", "ranks": [7, 6, 5, 4, 3, 2, 1, 0]}]
})";

TEST_CASE(
    "collective steps flushed as the run goes, spilled in tiny chunks, equal those kept whole, "
    "in the order the ranks end their iterations",
    "[quick][collective][threads]") {
  const Scenario sc = load_scenario_text(kRingIterations, "t");
  RunOptions whole = testing::checked();
  whole.trace_flush_events = uint64_t{1} << 40;  // only at the end
  const RunResult ref = run_scenario(sc, whole);
  REQUIRE(ref.status == RunStatus::kComplete);
  REQUIRE(ref.events > 40 * 4096);
  const CollectiveResult& c = ref.collectives.at(0);
  const std::vector<CollectiveResult::Step> rows = c.step_rows.all();
  // One row per step of every rank's every iteration, each rank-iteration's
  // steps together and in order, iterations of a rank in order.
  REQUIRE(rows.size() == size_t{12} * 8 * 14);
  std::vector<uint32_t> next_iter(8, 0);
  std::vector<Time> ended(8, Time::zero());
  for (size_t i = 0; i < rows.size(); i += 14) {
    const CollectiveResult::Step& first = rows[i];
    CHECK(first.iter == next_iter.at(first.rank)++);
    for (uint32_t st = 0; st < 14; ++st) {
      CHECK(rows[i + st].rank == first.rank);
      CHECK(rows[i + st].iter == first.iter);
      CHECK(rows[i + st].step == st);
      CHECK(rows[i + st].done == first.done);
      CHECK(rows[i + st].bytes == (int64_t{1} << 20) / 8);
      CHECK(!rows[i + st].end.is_infinite());
    }
    // Each rank-iteration ended no earlier than the one before it in the
    // table, and after its own last step; at the same time, by node.
    CHECK(first.done >= rows[i + 13].end);
    CHECK(first.done > ended[first.rank]);
    ended[first.rank] = first.done;
    if (i > 0) {
      const CollectiveResult::Step& prev = rows[i - 14];
      CHECK(prev.done <= first.done);
      if (prev.done == first.done) CHECK(prev.host < first.host);
    }
  }
  // Not the order of iterations and ranks (ties go by node, the reverse).
  bool by_rank = true;
  for (size_t i = 14; i < rows.size(); i += 14) {
    const CollectiveResult::Step& a = rows[i - 14];
    const CollectiveResult::Step& b = rows[i];
    by_rank = by_rank && (a.iter < b.iter || (a.iter == b.iter && a.rank < b.rank));
  }
  CHECK(!by_rank);
  const ScratchDirs scratch("rdmasim_steps_spool");
  const std::filesystem::path& dir = scratch.spool;
  const std::filesystem::path& out = scratch.out;
  const std::string expected = trace_bytes(out / "whole.h5", sc, ref);
  for (uint32_t n : {1u, 3u}) {
    INFO(n << " threads");
    RunOptions o = testing::checked();
    o.threads = n;
    o.force_threads = true;
    o.spool_dir = dir.string();
    o.spool_chunk_rows = 5;
    o.trace_flush_events = 1;  // at every poll (4096 events)
    const RunResult r = run_scenario(sc, o);
    CHECK(r.threads == n);
    CHECK(r.collectives.at(0).step_rows.spilled() > 0);
    CHECK(trace_bytes(out / "spooled.h5", sc, r) == expected);
  }
  CHECK(std::filesystem::is_empty(dir));  // every spill file gone with its run
}

TEST_CASE(
    "collective steps of a run stopped early: every finished rank-iteration, then the open ones "
    "with their unreached steps",
    "[quick][collective]") {
  LoadOptions lo;
  lo.overrides = {"stop.time=\"30us\""};
  const Scenario sc = load_scenario_text(kRingIterations, "t", lo);
  const RunResult r = run_scenario(sc, testing::checked());
  REQUIRE(r.status != RunStatus::kComplete);
  const std::vector<CollectiveResult::Step> rows = r.collectives.at(0).step_rows.all();
  REQUIRE(rows.size() % 14 == 0);
  // Every rank has begun an iteration by 30 us and none has finished all
  // 12: each has rows up to its open iteration, whose last step is not done.
  std::vector<uint32_t> seen(8, 0);
  size_t open = 0;
  for (size_t i = 0; i < rows.size(); i += 14) {
    const CollectiveResult::Step& first = rows[i];
    CHECK(first.iter == seen.at(first.rank)++);
    if (rows[i + 13].end.is_infinite()) ++open;
  }
  CHECK(open == 8);
  for (uint32_t k : seen) CHECK(k >= 1);
  // The open ones come last.
  for (size_t i = rows.size() - 8 * 14; i < rows.size(); i += 14)
    CHECK(rows[i + 13].end.is_infinite());
}

TEST_CASE("cc samples, counts and the window are the same on 1, 2 and 3 threads",
          "[quick][cc][cc_samples][threads]") {
  const Scenario sc = load_scenario_text(
      kIncast, "t",
      LoadOptions{{"output.cc_interval=2us", R"(output.window={"start": "20us", "end": "150us"})"},
                  ""});
  const RunResult one = run_scenario(sc, testing::checked());
  REQUIRE(!one.cc_samples.empty());
  REQUIRE(one.window.queue_averages);
  for (uint32_t n : {2u, 3u}) {
    INFO(n << " threads");
    RunOptions o = testing::checked();
    o.threads = n;
    const RunResult r = run_scenario(sc, o);
    CHECK(same_samples(one, r));
    CHECK(r.cc.cnps_sent == one.cc.cnps_sent);
    CHECK(r.cc.rate_cuts == one.cc.rate_cuts);
    CHECK(r.window.pfc_frames_sent == one.window.pfc_frames_sent);
    for (size_t i = 0; i < one.flows.size(); ++i) {
      CHECK(r.flows[i].window_bytes == one.flows[i].window_bytes);
      CHECK(r.flows[i].cnps_received == one.flows[i].cnps_received);
      CHECK(r.flows[i].rate_cuts == one.flows[i].rate_cuts);
    }
    REQUIRE(r.queue_totals.size() == one.queue_totals.size());
    for (size_t i = 0; i < one.queue_totals.size(); ++i) {
      CHECK(r.queue_totals[i].window_mean_bytes == one.queue_totals[i].window_mean_bytes);
    }
    for (size_t i = 0; i < one.links.size(); ++i) {
      CHECK(r.links[i].window_wire_bytes == one.links[i].window_wire_bytes);
    }
  }
}

TEST_CASE("CNP counts: sent = received = the flows' sums; ECN echo counts without CNPs",
          "[quick][cc]") {
  SECTION("notification cnp") {
    const Ran r = run_text(kIncast);
    const RunResult& res = r.result;
    REQUIRE(res.drops_no_route + res.total_drops() == 0);
    CHECK(res.cc.cnps_sent > 0);
    CHECK(res.cc.cnps_sent == res.cc.cnps_received);
    uint64_t sent = 0, received = 0, cuts = 0, marked = 0;
    for (const FlowResult& f : res.flows) {
      INFO("flow " << f.id);
      // Each flow's receiver notifies that flow's sender, and nothing is lost.
      CHECK(f.cnps_sent == f.cnps_received);
      CHECK(f.cnps_sent > 0);
      CHECK(f.rate_cuts > 0);
      CHECK(f.rate_cuts <= f.cnps_received);  // at most one cut per signal
      CHECK(f.ecn_marked >= f.cnps_sent);     // at most one CNP per marked packet
      CHECK(f.ecn_echo_acks == 0);
      sent += f.cnps_sent;
      received += f.cnps_received;
      cuts += f.rate_cuts;
      marked += f.ecn_marked;
    }
    CHECK(sent == res.cc.cnps_sent);
    CHECK(received == res.cc.cnps_received);
    CHECK(cuts == res.cc.rate_cuts);  // the receivers never cut
    // Only data is ECN-capable: every packet the switch marked reached a NIC.
    CHECK(marked == res.cc.ecn_marked_received);
    CHECK(marked == res.ecn_marked);
    CHECK(res.cc.ecn_echo_acks_sent == 0);
    CHECK(res.cc.ecn_echo_acks_received == 0);
    // summary.json says the same.
    const nlohmann::json j = nlohmann::json::parse(summary_json(r.scenario, res));
    CHECK(j["cc"]["cnps_sent"] == res.cc.cnps_sent);
    CHECK(j["cc"]["cnps_received"] == res.cc.cnps_received);
    CHECK(j["cc"]["ecn_marked_received"] == res.cc.ecn_marked_received);
    CHECK(j["cc"]["rate_cuts"] == res.cc.rate_cuts);
    CHECK(j["cc"]["rate_releases"] == res.cc.rate_releases);
    for (const FlowResult& f : res.flows) {
      const nlohmann::json& pf = j["per_flow"][f.id];
      CHECK(pf["cnps_received"] == f.cnps_received);
      CHECK(pf["cnps_sent"] == f.cnps_sent);
      CHECK(pf["ecn_marked"] == f.ecn_marked);
      CHECK(pf["rate_cuts"] == f.rate_cuts);
      CHECK(pf["ecn_echo_acks"] == 0);
    }
    CHECK(human_summary(r.scenario, res)
              .find("CNPs: " + std::to_string(res.cc.cnps_sent) + " sent") != std::string::npos);
  }
  SECTION("notification ack_echo") {
    const Ran r = run_with(kIncast, {R"(fabric.cc.dcqcn.notification="ack_echo")"});
    const RunResult& res = r.result;
    CHECK(res.cc.cnps_sent == 0);
    CHECK(res.cc.cnps_received == 0);
    CHECK(res.cc.ecn_echo_acks_sent > 0);
    CHECK(res.cc.ecn_echo_acks_sent == res.cc.ecn_echo_acks_received);
    uint64_t echoes = 0;
    for (const FlowResult& f : res.flows) {
      CHECK(f.cnps_sent + f.cnps_received == 0);
      CHECK(f.ecn_echo_acks > 0);
      CHECK(f.rate_cuts > 0);
      CHECK(f.rate_cuts <= f.ecn_echo_acks);
      echoes += f.ecn_echo_acks;
    }
    CHECK(echoes == res.cc.ecn_echo_acks_received);
    CHECK(human_summary(r.scenario, res).find("CNPs") == std::string::npos);
  }
  SECTION("no congestion control: nothing") {
    const Ran r = run_with(kIncast, {R"(fabric.cc={"algorithm": "none"})"});
    CHECK(r.result.cc.cnps_sent + r.result.cc.cnps_received + r.result.cc.rate_cuts == 0);
    CHECK(r.result.cc.ecn_marked_received > 0);  // marked, but no one reacts
  }
}

TEST_CASE("CNP counts per traffic item: each item's flows, summed", "[quick][cc]") {
  // Two incasts on one fabric, to different receivers; the second item
  // without congestion control: marked, but no CNP and no cut.
  const char* two = R"({
    "name": "cc_items",
    "fabric": {
      "link": {"rate": "100Gbps", "delay": "1us"},
      "switch": {"ecn": {"enabled": true, "kmin": "20KB", "kmax": "20KB", "pmax": 1}},
      "cc": {"algorithm": "dcqcn"}
    },
    "topology": {"kind": "star", "hosts": 6},
    "traffic": [
      {"kind": "incast", "senders": ["h1", "h2"], "dst": "h0", "size": "512KiB"},
      {"kind": "incast", "senders": ["h4", "h5"], "dst": "h3", "size": "512KiB",
       "cc": {"algorithm": "none"}}
    ]
  })";
  const Ran r = run_text(two);
  REQUIRE(r.result.status == RunStatus::kComplete);
  const nlohmann::json j = nlohmann::json::parse(summary_json(r.scenario, r.result));
  const nlohmann::json& items = j["cc_by_item"];
  REQUIRE(items.size() == 2);
  uint64_t total_sent = 0, total_received = 0, total_cuts = 0;
  for (uint32_t i = 0; i < 2; ++i) {
    INFO("item " << i);
    uint64_t sent = 0, received = 0, marked = 0, cuts = 0;
    for (const FlowResult& f : r.result.flows) {
      if (f.item != i) continue;
      sent += f.cnps_sent;
      received += f.cnps_received;
      marked += f.ecn_marked;
      cuts += f.rate_cuts;
    }
    CHECK(items[i]["item"] == i);
    CHECK(items[i]["cnps_sent"] == sent);
    CHECK(items[i]["cnps_received"] == received);
    CHECK(items[i]["ecn_marked"] == marked);
    CHECK(items[i]["rate_cuts"] == cuts);
    CHECK(items[i]["ecn_echo_acks"] == 0);
    CHECK(marked > 0);
    if (i == 0) {
      CHECK(sent > 0);
      CHECK(cuts > 0);
    } else {
      CHECK(sent + received + cuts == 0);
    }
    total_sent += sent;
    total_received += received;
    total_cuts += cuts;
  }
  CHECK(total_sent == r.result.cc.cnps_sent);
  CHECK(total_received == r.result.cc.cnps_received);
  CHECK(total_cuts == r.result.cc.rate_cuts);
}

TEST_CASE("window: its counts add up over adjacent windows, and the whole run is the totals",
          "[quick][window][cc]") {
  // (0, 60 us] and (60 us, end]: each flow's bytes, its CNPs and cuts, the
  // links' frames and the PFC frames of the two windows sum to the run's.
  const Ran whole = run_text(kIncast);
  const Ran a = run_with(kIncast, {R"(output.window={"end": "60us"})"});
  const Ran b = run_with(kIncast, {R"(output.window={"start": "60us"})"});
  REQUIRE(whole.result.status == RunStatus::kComplete);
  REQUIRE(whole.result.sim_time > Time::us(120));
  // Outputs do not perturb the run.
  for (const Ran* x : {&a, &b}) {
    for (size_t i = 0; i < whole.result.flows.size(); ++i)
      CHECK(x->result.flows[i].finish == whole.result.flows[i].finish);
    CHECK(x->result.cc.cnps_sent == whole.result.cc.cnps_sent);
  }
  const RunResult::Window &wa = a.result.window, &wb = b.result.window, &w = whole.result.window;
  // Without a window: the whole run.
  CHECK(w.cnps_sent == whole.result.cc.cnps_sent);
  CHECK(w.cnps_received == whole.result.cc.cnps_received);
  CHECK(w.rate_cuts == whole.result.cc.rate_cuts);
  CHECK(wa.cnps_sent > 0);
  CHECK(wb.cnps_sent > 0);
  CHECK(wa.cnps_sent + wb.cnps_sent == w.cnps_sent);
  CHECK(wa.cnps_received + wb.cnps_received == w.cnps_received);
  CHECK(wa.rate_cuts + wb.rate_cuts == w.rate_cuts);
  CHECK(wa.ecn_echo_acks + wb.ecn_echo_acks == 0);
  CHECK(wa.pfc_frames_sent + wb.pfc_frames_sent == whole.result.pfc_frames_sent);
  for (size_t i = 0; i < whole.result.flows.size(); ++i) {
    INFO("flow " << i);
    CHECK(a.result.flows[i].window_bytes > 0);
    CHECK(a.result.flows[i].window_bytes + b.result.flows[i].window_bytes ==
          whole.result.flows[i].bytes);
  }
  for (size_t i = 0; i < whole.result.links.size(); ++i) {
    CHECK(a.result.links[i].window_frames + b.result.links[i].window_frames ==
          whole.result.links[i].frames);
    CHECK(a.result.links[i].window_busy + b.result.links[i].window_busy ==
          whole.result.links[i].busy);
  }
  const nlohmann::json j = nlohmann::json::parse(summary_json(a.scenario, a.result));
  CHECK(j["window"]["cnps_sent"] == wa.cnps_sent);
  CHECK(j["window"]["cnps_received"] == wa.cnps_received);
  CHECK(j["window"]["rate_cuts"] == wa.rate_cuts);
  CHECK(j["window"]["ecn_echo_acks"] == 0);
}

namespace {

// One flow alone, paced at 40 Gb/s on 100 G links through one switch: 600
// packets of 4096 bytes.
const char* kPaced = R"({
  "name": "window",
  "fabric": {"link": {"rate": "100Gbps", "delay": "1us"}},
  "topology": {"kind": "star", "hosts": 2},
  "traffic": [{"kind": "flow", "src": "h0", "dst": "h1", "size": 2457600, "rate": "40Gbps"}]
})";

// The paced flow's packets, from the formulas: packet k (1-based) starts at
// s(k): s(1) = 0, then each wire bytes / 40 Gb/s after the one before (the
// first carries a 16-byte RETH: 4194 bytes, the others 4178); it takes t(k)
// = wire / 100 Gb/s on each link; with nothing queued it starts on the
// switch's link at s(k) + t(k) + d and arrives at h1 at s(k) + 2 t(k) + 2 d.
struct Paced {
  static constexpr int kPackets = 600;
  static int64_t wire(int k) { return k == 1 ? 4194 : 4178; }
  static int64_t start(int k) {
    int64_t s = 0;
    for (int j = 1; j < k; ++j) s += wire(j) * 8 * 1000 / 40;  // ps at 40 Gb/s: 200 ps per byte
    return s;
  }
  static int64_t t(int k) { return wire(k) * 80; }  // 80 ps per byte at 100 Gb/s
  static int64_t at_switch_link(int k) { return start(k) + t(k) + 1'000'000; }
  static int64_t arrival(int k) { return start(k) + 2 * t(k) + 2'000'000; }
  // Packets whose `when` lies in (s, e].
  template <class F>
  static int count(F when, int64_t s, int64_t e) {
    int n = 0;
    for (int k = 1; k <= kPackets; ++k) n += s < when(k) && when(k) <= e ? 1 : 0;
    return n;
  }
};

}  // namespace

TEST_CASE("window: a paced flow delivers its rate times the window, to the packet",
          "[quick][window]") {
  const int64_t s = 100'000'000, e = 300'000'000;  // 100 us .. 300 us
  const Ran r = run_with(kPaced, {R"(output.window={"start": "100us", "end": "300us"})"});
  REQUIRE(r.result.status == RunStatus::kComplete);
  const FlowResult& f = r.result.flows[0];
  REQUIRE(f.first_tx == Time::zero());
  CHECK(r.result.window.start == Time::ps(s));
  CHECK(r.result.window.end == Time::ps(e));
  const int delivered = Paced::count(Paced::arrival, s, e);
  CHECK(f.window_bytes == int64_t{4096} * delivered);
  // The payload rate is 40 Gb/s x 4096 / 4178 (headers): within one packet.
  const double formula = 40e9 * 4096.0 / 4178.0 * 200e-6 / 8;
  CHECK(std::abs(static_cast<double>(f.window_bytes) - formula) <= 4096);
  // The switch's link to h1 started the data packets of the window (and
  // nothing else goes that way), each taking t at 100 Gb/s.
  const int on_link = Paced::count(Paced::at_switch_link, s, e);
  const auto to_h1 = std::find_if(
      r.result.links.begin(), r.result.links.end(),
      [&](const LinkResult& l) { return r.scenario.topology.node(l.to).name == "h1"; });
  REQUIRE(to_h1 != r.result.links.end());
  CHECK(to_h1->window_frames == static_cast<uint64_t>(on_link));
  CHECK(to_h1->window_payload_bytes == int64_t{4096} * on_link);
  CHECK(to_h1->window_wire_bytes == int64_t{4178} * on_link);
  CHECK(to_h1->window_busy == Time::ps(int64_t{334240} * on_link));
  // summary.json: the window's goodput is its bytes over its length.
  const nlohmann::json j = nlohmann::json::parse(summary_json(r.scenario, r.result));
  CHECK(j["window"]["start_ps"] == s);
  CHECK(j["window"]["end_ps"] == e);
  CHECK(j["window"]["payload_bytes"] == f.window_bytes);
  const double gbps = static_cast<double>(f.window_bytes) * 8 / 200e-6 * 1e-9;
  CHECK(j["window"]["goodput_gbps"].get<double>() == Approx(gbps).epsilon(1e-12));
  CHECK(j["per_flow"][0]["window_goodput_gbps"].get<double>() == Approx(gbps).epsilon(1e-12));
  CHECK(j["window"]["jain_fairness"].get<double>() == Approx(1.0).epsilon(1e-12));
  CHECK(j["window"]["flows_active"] == 1);
  CHECK(j["window"]["queues"]["max_mean_bytes"].get<double>() == 0.0);  // paced: never queues

  SECTION("recording the window changes no model event") {
    const Ran plain = run_text(kPaced);
    CHECK(plain.result.flows[0].finish == f.finish);
    CHECK(plain.result.packet_hops == r.result.packet_hops);
    // Two snapshot events (start and end) and nothing else.
    CHECK(r.result.events == plain.result.events + 2);
  }
  SECTION("no window: the whole run, whose figures are the totals") {
    const Ran plain = run_text(kPaced);
    CHECK_FALSE(plain.result.window.given);
    CHECK(plain.result.window.start == Time::zero());
    CHECK(plain.result.window.end == plain.result.sim_time);
    CHECK(plain.result.flows[0].window_bytes == 2457600);
    for (const LinkResult& l : plain.result.links) {
      CHECK(l.window_wire_bytes == l.wire_bytes);
      CHECK(l.window_busy == l.busy);
    }
    const nlohmann::json pj = nlohmann::json::parse(summary_json(plain.scenario, plain.result));
    CHECK_FALSE(pj["window"].contains("queues"));
  }
  SECTION("only an end: from the start of the run") {
    const Ran only_end = run_with(kPaced, {R"(output.window={"end": "300us"})"});
    CHECK(only_end.result.window.start == Time::zero());
    CHECK(only_end.result.flows[0].window_bytes ==
          int64_t{4096} * Paced::count(Paced::arrival, -1, e));
  }
  SECTION("an end after the run: clipped to it") {
    const Ran late = run_with(kPaced, {R"(output.window={"start": "100us", "end": "1s"})"});
    CHECK(late.result.window.end == late.result.sim_time);
    CHECK(late.result.flows[0].window_bytes ==
          int64_t{4096} * Paced::count(Paced::arrival, s, Paced::arrival(Paced::kPackets)));
  }
}

TEST_CASE("window: outside the run, everything is zero", "[quick][window]") {
  const Ran r = run_with(kPaced, {R"(output.window={"start": "10ms", "end": "20ms"})"});
  REQUIRE(r.result.status == RunStatus::kComplete);
  REQUIRE(r.result.sim_time < Time::ms(10));
  CHECK(r.result.window.length() == Time::zero());
  CHECK(r.result.flows[0].window_bytes == 0);
  CHECK(r.result.window.pfc_frames_sent == 0);
  for (const LinkResult& l : r.result.links) {
    CHECK(l.window_frames == 0);
    CHECK(l.window_busy == Time::zero());
  }
  for (const auto& q : r.result.queue_totals) CHECK(q.window_mean_bytes == 0.0);
  const nlohmann::json j = nlohmann::json::parse(summary_json(r.scenario, r.result));
  CHECK(j["window"]["duration_ps"] == 0);
  CHECK(j["window"]["goodput_gbps"] == 0.0);
  CHECK(j["window"]["payload_bytes"] == 0);
  CHECK(j["per_flow"][0]["window_goodput_gbps"] == 0.0);
  CHECK_FALSE(j["window"].contains("jain_fairness"));
}

TEST_CASE("window: PFC frames sent within it, and queue averages of a lossless incast",
          "[quick][window]") {
  // 4 x 4 MiB into one 100 G port through a Trident II switch: PFC pauses.
  const char* incast = R"({
    "name": "window_pfc",
    "fabric": {"link": {"rate": "100Gbps", "delay": "1us"}, "switch": {"preset": "trident2"}},
    "topology": {"kind": "star", "hosts": 5},
    "traffic": [{"kind": "incast", "senders": ["h1", "h2", "h3", "h4"], "dst": "h0",
                 "size": "4MiB"}],
    "output": {"window": {"start": "30us", "end": "200us"}, "queue_interval": "1ns"}
  })";
  const Ran r = run_text(incast);
  const Time s = Time::us(30), e = Time::us(200);
  uint64_t sent = 0;
  for (const PfcEvent& p : r.result.pfc_events.all()) sent += p.sent && p.time > s && p.time <= e;
  REQUIRE(r.result.pfc_frames_sent > 0);
  CHECK(r.result.window.pfc_frames_sent == sent);
  CHECK(sent < r.result.pfc_frames_sent);  // some before 30 us
  // Sampled every nanosecond, the queue's samples average to its exact mean
  // within a frame's worth of bytes per sample's rounding: the mean of the
  // samples in [s, e) against the hook's integral.
  const RunResult::QueueTotals* bottleneck = nullptr;
  for (const auto& q : r.result.queue_totals) {
    if (bottleneck == nullptr || q.window_mean_bytes > bottleneck->window_mean_bytes)
      bottleneck = &q;
  }
  REQUIRE(bottleneck != nullptr);
  REQUIRE(bottleneck->window_mean_bytes > 10e3);
  // The samples are sparse (a queue appears while it holds bytes): a queue's
  // value at a tick with no row is 0.
  double sum = 0;
  for (const QueueSample& q : r.result.queue_samples.all()) {
    if (q.node == bottleneck->node && q.port == bottleneck->port &&
        q.priority == bottleneck->priority && q.time >= s && q.time < e) {
      sum += static_cast<double>(q.bytes);
    }
  }
  const double sampled = sum / static_cast<double>((e - s) / Time::ns(1));
  CHECK(bottleneck->window_mean_bytes == Approx(sampled).epsilon(2e-3));
  // The peak in the window: at least every sample in [s, e] (a sample holds
  // the queue after every event of its picosecond), at most a frame above
  // the largest (a frame leaves at most every 4178 wire bytes' time at
  // 100 G, more than the 1 ns between samples), and not above the run's.
  int64_t top = 0;
  for (const QueueSample& q : r.result.queue_samples.all()) {
    if (q.node == bottleneck->node && q.port == bottleneck->port &&
        q.priority == bottleneck->priority && q.time >= s && q.time <= e) {
      top = std::max(top, q.bytes);
    }
  }
  CHECK(bottleneck->window_peak_bytes >= top);
  CHECK(bottleneck->window_peak_bytes <= top + 4178);
  CHECK(bottleneck->window_peak_bytes <= bottleneck->counters.peak_bytes);
  const nlohmann::json j = nlohmann::json::parse(summary_json(r.scenario, r.result));
  int64_t peak = 0;
  for (const auto& q : r.result.queue_totals) peak = std::max(peak, q.window_peak_bytes);
  CHECK(j["window"]["queues"]["max_peak_bytes"] == peak);

  SECTION("a window over the whole run: each queue's peak is its peak") {
    const Ran all = run_with(incast, {R"(output.window={"end": "1s"})"});
    REQUIRE(all.result.queue_totals.size() == r.result.queue_totals.size());
    bool some = false;
    for (const auto& q : all.result.queue_totals) {
      INFO("node " << q.node << " port " << q.port << " priority " << int{q.priority});
      CHECK(q.window_peak_bytes == q.counters.peak_bytes);
      some |= q.counters.peak_bytes > 0;
    }
    CHECK(some);
  }
}

TEST_CASE("window: an end not after the start is bad input naming the path", "[quick][window]") {
  for (const char* w : {R"({"start": "2ms", "end": "1ms"})", R"({"start": "1ms", "end": "1ms"})"}) {
    INFO(w);
    LoadOptions o;
    o.overrides = {std::string("output.window=") + w};
    try {
      (void)load_scenario_text(kPaced, "bad", o);
      FAIL("accepted");
    } catch (const ScenarioError& err) {
      CHECK(std::string(err.what()).rfind("output.window.end: ", 0) == 0);
    }
  }
  LoadOptions o;
  o.overrides = {R"(output.window={"begin": "1ms"})"};
  CHECK_THROWS_AS(load_scenario_text(kPaced, "bad", o), ScenarioError);
  o.overrides = {R"(output.cc_interval="-1us")"};
  CHECK_THROWS_AS(load_scenario_text(kPaced, "bad", o), ScenarioError);
}
