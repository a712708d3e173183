#include "sim/scenario/host_set.h"

#include <algorithm>
#include <optional>
#include <set>

namespace rdmasim {
namespace {

using nlohmann::json;

std::string host_name(const Topology& t, uint32_t host) { return t.node(t.hosts()[host]).name; }

constexpr const char* kForms =
    "\"all\", a count, a list of hosts, or an object: {\"range\": [a, b]}, {\"leaf\": n}, "
    "{\"rail\": n}, {\"su\": n}, {\"pod\": n}, {\"node\": n}, {\"union\": [...]} or {\"of\": ..., "
    "\"except\": "
    "..., \"count\": n}";

const std::vector<std::string>& object_keys() {
  static const std::vector<std::string> keys = {"count", "except", "leaf",  "node", "of",
                                                "pod",   "rail",   "range", "su",   "union"};
  return keys;
}

std::string plural(HostGroupKind k) {
  return k == HostGroupKind::kSu ? "scalable units (su)" : std::string(to_string(k)) + "s";
}

bool contains(const std::vector<uint32_t>& sorted, uint32_t h) {
  return std::binary_search(sorted.begin(), sorted.end(), h);
}

std::vector<uint32_t> sorted_copy(std::vector<uint32_t> v) {
  std::sort(v.begin(), v.end());
  return v;
}

class Evaluator {
 public:
  Evaluator(const Topology& t, const HostSetRules& rules, RngStream* rng)
      : t_(t), rules_(rules), rng_(rng) {}

  // The hosts of "all": every host but the management hosts and the
  // excluded one, in host-index order.
  std::vector<uint32_t> universe() const {
    std::vector<uint32_t> out;
    for (uint32_t h = 0; h < t_.num_hosts(); ++h) {
      if (!t_.host_groups().is_management(h) && h != rules_.without) out.push_back(h);
    }
    return out;
  }

  std::vector<uint32_t> eval(const json& v, const std::string& path, size_t min) {
    if (v.is_string() && v == "all") return universe();
    if (v.is_number_integer()) return first(v, path, min);
    if (v.is_array()) return list(v, path);
    if (v.is_object()) return object(v, path);
    throw ScenarioError(path + ": " + show(v) + " is not a host set (expected " + kForms + ")");
  }

  // A set that is used as it is (the key's, or the pool of a draw) may not
  // hold the excluded host.
  void check_without(const json& v, const std::string& path, const std::vector<uint32_t>& hosts,
                     const char* how) const {
    if (!rules_.without) return;
    const uint32_t w = *rules_.without;
    if (std::find(hosts.begin(), hosts.end(), w) == hosts.end()) return;
    if (v.is_array()) {
      for (size_t i = 0; i < v.size(); ++i) {
        if (parse_host(v[i], path, t_) == w) {
          throw ScenarioError(path + "[" + std::to_string(i) + "]: " + show(v[i]) + " is the " +
                              rules_.without_is + " (expected hosts other than " +
                              rules_.without_is + ")");
        }
      }
    }
    const std::string name = host_name(t_, w);
    throw ScenarioError(path + ": " + show(v) + how + " \"" + name + "\", the " +
                        rules_.without_is + " (expected hosts other than the " + rules_.without_is +
                        ": leave it out with {\"of\": ..., \"except\": [\"" + name + "\"]})");
  }

 private:
  std::vector<uint32_t> first(const json& v, const std::string& path, size_t min) const {
    std::vector<uint32_t> all = universe();
    if (v.get<int64_t>() < static_cast<int64_t>(min) || v.get<int64_t>() < 0 ||
        v.get<uint64_t>() > all.size()) {
      throw ScenarioError(path + ": " + show(v) + " is out of range (expected a count from " +
                          std::to_string(min) + " to " + std::to_string(all.size()) +
                          ", or another host set: " + kForms + ")");
    }
    all.resize(v.get<uint64_t>());
    return all;
  }

