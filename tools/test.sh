#!/usr/bin/env bash
# README command 2: install dependencies, build if needed, run the test suite
# (everything except tests labelled "extensive"). Extra arguments go to ctest,
# e.g. `tools/test.sh -L quick` for the pre-commit subset.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${RDMASIM_BUILD_DIR:-$root/build}"
"$root/tools/setup.sh"
jobs="$(nproc 2>/dev/null || echo 2)"
cd "$build"
exec ctest --output-on-failure -j "$jobs" -LE extensive "$@"
