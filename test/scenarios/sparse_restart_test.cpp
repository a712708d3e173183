// A partitioned run whose first phase is too sparse for threads starts
// again on one thread (RunOptions::restart_when_sparse, what the CLI does):
// the results, fingerprint included, are one thread's, and the run says so.
// A dense run keeps its threads. Expected values: the one-thread run's.
#include <string>

#include "sim/scenario/runner.h"
#include "test/support/catch_units.h"
#include "test/support/run_helpers.h"

using namespace rdmasim;
using namespace rdmasim::testing;

namespace {

// A k = 4 fat-tree (16 hosts): a 15:1 incast of 256 KiB each over 1 us
// links, a few dozen events per partition per lookahead; or a permutation
// of 8 MiB flows over 20 us links, thousands.
std::string fat_tree(const std::string& delay, const std::string& traffic) {
  return R"({"fabric": {"link": {"rate": "100Gbps", "delay": ")" + delay +
         R"("}, "mtu": 4096}, "topology": {"kind": "fat_tree", "k": 4}, "traffic": [)" + traffic +
         "]}";
}

RunResult run_on(const Scenario& sc, uint32_t threads, bool restart, uint32_t partitions = 0) {
  RunOptions o = testing::checked();
  o.threads = threads;
  o.restart_when_sparse = restart;
  o.partitions = partitions;
  return run_scenario(sc, o);
}

}  // namespace

TEST_CASE(
    "a run too sparse for its threads starts again on one: one thread's results and fingerprint",
    "[quick][threads]") {
  const Scenario sc = load_scenario_text(
      fat_tree("1us", R"({"kind": "incast", "senders": "all", "dst": 0, "size": "256KiB"})"),
      "sparse");
  const RunResult one = run_on(sc, 1, true);
  REQUIRE(one.status == RunStatus::kComplete);
  CHECK(!one.restarted_on_one_thread);
  for (const uint32_t threads : {2u, 3u}) {
    INFO(threads << " threads");
    const RunResult r = run_on(sc, threads, true);
    REQUIRE(r.status == RunStatus::kComplete);
    CHECK(r.restarted_on_one_thread);
    CHECK(r.threads == threads);
    CHECK(r.threads_used == 1);
    CHECK(r.events_per_partition_lookahead > 0);
    CHECK(r.events_per_partition_lookahead < Simulation::kMinEventsPerLookahead);
    CHECK(r.events_per_thread_lookahead == r.events_per_partition_lookahead);  // one each
    CHECK(r.partitions == 1);  // what one thread takes for 16 hosts
    CHECK(r.phases == 0);      // the run that counts had no partitions
    CHECK(r.fingerprint == one.fingerprint);
    CHECK(r.events == one.events);
    CHECK(r.sim_time == one.sim_time);
    REQUIRE(r.flows.size() == one.flows.size());
    for (size_t i = 0; i < r.flows.size(); ++i) CHECK(r.flows[i].fct() == one.flows[i].fct());
    // Without the restart the partitions take turns: the same results, the
    // partitioned chain's fingerprint.
    const RunResult turns = run_on(sc, threads, false);
    CHECK(!turns.restarted_on_one_thread);
    CHECK(turns.threads_used == 1);
    CHECK(turns.phases > 0);
    CHECK(turns.events == one.events);
    CHECK(turns.fingerprint != one.fingerprint);
  }
}

TEST_CASE("a run dense enough for its threads keeps them", "[quick][threads]") {
  const Scenario sc = load_scenario_text(
      fat_tree("20us", R"({"kind": "permutation", "hosts": "all", "size": "8MiB"})"), "dense");
  const RunResult r = run_on(sc, 2, true);
  REQUIRE(r.status == RunStatus::kComplete);
  CHECK(!r.restarted_on_one_thread);
  CHECK(r.threads_used == 2);
  CHECK(r.events_per_partition_lookahead >= Simulation::kMinEventsPerLookahead);
  CHECK(r.events_per_thread_lookahead == r.events_per_partition_lookahead);
}

TEST_CASE("a sampler's event at time 0 does not cut the density decision's sample short",
          "[quick][threads]") {
  // The dense permutation with a queue sampler, whose first event (time 0)
  // ends the first phase before any time has passed. The decision waits
  // for the phases after it to span a lookahead; it once took the events of
  // time 0 alone for a lookahead's and started again on one thread.
  LoadOptions o;
  o.overrides = {R"(output.queue_interval="50us")"};
  const Scenario sc = load_scenario_text(
      fat_tree("20us", R"({"kind": "permutation", "hosts": "all", "size": "8MiB"})"), "sampled", o);
  const RunResult r = run_on(sc, 2, true);
  REQUIRE(r.status == RunStatus::kComplete);
  CHECK(!r.restarted_on_one_thread);
  CHECK(r.threads_used == 2);
  CHECK(r.events_per_partition_lookahead >= Simulation::kMinEventsPerLookahead);
}

