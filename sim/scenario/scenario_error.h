// ScenarioError: bad input. Its message is the one line the user sees:
// "<json path>: <what is wrong> (expected <what would be right>)".
#pragma once

#include <stdexcept>
#include <string>

namespace rdmasim {

class ScenarioError : public std::runtime_error {
 public:
  explicit ScenarioError(const std::string& line) : std::runtime_error(line) {}
};

}  // namespace rdmasim
