#include "sim/scenario/overrides.h"

#include <cctype>
#include <cstdio>

#include <optional>

#include "sim/scenario/input_limits.h"
#include "sim/scenario/scenario_error.h"

namespace rdmasim {
namespace {

// The offset of the first byte of `s` that does not start or continue a
// well-formed UTF-8 character (RFC 3629: no overlong forms, no surrogates,
// nothing above U+10FFFF), if any. A JSON string must be UTF-8, and a --set
// value that is not JSON becomes one.
std::optional<size_t> invalid_utf8(const std::string& s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t n = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // the range of the second byte
    if (c < 0x80) {
      ++i;
      continue;
    } else if (c >= 0xC2 && c <= 0xDF) {
      n = 1;
    } else if (c >= 0xE0 && c <= 0xEF) {
      n = 2;
      if (c == 0xE0) lo = 0xA0;  // overlong
      if (c == 0xED) hi = 0x9F;  // surrogates
    } else if (c >= 0xF0 && c <= 0xF4) {
      n = 3;
      if (c == 0xF0) lo = 0x90;  // overlong
      if (c == 0xF4) hi = 0x8F;  // above U+10FFFF
    } else {
      return i;
    }
    for (size_t k = 1; k <= n; ++k) {
      if (i + k >= s.size()) return i;
      const auto d = static_cast<unsigned char>(s[i + k]);
      if (d < (k == 1 ? lo : 0x80) || d > (k == 1 ? hi : 0xBF)) return i;
    }
    i += n + 1;
  }
  return std::nullopt;
}

}  // namespace

void apply_override(nlohmann::json& root, const std::string& assignment) {
  if (const auto at = invalid_utf8(assignment)) {
    // Echo only what comes before the bad byte: the rest may not print.
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02X", static_cast<unsigned char>(assignment[*at]));
    throw ScenarioError("--set " + clip(assignment.substr(0, *at)) + "…: byte " +
                        std::to_string(*at) + " (" + hex +
                        ") is not UTF-8 (expected UTF-8 text, as in a scenario file)");
  }
  const size_t eq = assignment.find('=');
  auto fail = [&](const std::string& problem) {
    throw ScenarioError("--set " + clip(assignment) + ": " + problem);
  };
  if (eq == std::string::npos || eq == 0)
    fail("not of the form PATH=VALUE (expected e.g. fabric.mtu=1024)");
  const std::string path = assignment.substr(0, eq);
  const std::string text = assignment.substr(eq + 1);

  // Parsed under the scenario file's limits (sim/scenario/input_limits.h): a
  // deep value is refused before it exists.
  nlohmann::json value;
  try {
    std::optional<nlohmann::json> parsed = try_parse_json_bounded(text, path);
    if (parsed) {
      value = std::move(*parsed);
    } else if (text.size() > kMaxStringBytes) {
      fail("a value of " + std::to_string(text.size()) +
           " bytes is too long (expected a string of at most " + std::to_string(kMaxStringBytes) +
           " bytes)");
    } else {
      value = text;
    }
  } catch (const ScenarioError& e) {
    std::string what = e.what();
    if (what.starts_with("scenario: ")) what = what.substr(10);
    fail(what);
  }

  nlohmann::json* node = &root;
  std::string walked;
  size_t i = 0;
  while (i < path.size()) {
    if (path[i] == '[') {
      const size_t close = path.find(']', i);
      if (close == std::string::npos || close == i + 1) fail("unclosed or empty [ ] in the path");
      const std::string digits = path.substr(i + 1, close - i - 1);
      for (char c : digits) {
        if (!std::isdigit(static_cast<unsigned char>(c)))
          fail("[" + digits + "] is not an array index");
      }
      if (digits.size() > 9) fail("[" + digits + "] is not an array index (too large)");
      const size_t index = std::stoul(digits);
      if (node->is_null()) *node = nlohmann::json::array();
      if (!node->is_array()) fail((walked.empty() ? "the scenario" : walked) + " is not an array");
      if (index > node->size()) {
        fail(walked + "[" + digits + "] does not exist (the array has " +
             std::to_string(node->size()) + " elements)");
      }
      if (index == node->size()) node->push_back(nullptr);
      walked += "[" + digits + "]";
      node = &(*node)[index];
      i = close + 1;
      if (i < path.size() && path[i] == '.') ++i;
      continue;
    }
    size_t end = i;
    while (end < path.size() && path[end] != '.' && path[end] != '[') ++end;
    const std::string key = path.substr(i, end - i);
    if (key.empty()) fail("empty key in the path");
    if (node->is_null()) *node = nlohmann::json::object();
    if (node->is_array()) {
      const bool index = key.find_first_not_of("0123456789") == std::string::npos;
      fail((walked.empty() ? "the scenario" : walked) + " is an array (expected " + walked +
           (index ? "[" + clip(key) + "]: array elements are written [i])"
                  : "[<index>]." + clip(key) + ")"));
    }
    if (!node->is_object()) {
      fail((walked.empty() ? "the scenario" : walked) + " is not an object (expected one holding " +
           clip(key) + ")");
    }
    walked += (walked.empty() ? "" : ".") + key;
    node = &(*node)[key];
    i = end;
    if (i < path.size() && path[i] == '.') ++i;
  }
  *node = std::move(value);
}

}  // namespace rdmasim
