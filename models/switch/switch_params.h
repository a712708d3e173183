// The parameter table of the switch model (scenario key `fabric.switch` and
// its objects): every SwitchConfig field a scenario sets, with its unit,
// range, description and source (sim/params.h). The defaults are
// SwitchConfig's own.
#pragma once

#include "models/switch/switch_config.h"
#include "sim/params.h"

namespace rdmasim {

const Fields<SwitchConfig>& switch_params();

}  // namespace rdmasim
