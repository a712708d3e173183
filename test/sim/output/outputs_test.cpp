#include "test/support/catch_units.h"

#include <hdf5.h>

#include <atomic>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "sim/output/output_error.h"
#include "sim/output/summary.h"
#include "sim/output/trace_writer.h"
#include "sim/scenario/runner.h"
#include "test/support/run_helpers.h"

using namespace rdmasim;
using namespace rdmasim::testing;
namespace fs = std::filesystem;

namespace {

const char* kContended = R"({
  "name": "determinism",
  "seed": 5,
  "fabric": {"link": {"rate": "100Gbps", "delay": "1us"}, "mtu": 1024},
  "topology": {"kind": "star", "hosts": 4},
  "traffic": [
    {"kind": "flow", "src": "h0", "dst": "h3", "size": "2MB"},
    {"kind": "flow", "src": "h1", "dst": "h3", "size": "3MB", "start": "1us"},
    {"kind": "flow", "src": "h2", "dst": "h3", "size": "1MB", "op": "send"},
    {"kind": "flow", "src": "h3", "dst": "h0", "size": "500KB"}
  ]
})";

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

fs::path fresh_dir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("rdmasim_test_" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

void run_into(const fs::path& dir) {
  const Ran r = run_text(kContended);
  write_trace((dir / "trace.h5").string(), r.scenario, r.result);
  write_file_atomic((dir / "summary.json").string(), summary_json(r.scenario, r.result));
}

}  // namespace

TEST_CASE("skeleton (c) the same scenario twice gives identical outputs", "[quick][determinism]") {
  const fs::path a = fresh_dir("det_a"), b = fresh_dir("det_b");
  run_into(a);
  run_into(b);
  auto sa = nlohmann::json::parse(slurp(a / "summary.json"));
  auto sb = nlohmann::json::parse(slurp(b / "summary.json"));
  CHECK(sa["run"] != nullptr);
  sa.erase("run");
  sb.erase("run");
  CHECK(sa == sb);
  CHECK(sa["status"] == "complete");
  const std::string ta = slurp(a / "trace.h5"), tb = slurp(b / "trace.h5");
  CHECK(ta.size() > 1000);
  CHECK(ta == tb);
  // No temporary files are left behind.
  CHECK_FALSE(fs::exists(a / "trace.h5.tmp"));
  CHECK_FALSE(fs::exists(a / "summary.json.tmp"));
}

TEST_CASE("a different seed gives a different fingerprint only where randomness matters",
          "[quick][determinism]") {
  // Nothing in this scenario draws random numbers except ECMP seeds on a
  // single-path star, so results must not change with the seed.
  LoadOptions o;
  o.overrides = {"seed=99"};
  const Ran r1 = run_text(kContended);
  const Ran r2 = run_text(kContended, o);
  CHECK(r1.result.fingerprint == r2.result.fingerprint);
  CHECK(r1.scenario.hash != r2.scenario.hash);
}

