// The parameter table of the NIC model (scenario key `fabric.nic`): every
// NicConfig field a scenario sets, with its unit, range, description and
// source (sim/params.h). The defaults are NicConfig's own.
#pragma once

#include "models/nic/nic_config.h"
#include "sim/params.h"

namespace rdmasim {

const Fields<NicConfig>& nic_params();

}  // namespace rdmasim
