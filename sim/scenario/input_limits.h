// Bounded input: the limits every scenario byte is read under
// (docs/reliability.md, "Input limits"), the bounded file read, and the JSON
// parser that checks them while parsing.
//
// Contract:
//  1. No input is read, parsed or echoed without a bound: files up to a size,
//     JSON up to a nesting depth (checked before the parser recurses, so no
//     deep value ever exists), keys and strings up to a length.
//  2. Every limit exceeded, every NUL byte, duplicate key, number beyond a
//     double and syntax error is a ScenarioError of one line naming where it
//     is (the JSON path, or the file with line:column) and what was expected.
//  3. Echoed input is clipped (clip()): an error line stays short whatever
//     the input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "sim/units.h"

namespace rdmasim {

// The limits (docs/reliability.md).
inline constexpr size_t kMaxScenarioFileBytes = size_t{64} << 20;  // 64 MiB
inline constexpr size_t kMaxCdfFileBytes = size_t{16} << 20;       // 16 MiB
inline constexpr int kMaxJsonDepth = 64;                           // nested arrays and objects
inline constexpr size_t kMaxKeyBytes = 256;                        // an object key
inline constexpr size_t kMaxStringBytes = 4096;                    // a string value (PATH_MAX)
inline constexpr size_t kMaxEchoChars = 60;                        // echoed input in an error line
// Nodes (hosts and switches) of a topology, checked once it is generated and
// before routes are computed (which cost time and memory per switch and leaf):
// a k = 96 fat-tree (232,704 nodes) fits, k = 128 (544,768) does not.
inline constexpr size_t kMaxTopologyNodes = size_t{1} << 18;  // 262,144
// Every time, size and rate given. Picoseconds in 64 bits reach 9.2e6 s: a
// time of at most 1e6 s leaves room for the sums the engine forms (a start,
// plus a flow's transfer at its slowest link, also at most 1e6 s, plus
// delays, timeouts and pauses, each at most 1e6 s). A size of at most 1 PiB
// keeps a switch's reserves times its ports in range, and a rate of at most
// 10 Tb/s keeps rate × time (bytes) in range for any time.
inline constexpr Time kMaxTime = Time::s(1'000'000);
inline constexpr Bytes kMaxSize = Bytes(int64_t{1} << 50);
inline constexpr BitRate kMaxRate = BitRate::gbps(10'000);

// `s` cut to at most `n` characters (UTF-8 aware), with "…" when cut.
std::string clip(const std::string& s, size_t n = kMaxEchoChars);

// Reads the file at `path` into `out`, at most `limit` bytes. Returns the
// problem ("it is a directory", "No such file or directory", "it is larger
// than 64 MiB") or nothing on success. Reads in chunks, so a
// device such as /dev/zero stops at the limit.
std::optional<std::string> read_file_bounded(const std::string& path, size_t limit,
                                             std::string& out);

// Parses `text` as one JSON value under the limits (contract 1, 2). `where`
// names the text in syntax errors ("scenarios/x.json" -> "x.json:3:7: invalid
// JSON: ..."); `path` prefixes the JSON path of values inside it (a --set
// value is parsed at its key's path).
nlohmann::json parse_json_bounded(const std::string& text, const std::string& where,
                                  const std::string& path = "");

// The same for a --set value, which is JSON if it parses and a string
// otherwise: nothing on a syntax error (or a number beyond a double); the
// limits, NUL bytes and duplicate keys still throw.
std::optional<nlohmann::json> try_parse_json_bounded(const std::string& text,
                                                     const std::string& path);

// The nesting depth of `v` (a scalar is 0), counted without recursion; stops
// counting once above `limit`.
int json_depth(const nlohmann::json& v, int limit = kMaxJsonDepth);

}  // namespace rdmasim
