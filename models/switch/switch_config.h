// Parameters of the switch model (scenario key `fabric.switch`).
#pragma once

#include "sim/units.h"

namespace rdmasim {

struct SwitchConfig {
  // Fixed pipeline latency from a packet's full arrival to its enqueue at the
  // egress port (store-and-forward): parsing, lookup and crossbar.
  Time latency = Time::zero();
};

}  // namespace rdmasim
