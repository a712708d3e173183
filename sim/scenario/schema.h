// The JSON Schema (draft 2020-12) of a scenario file, generated from the
// parameter tables (scenario_params.h): `rdmasim schema`, kept as
// docs/schema.json. It checks types, ranges, choices, unit syntax, unknown
// keys, required keys and keys that apply only with others; what needs the
// topology (host names, counts against the number of hosts) only the loader
// checks.
#pragma once

#include <nlohmann/json.hpp>

namespace rdmasim {

nlohmann::json scenario_schema();

}  // namespace rdmasim
