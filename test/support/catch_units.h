// Lets Catch print rdmasim's unit types in failure messages.
#pragma once

#include <catch2/catch.hpp>

#include "sim/units.h"

namespace Catch {
template <>
struct StringMaker<rdmasim::Time> {
  static std::string convert(rdmasim::Time t) { return rdmasim::to_string(t); }
};
template <>
struct StringMaker<rdmasim::Bytes> {
  static std::string convert(rdmasim::Bytes b) { return std::to_string(b.count()) + "B"; }
};
template <>
struct StringMaker<rdmasim::BitRate> {
  static std::string convert(rdmasim::BitRate r) { return rdmasim::to_string(r); }
};
}  // namespace Catch
