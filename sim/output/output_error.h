// OutputError: an output file (summary.json, trace.h5, a --dot file) could
// not be written. Its message is the one line the user sees after
// "rdmasim: error: ", "<file>: <problem>"; the CLI exits 7
// (docs/reliability.md, "Outputs"). Whoever throws it has already removed
// the temporary file and renamed nothing, so no file with the final name is
// left that could pass for complete.
#pragma once

#include <stdexcept>
#include <string>

namespace rdmasim {

class OutputError : public std::runtime_error {
 public:
  OutputError(const std::string& file, const std::string& problem)
      : std::runtime_error(file + ": " + problem) {}
};

// The temporary name an output is written under before its rename.
inline std::string temporary_name(const std::string& path) { return path + ".tmp"; }

}  // namespace rdmasim
