// The common part of a traffic item for a test, every other field at its
// default (so tests do not break when FlowCommon gains one).
#pragma once

#include <string>
#include <utility>

#include "models/traffic/patterns.h"

namespace rdmasim::testing {

inline FlowCommon common(std::string name, Time start, Verb op = Verb::kWrite) {
  FlowCommon c;
  c.name = std::move(name);
  c.start = start;
  c.op = op;
  return c;
}

}  // namespace rdmasim::testing
