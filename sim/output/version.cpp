#include "sim/output/version.h"

#include "rdmasim_version.h"

namespace rdmasim {
const char* version() { return RDMASIM_VERSION; }
const char* git_revision() { return RDMASIM_GIT_REVISION; }
}  // namespace rdmasim
