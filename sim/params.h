// Parameter tables: every scenario parameter declared once, with its name,
// type, unit, default, range, one-line description and source. The loader's
// checks and defaults, the parameter tables in docs/*.md, `rdmasim describe`
// and the JSON Schema all come from these declarations (sim/scenario reads
// and renders them; nothing here knows JSON).
//
// Contract:
//  1. A ParamTable describes one JSON object: its keys (Params), in the order
//     the loader reads them, and optionally kinds (variants selected by a
//     discriminator key such as "kind"), each adding keys of its own.
//  2. A Param bound to a config struct's member (Fields<C>) takes its default
//     from a default-constructed C, so the value is written once, where the
//     field is declared; the table adds name, unit, range and description.
//     Unbound params (read by hand in the loader) carry their default here.
//  3. Alternatives to a value ("auto", "unlimited") are words standing for a
//     sentinel value of the field; a value equal to the sentinel is shown as
//     the word.
//  4. A param may apply only when other keys of its object have given values
//     (`shift` only with `pattern: "shift"`), are given, or are absent; a
//     preset param sets the defaults of other keys, which explicit keys
//     override.
//  5. Tables are built once (function-local statics) and never change.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <variant>
#include <vector>

#include "sim/units.h"

namespace rdmasim {

class ParamTable;

// A value as the loader settles it. Choices are their integer value;
// priority lists are bit masks.
using ParamValue =
    std::variant<std::monostate, bool, int64_t, double, std::string, Time, Bytes, BitRate>;

enum class ParamKind : uint8_t {
  kBool,
  kInt,
  kNumber,
  kString,
  kTime,
  kBytes,
  kRate,
  kChoice,
  kPriorities,  // a list of priorities 0..7, as a bit mask
  kObject,      // a nested object described by `child`
  kObjects,     // an array of objects, each described by `child`
  kCustom,      // read by hand; `type_text` and `schema` describe what it takes
};

// How a param's default is given.
enum class ParamDefault : uint8_t {
  kValue,     // `def`
  kRequired,  // no default: the key must be given (when its conditions hold)
  kOptional,  // absent means off: nothing is resolved (e.g. output.queue_interval)
  kFrom,      // the resolved value of key `def_from` of the same object
  kComputed,  // the loader computes it; `def_text` says how
};

struct ParamWord {
  std::string word;
  ParamValue value;  // the sentinel the word stands for
  std::string meaning;
};

struct ParamCondition {
  enum class How : uint8_t { kEquals, kGiven, kAbsent };
  std::string key;
  How how = How::kEquals;
  std::vector<std::string> values;  // kEquals: the resolved value, as text ("2", "shift")
};

// A named set of defaults for other keys of the same object (values as JSON
// text, read like user input).
struct ParamPreset {
  std::string name;
  std::vector<std::pair<std::string, std::string>> values;
  std::string source;
};

struct Param {
  std::string key;
  ParamKind kind = ParamKind::kCustom;
  std::string unit;  // for the docs: "packets", "bytes", ...
  // Ranges, inclusive (numbers may exclude their ends).
  int64_t imin = std::numeric_limits<int64_t>::min();
  int64_t imax = std::numeric_limits<int64_t>::max();
  bool power_of_two = false;
  int64_t multiple_of = 1;
  double dmin = -std::numeric_limits<double>::infinity();
  double dmax = std::numeric_limits<double>::infinity();
  bool dmin_open = false;
  bool dmax_open = false;
  Time tmin = Time::zero();
  Bytes bmin = Bytes(0);
  std::vector<std::pair<std::string, int64_t>> choices;
  std::vector<ParamWord> words;
  std::vector<ParamPreset> presets;  // a choice param whose names are presets
  ParamDefault def_kind = ParamDefault::kRequired;
  ParamValue def;
  std::string def_from;
  std::string def_text;
  std::string description;
  std::string source;
  std::string group;  // the docs' sub-table it belongs to
  std::vector<ParamCondition> when;
  const ParamTable* child = nullptr;
  std::string type_text;  // kCustom: what it takes, for the docs
  // kCustom: its JSON Schema (JSON text); other kinds: keywords added to the
  // generated one, for checks the loader makes by hand (a name's pattern).
  std::string schema;
  // Bound params: writes a settled value into the config struct.
  std::function<void(void*, const ParamValue&)> set;
  // ... and reads the field's current value (a config read over another).
  std::function<ParamValue(void*)> get;

