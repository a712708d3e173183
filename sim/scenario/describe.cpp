#include "sim/scenario/describe.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <vector>

#include "sim/scenario/input_limits.h"
#include "sim/scenario/json_reader.h"
#include "sim/scenario/scenario_error.h"
#include "sim/scenario/scenario_params.h"

namespace rdmasim {
namespace {

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> out;
  std::string seg;
  for (size_t i = 0; i < path.size(); ++i) {
    const char c = path[i];
    if (c == '[') {
      // Array indices name no table of their own: traffic[2].size is
      // traffic.<kind>.size.
      const size_t close = path.find(']', i);
      if (close == std::string::npos) break;
      i = close;
      continue;
    }
    if (c == '.') {
      if (!seg.empty()) out.push_back(seg);
      seg.clear();
      continue;
    }
    seg += c;
  }
  if (!seg.empty()) out.push_back(seg);
  return out;
}

std::string quote_choices(const Param& p) {
  std::string s;
  for (size_t i = 0; i < p.choices.size(); ++i) {
    if (i > 0) s += i + 1 == p.choices.size() ? " or " : ", ";
    s += "\"" + p.choices[i].first + "\"";
  }
  return s;
}

std::string conditions_text(const Param& p) {
  std::string s;
  for (const ParamCondition& c : p.when) {
    if (!s.empty()) s += " and ";
    switch (c.how) {
      case ParamCondition::How::kGiven:
        s += "with `" + c.key + "`";
        break;
      case ParamCondition::How::kAbsent:
        s += "without `" + c.key + "`";
        break;
      case ParamCondition::How::kEquals: {
        s += "with `" + c.key + "` ";
        for (size_t i = 0; i < c.values.size(); ++i) {
          if (i > 0) s += " or ";
          s += "`" + c.values[i] + "`";
        }
        break;
      }
    }
  }
  return s;
}

std::string type_with_unit(const Param& p, bool markdown = false) {
  std::string t = p.type_summary();
  if (markdown && p.kind == ParamKind::kChoice) {
    t.clear();
    for (size_t i = 0; i < p.choices.size(); ++i) {
      if (i > 0) t += i + 1 == p.choices.size() ? " or " : ", ";
      t += "`\"" + p.choices[i].first + "\"`";
    }
  }
  if (!p.unit.empty()) t += ", " + p.unit;
  return t;
}

// The whole meaning of a param: its description, what its words stand for,
// when it applies, and its presets.
std::string meaning(const Param& p, bool markdown) {
  std::string s = p.description;
  for (const ParamWord& w : p.words) {
    s += (s.empty() ? "" : "; ") + std::string(markdown ? "`\"" : "\"") + w.word +
         (markdown ? "\"`" : "\"") + ": " + w.meaning;
  }
  if (!p.when.empty()) s += (s.empty() ? "" : ". ") + std::string("Only ") + conditions_text(p);
  return s;
}

std::string md_escape(std::string s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += "\\";
    out += c;
  }
  return out;
}

void find_variant(const ParamTable& base, const std::string& name, const ParamTable** variant) {
  if (const ParamTable::Variant* v = base.variant(name)) *variant = v->table;
}

[[noreturn]] void unknown(const std::string& path, const std::string& seg,
                          const std::vector<std::string>& known) {
  std::string hint;
  if (auto near = nearest_key(seg, known)) {
    hint = "did you mean \"" + *near + "\"?";
  } else {
    hint = "expected one of:";
    for (size_t i = 0; i < known.size(); ++i) hint += (i == 0 ? " " : ", ") + known[i];
  }
  throw ScenarioError("describe: " + path + ": unknown key (" + hint + ")");
}

void describe_table(const ParamTable& t, const std::string& prefix, std::string& out);

