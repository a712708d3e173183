// JsonReader: reads one JSON object of a scenario into typed values, checking
// each against what is expected, and records the value it settled on
// (default or given) into the resolved scenario.
//
// Contract:
//  1. Every getter names one key. Absent keys take the default; a getter
//     without a default makes the key required.
//  2. Every error is a ScenarioError whose message starts with the full JSON
//     path of the offending value, e.g. `traffic[2].size`.
//  3. finish() must be called once all keys are read: any key that no getter
//     asked for is reported as unknown, with the nearest known key suggested.
//  4. Models never see JSON: the loader turns JSON into config structs with
//     these getters, once, at load time.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "sim/scenario/scenario_error.h"
#include "sim/units.h"

namespace rdmasim {

class JsonReader {
 public:
  // `value` is the JSON at `path`; it must be an object (or null/absent,
  // which reads as an empty object). `resolved` receives the resolved values.
  JsonReader(const nlohmann::json* value, std::string path, nlohmann::json* resolved);

  const std::string& path() const { return path_; }
  std::string path_of(const std::string& key) const;
  bool has(const std::string& key) const;
  // The raw JSON under key (nullptr if absent); marks the key as used.
  const nlohmann::json* raw(const std::string& key);

  std::string string(const std::string& key, std::optional<std::string> def = std::nullopt);
  bool boolean(const std::string& key, std::optional<bool> def = std::nullopt);
  int64_t integer(const std::string& key, std::optional<int64_t> def, int64_t min, int64_t max);
  double number(const std::string& key, std::optional<double> def, double min, double max);
  Time time(const std::string& key, std::optional<Time> def, Time min = Time::zero());
  Bytes bytes(const std::string& key, std::optional<Bytes> def, Bytes min = Bytes(0));
  BitRate rate(const std::string& key, std::optional<BitRate> def);
  // One of a fixed set of strings, mapped to a value.
  template <class T>
  T choice(const std::string& key, const std::vector<std::pair<std::string, T>>& options,
           std::optional<T> def = std::nullopt);

  // A nested object (absent reads as empty).
  JsonReader object(const std::string& key);
  // The elements of an array (absent reads as empty when not required); the
  // array is copied as given into the resolved scenario.
  std::vector<const nlohmann::json*> array(const std::string& key, bool required);
  // An array of objects, one reader each, resolved element by element.
  std::vector<JsonReader> objects(const std::string& key, bool required);
  // Records `v` as the resolved value of `key` (for values read through raw()).
  void resolve(const std::string& key, nlohmann::json v) { set_resolved(key, std::move(v)); }

  // Reports keys nobody read.
  void finish();

  // "path: problem (expected ...)" as a ScenarioError.
  [[noreturn]] void fail(const std::string& key, const std::string& problem,
                         const std::string& expected) const;

 private:
  const nlohmann::json* get(const std::string& key);
  void set_resolved(const std::string& key, nlohmann::json v) {
    if (resolved_ != nullptr) (*resolved_)[key] = std::move(v);
  }

  const nlohmann::json* value_;
  std::string path_;
  nlohmann::json* resolved_;
  std::set<std::string> known_;  // every key a getter asked for, present or not
};

// How a JSON value is shown in an error: strings quoted, everything compact.
std::string show(const nlohmann::json& v);
// The known key closest to `key`, if it is close enough to be a typo.
std::optional<std::string> nearest_key(const std::string& key,
                                       const std::vector<std::string>& known);

template <class T>
T JsonReader::choice(const std::string& key, const std::vector<std::pair<std::string, T>>& options,
                     std::optional<T> def) {
  std::string expected = "one of";
  for (size_t i = 0; i < options.size(); ++i) {
    expected += (i == 0 ? " \"" : ", \"") + options[i].first + "\"";
  }
  const nlohmann::json* v = get(key);
  if (v == nullptr) {
    if (!def) fail(key, "missing", expected);
    for (const auto& [name, value] : options) {
      if (value == *def) set_resolved(key, name);
    }
    return *def;
  }
  if (v->is_string()) {
    for (const auto& [name, value] : options) {
      if (*v == name) {
        set_resolved(key, name);
        return value;
      }
    }
  }
  fail(key, show(*v) + " is not valid", expected);
}

}  // namespace rdmasim
