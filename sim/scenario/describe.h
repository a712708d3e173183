// Describing the scenario's parameter tables (scenario_params.h): finding a
// key path, and printing a subtree for `rdmasim describe` (text) or for the
// generated tables in docs/*.md (Markdown).
//
// Key paths are JSON paths without array indices, with a kind as a segment
// of its own: `fabric.nic.ack_interval`, `topology.fat_tree.k`,
// `traffic.incast.jitter`, `traffic` (every kind). An empty path is the
// whole scenario.
#pragma once

#include <string>

#include "sim/params.h"

namespace rdmasim {

// What a key path names: a table (an object, an array's elements or one
// kind), or one param of a table.
struct ParamNode {
  const ParamTable* table = nullptr;  // the table, or the param's table
  const Param* param = nullptr;       // set when the path names a param
  std::string path;                   // the path as given, normalised
};

// Throws ScenarioError "describe: PATH: unknown key (did you mean ...)" for
// a path that names nothing.
ParamNode find_param(const std::string& path);

// Every param under `node`, one entry each, with its full path, type,
// default, conditions, description and source.
std::string describe_text(const ParamNode& node);

// The Markdown table of a table's params (`| key | type, unit | default |
// meaning | source |`). With `group`, only the params of that group; with
// `exclude`, all but that group's. Objects and kinds are rows that point to
// their own tables.
std::string describe_markdown(const ParamNode& node, const std::string& group,
                              const std::string& exclude);

// The default of a param as the docs show it: a JSON value, "= key",
// "*required*", or the computed or optional default's text.
std::string default_text(const Param& p);

}  // namespace rdmasim
