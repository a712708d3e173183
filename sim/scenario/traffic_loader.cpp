// Reads scenario key `traffic` (docs/traffic.md): every item becomes flows.
#include "sim/scenario/loader_parts.h"

namespace rdmasim {
namespace {

using nlohmann::json;

uint32_t read_host(JsonReader& r, const std::string& key, const Topology& t) {
  const json* v = r.raw(key);
  const std::string expected = "a host name such as \"" + t.node(t.hosts()[0]).name +
                               "\", or a host index from 0 to " + std::to_string(t.num_hosts() - 1);
  if (v == nullptr) r.fail(key, "missing", expected);
  uint32_t host = 0;
  if (v->is_string()) {
    auto id = t.find(v->get<std::string>());
    if (!id || t.node(*id).kind != NodeKind::kHost)
      r.fail(key, show(*v) + " is not a host", expected);
    host = t.node(*id).host_index;
  } else if (v->is_number_integer() && v->get<int64_t>() >= 0 &&
             v->get<uint64_t>() < t.num_hosts()) {
    host = static_cast<uint32_t>(v->get<uint64_t>());
  } else {
    r.fail(key, show(*v) + " is not a host", expected);
  }
  r.resolve(key, t.node(t.hosts()[host]).name);
  return host;
}

}  // namespace

void read_traffic(std::vector<JsonReader> items, const Topology& t, uint64_t /*seed*/,
                  std::vector<FlowSpec>& flows) {
  for (JsonReader& r : items) {
    enum class Kind { kFlow };
    r.choice<Kind>("kind", {{"flow", Kind::kFlow}});
    FlowSpec f;
    f.src = read_host(r, "src", t);
    f.dst = read_host(r, "dst", t);
    if (f.src == f.dst) r.fail("dst", "the same host as src", "a different host");
    f.bytes = r.bytes("size", std::nullopt).count();
    f.start = r.time("start", Time::zero());
    f.op = r.choice<Verb>("op", {{"write", Verb::kWrite}, {"send", Verb::kSend}}, Verb::kWrite);
    f.name = r.string("name", std::string());
    r.finish();
    flows.push_back(std::move(f));
  }
}

}  // namespace rdmasim
