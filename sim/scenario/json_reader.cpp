#include "sim/scenario/json_reader.h"

#include "sim/scenario/input_limits.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <stdexcept>

namespace rdmasim {
namespace {

using nlohmann::json;

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

const char* type_name(const json& v) {
  if (v.is_string()) return "a string";
  if (v.is_boolean()) return "a boolean";
  if (v.is_number()) return "a number";
  if (v.is_array()) return "an array";
  if (v.is_object()) return "an object";
  return "null";
}

[[noreturn]] void fail_at(const std::string& path, const std::string& problem,
                          const std::string& expected) {
  throw ScenarioError(path + ": " + problem + " (expected " + expected + ")");
}

}  // namespace

namespace {

// Compact JSON of `v`, stopping once `out` is past `budget` bytes: a huge
// array costs no more to show than a short one, and the depth is bounded.
void dump_bounded(const json& v, std::string& out, size_t budget, int depth) {
  if (out.size() > budget) return;
  if (!v.is_structured()) {
    std::string s = v.dump(-1, ' ', false, json::error_handler_t::replace);
    out += s.size() > budget ? s.substr(0, budget + 1) : s;
    return;
  }
  if (depth >= kMaxJsonDepth) {
    out += "…";
    return;
  }
  const bool object = v.is_object();
  out += object ? '{' : '[';
  bool first = true;
  for (auto it = v.begin(); it != v.end() && out.size() <= budget; ++it) {
    if (!first) out += ',';
    first = false;
    if (object) out += json(it.key()).dump(-1, ' ', false, json::error_handler_t::replace) + ":";
    dump_bounded(it.value(), out, budget, depth + 1);
  }
  out += object ? '}' : ']';
}

}  // namespace

std::string show(const json& v) {
  std::string s;
  dump_bounded(v, s, kMaxEchoChars + 8, 0);
  return clip(s, kMaxEchoChars);
}

std::optional<std::string> nearest_key(const std::string& key,
                                       const std::vector<std::string>& known) {
  std::optional<std::string> best;
  size_t best_d = std::max<size_t>(2, key.size() / 3) + 1;
  for (const std::string& k : known) {
    const size_t d = edit_distance(key, k);
    if (d < best_d) {
      best_d = d;
      best = k;
    }
  }
  return best;
}

json to_json(const Param& p, const ParamValue& v) {
  if (const ParamWord* w = p.word_for(v)) return w->word;
  switch (p.kind) {
    case ParamKind::kTime:
      return to_string(std::get<Time>(v));
    case ParamKind::kBytes: {
      const Bytes b = std::get<Bytes>(v);
      return b.count() % 1024 == 0 && b.count() != 0 ? json(to_string(b)) : json(b.count());
    }
    case ParamKind::kRate:
      return to_string(std::get<BitRate>(v));
    case ParamKind::kChoice:
      return p.choice_name(std::get<int64_t>(v));
    case ParamKind::kPriorities: {
      json list = json::array();
      for (int q = 0; q < 8; ++q) {
        if ((std::get<int64_t>(v) >> q) & 1) list.push_back(q);
      }
      return list;
    }
    default:
      break;
  }
  return std::visit(
      [](const auto& x) -> json {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return nullptr;
        } else if constexpr (std::is_same_v<T, Time>) {
          return to_string(x);
        } else if constexpr (std::is_same_v<T, Bytes>) {
          return x.count();
        } else if constexpr (std::is_same_v<T, BitRate>) {
          return to_string(x);
        } else {
          return x;
        }
      },
      v);
}

JsonReader::JsonReader(const json* value, std::string path, json* resolved, const ParamTable& table)
    : value_(value), path_(std::move(path)), resolved_(resolved), table_(&table) {
  if (value_ != nullptr && value_->is_null()) value_ = nullptr;
  if (value_ != nullptr && !value_->is_object()) {
    throw ScenarioError((path_.empty() ? std::string("scenario") : path_) + ": " + show(*value_) +
                        " is " + type_name(*value_) + " (expected an object)");
  }
  if (resolved_ != nullptr && !resolved_->is_object()) *resolved_ = json::object();
  for (const Param& p : table.params()) entries_.push_back(Entry{&p, &table});
}

