// Reads `fabric.cc` and `traffic[i].cc` (docs/congestion-control.md): the
// algorithm and its keys, through the algorithm's own table
// (models/cc/cc_algorithm.h), into its config.
#include "sim/scenario/loader_parts.h"

namespace rdmasim {

std::shared_ptr<const CcConfig> read_cc(JsonReader r, const CcConfig* inherit) {
  int64_t inherited = 0;
  const auto algorithms = cc_algorithms();
  for (size_t i = 0; inherit != nullptr && i < algorithms.size(); ++i) {
    if (std::string(algorithms[i].name) == inherit->algorithm())
      inherited = static_cast<int64_t>(i) + 1;
  }
  const int64_t v = r.has_default("algorithm") ? r.integer_choice("algorithm")
                                               : r.choice_value("algorithm", inherited);
  if (v == 0) {
    r.finish();
    return nullptr;
  }
  const CcAlgorithm& alg = algorithms[static_cast<size_t>(v - 1)];
  const bool same = v == inherited;
  std::unique_ptr<CcConfig> cfg = same ? inherit->clone() : alg.new_config();
  JsonReader keys = r.object(alg.name);
  keys.read_into(cfg->fields_type(), cfg->fields(), same);
  // The problem starts with the key it concerns; it is the algorithm's own
  // text, of bounded length: whole, not clipped as a key echoed from input.
  if (const std::string problem = cfg->check(); !problem.empty()) {
    throw ScenarioError(keys.path().empty() ? problem : keys.path() + "." + problem);
  }
  keys.finish();
  r.finish();
  return cfg;
}

}  // namespace rdmasim
