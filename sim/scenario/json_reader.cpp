#include "sim/scenario/json_reader.h"

#include <algorithm>
#include <cstdio>

namespace rdmasim {
namespace {

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

const char* type_name(const nlohmann::json& v) {
  if (v.is_string()) return "a string";
  if (v.is_boolean()) return "a boolean";
  if (v.is_number()) return "a number";
  if (v.is_array()) return "an array";
  if (v.is_object()) return "an object";
  return "null";
}

}  // namespace

std::string show(const nlohmann::json& v) {
  std::string s = v.dump();
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
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

JsonReader::JsonReader(const nlohmann::json* value, std::string path, nlohmann::json* resolved)
    : value_(value), path_(std::move(path)), resolved_(resolved) {
  if (value_ != nullptr && value_->is_null()) value_ = nullptr;
  if (value_ != nullptr && !value_->is_object()) {
    throw ScenarioError((path_.empty() ? std::string("scenario") : path_) + ": " + show(*value_) +
                        " is " + type_name(*value_) + " (expected an object)");
  }
  if (resolved_ != nullptr && !resolved_->is_object()) *resolved_ = nlohmann::json::object();
}

std::string JsonReader::path_of(const std::string& key) const {
  return path_.empty() ? key : path_ + "." + key;
}

void JsonReader::fail(const std::string& key, const std::string& problem,
                      const std::string& expected) const {
  // A required key that is missing is most often misspelt: if a key nobody
  // asked for is a near miss of it, that key is the error to report.
  if (problem == "missing" && value_ != nullptr && key.size() >= 3) {
    for (const auto& [present, v] : value_->items()) {
      if (known_.count(present) != 0) continue;
      if (edit_distance(present, key) <= std::max<size_t>(1, key.size() / 3)) {
        throw ScenarioError(path_of(present) + ": unknown key (did you mean \"" + key + "\"?)");
      }
    }
  }
  throw ScenarioError(path_of(key) + ": " + problem + " (expected " + expected + ")");
}

bool JsonReader::has(const std::string& key) const {
  return value_ != nullptr && value_->contains(key) && !(*value_)[key].is_null();
}

const nlohmann::json* JsonReader::get(const std::string& key) {
  known_.insert(key);
  if (!has(key)) return nullptr;
  return &(*value_)[key];
}

const nlohmann::json* JsonReader::raw(const std::string& key) { return get(key); }

std::string JsonReader::string(const std::string& key, std::optional<std::string> def) {
  const nlohmann::json* v = get(key);
  if (v == nullptr) {
    if (!def) fail(key, "missing", "a string");
    set_resolved(key, *def);
    return *def;
  }
  if (!v->is_string()) fail(key, show(*v) + " is " + type_name(*v), "a string");
  set_resolved(key, *v);
  return v->get<std::string>();
}

bool JsonReader::boolean(const std::string& key, std::optional<bool> def) {
  const nlohmann::json* v = get(key);
  if (v == nullptr) {
    if (!def) fail(key, "missing", "true or false");
    set_resolved(key, *def);
    return *def;
  }
  if (!v->is_boolean()) fail(key, show(*v) + " is " + type_name(*v), "true or false");
  set_resolved(key, *v);
  return v->get<bool>();
}

int64_t JsonReader::integer(const std::string& key, std::optional<int64_t> def, int64_t min,
                            int64_t max) {
  std::string expected = "an integer";
  if (max == INT64_MAX) {
    expected += " >= " + std::to_string(min);
  } else {
    expected += " from " + std::to_string(min) + " to " + std::to_string(max);
  }
  const nlohmann::json* v = get(key);
  int64_t x = 0;
  if (v == nullptr) {
    if (!def) fail(key, "missing", expected);
    x = *def;
  } else if (v->is_number_integer()) {
    if (v->is_number_unsigned() && v->get<uint64_t>() > uint64_t{INT64_MAX}) {
      fail(key, show(*v) + " is too large", expected);
    }
    x = v->get<int64_t>();
  } else if (v->is_number_float() &&
             v->get<double>() == static_cast<double>(static_cast<int64_t>(v->get<double>()))) {
    x = static_cast<int64_t>(v->get<double>());
  } else {
    fail(key, show(*v) + " is " + (v->is_number() ? "not a whole number" : type_name(*v)),
         expected);
  }
  if (x < min || x > max)
    fail(key, show(v ? *v : nlohmann::json(x)) + " is out of range", expected);
  set_resolved(key, x);
  return x;
}

double JsonReader::number(const std::string& key, std::optional<double> def, double min,
                          double max) {
  char range[96];
  std::snprintf(range, sizeof range, "a number from %g to %g", min, max);
  const nlohmann::json* v = get(key);
  double x = 0;
  if (v == nullptr) {
    if (!def) fail(key, "missing", range);
    x = *def;
  } else if (v->is_number()) {
    x = v->get<double>();
  } else {
    fail(key, show(*v) + " is " + type_name(*v), range);
  }
  if (!(x >= min && x <= max))
    fail(key, show(v ? *v : nlohmann::json(x)) + " is out of range", range);
  set_resolved(key, x);
  return x;
}

Time JsonReader::time(const std::string& key, std::optional<Time> def, Time min) {
  const std::string expected = "a time with a unit, e.g. \"600ns\", \"1.5us\" or \"2ms\"";
  const nlohmann::json* v = get(key);
  Time t;
  if (v == nullptr) {
    if (!def) fail(key, "missing", expected);
    t = *def;
  } else if (v->is_string()) {
    Parsed<Time> p = parse_time(v->get<std::string>());
    if (!p) throw ScenarioError(path_of(key) + ": " + p.error);
    t = *p.value;
  } else if (v->is_number()) {
    fail(key, show(*v) + " has no unit", expected);
  } else {
    fail(key, show(*v) + " is " + type_name(*v), expected);
  }
  if (t < min) {
    fail(key, show(v ? *v : nlohmann::json(to_string(t))) + " is too small",
         "a time of at least " + to_string(min));
  }
  set_resolved(key, to_string(t));
  return t;
}

Bytes JsonReader::bytes(const std::string& key, std::optional<Bytes> def, Bytes min) {
  const std::string expected = "a size, e.g. \"12MB\" or 12000000";
  const nlohmann::json* v = get(key);
  Bytes b;
  if (v == nullptr) {
    if (!def) fail(key, "missing", expected);
    b = *def;
  } else if (v->is_string()) {
    Parsed<Bytes> p = parse_bytes(v->get<std::string>());
    if (!p) throw ScenarioError(path_of(key) + ": " + p.error);
    b = *p.value;
  } else if (v->is_number_integer() &&
             !(v->is_number_unsigned() && v->get<uint64_t>() > uint64_t{INT64_MAX})) {
    b = Bytes(v->get<int64_t>());
  } else if (v->is_number_float() && v->get<double>() >= 0 && v->get<double>() < 9e18 &&
             v->get<double>() == static_cast<double>(static_cast<int64_t>(v->get<double>()))) {
    b = Bytes(static_cast<int64_t>(v->get<double>()));
  } else {
    fail(key, show(*v) + " is not a size", expected);
  }
  if (b < min) {
    fail(key, show(v ? *v : nlohmann::json(b.count())) + " is too small",
         "a size of at least " + std::to_string(min.count()) + " bytes");
  }
  set_resolved(key, b.count() % 1024 == 0 && b.count() != 0 ? nlohmann::json(to_string(b))
                                                            : nlohmann::json(b.count()));
  return b;
}

BitRate JsonReader::rate(const std::string& key, std::optional<BitRate> def) {
  const std::string expected = "a rate, e.g. \"400Gbps\" or \"100G\"";
  const nlohmann::json* v = get(key);
  BitRate r;
  if (v == nullptr) {
    if (!def) fail(key, "missing", expected);
    r = *def;
  } else if (v->is_string()) {
    Parsed<BitRate> p = parse_rate(v->get<std::string>());
    if (!p) throw ScenarioError(path_of(key) + ": " + p.error);
    r = *p.value;
  } else if (v->is_number_integer()) {
    r = BitRate::bps(v->get<int64_t>());
  } else {
    fail(key, show(*v) + " is not a rate", expected);
  }
  if (r.in_bps() <= 0) fail(key, show(v ? *v : nlohmann::json(0)) + " is not positive", expected);
  set_resolved(key, to_string(r));
  return r;
}

JsonReader JsonReader::object(const std::string& key) {
  const nlohmann::json* v = get(key);
  nlohmann::json* child = nullptr;
  if (resolved_ != nullptr) child = &(*resolved_)[key];
  return JsonReader(v, path_of(key), child);
}

std::vector<const nlohmann::json*> JsonReader::array(const std::string& key, bool required) {
  const nlohmann::json* v = get(key);
  std::vector<const nlohmann::json*> out;
  if (v == nullptr) {
    if (required) fail(key, "missing", "an array");
    return out;
  }
  if (!v->is_array()) fail(key, show(*v) + " is " + type_name(*v), "an array");
  for (const auto& e : *v) out.push_back(&e);
  set_resolved(key, *v);
  return out;
}

std::vector<JsonReader> JsonReader::objects(const std::string& key, bool required) {
  const auto items = array(key, required);
  nlohmann::json* arr = nullptr;
  if (resolved_ != nullptr) {
    arr = &(*resolved_)[key];
    *arr = nlohmann::json::array();
    for (size_t i = 0; i < items.size(); ++i) arr->push_back(nlohmann::json::object());
  }
  std::vector<JsonReader> out;
  out.reserve(items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    out.emplace_back(items[i], path_of(key) + "[" + std::to_string(i) + "]",
                     arr != nullptr ? &(*arr)[i] : nullptr);
  }
  return out;
}

void JsonReader::finish() {
  if (value_ == nullptr) return;
  for (const auto& [key, v] : value_->items()) {
    if (known_.count(key) != 0) continue;
    std::vector<std::string> known(known_.begin(), known_.end());
    if (auto near = nearest_key(key, known)) {
      throw ScenarioError(path_of(key) + ": unknown key (did you mean \"" + *near + "\"?)");
    }
    std::string list;
    for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
    throw ScenarioError(path_of(key) + ": unknown key (expected one of: " + list + ")");
  }
}

}  // namespace rdmasim