TEST_CASE("trace.h5 holds the flows table, the nodes and the scenario", "[quick][trace]") {
  const fs::path dir = fresh_dir("trace");
  run_into(dir);
  hid_t f = H5Fopen((dir / "trace.h5").string().c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(f >= 0);
  hid_t ds = H5Dopen2(f, "flows", H5P_DEFAULT);
  REQUIRE(ds >= 0);
  hid_t space = H5Dget_space(ds);
  hsize_t n = 0;
  H5Sget_simple_extent_dims(space, &n, nullptr);
  CHECK(n == 4);
  // Read back two columns through a partial compound type.
  struct Row {
    int64_t bytes;
    int64_t fct;
  };
  hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(Row));
  H5Tinsert(t, "bytes", offsetof(Row, bytes), H5T_NATIVE_INT64);
  H5Tinsert(t, "fct", offsetof(Row, fct), H5T_NATIVE_INT64);
  std::vector<Row> rows(n);
  REQUIRE(H5Dread(ds, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows.data()) >= 0);
  CHECK(rows[0].bytes == 2'000'000);
  CHECK(rows[3].bytes == 500'000);
  for (const Row& r : rows) CHECK(r.fct > 0);
  H5Tclose(t);
  H5Sclose(space);
  H5Dclose(ds);
  CHECK(H5Lexists(f, "nodes", H5P_DEFAULT) > 0);
  CHECK(H5Lexists(f, "links", H5P_DEFAULT) > 0);
  CHECK(H5Lexists(f, "meta", H5P_DEFAULT) > 0);
  CHECK(H5Aexists(f, "rdmasim_version") > 0);
  H5Fclose(f);
}

TEST_CASE("event tables are written only when recorded", "[quick][trace]") {
  auto datasets = [](const std::string& overrides) {
    const fs::path dir = fresh_dir("records");
    LoadOptions o;
    if (!overrides.empty()) o.overrides = {overrides};
    const Ran r = run_text(kContended, o);
    write_trace((dir / "trace.h5").string(), r.scenario, r.result);
    hid_t f = H5Fopen((dir / "trace.h5").string().c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    std::string present;
    for (const char* name : {"pfc", "drops", "flow_paths"}) {
      if (H5Lexists(f, name, H5P_DEFAULT) > 0) present += std::string(name) + " ";
    }
    H5Fclose(f);
    return present;
  };
  CHECK(datasets("") == "pfc drops flow_paths ");
  CHECK(datasets("output.pfc_events=false") == "drops flow_paths ");
  CHECK(datasets("output.drop_events=false") == "pfc flow_paths ");
}

TEST_CASE("link samples end at each direction's totals", "[quick][trace]") {
  // With a 1 s interval the only tick is at 0; the run ends long before the
  // next, and the sampler's row at the end makes every direction's
  // cumulative counters reach the /links totals.
  LoadOptions o;
  o.overrides = {"output.link_interval=1s"};
  const Ran r = run_text(kContended, o);
  std::map<uint32_t, LinkSample> last;
  for (const LinkSample& s : r.result.link_samples.all()) last[s.link] = s;
  REQUIRE(r.result.links.size() == 8);  // 4 cables, both directions
  for (uint32_t i = 0; i < r.result.links.size(); ++i) {
    INFO("direction " << i);
    const LinkResult& l = r.result.links[i];
    if (l.wire_bytes == 0) continue;
    REQUIRE(last.count(i) == 1);
    CHECK(last[i].wire_bytes == l.wire_bytes);
    CHECK(last[i].frames == l.frames);
    CHECK(last[i].time == r.result.sim_time);
  }
}

TEST_CASE("an output that cannot be written throws OutputError and leaves nothing",
          "[quick][trace]") {
  const fs::path d = fresh_dir("unwritable");
  const Ran r = run_text(kContended);
  // A folder where the file would go: its temporary can be written, the
  // rename cannot; under a folder that does not exist, nothing can.
  fs::create_directories(d / "summary.json" / "inside");
  CHECK_THROWS_AS(write_file_atomic((d / "summary.json").string(), "{}"), OutputError);
  CHECK_FALSE(fs::exists(d / "summary.json.tmp"));
  CHECK(fs::is_directory(d / "summary.json" / "inside"));
  const std::string missing = (d / "missing" / "trace.h5").string();
  try {
    write_trace(missing, r.scenario, r.result);
    FAIL("no OutputError");
  } catch (const OutputError& e) {
    CHECK(std::string(e.what()).rfind(missing + ": cannot create " + missing + ".tmp: ", 0) == 0);
  }
  fs::create_directories(d / "trace.h5");
  CHECK_THROWS_AS(write_trace((d / "trace.h5").string(), r.scenario, r.result), OutputError);
  CHECK_FALSE(fs::exists(d / "trace.h5.tmp"));
  // HDF5 holds no identifier after the failures: a trace written next is whole.
  CHECK(H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL) == 0);
  write_trace((d / "ok.h5").string(), r.scenario, r.result);
  CHECK(H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL) == 0);
  const hid_t f = H5Fopen((d / "ok.h5").string().c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REQUIRE(f >= 0);
  CHECK(H5Aexists(f, "partial") == 0);
  H5Fclose(f);
}

TEST_CASE("a stop signal ends the run at its next poll, interrupted, on 1 and 2 threads",
          "[quick][trace]") {
  // A flow of 1 GB at 100 Gb/s takes 80 ms, far more than 4096 events: the
  // flag set before the run is seen at the first poll, the flow is cut short.
  const char* kLong = R"({
    "name": "interrupted", "seed": 1,
    "fabric": {"link": {"rate": "100Gbps", "delay": "1us"}},
    "topology": {"kind": "star", "hosts": 2},
    "traffic": [{"kind": "flow", "src": "h0", "dst": "h1", "size": "1GB"}]
  })";
  const Scenario sc = load_scenario_text(kLong, "test");
  for (uint32_t threads : {1u, 2u}) {
    std::atomic<int> flag{SIGINT};
    RunOptions o;
    o.threads = threads;
    o.stop_signal = &flag;
    const RunResult r = run_scenario(sc, o);
    CHECK(r.status == RunStatus::kInterrupted);
    CHECK(is_partial(r.status));
    CHECK(exit_code(r.status) == 130);
    CHECK_FALSE(r.flows[0].done);
    CHECK(r.sim_time < Time::ms(80));
    CHECK(std::string(to_string(r.status)) == "interrupted");
    const fs::path d = fresh_dir("interrupted_" + std::to_string(threads));
    write_trace((d / "trace.h5").string(), sc, r);
    const hid_t f = H5Fopen((d / "trace.h5").string().c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    REQUIRE(f >= 0);
    CHECK(H5Aexists(f, "partial") > 0);
    H5Fclose(f);
    CHECK(nlohmann::json::parse(summary_json(sc, r))["status"] == "interrupted");
  }
  // Unset, the run goes to its end.
  std::atomic<int> unset{0};
  RunOptions o;
  o.stop_signal = &unset;
  CHECK(run_scenario(sc, o).status == RunStatus::kComplete);
}
