#!/usr/bin/env bash
# README command 1: install dependencies, build, run the quickstart scenario.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${RDMASIM_BUILD_DIR:-$root/build}"
"$root/tools/setup.sh"
cd "$root"
exec "$build/sim/cli/rdmasim" run scenarios/quickstart.json "$@"
