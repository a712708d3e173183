// The input format of the fuzz targets (docs/reliability.md, "Fuzzing"): a
// scenario file's text, then optionally `--set` assignments, each on a line
// of its own after the marker "\n--set ":
//
//   { "topology": ... }
//   --set traffic[0].size=1MB
//   --set fabric.link.rate="100Gbps"
//
// The scenario text is everything before the first marker, byte for byte
// (NUL bytes included); each assignment runs to the next newline.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace rdmasim::fuzz {

struct Input {
  std::string scenario;
  std::vector<std::string> sets;
};

inline Input split_input(std::string_view data) {
  constexpr std::string_view kMarker = "\n--set ";
  Input in;
  size_t at = data.find(kMarker);
  in.scenario = std::string(data.substr(0, at));
  while (at != std::string_view::npos) {
    const size_t from = at + kMarker.size();
    const size_t end = data.find('\n', from);
    in.sets.emplace_back(data.substr(from, end == std::string_view::npos ? end : end - from));
    at = data.find(kMarker, from);
  }
  return in;
}

}  // namespace rdmasim::fuzz
