#include "sim/scenario/input_limits.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "sim/scenario/scenario_error.h"

using namespace rdmasim;
using nlohmann::json;

namespace {

std::string nested(int levels) { return std::string(levels, '[') + std::string(levels, ']'); }

std::string error_of(const std::string& text) {
  try {
    parse_json_bounded(text, "f.json");
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("nesting: 64 levels parse, 65 are refused at the path where they start",
          "[quick][scenario]") {
  CHECK(json_depth(parse_json_bounded(nested(kMaxJsonDepth), "f.json")) == kMaxJsonDepth);
  CHECK(error_of(nested(kMaxJsonDepth + 1)).find("nested deeper than 64 levels") !=
        std::string::npos);
  CHECK(error_of(R"({"a": )" + nested(64) + "}").starts_with("a[0]"));
  CHECK(error_of(R"({"a": )" + nested(63) + "}").empty());
  // Far deeper than the stack would take if anything recursed.
  CHECK(!error_of(nested(1'000'000)).empty());
}

TEST_CASE("keys, strings, numbers, duplicates and NUL bytes are checked while parsing",
          "[quick][scenario]") {
  CHECK(error_of("{\"" + std::string(kMaxKeyBytes, 'k') + "\": 1}").empty());
  CHECK(error_of("{\"" + std::string(kMaxKeyBytes + 1, 'k') + "\": 1}")
            .ends_with(": a key of 257 bytes is too long (expected a key of at most 256 bytes)"));
  CHECK(error_of("[\"" + std::string(kMaxStringBytes, 's') + "\"]").empty());
  CHECK(error_of("[\"" + std::string(kMaxStringBytes + 1, 's') + "\"]")
            .starts_with("[0]: a string of 4097 bytes is too long"));
  CHECK(
      error_of(R"({"x": [1, 1e400]})").starts_with("x[1]: 1e400 is beyond the range of a number"));
  CHECK(error_of(R"({"a": {"b": 1, "b": 2}})").starts_with("a.b: duplicate key"));
  CHECK(error_of(std::string("{}\n\0x", 5)) ==
        "f.json:2:1: invalid JSON: a NUL byte at byte 3 (expected text without NUL bytes)");
  CHECK(error_of("{\"a\": tru}").starts_with("f.json:1:10: invalid JSON: syntax error"));
}

TEST_CASE("a --set value: a syntax error makes it a string, a limit is an error",
          "[quick][scenario]") {
  CHECK(!try_parse_json_bounded("not json", "name"));
  CHECK(*try_parse_json_bounded("[1, 2]", "x") == json::array({1, 2}));
  CHECK_THROWS_AS(try_parse_json_bounded(nested(65), "name"), ScenarioError);
}

TEST_CASE("clip cuts at a character boundary and marks the cut", "[quick][scenario]") {
  CHECK(clip("abc", 3) == "abc");
  CHECK(clip("abcd", 3) == "abc…");
  CHECK(clip("ééé", 2) == "éé…");  // two-byte characters are not split
}

TEST_CASE("files are read up to a limit, devices and folders included", "[quick][scenario]") {
  std::string text;
  CHECK(read_file_bounded("/dev/zero", 1 << 20, text) == "it is larger than 1 MiB");
  CHECK(text.empty());
  CHECK(read_file_bounded(std::filesystem::temp_directory_path().string(), 1 << 20, text) ==
        "it is a directory");
  CHECK(read_file_bounded("/no/such/file", 1 << 20, text) == "No such file or directory");
  CHECK(!read_file_bounded("/dev/null", 1 << 20, text));
}
