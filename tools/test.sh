#!/usr/bin/env bash
# README command 2: install dependencies, build if needed, run the test suite
# (everything except tests labelled "extensive"). Extra arguments go to ctest,
# e.g. `tools/test.sh -L quick` for the pre-commit subset.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${RDMASIM_BUILD_DIR:-$root/build}"
"$root/tools/setup.sh"
jobs="$(nproc 2>/dev/null || echo 2)"
# The engine's tests (event queue, partitions, links) once more with
# assertions on: the Release build compiles them out.
asserts="${build%/}-asserts"
cmake -S "$root" -B "$asserts" -DCMAKE_BUILD_TYPE=Debug -DRDMASIM_WERROR=ON >/dev/null
cmake --build "$asserts" -j "$jobs" --target rdmasim_engine_tests
"$asserts/sim/rdmasim_engine_tests"
cd "$build"
exec ctest --output-on-failure -j "$jobs" -LE extensive "$@"