std::string JsonReader::path_of(const std::string& key) const {
  // Keys are echoed clipped: a path stays short whatever the input.
  return path_.empty() ? clip(key) : path_ + "." + clip(key);
}

const JsonReader::Entry* JsonReader::entry(const std::string& key) const {
  for (const Entry& e : entries_) {
    if (e.param->key == key) return &e;
  }
  return nullptr;
}

const Param& JsonReader::param(const std::string& key) const {
  const Entry* e = entry(key);
  if (e == nullptr) {
    throw std::logic_error("scenario loader: " + path_of(key) + " is not declared in table \"" +
                           table_->title() + "\"");
  }
  return *e->param;
}

void JsonReader::fail(const std::string& key, const std::string& problem,
                      const std::string& expected) const {
  // A required key that is missing is most often misspelt: if a given key
  // that is not declared is a near miss of it, that key is the error.
  if (problem == "missing" && value_ != nullptr && key.size() >= 3) {
    for (const auto& [present, v] : value_->items()) {
      if (entry(present) != nullptr) continue;
      if (edit_distance(present, key) <= std::max<size_t>(1, key.size() / 3)) {
        throw ScenarioError(path_of(present) + ": unknown key (did you mean \"" + key + "\"?)");
      }
    }
  }
  fail_at(path_of(key), problem, expected);
}

bool JsonReader::has(const std::string& key) const {
  return value_ != nullptr && value_->contains(key) && !(*value_)[key].is_null();
}

const json* JsonReader::get(const std::string& key) {
  const Param& p = param(key);  // contract 1
  read_.insert(key);
  if (!has(key)) return nullptr;
  if (!applies(key)) fail(key, why_not(p), "no " + key);  // contract 4
  return &(*value_)[key];
}

bool JsonReader::holds(const ParamCondition& c) const {
  switch (c.how) {
    case ParamCondition::How::kGiven:
      return has(c.key);
    case ParamCondition::How::kAbsent:
      return !has(c.key);
    case ParamCondition::How::kEquals: {
      if (resolved_ == nullptr || !resolved_->contains(c.key)) return false;
      const Entry* e = entry(c.key);
      if (e == nullptr) return false;
      // Compared as settled values, so that 1 and 1.0 are the same number.
      const ParamValue have = parse(*e->param, (*resolved_)[c.key], path_of(c.key));
      for (const std::string& text : c.values) {
        const bool textual =
            e->param->kind == ParamKind::kChoice || e->param->kind == ParamKind::kString;
        const json want = textual ? json(text) : json::parse(text);
        if (parse(*e->param, want, path_of(c.key)) == have) return true;
      }
      return false;
    }
  }
  return false;
}

bool JsonReader::applies(const std::string& key) const {
  const Param& p = param(key);
  return std::all_of(p.when.begin(), p.when.end(),
                     [&](const ParamCondition& c) { return holds(c); });
}

std::string JsonReader::why_not(const Param& p) const {
  for (const ParamCondition& c : p.when) {
    if (holds(c)) continue;
    switch (c.how) {
      case ParamCondition::How::kGiven:
        return "applies only with " + c.key;
      case ParamCondition::How::kAbsent:
        return "applies only without " + c.key;
      case ParamCondition::How::kEquals: {
        std::string values;
        for (size_t i = 0; i < c.values.size(); ++i) {
          if (i > 0) values += i + 1 == c.values.size() ? " or " : ", ";
          const Param* q = entry(c.key) != nullptr ? entry(c.key)->param : nullptr;
          const bool text =
              q != nullptr && (q->kind == ParamKind::kChoice || q->kind == ParamKind::kString);
          values += text ? "\"" + c.values[i] + "\"" : c.values[i];
        }
        return "applies to " + c.key + " " + values + " only";
      }
    }
  }
  return "does not apply here";
}