  std::vector<uint32_t> list(const json& v, const std::string& path) const {
    std::vector<uint32_t> out;
    std::set<uint32_t> seen;
    for (size_t i = 0; i < v.size(); ++i) {
      const std::string at = path + "[" + std::to_string(i) + "]";
      const uint32_t h = parse_host(v[i], at, t_);
      if (!seen.insert(h).second) {
        throw ScenarioError(at + ": " + show(v[i]) + " is listed twice (expected distinct hosts)");
      }
      out.push_back(h);
    }
    return out;
  }

  std::vector<uint32_t> object(const json& v, const std::string& path) {
    if (v.empty()) {
      throw ScenarioError(path + ": {} is an empty set object (expected " + std::string(kForms) +
                          ")");
    }
    std::string single;  // a key that is a form on its own
    for (const auto& [key, value] : v.items()) {
      if (std::find(object_keys().begin(), object_keys().end(), key) == object_keys().end()) {
        std::string problem = "unknown key";
        if (auto near = nearest_key(key, object_keys())) {
          problem += " (did you mean \"" + *near + "\"?)";
        } else {
          problem +=
              " (expected one of: count, except, leaf, node, of, pod, rail, range, su, union)";
        }
        throw ScenarioError(path + "." + key + ": " + problem);
      }
      if (key != "of" && key != "except" && key != "count") single = key;
    }
    if (!single.empty() && v.size() > 1) {
      throw ScenarioError(path + ": " + show(v) + " mixes \"" + single +
                          "\" with other keys (expected one form per object; combine sets with "
                          "{\"union\": [...]} or {\"of\": ..., \"except\": ...})");
    }
    if (single == "range") return range(v["range"], path + ".range");
    if (single == "union") return union_of(v["union"], path + ".union");
    if (auto kind = host_group_kind(single)) return group(*kind, v[single], path + "." + single);
    return of_except_count(v, path);
  }

  std::vector<uint32_t> range(const json& v, const std::string& path) const {
    const size_t n = t_.num_hosts();
    if (!v.is_array() || v.size() != 2) {
      throw ScenarioError(path + ": " + show(v) +
                          " is not a range (expected [first, last]: host indices, first <= last)");
    }
    for (size_t i = 0; i < 2; ++i) {
      if (!v[i].is_number_integer() || v[i].get<int64_t>() < 0 || v[i].get<uint64_t>() >= n) {
        throw ScenarioError(path + "[" + std::to_string(i) + "]: " + show(v[i]) +
                            " is not a host index (expected 0 to " + std::to_string(n - 1) + ")");
      }
    }
    const auto a = v[0].get<uint32_t>(), b = v[1].get<uint32_t>();
    if (a > b) {
      throw ScenarioError(path + ": " + show(v) +
                          " is backwards (expected [first, last] with first <= last)");
    }
    std::vector<uint32_t> out;
    for (uint32_t h = a; h <= b; ++h) {
      if (!t_.host_groups().is_management(h)) out.push_back(h);
    }
    return out;
  }

  std::vector<uint32_t> group(HostGroupKind kind, const json& v, const std::string& path) const {
    const HostGroups& g = t_.host_groups();
    const uint32_t count = g.count(kind);
    if (count == 0) {
      std::string has;
      for (size_t i = 0; i < static_cast<size_t>(HostGroupKind::kCount); ++i) {
        const auto k = static_cast<HostGroupKind>(i);
        if (g.count(k) > 0) has += (has.empty() ? "" : ", ") + std::string(to_string(k));
      }
      throw ScenarioError(path + ": this topology has no " + plural(kind) + " (expected " +
                          (has.empty() ? std::string("a list of hosts: it has no groups")
                                       : "a group it has: " + has) +
                          ")");
    }
    const std::string expected =
        "a " + std::string(to_string(kind)) + " from 0 to " + std::to_string(count - 1);
    const auto number = [&](const json& x, const std::string& at) {
      if (!x.is_number_integer() || x.get<int64_t>() < 0 || x.get<uint64_t>() >= count) {
        throw ScenarioError(at + ": " + show(x) + " is out of range (expected " + expected +
                            ", or [first, last])");
      }
      return x.get<uint32_t>();
    };
    uint32_t a = 0, b = 0;
    if (v.is_array()) {
      if (v.size() != 2) {
        throw ScenarioError(path + ": " + show(v) + " is not a range of " + plural(kind) +
                            " (expected [first, last], first <= last)");
      }
      a = number(v[0], path + "[0]");
      b = number(v[1], path + "[1]");
      if (a > b) {
        throw ScenarioError(path + ": " + show(v) +
                            " is backwards (expected [first, last] with first <= last)");
      }
    } else {
      a = b = number(v, path);
    }
    std::vector<uint32_t> out;
    for (uint32_t k = a; k <= b; ++k) {
      for (uint32_t h : g.members(kind, k)) {
        if (!g.is_management(h)) out.push_back(h);
      }
    }
    return out;
  }

