// ConfigError: a model found its configuration impossible when it was set up
// (e.g. a switch buffer smaller than its reserves). The command line reports
// it as bad input (exit code 2), like a ScenarioError.
#pragma once

#include <stdexcept>
#include <string>

namespace rdmasim {

class ConfigError : public std::runtime_error {
 public:
  explicit ConfigError(const std::string& line) : std::runtime_error(line) {}
};

}  // namespace rdmasim