  bool bound() const { return static_cast<bool>(set); }
  // The name of choice value v ("" if none).
  const std::string& choice_name(int64_t v) const;
  // The word standing for `v`, if any.
  const ParamWord* word_for(const ParamValue& v) const;
  // "an integer from 1 to 7", "a time of at least 1ps", ...: what the key
  // takes, as errors and the docs say it.
  std::string expected() const;
  // A short type for tables: "integer 1..7", "time ≥ 0", "rate or \"unlimited\"".
  std::string type_summary() const;
};

// Fluent setters for a Param being declared.
class ParamBuilder {
 public:
  explicit ParamBuilder(Param& p) : p_(p) {}
  ParamBuilder& doc(std::string d) {
    p_.description = std::move(d);
    return *this;
  }
  ParamBuilder& source(std::string s) {
    p_.source = std::move(s);
    return *this;
  }
  ParamBuilder& unit(std::string u) {
    p_.unit = std::move(u);
    return *this;
  }
  ParamBuilder& group(std::string g) {
    p_.group = std::move(g);
    return *this;
  }
  ParamBuilder& range(int64_t min, int64_t max) {
    p_.imin = min;
    p_.imax = max;
    return *this;
  }
  ParamBuilder& number_range(double min, double max, bool min_open = false, bool max_open = false) {
    p_.dmin = min;
    p_.dmax = max;
    p_.dmin_open = min_open;
    p_.dmax_open = max_open;
    return *this;
  }
  ParamBuilder& min(Time t) {
    p_.tmin = t;
    return *this;
  }
  ParamBuilder& min(Bytes b) {
    p_.bmin = b;
    return *this;
  }
  ParamBuilder& power_of_two() {
    p_.power_of_two = true;
    return *this;
  }
  ParamBuilder& multiple_of(int64_t m) {
    p_.multiple_of = m;
    return *this;
  }
  // JSON Schema keywords for what the loader checks by hand (JSON text).
  ParamBuilder& schema(std::string fragment) {
    p_.schema = std::move(fragment);
    return *this;
  }
  ParamBuilder& word(std::string w, ParamValue v, std::string meaning) {
    p_.words.push_back(ParamWord{std::move(w), std::move(v), std::move(meaning)});
    return *this;
  }
  ParamBuilder& def(ParamValue v) {
    p_.def_kind = ParamDefault::kValue;
    p_.def = std::move(v);
    return *this;
  }
  ParamBuilder& def_from(std::string key) {
    p_.def_kind = ParamDefault::kFrom;
    p_.def_from = std::move(key);
    return *this;
  }
  ParamBuilder& computed(std::string how) {
    p_.def_kind = ParamDefault::kComputed;
    p_.def_text = std::move(how);
    return *this;
  }
  ParamBuilder& required() {
    p_.def_kind = ParamDefault::kRequired;
    return *this;
  }
  ParamBuilder& optional(std::string absent_means) {
    p_.def_kind = ParamDefault::kOptional;
    p_.def_text = std::move(absent_means);
    return *this;
  }
  ParamBuilder& when(std::string key, std::vector<std::string> values) {
    p_.when.push_back(
        ParamCondition{std::move(key), ParamCondition::How::kEquals, std::move(values)});
    return *this;
  }
  ParamBuilder& when_given(std::string key) {
    p_.when.push_back(ParamCondition{std::move(key), ParamCondition::How::kGiven, {}});
    return *this;
  }
  ParamBuilder& when_absent(std::string key) {
    p_.when.push_back(ParamCondition{std::move(key), ParamCondition::How::kAbsent, {}});
    return *this;
  }
  ParamBuilder& preset(std::string name, std::vector<std::pair<std::string, std::string>> values,
                       std::string source) {
    p_.presets.push_back(ParamPreset{name, std::move(values), std::move(source)});
    p_.choices.emplace_back(std::move(name), static_cast<int64_t>(p_.choices.size()));
    return *this;
  }
  // kCustom: what the key takes (docs) and its JSON Schema fragment.
  ParamBuilder& takes(std::string type_text, std::string schema) {
    p_.type_text = std::move(type_text);
    p_.schema = std::move(schema);
    return *this;
  }
  Param& param() { return p_; }

 private:
  Param& p_;
};

class ParamTable {
 public:
  struct Variant {
    std::string name;
    int64_t value;
    const ParamTable* table;
    std::string description;
  };

  ParamTable(std::string title, std::string description = {})
      : title_(std::move(title)), description_(std::move(description)) {}
  // Tables are built by value and then kept in a static (contract 5): they
  // move, nothing points into one before it is in place.
  ParamTable(ParamTable&&) = default;
  ParamTable(const ParamTable&) = delete;
  ParamTable& operator=(const ParamTable&) = delete;

  const std::string& title() const { return title_; }
  const std::string& description() const { return description_; }
  const std::vector<Param>& params() const { return params_; }
  const Param* find(const std::string& key) const;

  // Kinds: `key` (e.g. "kind") selects one variant, whose table's keys join
  // this table's.
  const std::string& discriminator() const { return discriminator_; }
  const std::vector<Variant>& variants() const { return variants_; }
  const Variant* variant(const std::string& name) const;
  // The discriminator's description (e.g. "the traffic pattern").
  void set_discriminator(std::string key, std::string description);
  // Adds a kind (after set_discriminator); its name becomes one of the
  // discriminator's choices.
  template <class E>
  void add_variant(std::string name, E value, const ParamTable& table, std::string description) {
    add_variant_value(std::move(name), static_cast<int64_t>(value), table, std::move(description));
  }

  // The config struct bound params write into (nullptr: none).
  const std::type_info* bound_type() const { return bound_; }