void describe_param(const Param& p, const std::string& path, std::string& out) {
  if (p.kind == ParamKind::kObject || p.kind == ParamKind::kObjects) {
    out += path + ": " + p.type_summary() +
           (p.def_kind == ParamDefault::kRequired ? ", required" : "") + "\n";
  } else if (p.def_kind == ParamDefault::kRequired) {
    out += path + ": " + type_with_unit(p) + "; required\n";
  } else if (p.def_kind == ParamDefault::kOptional) {
    out += path + ": " + type_with_unit(p) + "; absent: " + default_text(p) + "\n";
  } else {
    out += path + ": " + type_with_unit(p) + "; default " + default_text(p) + "\n";
  }
  const std::string m = meaning(p, false);
  if (!m.empty()) out += "    " + m + "\n";
  for (const ParamPreset& preset : p.presets) {
    out += "    preset \"" + preset.name + "\":";
    for (const auto& [k, v] : preset.values) out += " " + k + " " + v;
    if (!preset.source.empty()) out += " (" + preset.source + ")";
    out += "\n";
  }
  if (!p.source.empty()) out += "    source: " + p.source + "\n";
  if (p.child != nullptr) describe_table(*p.child, path + ".", out);
}

void describe_table(const ParamTable& t, const std::string& prefix, std::string& out) {
  for (const Param& p : t.params()) describe_param(p, prefix + p.key, out);
  for (const ParamTable::Variant& v : t.variants()) {
    out += prefix + v.name + ": the keys of " + t.discriminator() + " \"" + v.name + "\" (" +
           v.description + ")\n";
    describe_table(*v.table, prefix + v.name + ".", out);
  }
}

}  // namespace