ParamValue JsonReader::parse(const Param& p, const json& v, const std::string& path) const {
  if (v.is_string()) {
    for (const ParamWord& w : p.words) {
      if (v == w.word) return w.value;
    }
  }
  const std::string expected = p.expected();
  switch (p.kind) {
    case ParamKind::kBool:
      if (!v.is_boolean()) fail_at(path, show(v) + " is " + type_name(v), expected);
      return v.get<bool>();
    case ParamKind::kString:
      if (!v.is_string()) fail_at(path, show(v) + " is " + type_name(v), expected);
      return v.get<std::string>();
    case ParamKind::kInt: {
      int64_t x = 0;
      if (v.is_number_integer()) {
        if (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t{INT64_MAX}) {
          fail_at(path, show(v) + " is too large", expected);
        }
        x = v.get<int64_t>();
      } else if (v.is_number_float()) {
        // Only a whole number inside int64's range converts: the cast of
        // anything beyond it is undefined (found by the fuzzer: 4e102).
        const double d = v.get<double>();
        if (!(d >= -0x1p63 && d < 0x1p63)) fail_at(path, show(v) + " is out of range", expected);
        if (d != std::trunc(d)) fail_at(path, show(v) + " is not a whole number", expected);
        x = static_cast<int64_t>(d);
      } else {
        fail_at(path, show(v) + " is " + (v.is_number() ? "not a whole number" : type_name(v)),
                expected);
      }
      if (x < p.imin || x > p.imax) fail_at(path, show(v) + " is out of range", expected);
      if (p.power_of_two && !std::has_single_bit(static_cast<uint64_t>(x))) {
        fail_at(path, std::to_string(x) + " is not a power of two", expected);
      }
      if (p.multiple_of > 1 && x % p.multiple_of != 0) {
        fail_at(path,
                std::to_string(x) +
                    (p.multiple_of == 2 ? " is odd"
                                        : " is not a multiple of " + std::to_string(p.multiple_of)),
                expected);
      }
      return x;
    }
    case ParamKind::kNumber: {
      if (!v.is_number()) fail_at(path, show(v) + " is " + type_name(v), expected);
      const double x = v.get<double>();
      const bool above = p.dmin_open ? x > p.dmin : x >= p.dmin;
      const bool below = p.dmax_open ? x < p.dmax : x <= p.dmax;
      if (!(above && below)) fail_at(path, show(v) + " is out of range", expected);
      return x;
    }
    case ParamKind::kTime: {
      Time t;
      if (v.is_string()) {
        Parsed<Time> q = parse_time(v.get<std::string>());
        if (!q) throw ScenarioError(path + ": " + q.error);
        t = *q.value;
      } else if (v.is_number()) {
        fail_at(path, show(v) + " has no unit", expected);
      } else {
        fail_at(path, show(v) + " is " + type_name(v), expected);
      }
      if (t < p.tmin) {
        fail_at(path, show(v) + " is too small", "a time of at least " + to_string(p.tmin));
      }
      if (t > kMaxTime) {
        fail_at(path, show(v) + " is too large", "a time of at most " + to_string(kMaxTime));
      }
      return t;
    }
    case ParamKind::kBytes: {
      Bytes b;
      if (v.is_string()) {
        Parsed<Bytes> q = parse_bytes(v.get<std::string>());
        if (!q) throw ScenarioError(path + ": " + q.error);
        b = *q.value;
      } else if (v.is_number_integer() &&
                 !(v.is_number_unsigned() && v.get<uint64_t>() > uint64_t{INT64_MAX})) {
        b = Bytes(v.get<int64_t>());
      } else if (v.is_number_float() && v.get<double>() >= 0 && v.get<double>() < 9e18 &&
                 v.get<double>() == static_cast<double>(static_cast<int64_t>(v.get<double>()))) {
        b = Bytes(static_cast<int64_t>(v.get<double>()));
      } else {
        fail_at(path, show(v) + " is not a size", expected);
      }
      if (b < p.bmin) {
        fail_at(path, show(v) + " is too small",
                "a size of at least " + std::to_string(p.bmin.count()) + " bytes");
      }
      if (b > kMaxSize) {
        fail_at(path, show(v) + " is too large", "a size of at most " + to_string(kMaxSize));
      }
      return b;
    }
    case ParamKind::kRate: {
      BitRate r;
      if (v.is_string()) {
        Parsed<BitRate> q = parse_rate(v.get<std::string>());
        if (!q) throw ScenarioError(path + ": " + q.error);
        r = *q.value;
      } else if (v.is_number_integer() &&
                 !(v.is_number_unsigned() && v.get<uint64_t>() > uint64_t{INT64_MAX})) {
        r = BitRate::bps(v.get<int64_t>());
      } else if (v.is_number_float() && v.get<double>() > 0 && v.get<double>() < 9e18 &&
                 v.get<double>() == static_cast<double>(static_cast<int64_t>(v.get<double>()))) {
        r = BitRate::bps(static_cast<int64_t>(v.get<double>()));
      } else {
        fail_at(path, show(v) + " is not a rate", expected);
      }
      if (r.in_bps() <= 0) fail_at(path, show(v) + " is not positive", expected);
      if (r > kMaxRate) {
        fail_at(path, show(v) + " is too large", "a rate of at most " + to_string(kMaxRate));
      }
      return r;
    }
    case ParamKind::kChoice: {
      if (v.is_string()) {
        for (const auto& [name, value] : p.choices) {
          if (v == name) return value;
        }
        std::vector<std::string> names;
        for (const auto& c : p.choices) names.push_back(c.first);
        if (auto near = nearest_key(v.get<std::string>(), names)) {
          fail_at(path, show(v) + " is not valid, did you mean \"" + *near + "\"?", expected);
        }
      }
      fail_at(path, show(v) + " is not valid", expected);
    }
    case ParamKind::kPriorities: {
      if (!v.is_array()) fail_at(path, show(v) + " is not a list", expected);
      int64_t mask = 0;
      for (size_t i = 0; i < v.size(); ++i) {
        const json& e = v[i];
        if (!e.is_number_unsigned() || e.get<uint64_t>() > 7) {
          throw ScenarioError(path + "[" + std::to_string(i) + "]: " + show(e) +
                              " is not a priority (expected an integer from 0 to 7)");
        }
        mask |= int64_t{1} << e.get<uint64_t>();
      }
      return mask;
    }
    case ParamKind::kObject:
    case ParamKind::kObjects:
    case ParamKind::kCustom:
      break;
  }
  throw std::logic_error("scenario loader: " + path + " is not a scalar parameter");
}

