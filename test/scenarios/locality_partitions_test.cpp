// Partitions that take turns on one thread (RunOptions::partitions): a large
// fabric is run a part at a time so that each part's state stays in the
// caches. Expected values: the whole network's run on one thread, whose
// results any partitioning must give (sim/simulation.h contract 5); only the
// fingerprint, a chain per partition, differs.
#include <string>
#include <vector>

#include "sim/scenario/runner.h"
#include "test/support/catch_units.h"
#include "test/support/run_helpers.h"

using namespace rdmasim;
using namespace rdmasim::testing;

namespace {

std::string fat_tree(int k, const std::string& delay, const std::string& traffic) {
  return R"({"fabric": {"link": {"rate": "100Gbps", "delay": ")" + delay +
         R"("}, "mtu": 4096, "switch": {"buffer": "12MB", "pfc": {"lossless": [3]}}},)"
         R"( "topology": {"kind": "fat_tree", "k": )" +
         std::to_string(k) + R"(}, "traffic": [)" + traffic + "]}";
}

RunResult run_in(const Scenario& sc, uint32_t partitions, uint32_t threads = 1) {
  RunOptions o = testing::checked();
  o.partitions = partitions;
  o.threads = threads;
  o.force_threads = threads > 1;  // this small fabric is too sparse to keep them
  return run_scenario(sc, o);
}

// The PFC incast on a permutation of the first test case.
Scenario turns_scenario() {
  return load_scenario_text(fat_tree(4, "50us",
                                     R"({"kind": "permutation", "hosts": "all", "size": "2MiB"},
                  {"kind": "incast", "senders": [1, 2, 3, 4, 5, 6, 7], "dst": 8,
                   "size": "4MiB"})"),
                            "turns");
}

// The whole network's events, hops, time, PFC frames and completion times.
void check_whole_results(const RunResult& r, const RunResult& whole) {
  CHECK(r.events == whole.events);
  CHECK(r.packet_hops == whole.packet_hops);
  CHECK(r.sim_time == whole.sim_time);
  CHECK(r.pfc_frames_sent == whole.pfc_frames_sent);
  REQUIRE(r.flows.size() == whole.flows.size());
  for (size_t i = 0; i < r.flows.size(); ++i) CHECK(r.flows[i].fct() == whole.flows[i].fct());
}

}  // namespace

TEST_CASE("partitions taking turns on one thread give the whole network's results",
          "[quick][threads]") {
  // A k = 4 fat-tree (16 hosts, 12 MB switches): a permutation of 2 MiB
  // flows and a 7:1 incast of 4 MiB that makes PFC pause the senders, over
  // 50 us cables: a pass covers up to 50 us, about 150 frames per link, and
  // a channel between partitions taking turns (Channel::kTurnsCapacity)
  // fills now and then, so senders also empty full channels themselves.
  const Scenario sc = turns_scenario();
  const RunResult whole = run_in(sc, 1);
  REQUIRE(whole.status == RunStatus::kComplete);
  CHECK(whole.partitions == 1);
  CHECK(whole.phases == 0);
  REQUIRE(whole.pfc_frames_sent > 0);
  for (const uint32_t parts : {2u, 3u, 5u}) {
    INFO(parts << " partitions");
    const RunResult r = run_in(sc, parts);
    REQUIRE(r.status == RunStatus::kComplete);
    CHECK(r.threads == 1);
    CHECK(r.threads_used == 1);
    CHECK(r.partitions == parts);
    CHECK(r.phases > 0);
    CHECK(r.partition_events.size() == parts);
    check_whole_results(r, whole);
    CHECK(r.fingerprint != whole.fingerprint);  // a chain per partition
    CHECK(run_in(sc, parts).fingerprint == r.fingerprint);
  }
}

TEST_CASE("partitions taking turns in groups on threads give the whole network's results",
          "[quick][threads]") {
  // Each thread runs a contiguous group of partitions, taking turns; a
  // partition runs the same events in the same order whichever thread runs
  // it and whoever it takes turns with, so even the fingerprint (a chain
  // per partition) is that of the same partitions on one thread. Channels
  // are the small ones of partitions taking turns, and fill now and then.
  const Scenario sc = turns_scenario();
  const RunResult whole = run_in(sc, 1);
  REQUIRE(whole.status == RunStatus::kComplete);
  for (const auto& [threads, parts] : {std::pair{2u, 3u}, {2u, 5u}, {3u, 5u}, {2u, 16u}}) {
    INFO(threads << " threads, " << parts << " partitions");
    const RunResult r = run_in(sc, parts, threads);
    REQUIRE(r.status == RunStatus::kComplete);
    CHECK(r.threads == threads);
    CHECK(r.threads_used == threads);
    CHECK(r.partitions == parts);
    CHECK(r.partition_events.size() == parts);
    check_whole_results(r, whole);
    CHECK(r.fingerprint == run_in(sc, parts).fingerprint);
  }
}