std::string default_text(const Param& p) {
  switch (p.def_kind) {
    case ParamDefault::kValue:
      if (p.kind == ParamKind::kObjects) return "[]";
      if (p.kind == ParamKind::kBytes && p.word_for(p.def) == nullptr) {
        // Sizes as people write them: 32MB rather than 31250KiB.
        const int64_t b = std::get<Bytes>(p.def).count();
        if (b != 0 && b % 1'000'000 == 0) {
          return "\"" + std::to_string(b / 1'000'000) + "MB\"";
        }
        if (b != 0 && b % 1'000 == 0 && b % 1024 != 0) {
          return "\"" + std::to_string(b / 1'000) + "KB\"";
        }
      }
      return to_json(p, p.def).dump();
    case ParamDefault::kRequired:
      return "required";
    case ParamDefault::kFrom:
      return "= " + p.def_from;
    case ParamDefault::kComputed:
    case ParamDefault::kOptional:
      return p.def_text.empty() ? "none" : p.def_text;
  }
  return "?";
}

ParamNode find_param(const std::string& path) {
  if (path.size() > 256) {  // no parameter's path is near this: keep the line short
    throw ScenarioError("describe: \"" + clip(path) +
                        "\" is not a parameter path (expected e.g. fabric.nic.timeout)");
  }
  ParamNode node;
  for (const std::string& seg : split_path(path)) node.path += (node.path.empty() ? "" : ".") + seg;
  const ParamTable* table = &scenario_params();
  const ParamTable* variant = nullptr;
  const std::vector<std::string> segs = split_path(path);
  for (size_t i = 0; i < segs.size(); ++i) {
    const std::string& seg = segs[i];
    if (variant == nullptr && !table->variants().empty()) {
      find_variant(*table, seg, &variant);
      if (variant != nullptr) {
        if (i + 1 == segs.size()) {
          node.table = variant;
          return node;
        }
        continue;
      }
    }
    const Param* p = variant != nullptr ? variant->find(seg) : nullptr;
    if (p == nullptr) p = table->find(seg);
    if (p == nullptr && variant == nullptr && !table->variants().empty()) {
      // A kind's key named without its kind (traffic[0].size, as an error
      // prints it): found if one kind has it.
      std::string kinds;
      int found = 0;
      for (const ParamTable::Variant& v : table->variants()) {
        if (v.table->find(seg) == nullptr) continue;
        kinds += (kinds.empty() ? "" : ", ") + v.name;
        if (found++ == 0) {
          p = v.table->find(seg);
          variant = v.table;
        }
      }
      if (found > 1) {
        std::string prefix;
        for (size_t k = 0; k < i; ++k) prefix += segs[k] + ".";
        throw ScenarioError("describe: " + path + ": " + seg +
                            " is a key of several kinds (expected " + prefix + "<kind>." + seg +
                            ", the kind one of " + kinds + ")");
      }
    }
    if (p == nullptr) {
      std::vector<std::string> known;
      for (const Param& q : table->params()) known.push_back(q.key);
      if (variant != nullptr) {
        for (const Param& q : variant->params()) known.push_back(q.key);
      } else {
        for (const ParamTable::Variant& v : table->variants()) known.push_back(v.name);
      }
      unknown(path, seg, known);
    }
    if (i + 1 == segs.size()) {
      node.table = variant != nullptr && variant->find(seg) == p ? variant : table;
      node.param = p;
      return node;
    }
    if (p->child == nullptr) {
      throw ScenarioError("describe: " + path + ": " + seg + " is " + p->type_summary() +
                          ", which has no keys (expected a path to an object or a parameter)");
    }
    table = p->child;
    variant = nullptr;
  }
  node.table = table;
  return node;
}

std::string describe_text(const ParamNode& node) {
  std::string out;
  const std::string prefix = node.path.empty() ? "" : node.path + ".";
  if (node.param != nullptr) {
    describe_param(*node.param, node.path, out);
  } else {
    if (!node.table->description().empty()) {
      out += (node.path.empty() ? "scenario" : node.path) + ": " + node.table->description() + "\n";
    }
    describe_table(*node.table, prefix, out);
  }
  return out;
}

std::string describe_markdown(const ParamNode& node, const std::string& group,
                              const std::string& exclude) {
  const ParamTable& t = *node.table;
  std::string out = "| key | type, unit | default | meaning | source |\n|---|---|---|---|---|\n";
  auto row = [&](const Param& p) {
    if (!group.empty() && p.group != group) return;
    if (!exclude.empty() && p.group == exclude) return;
    std::string m = meaning(p, true);
    if (p.kind == ParamKind::kObject || p.kind == ParamKind::kObjects) {
      m += (m.empty() ? "" : "; ") + std::string("its keys: `") +
           (node.path.empty() ? "" : node.path + ".") + p.key + "`";
    }
    if (!p.presets.empty()) {
      m += (m.empty() ? "" : "; ") + std::string("one of ") + quote_choices(p) + " (below)";
    }
    std::string def = default_text(p);
    if (p.def_kind == ParamDefault::kValue || p.def_kind == ParamDefault::kFrom ||
        (p.kind == ParamKind::kObject && p.def_kind == ParamDefault::kComputed &&
         p.def_text == "{}")) {
      def = "`" + def + "`";
    } else if (p.def_kind == ParamDefault::kRequired) {
      def = "*required*";
    }
    out += "| `" + p.key + "` | " + md_escape(type_with_unit(p, true)) + " | " + md_escape(def) +
           " | " + md_escape(m) + " | " + md_escape(p.source) + " |\n";
  };
  if (!group.empty() && std::none_of(t.params().begin(), t.params().end(),
                                     [&](const Param& p) { return p.group == group; })) {
    throw ScenarioError("describe: " + (node.path.empty() ? "(every parameter)" : node.path) +
                        ": no parameter is in group \"" + clip(group) + "\"");
  }
  if (!exclude.empty() && std::none_of(t.params().begin(), t.params().end(),
                                       [&](const Param& p) { return p.group == exclude; })) {
    throw ScenarioError("describe: " + (node.path.empty() ? "(every parameter)" : node.path) +
                        ": no parameter is in group \"" + clip(exclude) + "\"");
  }
  for (const Param& p : t.params()) row(p);
  for (const Param& p : t.params()) {
    if (p.presets.empty() || (!group.empty() && p.group != group)) continue;
    out += "\n| " + p.key + " | sets | source |\n|---|---|---|\n";
    for (const ParamPreset& preset : p.presets) {
      std::string sets;
      for (const auto& [k, v] : preset.values) sets += (sets.empty() ? "" : ", ") + k + " " + v;
      out += "| `" + preset.name + "` | " + md_escape(sets) + " | " + md_escape(preset.source) +
             " |\n";
    }
  }
  return out;
}

}  // namespace rdmasim