  void add_variant_value(std::string name, int64_t value, const ParamTable& table,
                         std::string description);

  // ---- declaring unbound params (read by hand in the loader) ----
  ParamBuilder add(std::string key, ParamKind kind);
  ParamBuilder add_choice(std::string key, std::vector<std::pair<std::string, int64_t>> choices);
  template <class E>
  ParamBuilder add_choice(std::string key, std::vector<std::pair<std::string, E>> choices) {
    std::vector<std::pair<std::string, int64_t>> c;
    for (auto& [n, v] : choices) c.emplace_back(std::move(n), static_cast<int64_t>(v));
    return add_choice(std::move(key), std::move(c));
  }
  ParamBuilder add_object(std::string key, const ParamTable& child);
  ParamBuilder add_objects(std::string key, const ParamTable& child);
  // Every param of `other` (its bindings dropped unless `other` is bound to
  // the same type), e.g. the keys every traffic kind shares.
  void include(const ParamTable& other);

 protected:
  Param& push(std::string key, ParamKind kind);
  std::string title_;
  std::string description_;
  std::vector<Param> params_;
  std::string discriminator_;
  std::vector<Variant> variants_;
  const std::type_info* bound_ = nullptr;
};

// A table whose params write into a config struct C (contract 2). Each
// param names its field by a member pointer, or by an accessor
// `[](C& c) -> T& { return c.pfc.xoff; }` when the JSON object's keys land in
// a nested struct or in the parent's fields.
template <class C>
class Fields : public ParamTable {
 public:
  explicit Fields(std::string title, std::string description = {})
      : ParamTable(std::move(title), std::move(description)) {
    bound_ = &typeid(C);
  }

  template <class A>
  ParamBuilder boolean(std::string key, A field) {
    return bind<bool>(std::move(key), ParamKind::kBool, field);
  }
  template <class A>
  ParamBuilder integer(std::string key, A field, int64_t min, int64_t max) {
    using I = std::remove_reference_t<decltype(access(field, std::declval<C&>()))>;
    ParamBuilder b = bind<I>(std::move(key), ParamKind::kInt, field);
    b.range(min, max);
    return b;
  }
  template <class A>
  ParamBuilder number(std::string key, A field, double min, double max) {
    ParamBuilder b = bind<double>(std::move(key), ParamKind::kNumber, field);
    b.number_range(min, max);
    return b;
  }
  template <class A>
  ParamBuilder time(std::string key, A field, Time min = Time::zero()) {
    ParamBuilder b = bind<Time>(std::move(key), ParamKind::kTime, field);
    b.min(min);
    return b;
  }
  template <class A>
  ParamBuilder bytes(std::string key, A field, Bytes min = Bytes(0)) {
    ParamBuilder b = bind<Bytes>(std::move(key), ParamKind::kBytes, field);
    b.min(min);
    return b;
  }
  template <class A>
  ParamBuilder rate(std::string key, A field) {
    return bind<BitRate>(std::move(key), ParamKind::kRate, field);
  }
  template <class A, class E>
  ParamBuilder choice(std::string key, A field, std::vector<std::pair<std::string, E>> choices) {
    ParamBuilder b = bind<E>(std::move(key), ParamKind::kChoice, field);
    for (auto& [n, v] : choices) b.param().choices.emplace_back(n, static_cast<int64_t>(v));
    return b;
  }
  template <class A>
  ParamBuilder priorities(std::string key, A field) {
    return bind<uint8_t>(std::move(key), ParamKind::kPriorities, field);
  }

 private:
  template <class T>
  static T& access(T C::*m, C& c) {
    return c.*m;
  }
  template <class F>
  static auto& access(F f, C& c) {
    return f(c);
  }
  template <class T>
  static ParamValue to_value(const T& v) {
    if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, double> || std::is_same_v<T, Time> ||
                  std::is_same_v<T, Bytes> || std::is_same_v<T, BitRate>) {
      return ParamValue(v);
    } else {
      return ParamValue(static_cast<int64_t>(v));  // integers and enums
    }
  }
  template <class T>
  static T from_value(const ParamValue& v) {
    if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, double> || std::is_same_v<T, Time> ||
                  std::is_same_v<T, Bytes> || std::is_same_v<T, BitRate>) {
      return std::get<T>(v);
    } else {
      return static_cast<T>(std::get<int64_t>(v));
    }
  }
  template <class T, class A>
  ParamBuilder bind(std::string key, ParamKind kind, A field) {
    static_assert(std::is_same_v<std::remove_reference_t<decltype(access(field, defaults_))>, T>,
                  "the field's type does not match the param's kind");
    Param& p = push(std::move(key), kind);
    p.def_kind = ParamDefault::kValue;
    p.def = to_value(access(field, defaults_));
    p.set = [field](void* c, const ParamValue& v) {
      access(field, *static_cast<C*>(c)) = from_value<T>(v);
    };
    p.get = [field](void* c) { return to_value(access(field, *static_cast<C*>(c))); };
    return ParamBuilder(p);
  }
  C defaults_{};
};

}  // namespace rdmasim