TEST_CASE("locality partitions: one per 128 hosts from 1,024 busy hosts, at most 32",
          "[quick][threads]") {
  const auto busy = [](size_t hosts, size_t active) {
    std::vector<int64_t> bytes(hosts, 0);
    for (size_t i = 0; i < active; ++i) bytes[i] = 4096;
    return locality_partitions(bytes);
  };
  CHECK(busy(128, 128) == 1);
  CHECK(busy(1023, 1023) == 1);
  CHECK(busy(1024, 1024) == 8);
  CHECK(busy(1024, 512) == 8);  // half the hosts busy is enough
  CHECK(busy(1024, 511) == 1);  // fewer: a pass per partition for little work
  CHECK(busy(2048, 2048) == 16);
  CHECK(busy(4096, 4096) == 32);
  CHECK(busy(8192, 8192) == 32);
  CHECK(busy(32768, 2) == 1);  // one flow on a huge fabric
}

TEST_CASE("a 1,024-host fat-tree with every host busy runs in 8 partitions by default",
          "[quick][threads]") {
  // k = 16: 1,024 hosts, a permutation of one packet each, to its end.
  const Scenario sc = load_scenario_text(
      fat_tree(16, "1us", R"({"kind": "permutation", "hosts": "all", "size": "4KiB"})"), "auto");
  const RunResult r = run_scenario(sc, testing::checked());  // partitions 0: chosen
  REQUIRE(r.status == RunStatus::kComplete);
  CHECK(r.partitions == 8);
  CHECK(r.threads_used == 1);
  const RunResult whole = run_in(sc, 1);
  CHECK(r.events == whole.events);
  CHECK(r.sim_time == whole.sim_time);
  // On two threads: the same 8, four to a thread. Forced, they keep both
  // threads; with the CLI's restart, a packet per host is too sparse for two
  // threads, but the fabric is split as one thread would split it: no start
  // again, the 8 would take turns in place. A packet per host ends within
  // the first phase, though, which ran on both threads, so both count as
  // used (test/cli/check_cli.sh has a run that goes on in turns).
  for (const bool forced : {true, false}) {
    INFO((forced ? "threads forced" : "restart when sparse"));
    RunOptions two = testing::checked();
    two.threads = 2;
    two.force_threads = forced;
    two.restart_when_sparse = !forced;
    const RunResult t = run_scenario(sc, two);
    REQUIRE(t.status == RunStatus::kComplete);
    CHECK(t.partitions == 8);
    CHECK(t.phases == 1);
    CHECK(t.threads_used == 2u);
    CHECK(!t.restarted_on_one_thread);
    if (!forced) CHECK(t.events_per_thread_lookahead < Simulation::kMinEventsPerLookahead);
    CHECK(t.events == whole.events);
    CHECK(t.fingerprint == r.fingerprint);
  }
}

TEST_CASE("a run in partitions stopped between phases reports how far it simulated",
          "[quick][threads]") {
  // An event budget stops the run at a phase boundary (as a signal or the
  // wall-clock limit does). The run had simulated past 0 by then: at least
  // to where the whole network's run, stopped by the same budget, was (a
  // partitioned run polls less often, so it may have gone further).
  const Scenario sc = load_scenario_text(
      fat_tree(4, "1us", R"({"kind": "permutation", "hosts": "all", "size": "8MiB"})"), "stop");
  RunOptions o = testing::checked();
  o.max_events = 20000;
  o.partitions = 1;
  const RunResult whole = run_scenario(sc, o);
  o.partitions = 3;
  const RunResult parts = run_scenario(sc, o);
  REQUIRE(whole.status == RunStatus::kStalled);
  REQUIRE(parts.status == RunStatus::kStalled);
  CHECK(whole.sim_time > Time::zero());
  CHECK(parts.sim_time >= whole.sim_time);
  CHECK(parts.events >= whole.events);
}
