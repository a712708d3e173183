#include "sim/scenario/schema.h"

#include <string>

#include "sim/scenario/describe.h"
#include "sim/scenario/host_set.h"
#include "sim/scenario/json_reader.h"
#include "sim/scenario/scenario_params.h"

namespace rdmasim {
namespace {

using nlohmann::json;

// The number syntax of sim/units.h's parser: digits with an optional point
// and exponent, no sign.
constexpr const char* kNumber = "(?:[0-9]+[.]?[0-9]*|[.][0-9]+)(?:[eE][+-]?[0-9]{1,4})?";

json unit_string(const std::string& units, bool unit_required, bool positive) {
  const std::string unit = "(?:" + units + ")" + (unit_required ? "" : "?") + "$";
  json s = {{"type", "string"}, {"pattern", std::string("^") + kNumber + unit}};
  // A positive minimum: at least not zero (finer minima only the loader checks).
  if (positive) {
    s["not"] = {{"pattern", "^(?:0+[.]?0*|[.]0+)(?:[eE][+-]?[0-9]{1,4})?" + unit}};
  }
  return s;
}

json words_or(const Param& p, json s) {
  if (p.words.empty()) return s;
  json any = json::array({s});
  for (const ParamWord& w : p.words) any.push_back({{"const", w.word}});
  return {{"anyOf", any}};
}

json value_schema(const Param& p);

json object_schema(const ParamTable& t);

json param_schema(const Param& p) {
  json s = value_schema(p);
  if (p.kind != ParamKind::kCustom && !p.schema.empty()) s.update(json::parse(p.schema));
  std::string d = p.description;
  // A default the loader computes has no JSON value: say how it is computed.
  if (p.def_kind == ParamDefault::kComputed && !p.def_text.empty() &&
      p.kind != ParamKind::kObject && p.kind != ParamKind::kObjects)
    d += (d.empty() ? "" : " ") + std::string("(default: ") + p.def_text + ")";
  if (!p.source.empty()) d += (d.empty() ? "" : " ") + std::string("[") + p.source + "]";
  if (!d.empty()) s["description"] = d;
  if (p.def_kind == ParamDefault::kValue && p.kind != ParamKind::kObjects &&
      p.kind != ParamKind::kCustom) {
    s["default"] = to_json(p, p.def);
  }
  return s;
}

json value_schema(const Param& p) {
  switch (p.kind) {
    case ParamKind::kBool:
      return {{"type", "boolean"}};
    case ParamKind::kString:
      return words_or(p, {{"type", "string"}});
    case ParamKind::kInt: {
      json s = {{"type", "integer"}, {"minimum", p.imin}};
      if (p.imax != std::numeric_limits<int64_t>::max()) s["maximum"] = p.imax;
      if (p.multiple_of > 1) s["multipleOf"] = p.multiple_of;
      if (p.power_of_two) {
        json powers = json::array();
        for (int64_t x = 1; x > 0 && x <= p.imax; x *= 2) {
          if (x >= p.imin) powers.push_back(x);
        }
        s = {{"enum", powers}};
      }
      return words_or(p, s);
    }
    case ParamKind::kNumber: {
      json s = {{"type", "number"}};
      s[p.dmin_open ? "exclusiveMinimum" : "minimum"] = p.dmin;
      s[p.dmax_open ? "exclusiveMaximum" : "maximum"] = p.dmax;
      return words_or(p, s);
    }
    case ParamKind::kTime:
      return words_or(p, unit_string("ps|ns|us|\u00b5s|ms|s|sec", true, p.tmin > Time::zero()));
    case ParamKind::kBytes:
      return words_or(
          p, {{"anyOf",
               {{{"type", "integer"}, {"minimum", p.bmin.count()}},
                unit_string("B|KB|MB|GB|TB|KiB|MiB|GiB|TiB|kB", false, p.bmin > Bytes(0))}}});
    case ParamKind::kRate:
      return words_or(
          p,
          {{"anyOf",
            {{{"type", "integer"}, {"minimum", 1}},
             unit_string("bps|kbps|Kbps|Mbps|Gbps|Tbps|Kb/s|Mb/s|Gb/s|Tb/s|K|M|G|T", false, true),
             {{"enum", {"EDR", "HDR", "NDR", "XDR"}}}}}});
    case ParamKind::kChoice: {
      json names = json::array();
      for (const auto& c : p.choices) names.push_back(c.first);
      return {{"enum", names}};
    }
    case ParamKind::kPriorities:
      return {{"type", "array"}, {"items", {{"enum", {0, 1, 2, 3, 4, 5, 6, 7}}}}};
    case ParamKind::kObject:
      return object_schema(*p.child);
    case ParamKind::kObjects:
      return {{"type", "array"}, {"items", object_schema(*p.child)}};
    case ParamKind::kCustom:
      return json::parse(p.schema);
  }
  return json::object();
}

// A condition's value as JSON of the type of the key it tests.
json condition_value(const Param* key, const std::string& v) {
  if (key != nullptr && (key->kind == ParamKind::kInt || key->kind == ParamKind::kNumber ||
                         key->kind == ParamKind::kBool)) {
    return json::parse(v);
  }
  return v;
}

// The schema that holds when all of p's conditions hold, in an object whose
// keys are `keys` (an absent key has its default).
json conditions_schema(const Param& p, const std::vector<const Param*>& keys) {
  json all = json::array();
  for (const ParamCondition& c : p.when) {
    const Param* key = nullptr;
    for (const Param* k : keys) {
      if (k->key == c.key) key = k;
    }
    switch (c.how) {
      case ParamCondition::How::kGiven:
        all.push_back({{"required", {c.key}}});
        break;
      case ParamCondition::How::kAbsent:
        all.push_back({{"not", {{"required", {c.key}}}}});
        break;
      case ParamCondition::How::kEquals: {
        json values = json::array();
        for (const std::string& v : c.values) values.push_back(condition_value(key, v));
        json given = {{"required", {c.key}}, {"properties", {{c.key, {{"enum", values}}}}}};
        // An absent key takes its default, which may be one of the values;
        // one the loader computes or takes from elsewhere (traffic[i].cc's
        // algorithm is fabric.cc's) may be any of them.
        bool default_matches = key != nullptr && (key->def_kind == ParamDefault::kComputed ||
                                                  key->def_kind == ParamDefault::kFrom);
        if (key != nullptr && key->def_kind == ParamDefault::kValue) {
          const json d = to_json(*key, key->def);
          for (const json& v : values) default_matches = default_matches || v == d;
        }
        if (default_matches) {
          all.push_back({{"anyOf", {given, {{"not", {{"required", {c.key}}}}}}}});
        } else {
          all.push_back(given);
        }
        break;
      }
    }
  }
  return all.size() == 1 ? all[0] : json{{"allOf", all}};
}

// A closed object with these params.
json closed_object(const std::string& title, const std::vector<const Param*>& params,
                   const json& discriminator) {
  json props = json::object();
  json required = json::array();
  json rules = json::array();
  for (const Param* p : params) {
    props[p->key] = param_schema(*p);
    if (p->when.empty()) {
      if (p->def_kind == ParamDefault::kRequired) required.push_back(p->key);
      continue;
    }
    const json cond = conditions_schema(*p, params);
    json rule = {{"if", cond}, {"else", {{"not", {{"required", {p->key}}}}}}};
    if (p->def_kind == ParamDefault::kRequired) rule["then"] = {{"required", {p->key}}};
    rules.push_back(rule);
  }
  if (!discriminator.is_null()) props.update(discriminator);
  json s = {{"type", "object"}, {"properties", props}, {"additionalProperties", false}};
  if (!title.empty()) s["title"] = title;
  if (!required.empty()) s["required"] = required;
  if (!rules.empty()) s["allOf"] = rules;
  return s;
}

json object_schema(const ParamTable& t) {
  std::vector<const Param*> base;
  for (const Param& p : t.params()) base.push_back(&p);
  if (t.variants().empty()) return closed_object(t.description(), base, nullptr);
  // One closed object per kind, told apart by the discriminator's value.
  json kinds = json::array();
  json names = json::array();
  for (const ParamTable::Variant& v : t.variants()) {
    std::vector<const Param*> params = base;
    for (const Param& p : v.table->params()) params.push_back(&p);
    json disc = {{t.discriminator(), {{"const", v.name}, {"description", v.description}}}};
    kinds.push_back(closed_object(v.name + ": " + v.description, params, disc));
    names.push_back(v.name);
  }
  return {{"type", "object"},
          {"description", t.description()},
          {"required", {t.discriminator()}},
          {"properties", {{t.discriminator(), {{"enum", names}}}}},
          {"oneOf", kinds}};
}

}  // namespace

json scenario_schema() {
  json s = object_schema(scenario_params());
  json out = {{"$schema", "https://json-schema.org/draft/2020-12/schema"},
              {"title", "rdmasim scenario"}};
  out.update(s);
  // Schemas referred to by {"$ref": "#/$defs/<name>"} (recursive ones).
  out["$defs"] = {{"host_set", host_set_schema()}};
  return out;
}

}  // namespace rdmasim
