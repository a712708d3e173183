// Parameter tables (sim/params.h) and the reader that reads scenarios against
// them (sim/scenario/json_reader.h): defaults from the config struct, words,
// conditions, presets, kinds, and the loader bugs they turn into errors. And
// the tables against every example scenario.
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "sim/scenario/describe.h"
#include "sim/scenario/json_reader.h"
#include "sim/scenario/scenario.h"
#include "sim/scenario/scenario_params.h"
#include "test/support/catch_units.h"

using namespace rdmasim;
using nlohmann::json;

namespace {

enum class Mode : uint8_t { kFast, kSlow };

struct Toy {
  int count = 7;
  Time delay = Time::us(3);
  BitRate rate;  // 0: unlimited
  Mode mode = Mode::kSlow;
  bool on = true;
  Bytes size = Bytes(100);
  int shift = 0;
};

const Fields<Toy>& toy_params() {
  static const Fields<Toy> t = [] {
    Fields<Toy> f("toy");
    f.add_choice("preset", std::vector<std::pair<std::string, int64_t>>{})
        .optional("none")
        .preset("big", {{"count", "100"}, {"size", "\"1MB\""}}, "test");
    f.integer("count", &Toy::count, 1, 1000).doc("how many");
    f.time("delay", &Toy::delay, Time::ns(1));
    f.rate("rate", &Toy::rate).word("unlimited", BitRate(), "no limit");
    f.choice(
        "mode", &Toy::mode,
        std::vector<std::pair<std::string, Mode>>{{"fast", Mode::kFast}, {"slow", Mode::kSlow}});
    f.boolean("on", &Toy::on);
    f.bytes("size", &Toy::size, Bytes(1));
    f.integer("shift", &Toy::shift, 1, 9).required().when("mode", {"fast"});
    f.add("extra", ParamKind::kInt).range(0, 5).def(int64_t{2}).def_from("count");
    return f;
  }();
  return t;
}

// Reads `text` as a Toy; returns it and the resolved JSON.
std::pair<Toy, json> read_toy(const std::string& text) {
  const json in = json::parse(text);
  json resolved = json::object();
  JsonReader r(&in, "toy", &resolved, toy_params());
  Toy t;
  r.read(t);
  r.finish();
  return {t, resolved};
}

std::string error_of(const std::string& text) {
  try {
    read_toy(text);
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("params: defaults come from the config struct and are resolved", "[quick][params]") {
  const auto [t, resolved] = read_toy("{}");
  const Toy defaults;
  CHECK(t.count == defaults.count);
  CHECK(t.delay == defaults.delay);
  CHECK(t.mode == Mode::kSlow);
  CHECK(resolved == json::parse(R"({"count": 7, "delay": "3us", "rate": "unlimited",
                                     "mode": "slow", "on": true, "size": 100})"));
  const Param* count = toy_params().find("count");
  REQUIRE(count != nullptr);
  CHECK(std::get<int64_t>(count->def) == 7);
  CHECK(count->expected() == "an integer from 1 to 1000");
  CHECK(count->type_summary() == "integer 1..1000");
}

TEST_CASE("params: given values, words, ranges and choices", "[quick][params]") {
  const auto [t, resolved] =
      read_toy(R"({"count": 3, "rate": "100Gbps", "mode": "fast", "shift": 4, "on": false})");
  CHECK(t.count == 3);
  CHECK(t.rate == BitRate::gbps(100));
  CHECK(t.mode == Mode::kFast);
  CHECK(t.shift == 4);
  CHECK_FALSE(t.on);
  CHECK(resolved["rate"] == "100Gbps");
  CHECK(read_toy(R"({"rate": "unlimited"})").first.rate == BitRate());
  CHECK(error_of(R"({"count": 0})") ==
        "toy.count: 0 is out of range (expected an integer from 1 to 1000)");
  CHECK(error_of(R"({"delay": "0ns"})") ==
        "toy.delay: \"0ns\" is too small (expected a time of at least 1ns)");
  CHECK(error_of(R"({"mode": "fsat"})") ==
        "toy.mode: \"fsat\" is not valid, did you mean \"fast\"? (expected one of \"fast\", "
        "\"slow\")");
  CHECK(error_of(R"({"rate": "unlimted"})").starts_with("toy.rate: \"unlimted\" is not a rate"));
}

TEST_CASE("params: a key applies only when its conditions hold", "[quick][params]") {
  // shift: required with mode "fast", refused otherwise.
  CHECK(error_of(R"({"mode": "fast"})") == "toy.shift: missing (expected an integer from 1 to 9)");
  CHECK(error_of(R"({"shift": 2})") ==
        "toy.shift: applies to mode \"fast\" only (expected no shift)");
  const auto [t, resolved] = read_toy("{}");
  CHECK_FALSE(resolved.contains("shift"));  // not applicable: not resolved
}

TEST_CASE("params: a preset sets defaults that explicit keys override", "[quick][params]") {
  const auto [t, resolved] = read_toy(R"({"preset": "big"})");
  CHECK(t.count == 100);
  CHECK(t.size == Bytes(1'000'000));
  CHECK(resolved["preset"] == "big");
  const auto [u, r2] = read_toy(R"({"preset": "big", "count": 5})");
  CHECK(u.count == 5);
  CHECK(u.size == Bytes(1'000'000));
  CHECK(error_of(R"({"preset": "bgi"})").starts_with("toy.preset: \"bgi\" is not valid"));
}

TEST_CASE("params: unknown keys, and loader bugs", "[quick][params]") {
  CHECK(error_of(R"({"cuont": 1})") == "toy.cuont: unknown key (did you mean \"count\"?)");
  // A declared key the loader never reads is a bug, reported as such.
  const json in = json::parse(R"({"extra": 1})");
  json resolved = json::object();
  JsonReader r(&in, "toy", &resolved, toy_params());
  Toy t;
  r.read(t);
  CHECK_THROWS_AS(r.finish(), std::logic_error);
  // So is asking for a key the table does not declare.
  CHECK_THROWS_AS(r.integer("undeclared"), std::logic_error);
  // def_from: extra takes count's resolved value.
  CHECK(r.integer("extra") == 1);
  const json empty = json::object();
  json res2 = json::object();
  JsonReader q(&empty, "toy", &res2, toy_params());
  q.read(t);
  CHECK_THROWS_AS(q.integer("extra"), ScenarioError);  // 7 is out of extra's range 0..5
}

namespace {

const ParamTable& shape_params() {
  static const ParamTable circle = [] {
    ParamTable f("circle");
    f.add("radius", ParamKind::kNumber).number_range(0.0, 10.0);
    return f;
  }();
  static const ParamTable square = [] {
    ParamTable f("square");
    f.add("side", ParamKind::kInt).range(1, 10).def(int64_t{1});
    return f;
  }();
  static const ParamTable t = [] {
    ParamTable f("shape");
    f.set_discriminator("kind", "which shape");
    f.add_variant("circle", int64_t{0}, circle, "round");
    f.add_variant("square", int64_t{1}, square, "four sides");
    f.add("color", ParamKind::kString).def(std::string("red"));
    return f;
  }();
  return t;
}

}  // namespace

TEST_CASE("params: kinds add their keys to the shared ones", "[quick][params]") {
  const json in = json::parse(R"({"kind": "square", "side": 3})");
  json resolved = json::object();
  JsonReader r(&in, "shape", &resolved, shape_params());
  CHECK(r.kind() == 1);
  CHECK(r.kind_name() == "square");
  CHECK(r.integer("side") == 3);
  CHECK(r.string("color") == "red");
  r.finish();
  CHECK(resolved == json::parse(R"({"kind": "square", "side": 3, "color": "red"})"));
  // Another kind's key is unknown here, with the kind's own keys suggested.
  const json bad = json::parse(R"({"kind": "square", "radius": 3})");
  json res2 = json::object();
  JsonReader q(&bad, "shape", &res2, shape_params());
  q.kind();
  CHECK_THROWS_WITH(q.finish(), "shape.radius: unknown key (expected one of: color, kind, side)");
  const json none = json::parse(R"({"kind": "triangle"})");
  json res3 = json::object();
  JsonReader k(&none, "shape", &res3, shape_params());
  CHECK_THROWS_WITH(
      k.kind(), "shape.kind: \"triangle\" is not valid (expected one of \"circle\", \"square\")");
}

// Every key of every example's resolved scenario is declared in the tables,
// and applies where it is (the walk follows kinds).
namespace {

void walk(const json& obj, const ParamTable& table, const std::string& path) {
  std::vector<const ParamTable*> tables{&table};
  if (!table.discriminator().empty()) {
    REQUIRE(obj.contains(table.discriminator()));
    const ParamTable::Variant* v = table.variant(obj[table.discriminator()].get<std::string>());
    REQUIRE(v != nullptr);
    tables.push_back(v->table);
  }
  for (const auto& [key, value] : obj.items()) {
    const Param* p = nullptr;
    for (const ParamTable* t : tables) {
      if (p == nullptr) p = t->find(key);
    }
    INFO(path + "." + key);
    REQUIRE(p != nullptr);
    if (p->kind == ParamKind::kObject) walk(value, *p->child, path + "." + key);
    if (p->kind == ParamKind::kObjects) {
      for (size_t i = 0; i < value.size(); ++i) {
        walk(value[i], *p->child, path + "." + key + "[" + std::to_string(i) + "]");
      }
    }
  }
}

}  // namespace

// no_sanitizer: it runs the loader over every example (22 s under ASan); the
// fuzz targets cover the loader there.
// The resolved scenario (`rdmasim resolve`) loads, to itself: on
// InfiniBand it once named RoCE-only defaults (fabric.switch.pfc, ...) that
// the loader refuses there.
TEST_CASE(
    "params: every key of every example's resolved scenario is in the tables, and it loads to "
    "itself",
    "[quick][params][no_sanitizer]") {
  namespace fs = std::filesystem;
  int n = 0;
  for (const char* dir : {"scenarios", "bench/scenarios"}) {
    for (const auto& e : fs::directory_iterator(fs::path(RDMASIM_SOURCE_DIR) / dir)) {
      if (e.path().extension() != ".json") continue;
      INFO(e.path().string());
      // Relative CDF files are named from the source folder.
      const fs::path cwd = fs::current_path();
      fs::current_path(RDMASIM_SOURCE_DIR);
      const Scenario sc = load_scenario_file(e.path().string());
      fs::current_path(cwd);
      walk(json::parse(sc.resolved_json), scenario_params(), "");
      const Scenario again = load_scenario_text(sc.resolved_json, sc.name);
      CHECK(again.resolved_json == sc.resolved_json);
      ++n;
    }
  }
  CHECK(n >= 20);
}

TEST_CASE("params: describe finds key paths through objects and kinds", "[quick][params]") {
  CHECK(find_param("fabric.nic.ack_interval").param->key == "ack_interval");
  CHECK(find_param("topology.fat_tree.k").param->key == "k");
  // A kind's key without its kind, as errors print it: found if one kind has
  // it, ambiguous if several do.
  CHECK(find_param("traffic[3].jitter").param->key == "jitter");
  CHECK_THROWS_WITH(find_param("traffic[0].size"),
                    "describe: traffic[0].size: size is a key of several kinds (expected "
                    "traffic.<kind>.size, the kind one of flow, incast, permutation, all_to_all, "
                    "collective)");
  CHECK(find_param("traffic.incast.jitter").param->key == "jitter");
  CHECK(find_param("traffic.incast").param == nullptr);
  CHECK(find_param("").table == &scenario_params());
  CHECK_THROWS_WITH(find_param("fabric.nic.timout"),
                    "describe: fabric.nic.timout: unknown key (did you mean \"timeout\"?)");
  CHECK(default_text(*find_param("fabric.nic.ack_dscp").param) == "= data_dscp");
  CHECK(default_text(*find_param("fabric.switch.buffer").param) == "\"32MB\"");
}

// Every table of the scenario, checked as a whole: a condition names a key
// declared before it (conditions are evaluated on keys already read), a
// preset names keys declared after it, and its values read like user input.
namespace {

void check_table(const ParamTable& t, const std::vector<const Param*>& before,
                 const std::string& path, int& checked) {
  std::vector<const Param*> seen = before;
  for (const Param& p : t.params()) {
    INFO(path + "." + p.key);
    for (const ParamCondition& c : p.when) {
      const bool declared =
          std::any_of(seen.begin(), seen.end(), [&](const Param* q) { return q->key == c.key; });
      CHECK(declared);
      ++checked;
    }
    for (const ParamPreset& preset : p.presets) {
      for (const auto& [key, text] : preset.values) {
        INFO("preset " + preset.name + " sets " + key);
        // (clang 14 cannot capture a structured binding: k names it.)
        const bool later = t.find(key) != nullptr &&
                           std::none_of(seen.begin(), seen.end(),
                                        [&, &k = key](const Param* q) { return q->key == k; });
        CHECK(later);
        // The value reads as the key's value does.
        json obj = {{p.key, preset.name}, {key, json::parse(text)}};
        json resolved = json::object();
        JsonReader r(&obj, path, &resolved, t);
        CHECK_NOTHROW(r.raw(key));
        ++checked;
      }
    }
    seen.push_back(&p);
    if (p.child != nullptr) check_table(*p.child, {}, path + "." + p.key, checked);
  }
  for (const ParamTable::Variant& v : t.variants())
    check_table(*v.table, seen, path + "." + v.name, checked);
}

}  // namespace

TEST_CASE("params: conditions name earlier keys, presets later ones, in every table",
          "[quick][params]") {
  int checked = 0;
  check_table(scenario_params(), {}, "scenario", checked);
  CHECK(checked > 20);
  // The switch presets, read through the loader: each sets what it says.
  for (const char* preset : {"trident_plus", "trident2", "tomahawk2", "hpcc"}) {
    INFO(preset);
    LoadOptions o;
    o.overrides = {std::string("fabric.switch.preset=") + preset};
    const Scenario sc =
        load_scenario_text(R"({"topology": {"kind": "star", "hosts": 2}, "traffic": []})", "p", o);
    CHECK(sc.fabric.sw.buffer.count() > 8'000'000);
  }
}

TEST_CASE("fabric.switch.ecn.by_rate: read, checked, and one entry per rate", "[quick][params]") {
  const std::string base = R"({"topology": {"kind": "star", "hosts": 2}, "fabric": {"switch":
      {"ecn": {"enabled": true, "by_rate": )";
  const Scenario sc = load_scenario_text(
      base + R"([{"rate": "100Gbps", "kmin": "400KB", "kmax": "1600KB", "pmax": 0.2}]}}}})", "e");
  REQUIRE(sc.fabric.sw.ecn.by_rate.size() == 1);
  CHECK(sc.fabric.sw.ecn.by_rate[0].kmax == Bytes::kb(1600));
  CHECK_THROWS_WITH(
      load_scenario_text(
          base + R"([{"rate": "100G", "kmin": "4KB", "kmax": "1KB", "pmax": 0.2}]}}}})", "e"),
      "fabric.switch.ecn.by_rate[0].kmax: 1000B is below kmin (expected kmax >= kmin)");
  CHECK_THROWS_WITH(
      load_scenario_text(base + R"([{"rate": "100G", "kmin": "4KB", "kmax": "8KB", "pmax": 0.2},
                                    {"rate": "100Gbps", "kmin": "4KB", "kmax": "8KB", "pmax": 1}]}}}})",
                         "e"),
      "fabric.switch.ecn.by_rate[1].rate: 100Gbps is listed twice (expected one entry per rate)");
  CHECK_THROWS_WITH(load_scenario_text(base + R"([{"rate": "100G", "kmin": "4KB"}]}}}})", "e"),
                    "fabric.switch.ecn.by_rate[0].kmax: missing (expected a size, e.g. \"12MB\" or "
                    "12000000)");
}
