// JsonReader: reads one JSON object of a scenario against its ParamTable
// (sim/params.h), checking each value against the declaration, and records
// the value it settled on (default or given) into the resolved scenario.
//
// Contract:
//  1. Every key is declared in the reader's table (or in its chosen kind's);
//     asking for an undeclared key is a bug (std::logic_error), and a given
//     key that is not declared is reported as unknown, with the nearest
//     declared key suggested.
//  2. Defaults, ranges and types come from the table; getters only name the
//     key. A param with a computed default (ParamDefault::kComputed) takes
//     the default the loader passes.
//  3. Every error is a ScenarioError whose message starts with the full JSON
//     path of the offending value, e.g. `traffic[2].size`.
//  4. A param whose conditions (`when`) do not hold is not read: it gets no
//     default and no resolved value, and giving it is an error.
//  5. finish() must be called once all keys are read: it reports unknown and
//     inapplicable keys, and (a loader bug) declared keys given but not read.
//  6. Models never see JSON: the loader turns JSON into config structs with
//     this reader, once, at load time.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <typeinfo>
#include <utility>
#include <vector>

#include "sim/params.h"
#include "sim/scenario/scenario_error.h"
#include "sim/units.h"

namespace rdmasim {

class JsonReader {
 public:
  // `value` is the JSON at `path`; it must be an object (or null/absent,
  // which reads as an empty object). `resolved` receives the resolved values.
  JsonReader(const nlohmann::json* value, std::string path, nlohmann::json* resolved,
             const ParamTable& table);

  const std::string& path() const { return path_; }
  std::string path_of(const std::string& key) const;
  bool has(const std::string& key) const;
  // The raw JSON under a key read by hand (nullptr if absent); marks it read.
  const nlohmann::json* raw(const std::string& key);
  // The same, or the param's default when absent (as JSON).
  nlohmann::json raw_or_default(const std::string& key);
  // Whether the param has a default value (ParamDefault::kValue).
  bool has_default(const std::string& key) const {
    return param(key).def_kind == ParamDefault::kValue;
  }

  // Typed getters: the default and range are the table's (contract 2).
  std::string string(const std::string& key, std::optional<std::string> computed = std::nullopt);
  bool boolean(const std::string& key);
  int64_t integer(const std::string& key);
  // The same within a narrower range known only at load (e.g. 1 .. n-1).
  int64_t integer(const std::string& key, int64_t min, int64_t max);
  double number(const std::string& key);
  Time time(const std::string& key, std::optional<Time> computed = std::nullopt);
  Bytes bytes(const std::string& key);
  BitRate rate(const std::string& key, std::optional<BitRate> computed = std::nullopt);
  uint8_t priorities(const std::string& key);
  template <class E>
  E choice(const std::string& key) {
    return static_cast<E>(std::get<int64_t>(value(key)));
  }
  // A choice's value (its default the table's, or, for a computed default,
  // the one the loader passes).
  int64_t integer_choice(const std::string& key) { return std::get<int64_t>(value(key)); }
  int64_t choice_value(const std::string& key, int64_t computed);
  // An optional param (ParamDefault::kOptional): nothing when absent.
  std::optional<Time> optional_time(const std::string& key);
  // Whether `key` applies here (its conditions hold).
  bool applies(const std::string& key) const;

  // Every bound param of type C, in table order (kind's after the base's).
  template <class C>
  void read(C& cfg) {
    read_bound(typeid(C), &cfg, false);
  }
  // The same into a struct of the given type (an algorithm's config, known
  // to the loader only through its table). With `inherit`, an absent key
  // keeps the struct's current value (and resolves to it) instead of taking
  // the table's default: a setting read over another.
  void read_into(const std::type_info& type, void* cfg, bool inherit) {
    read_bound(type, cfg, inherit);
  }

  // Kinds: reads the discriminator and selects its variant; returns the
  // variant's value.
  int64_t kind();
  template <class E>
  E kind_as() {
    return static_cast<E>(kind());
  }
  const std::string& kind_name() const { return kind_name_; }

  // A nested object (absent reads as empty).
  JsonReader object(const std::string& key);
  // An array read by hand: its elements (absent: none); copied as given into
  // the resolved scenario.
  std::vector<const nlohmann::json*> array(const std::string& key);
  // An array of objects, one reader each, resolved element by element.
  std::vector<JsonReader> objects(const std::string& key);
  // Records `v` as the resolved value of `key` (for values read through raw()).
  void resolve(const std::string& key, nlohmann::json v) { set_resolved(key, std::move(v)); }
  // Leaves `key` (`key` of the object `object`, if given) out of the
  // resolved scenario: a default that has no meaning in this scenario (a
  // RoCE-only key on InfiniBand), so that the resolved scenario loads.
  void unresolve(const std::string& key) {
    if (resolved_ != nullptr) resolved_->erase(key);
  }
  void unresolve(const std::string& object, const std::string& key) {
    if (resolved_ == nullptr) return;
    auto it = resolved_->find(object);
    if (it != resolved_->end() && it->is_object()) it->erase(key);
  }

  // Contract 5.
  void finish();

  // "path: problem (expected ...)" as a ScenarioError.
  [[noreturn]] void fail(const std::string& key, const std::string& problem,
                         const std::string& expected) const;

 private:
  struct Entry {
    const Param* param;
    const ParamTable* table;
  };
  const Entry* entry(const std::string& key) const;
  const Param& param(const std::string& key) const;
  // The settled value of a scalar param (given, preset, or default); marks
  // it read and resolves it. Fails if it does not apply and is given.
  ParamValue value(const std::string& key, const ParamValue* computed = nullptr,
                   const Param* narrowed = nullptr);
  ParamValue parse(const Param& p, const nlohmann::json& v, const std::string& path) const;
  void read_bound(const std::type_info& type, void* cfg, bool inherit);
  const nlohmann::json* get(const std::string& key);
  bool holds(const ParamCondition& c) const;
  std::string why_not(const Param& p) const;
  void set_resolved(const std::string& key, nlohmann::json v) {
    if (resolved_ != nullptr) (*resolved_)[key] = std::move(v);
  }

  const nlohmann::json* value_;
  std::string path_;
  nlohmann::json* resolved_;
  const ParamTable* table_;
  std::vector<Entry> entries_;  // the table's params, then the kind's
  std::string kind_name_;
  std::set<std::string> read_;  // every key the loader asked for, present or not
  // Defaults set by a preset, as JSON read like user input.
  std::vector<std::pair<std::string, nlohmann::json>> preset_;
};

// How a JSON value is shown in an error: strings quoted, everything compact.
std::string show(const nlohmann::json& v);
// The known key closest to `key`, if it is close enough to be a typo.
std::optional<std::string> nearest_key(const std::string& key,
                                       const std::vector<std::string>& known);
// A settled value as the resolved scenario writes it.
nlohmann::json to_json(const Param& p, const ParamValue& v);

}  // namespace rdmasim