ParamValue JsonReader::value(const std::string& key, const ParamValue* computed,
                             const Param* narrowed) {
  const Param& p = narrowed != nullptr ? *narrowed : param(key);
  const json* given = get(key);
  const std::string path = path_of(key);
  if (!applies(key)) {
    if (given != nullptr) fail(key, why_not(p), "no " + key);
    throw std::logic_error("scenario loader: " + path + " read where it does not apply");
  }
  ParamValue v;
  if (given != nullptr) {
    v = parse(p, *given, path);
  } else if (auto it = std::find_if(preset_.begin(), preset_.end(),
                                    [&](const auto& e) { return e.first == key; });
             it != preset_.end()) {
    v = parse(p, it->second, path);
  } else {
    switch (p.def_kind) {
      case ParamDefault::kValue:
        v = p.def;
        break;
      case ParamDefault::kFrom:
        if (resolved_ == nullptr || !resolved_->contains(p.def_from)) {
          throw std::logic_error("scenario loader: " + path + " defaults to " + p.def_from +
                                 ", which is not read yet");
        }
        v = parse(p, (*resolved_)[p.def_from], path);
        break;
      case ParamDefault::kComputed:
        if (computed == nullptr) {
          throw std::logic_error("scenario loader: " + path + " needs its computed default");
        }
        v = *computed;
        break;
      case ParamDefault::kRequired:
        fail(key, "missing", p.expected());
      case ParamDefault::kOptional:
        return std::monostate{};
    }
  }
  if (!p.presets.empty()) {
    // A preset sets the defaults of the keys it names (read after it).
    const std::string& name = p.choice_name(std::get<int64_t>(v));
    for (const ParamPreset& preset : p.presets) {
      if (preset.name != name) continue;
      for (const auto& [k, text] : preset.values) preset_.emplace_back(k, json::parse(text));
    }
  }
  // A priority list given is resolved as given (its order, repeats and all).
  set_resolved(key, p.kind == ParamKind::kPriorities && given != nullptr ? *given : to_json(p, v));
  return v;
}

