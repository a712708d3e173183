#include "test/support/catch_units.h"

#include "sim/scenario/overrides.h"
#include "sim/scenario/scenario_error.h"

using namespace rdmasim;
using nlohmann::json;

TEST_CASE("overrides set nested keys, array elements and typed values", "[quick][scenario]") {
  json j = json::parse(R"({"fabric": {"link": {"rate": "400Gbps"}}, "traffic": [{"size": 1}]})");
  apply_override(j, "fabric.link.rate=100Gbps");
  apply_override(j, "traffic[0].size=\"64MiB\"");
  apply_override(j, "seed=7");
  apply_override(j, "fabric.nic.ack_interval=4");
  apply_override(j, "output.trace=false");
  apply_override(j, "traffic[1]={\"kind\":\"flow\"}");
  CHECK(j["fabric"]["link"]["rate"] == "100Gbps");
  CHECK(j["traffic"][0]["size"] == "64MiB");
  CHECK(j["seed"] == 7);
  CHECK(j["fabric"]["nic"]["ack_interval"] == 4);
  CHECK(j["output"]["trace"] == false);
  CHECK(j["traffic"][1]["kind"] == "flow");
}

TEST_CASE("malformed overrides are bad input", "[quick][scenario]") {
  json j = json::parse(R"({"traffic": [], "seed": 1})");
  CHECK_THROWS_AS(apply_override(j, "seed"), ScenarioError);
  CHECK_THROWS_AS(apply_override(j, "=3"), ScenarioError);
  CHECK_THROWS_AS(apply_override(j, "traffic[3].size=1"), ScenarioError);
  CHECK_THROWS_AS(apply_override(j, "traffic[x]=1"), ScenarioError);
  CHECK_THROWS_AS(apply_override(j, "seed.x=1"), ScenarioError);
  CHECK_THROWS_WITH(apply_override(j, "traffic[3].size=1"),
                    Catch::Contains("traffic[3] does not exist"));
  // A key where an element is needed: what to write instead.
  CHECK_THROWS_WITH(apply_override(j, "traffic.0.size=1"),
                    Catch::Contains("traffic is an array (expected traffic[0]: array elements "
                                    "are written [i])"));
  CHECK_THROWS_WITH(apply_override(j, "traffic.kind=1"),
                    Catch::Contains("traffic is an array (expected traffic[<index>].kind)"));
  CHECK_THROWS_WITH(apply_override(j, "seed.x=1"),
                    Catch::Contains("seed is not an object (expected one holding x)"));
}
