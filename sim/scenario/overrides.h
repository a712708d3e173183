// Command-line overrides: `--set path.to.key[0].x=VALUE` applied to the
// scenario JSON before it is validated (docs/scenario.md, "Overrides").
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace rdmasim {

// Applies one "PATH=VALUE" assignment to `root`. VALUE is parsed as JSON when
// it is valid JSON and taken as a string otherwise. Missing object keys are
// created; array indices must exist (or equal the size, to append).
// Throws ScenarioError on a malformed assignment.
void apply_override(nlohmann::json& root, const std::string& assignment);

}  // namespace rdmasim
