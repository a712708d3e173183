// The program version and the git revision it was built from.
#pragma once

namespace rdmasim {
const char* version();
const char* git_revision();
}  // namespace rdmasim