TEST_CASE("a sampler every few lookaheads does not take the fabric's filling for its density",
          "[quick][threads]") {
  // W5 at 128 hosts (a permutation on a k = 8 fat-tree, 1 us cables) to
  // 100 us, sampled every 5 us. Over its first 5 lookaheads the fabric is
  // still filling: 639 events per thread per lookahead, against 1,937 over
  // the 64 of an unsampled first phase. The decision once took the first 5
  // and started again on one thread; it now waits for 64, as unsampled.
  LoadOptions plain, sampled;
  plain.overrides = {R"(stop.time="100us")"};
  sampled.overrides = {R"(stop.time="100us")", R"(output.queue_interval="5us")"};
  const char* w5 = "bench/scenarios/w5_permutation_128.json";
  const RunResult a = run_on(load_scenario_file(source_path(w5), plain), 2, true);
  const RunResult b = run_on(load_scenario_file(source_path(w5), sampled), 2, true);
  REQUIRE(a.status == RunStatus::kTimeLimit);
  REQUIRE(b.status == RunStatus::kTimeLimit);
  CHECK(!a.restarted_on_one_thread);
  CHECK(!b.restarted_on_one_thread);
  CHECK(b.threads_used == 2);
  // 13 phases of 5 lookaheads: 65 against 64, nearly the same sample.
  CHECK(b.events_per_thread_lookahead >= Simulation::kMinEventsPerLookahead);
  CHECK(b.events_per_thread_lookahead == Approx(a.events_per_thread_lookahead).epsilon(0.02));
  CHECK(b.events == a.events + 21);  // and the sampler's, at 0, 5, ..., 100 us
}

TEST_CASE("a sampled run that ends before its density sample is whole still reports its density",
          "[quick][threads]") {
  // A permutation of 128 KiB flows on the k = 4 fat-tree (1 us cables) ends
  // in about 36 us, before 64 lookaheads; a sampler every 2 us cuts its
  // phases. Found in review: it reported 0 events per lookahead, as a run
  // on one thread does, though it ran on two at about 88.
  LoadOptions o;
  o.overrides = {R"(output.queue_interval="2us")"};
  const Scenario sc = load_scenario_text(
      fat_tree("1us", R"({"kind": "permutation", "hosts": "all", "size": "128KiB"})"), "short", o);
  const RunResult r = run_on(sc, 2, true);
  REQUIRE(r.status == RunStatus::kComplete);
  CHECK(!r.restarted_on_one_thread);
  CHECK(r.threads_used == 2);
  CHECK(r.phases > 1);
  CHECK(r.events_per_thread_lookahead > 0);
  CHECK(r.events_per_thread_lookahead < Simulation::kMinEventsPerLookahead);
}

TEST_CASE("the density decision weighs each thread's partitions together", "[quick][threads]") {
  // The dense permutation on 2 threads in 16 partitions, 8 to a thread: too
  // few events per partition per lookahead, enough per thread, which waits
  // once per pass over its 8. The threads stay.
  const Scenario sc = load_scenario_text(
      fat_tree("20us", R"({"kind": "permutation", "hosts": "all", "size": "8MiB"})"), "dense");
  const RunResult r = run_on(sc, 2, true, 16);
  REQUIRE(r.status == RunStatus::kComplete);
  CHECK(r.partitions == 16);
  CHECK(r.events_per_partition_lookahead < Simulation::kMinEventsPerLookahead);
  CHECK(r.events_per_thread_lookahead == Approx(8 * r.events_per_partition_lookahead));
  CHECK(r.events_per_thread_lookahead >= Simulation::kMinEventsPerLookahead);
  CHECK(!r.restarted_on_one_thread);
  CHECK(r.threads_used == 2);
}

TEST_CASE("a run that ends within its first phase does not start again", "[quick][threads]") {
  // One 64 KiB WRITE across the fat-tree: done within the first phase (64
  // lookaheads of 1 us), which also finds it far too sparse; nothing is
  // left to save by starting again, and that phase ran on both threads.
  const Scenario sc = load_scenario_text(
      fat_tree("1us", R"({"kind": "flow", "src": 0, "dst": 15, "size": "64KiB"})"), "short");
  const RunResult one = run_on(sc, 1, true);
  const RunResult r = run_on(sc, 2, true);
  REQUIRE(r.status == RunStatus::kComplete);
  CHECK(!r.restarted_on_one_thread);
  CHECK(r.phases == 1);
  CHECK(r.threads_used == 2);
  CHECK(r.events == one.events);
  CHECK(r.sim_time == one.sim_time);
  CHECK(r.wall.first_attempt_seconds == 0);
}