const json* JsonReader::raw(const std::string& key) { return get(key); }

json JsonReader::raw_or_default(const std::string& key) {
  const Param& p = param(key);
  if (const json* v = get(key)) return *v;
  if (p.def_kind != ParamDefault::kValue) {
    throw std::logic_error("scenario loader: " + path_of(key) + " has no default value");
  }
  return to_json(p, p.def);
}

std::string JsonReader::string(const std::string& key, std::optional<std::string> computed) {
  if (!computed) return std::get<std::string>(value(key));
  const ParamValue c(*computed);
  return std::get<std::string>(value(key, &c));
}
bool JsonReader::boolean(const std::string& key) { return std::get<bool>(value(key)); }
int64_t JsonReader::integer(const std::string& key) { return std::get<int64_t>(value(key)); }
int64_t JsonReader::integer(const std::string& key, int64_t min, int64_t max) {
  Param narrowed = param(key);
  narrowed.imin = std::max(narrowed.imin, min);
  narrowed.imax = std::min(narrowed.imax, max);
  return std::get<int64_t>(value(key, nullptr, &narrowed));
}
double JsonReader::number(const std::string& key) { return std::get<double>(value(key)); }
Time JsonReader::time(const std::string& key, std::optional<Time> computed) {
  if (!computed) return std::get<Time>(value(key));
  const ParamValue c(*computed);
  return std::get<Time>(value(key, &c));
}
Bytes JsonReader::bytes(const std::string& key) { return std::get<Bytes>(value(key)); }
BitRate JsonReader::rate(const std::string& key, std::optional<BitRate> computed) {
  if (!computed) return std::get<BitRate>(value(key));
  const ParamValue c(*computed);
  return std::get<BitRate>(value(key, &c));
}
uint8_t JsonReader::priorities(const std::string& key) {
  return static_cast<uint8_t>(std::get<int64_t>(value(key)));
}
std::optional<Time> JsonReader::optional_time(const std::string& key) {
  const ParamValue v = value(key);
  if (std::holds_alternative<std::monostate>(v)) return std::nullopt;
  return std::get<Time>(v);
}

int64_t JsonReader::choice_value(const std::string& key, int64_t computed) {
  const ParamValue c(computed);
  return std::get<int64_t>(value(key, &c));
}

void JsonReader::read_bound(const std::type_info& type, void* cfg, bool inherit) {
  for (size_t i = 0; i < entries_.size(); ++i) {
    const Entry e = entries_[i];  // kind() may append
    // Unbound presets are read in their place: they set the defaults of
    // the keys after them.
    const bool preset = !e.param->presets.empty();
    if (!preset &&
        (e.table->bound_type() == nullptr || *e.table->bound_type() != type || !e.param->bound())) {
      continue;
    }
    if (!applies(e.param->key)) {
      read_.insert(e.param->key);
      if (has(e.param->key)) fail(e.param->key, why_not(*e.param), "no " + e.param->key);
      continue;
    }
    const bool preset_set = std::any_of(preset_.begin(), preset_.end(),
                                        [&](const auto& x) { return x.first == e.param->key; });
    if (inherit && e.param->bound() && !has(e.param->key) && !preset_set) {
      // Read over another setting: keep what the struct holds.
      const ParamValue v = e.param->get(cfg);
      read_.insert(e.param->key);
      set_resolved(e.param->key, to_json(*e.param, v));
      continue;
    }
    // A bound param with a computed default: the loader computed it into
    // the struct before reading.
    const ParamValue computed = e.param->bound() && e.param->def_kind == ParamDefault::kComputed
                                    ? e.param->get(cfg)
                                    : ParamValue{};
    const ParamValue v = value(
        e.param->key,
        e.param->bound() && e.param->def_kind == ParamDefault::kComputed ? &computed : nullptr);
    if (!std::holds_alternative<std::monostate>(v) && e.param->bound()) e.param->set(cfg, v);
  }
}

