// The output folder, checked before a run (docs/reliability.md, "Outputs"):
// a run that could not write its outputs is refused before anything is
// simulated, not found out after minutes of simulation.
#pragma once

#include <string>
#include <vector>

namespace rdmasim {

// For outputs `files` (paths in one existing folder), before a run:
//  1. each file and its temporary (output_error.h) is absent or a regular
//     file (not a folder, which could not be replaced);
//  2. temporaries an earlier, killed run left are removed; their names are
//     returned (for one note line);
//  3. the folder takes a new file (created and removed again: a read-only
//     folder or mount is found here);
//  4. the earlier run's outputs are removed, so they cannot pass for this
//     run's if it fails.
// Throws ScenarioError (bad input, exit 2) naming the path.
std::vector<std::string> prepare_outputs(const std::vector<std::string>& files);

}  // namespace rdmasim
