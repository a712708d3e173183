// The parameter table of a whole scenario (docs/scenario.md): the top level,
// `fabric`, `output`, `stop` and `faults`, joined to the tables of the models
// and topologies (sim/params.h). `rdmasim describe`, `rdmasim schema` and the
// generated docs walk this tree.
#pragma once

#include "sim/params.h"
#include "sim/scenario/scenario.h"

namespace rdmasim {

const ParamTable& scenario_params();

const Fields<FabricConfig>& fabric_params();
const Fields<OutputConfig>& output_params();
const Fields<StopConfig>& stop_params();
const ParamTable& fault_params();

}  // namespace rdmasim