int64_t JsonReader::kind() {
  const std::string& key = table_->discriminator();
  if (key.empty()) throw std::logic_error("scenario loader: " + path_ + " has no kinds");
  const int64_t v = std::get<int64_t>(value(key));
  for (const ParamTable::Variant& var : table_->variants()) {
    if (var.value != v) continue;
    kind_name_ = var.name;
    for (const Param& p : var.table->params()) entries_.push_back(Entry{&p, var.table});
  }
  return v;
}

JsonReader JsonReader::object(const std::string& key) {
  const Param& p = param(key);
  if (p.kind != ParamKind::kObject) {
    throw std::logic_error("scenario loader: " + path_of(key) + " is not an object parameter");
  }
  const json* v = get(key);  // given where it does not apply: an error (contract 4)
  json* child = nullptr;
  // An object that does not apply reads as its defaults, unresolved.
  if (resolved_ != nullptr && applies(key)) child = &(*resolved_)[key];
  return JsonReader(v, path_of(key), child, *p.child);
}

std::vector<const json*> JsonReader::array(const std::string& key) {
  const Param& p = param(key);
  const json* v = get(key);
  std::vector<const json*> out;
  if (v == nullptr) {
    if (p.def_kind == ParamDefault::kRequired && applies(key)) fail(key, "missing", "an array");
    return out;
  }
  if (!v->is_array()) fail(key, show(*v) + " is " + type_name(*v), "an array");
  for (const auto& e : *v) out.push_back(&e);
  set_resolved(key, *v);
  return out;
}

std::vector<JsonReader> JsonReader::objects(const std::string& key) {
  const Param& p = param(key);
  if (p.kind != ParamKind::kObjects) {
    throw std::logic_error("scenario loader: " + path_of(key) + " is not an array of objects");
  }
  const auto items = array(key);
  json* arr = nullptr;
  if (resolved_ != nullptr) {
    arr = &(*resolved_)[key];
    *arr = json::array();
    for (size_t i = 0; i < items.size(); ++i) arr->push_back(json::object());
  }
  std::vector<JsonReader> out;
  out.reserve(items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    out.emplace_back(items[i], path_of(key) + "[" + std::to_string(i) + "]",
                     arr != nullptr ? &(*arr)[i] : nullptr, *p.child);
  }
  return out;
}

void JsonReader::finish() {
  if (value_ == nullptr) return;
  for (const auto& [key, v] : value_->items()) {
    const Entry* e = entry(key);
    if (e == nullptr) {
      std::vector<std::string> known;
      for (const Entry& k : entries_) known.push_back(k.param->key);
      std::sort(known.begin(), known.end());
      if (auto near = nearest_key(key, known)) {
        throw ScenarioError(path_of(key) + ": unknown key (did you mean \"" + *near + "\"?)");
      }
      std::string list;
      for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
      throw ScenarioError(path_of(key) + ": unknown key (expected one of: " + list + ")");
    }
    if (v.is_null()) continue;
    if (!applies(key)) fail(key, why_not(*e->param), "no " + key);
    if (read_.count(key) == 0) {
      throw std::logic_error("scenario loader: " + path_of(key) + " is declared but never read");
    }
  }
}

}  // namespace rdmasim
