// ScenarioError: bad input. Its message is the one line the user sees:
// "<json path>: <what is wrong> (expected <what would be right>)".
#pragma once

#include <string>

#include "sim/config_error.h"

namespace rdmasim {

class ScenarioError : public ConfigError {
 public:
  explicit ScenarioError(const std::string& line) : ConfigError(line) {}
};

}  // namespace rdmasim