  std::vector<uint32_t> union_of(const json& v, const std::string& path) {
    if (!v.is_array()) {
      throw ScenarioError(path + ": " + show(v) + " is not a list (expected [set, set, ...])");
    }
    std::vector<uint32_t> out;
    std::vector<uint32_t> seen;  // sorted
    for (size_t i = 0; i < v.size(); ++i) {
      const std::string at = path + "[" + std::to_string(i) + "]";
      std::vector<uint32_t> part = eval(v[i], at, 0);
      const std::vector<uint32_t> sorted = sorted_copy(part);
      for (uint32_t h : part) {
        if (contains(seen, h)) {
          throw ScenarioError(at + ": " + show(v[i]) + " holds \"" + host_name(t_, h) +
                              "\", which an earlier member holds too (expected disjoint sets)");
        }
      }
      std::vector<uint32_t> merged;
      std::merge(seen.begin(), seen.end(), sorted.begin(), sorted.end(),
                 std::back_inserter(merged));
      seen = std::move(merged);
      out.insert(out.end(), part.begin(), part.end());
    }
    return out;
  }

  std::vector<uint32_t> of_except_count(const json& v, const std::string& path) {
    std::vector<uint32_t> pool = v.contains("of") ? eval(v["of"], path + ".of", 0) : universe();
    if (v.contains("except")) {
      const std::vector<uint32_t> out = sorted_copy(eval(v["except"], path + ".except", 0));
      std::erase_if(pool, [&](uint32_t h) { return contains(out, h); });
    }
    if (!v.contains("count")) return pool;
    const json& c = v["count"];
    const std::string at = path + ".count";
    if (rng_ == nullptr) {
      throw ScenarioError(at + ": " + show(c) +
                          " asks for a random draw, which this key does not make (expected a set "
                          "without \"count\")");
    }
    if (!c.is_number_integer() || c.get<int64_t>() < 1 || c.get<uint64_t>() > pool.size()) {
      throw ScenarioError(at + ": " + show(c) + " is out of range: the set it draws from has " +
                          std::to_string(pool.size()) + " host(s) (expected a count from 1 to " +
                          std::to_string(pool.size()) + ")");
    }
    check_without(v, path, pool, " draws from a set holding");
    // The first n steps of a Fisher–Yates shuffle: a uniformly random
    // ordered sample, in draw order; one uniform(m - k) per host drawn.
    const auto n = c.get<size_t>();
    for (size_t k = 0; k < n; ++k) {
      const size_t j = k + static_cast<size_t>(rng_->uniform(pool.size() - k));
      std::swap(pool[k], pool[j]);
    }
    pool.resize(n);
    return pool;
  }

