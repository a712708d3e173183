#include "sim/params.h"

#include <cstdio>
#include <stdexcept>

namespace rdmasim {
namespace {

std::string quoted_list(const std::vector<std::pair<std::string, int64_t>>& choices,
                        const char* last_sep) {
  std::string s;
  for (size_t i = 0; i < choices.size(); ++i) {
    if (i > 0) s += i + 1 == choices.size() ? last_sep : ", ";
    s += "\"" + choices[i].first + "\"";
  }
  return s;
}

std::string words_suffix(const Param& p) {
  std::string s;
  for (const ParamWord& w : p.words) s += " or \"" + w.word + "\"";
  return s;
}

std::string number_text(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", x);
  return buf;
}

}  // namespace

const std::string& Param::choice_name(int64_t v) const {
  static const std::string none;
  for (const auto& [name, value] : choices) {
    if (value == v) return name;
  }
  return none;
}

const ParamWord* Param::word_for(const ParamValue& v) const {
  for (const ParamWord& w : words) {
    if (w.value == v) return &w;
  }
  return nullptr;
}

std::string Param::expected() const {
  switch (kind) {
    case ParamKind::kBool:
      return "true or false";
    case ParamKind::kString:
      return "a string";
    case ParamKind::kInt: {
      std::string s = power_of_two       ? "a power of two"
                      : multiple_of == 2 ? "an even integer"
                                         : "an integer";
      if (imax == std::numeric_limits<int64_t>::max()) {
        s += " >= " + std::to_string(imin);
      } else {
        s += " from " + std::to_string(imin) + " to " + std::to_string(imax);
      }
      return s + words_suffix(*this);
    }
    case ParamKind::kNumber: {
      if (dmin_open || dmax_open) {
        return "a number " + std::string(dmin_open ? "> " : ">= ") + number_text(dmin) + " and " +
               (dmax_open ? "< " : "<= ") + number_text(dmax) + words_suffix(*this);
      }
      return "a number from " + number_text(dmin) + " to " + number_text(dmax) +
             words_suffix(*this);
    }
    case ParamKind::kTime:
      return "a time with a unit, e.g. \"600ns\", \"1.5us\" or \"2ms\"" + words_suffix(*this);
    case ParamKind::kBytes:
      return "a size, e.g. \"12MB\" or 12000000" + words_suffix(*this);
    case ParamKind::kRate:
      return "a rate, e.g. \"400Gbps\", \"100G\" or an InfiniBand 4x name (\"EDR\", \"HDR\", "
             "\"NDR\", \"XDR\")" +
             words_suffix(*this);
    case ParamKind::kChoice:
      return "one of " + quoted_list(choices, ", ");
    case ParamKind::kPriorities:
      return "a list of priorities 0 to 7, e.g. [3]";
    case ParamKind::kObject:
      return "an object";
    case ParamKind::kObjects:
      return "an array";
    case ParamKind::kCustom:
      return type_text;
  }
  return "?";
}

std::string Param::type_summary() const {
  switch (kind) {
    case ParamKind::kBool:
      return "boolean";
    case ParamKind::kString:
      return "string";
    case ParamKind::kInt: {
      std::string s = power_of_two       ? "power of two "
                      : multiple_of == 2 ? "even integer "
                                         : "integer ";
      if (imax == std::numeric_limits<int64_t>::max()) {
        s += "≥ " + std::to_string(imin);
      } else {
        s += std::to_string(imin) + ".." + std::to_string(imax);
      }
      return s + words_suffix(*this);
    }
    case ParamKind::kNumber: {
      if (dmin_open || dmax_open) {
        return "number " + std::string(dmin_open ? "> " : "≥ ") + number_text(dmin) + ", " +
               (dmax_open ? "< " : "≤ ") + number_text(dmax) + words_suffix(*this);
      }
      return "number " + number_text(dmin) + ".." + number_text(dmax) + words_suffix(*this);
    }
    case ParamKind::kTime:
      return (tmin > Time::zero() ? "time ≥ " + to_string(tmin) : std::string("time ≥ 0")) +
             words_suffix(*this);
    case ParamKind::kBytes:
      return (bmin > Bytes(0) ? "size ≥ " + std::to_string(bmin.count()) + " B"
                              : std::string("size ≥ 0")) +
             words_suffix(*this);
    case ParamKind::kRate:
      return "rate" + words_suffix(*this);
    case ParamKind::kChoice:
      return quoted_list(choices, " or ");
    case ParamKind::kPriorities:
      return "list of priorities 0..7";
    case ParamKind::kObject:
      return "object";
    case ParamKind::kObjects:
      return "array of objects";
    case ParamKind::kCustom:
      return type_text;
  }
  return "?";
}

const Param* ParamTable::find(const std::string& key) const {
  for (const Param& p : params_) {
    if (p.key == key) return &p;
  }
  return nullptr;
}

const ParamTable::Variant* ParamTable::variant(const std::string& name) const {
  for (const Variant& v : variants_) {
    if (v.name == name) return &v;
  }
  return nullptr;
}

void ParamTable::set_discriminator(std::string key, std::string description) {
  Param& p = push(key, ParamKind::kChoice);
  p.description = std::move(description);
  p.def_kind = ParamDefault::kRequired;
  discriminator_ = std::move(key);
}

void ParamTable::add_variant_value(std::string name, int64_t value, const ParamTable& table,
                                   std::string description) {
  for (Param& p : params_) {
    if (p.key == discriminator_) p.choices.emplace_back(name, value);
  }
  variants_.push_back(Variant{std::move(name), value, &table, std::move(description)});
}

Param& ParamTable::push(std::string key, ParamKind kind) {
  if (find(key) != nullptr) throw std::logic_error("parameter \"" + key + "\" declared twice");
  params_.emplace_back();
  Param& p = params_.back();
  p.key = std::move(key);
  p.kind = kind;
  return p;
}

ParamBuilder ParamTable::add(std::string key, ParamKind kind) {
  Param& p = push(std::move(key), kind);
  p.def_kind = ParamDefault::kRequired;
  return ParamBuilder(p);
}

ParamBuilder ParamTable::add_choice(std::string key,
                                    std::vector<std::pair<std::string, int64_t>> choices) {
  Param& p = push(std::move(key), ParamKind::kChoice);
  p.choices = std::move(choices);
  p.def_kind = ParamDefault::kRequired;
  return ParamBuilder(p);
}

ParamBuilder ParamTable::add_object(std::string key, const ParamTable& child) {
  Param& p = push(std::move(key), ParamKind::kObject);
  p.child = &child;
  p.def_kind = ParamDefault::kComputed;
  p.def_text = "{}";
  return ParamBuilder(p);
}

ParamBuilder ParamTable::add_objects(std::string key, const ParamTable& child) {
  Param& p = push(std::move(key), ParamKind::kObjects);
  p.child = &child;
  p.def_kind = ParamDefault::kValue;
  p.def_text = "[]";
  return ParamBuilder(p);
}

void ParamTable::include(const ParamTable& other) {
  for (const Param& q : other.params()) {
    Param& p = push(q.key, q.kind);
    p = q;
    if (other.bound_type() != bound_ || bound_ == nullptr) p.set = nullptr;
  }
}

}  // namespace rdmasim
