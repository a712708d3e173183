#!/usr/bin/env bash
# README command 2: install dependencies, build if needed, run the test suite
# (everything except tests labelled "extensive"), then the sanitizer and fuzz
# steps (docs/reliability.md): the suite again under AddressSanitizer +
# UndefinedBehaviorSanitizer, ThreadSanitizer on the partitioned runs, and the
# bounded fuzz runs. CI (.ci/run) runs exactly this command.
#
# Extra arguments go to ctest, e.g. `tools/test.sh -L quick` for the
# pre-commit subset; with them the sanitizer steps are skipped unless
# RDMASIM_SANITIZERS=1 (RDMASIM_SANITIZERS=0 skips them always). Each step
# prints its wall time.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${RDMASIM_BUILD_DIR:-$root/build}"
jobs="$(nproc 2>/dev/null || echo 2)"
sanitizers="${RDMASIM_SANITIZERS:-$([ "$#" -eq 0 ] && echo 1 || echo 0)}"

timed() {  # timed NAME COMMAND...: runs it, then prints how long it took
  local name=$1 start=$SECONDS
  shift
  echo "== test.sh: $name"
  "$@"
  echo "== test.sh: $name: $((SECONDS - start)) s"
}

all_start=$SECONDS
timed "setup and Release build" "$root/tools/setup.sh"
# Assertions (compiled out of the Release build) are on in the sanitizer
# trees, which run the engine's tests and the whole suite again.
release_suite() {
  (cd "$build" && ctest --output-on-failure -j "$jobs" -LE extensive "$@")
}
timed "Release test suite" release_suite "$@"
if [ "$sanitizers" = 1 ]; then
  timed "ASan+UBSan build and test suite" "$root/tools/sanitize.sh" asan "$@"
  timed "TSan build, partition tests and scenarios on 2 and 3 threads" \
    "$root/tools/sanitize.sh" tsan
  timed "bounded fuzz runs" "$root/tools/sanitize.sh" fuzz
fi
echo "== test.sh: all steps passed in $((SECONDS - all_start)) s"