  const Topology& t_;
  const HostSetRules& rules_;
  RngStream* rng_;
};

}  // namespace

std::string host_expected(const Topology& t) {
  return "a host name such as \"" + host_name(t, 0) + "\", or a host index from 0 to " +
         std::to_string(t.num_hosts() - 1);
}

uint32_t parse_host(const json& v, const std::string& path, const Topology& t) {
  if (v.is_string()) {
    auto id = t.find(v.get<std::string>());
    if (id && t.node(*id).kind == NodeKind::kHost) return t.node(*id).host_index;
  } else if (v.is_number_integer() && v.get<int64_t>() >= 0 && v.get<uint64_t>() < t.num_hosts()) {
    return static_cast<uint32_t>(v.get<uint64_t>());
  }
  throw ScenarioError(path + ": " + show(v) + " is not a host (expected " + host_expected(t) + ")");
}

std::vector<uint32_t> parse_host_set(const json& v, const std::string& path, const Topology& t,
                                     const HostSetRules& rules, RngStream* rng) {
  Evaluator e(t, rules, rng);
  std::vector<uint32_t> hosts = e.eval(v, path, rules.min);
  e.check_without(v, path, hosts, " holds");
  if (hosts.size() < rules.min) {
    throw ScenarioError(path + ": " + show(v) + " has " + std::to_string(hosts.size()) +
                        " host(s) (expected a host set of at least " + std::to_string(rules.min) +
                        " host" + (rules.min == 1 ? "" : "s") + ")");
  }
  return hosts;
}

std::vector<uint32_t> read_host_set(JsonReader& r, const std::string& key, const Topology& t,
                                    const HostSetRules& rules, RngStream* rng) {
  if (!r.has(key) && !r.has_default(key)) {
    r.fail(key, "missing", "a host set: " + std::string(kForms));
  }
  const json v = r.raw_or_default(key);
  // Draws come from a stream of the key's own, seeded from the item's stream
  // without advancing it: the resolved scenario (the drawn hosts as a list,
  // which draws nothing) then leaves the item's other draws where they were.
  std::optional<RngStream> own;
  if (rng != nullptr) {
    RngStream peek = *rng;
    own.emplace(peek.next_u64(), key);
  }
  std::vector<uint32_t> hosts = parse_host_set(v, r.path_of(key), t, rules, own ? &*own : nullptr);
  if ((v.is_string() && v == "all") || v.is_number_integer()) {
    r.resolve(key, v);
  } else {
    json names = json::array();
    for (uint32_t h : hosts) names.push_back(host_name(t, h));
    r.resolve(key, names);
  }
  return hosts;
}

json host_set_schema() {
  const json ref = {{"$ref", "#/$defs/host_set"}};
  const json host = {
      {"anyOf", {{{"type", "string"}, {"minLength", 1}}, {{"type", "integer"}, {"minimum", 0}}}}};
  const json index = {{"type", "integer"}, {"minimum", 0}};
  const json pair = {{"type", "array"}, {"items", index}, {"minItems", 2}, {"maxItems", 2}};
  const json group = {{"anyOf", {index, pair}}};
  json forms = json::array(
      {{{"const", "all"}, {"description", "every host but management hosts"}},
       {{"type", "integer"}, {"minimum", 0}, {"description", "the first n hosts of \"all\""}},
       {{"type", "array"}, {"items", host}}});
  const auto single = [&](const char* key, const json& value, const char* doc) {
    return json{{"type", "object"},
                {"properties", {{key, value}}},
                {"required", {key}},
                {"additionalProperties", false},
                {"description", doc}};
  };
  forms.push_back(single("range", pair, "host indices first to last"));
  forms.push_back(single("leaf", group, "the hosts of a leaf, or of leaves [first, last]"));
  forms.push_back(single("rail", group, "the hosts of a rail, or of rails [first, last]"));
  forms.push_back(single("su", group, "the hosts of a scalable unit, or of SUs [first, last]"));
  forms.push_back(single("pod", group, "the hosts of a pod, or of pods [first, last]"));
  forms.push_back(
      single("node", group, "the GPUs of a server, or of servers [first, last] (rail_optimized)"));
  forms.push_back(single("union", {{"type", "array"}, {"items", ref}}, "disjoint sets, in order"));
  forms.push_back(
      {{"type", "object"},
       {"properties",
        {{"of", ref}, {"except", ref}, {"count", {{"type", "integer"}, {"minimum", 1}}}}},
       {"minProperties", 1},
       {"additionalProperties", false},
       {"description",
        "`of` (default \"all\") without `except`; with `count`, that many drawn at random"}});
  return {{"description", "a host set (docs/traffic.md#host-sets)"}, {"anyOf", forms}};
}

}  // namespace rdmasim
