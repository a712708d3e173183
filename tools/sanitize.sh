#!/usr/bin/env bash
# The sanitizer and fuzz steps of tools/test.sh (docs/reliability.md), each on
# its own build tree next to ./build, built with clang 14:
#
#   tools/sanitize.sh asan [CTEST ARGS]  AddressSanitizer + UndefinedBehaviorSanitizer
#                                        tree (build-asan): the test suite but the
#                                        tests labelled extensive or no_sanitizer
#   tools/sanitize.sh tsan               ThreadSanitizer tree (build-tsan): the
#                                        partition tests, and a few scenarios on 2
#                                        and 3 threads (test/cli/check_threads.sh)
#   tools/sanitize.sh fuzz               the bounded fuzz runs (tools/fuzz.sh ci), in
#                                        build-asan
#
# Sanitizer trees: -O1 with line tables (test sources -O0 in the ASan tree), assertions on (no NDEBUG), warnings as
# errors; ccache is used when installed. RDMASIM_BUILD_DIR=dir moves them to
# dir-asan and dir-tsan.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${RDMASIM_BUILD_DIR:-$root/build}"
build="${build%/}"
jobs="$(nproc 2>/dev/null || echo 2)"

# Every sanitizer report is fatal, with a stack.
export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1:detect_stack_use_after_return=1:strict_string_checks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
symbolizer=/usr/lib/llvm-14/bin/llvm-symbolizer
if [ -x "$symbolizer" ]; then
  export ASAN_SYMBOLIZER_PATH="$symbolizer" UBSAN_SYMBOLIZER_PATH="$symbolizer"
  export TSAN_SYMBOLIZER_PATH="$symbolizer"
fi
export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}"

configure() {  # configure DIR SANITIZERS [CMAKE ARGS]
  local dir=$1 san=$2
  shift 2
  local launcher=()
  if command -v ccache >/dev/null 2>&1; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
  CC=clang-14 CXX=clang++-14 cmake -S "$root" -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" \
    "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" \
    -DRDMASIM_WERROR=ON "-DRDMASIM_SANITIZE=$san" "${launcher[@]}" "$@" >/dev/null
}

step=${1:-}
shift || true
case $step in
  asan)
    # Test sources at -O0 (the libraries stay -O1): half their compile time,
    # 12 % more test time (docs/reliability.md, CI time).
    configure "$build-asan" address,undefined -DRDMASIM_FUZZ=ON -DRDMASIM_TEST_OPT=-O0
    cmake --build "$build-asan" -j "$jobs"
    cd "$build-asan"
    # clang-format: the Release suite checks it; nothing to sanitize.
    ctest --output-on-failure -j "$jobs" -LE 'extensive|no_sanitizer' -E '^clang-format$' "$@"
    ;;
  tsan)
    configure "$build-tsan" thread
    cmake --build "$build-tsan" -j "$jobs" --target rdmasim rdmasim_engine_tests
    "$build-tsan/sim/rdmasim_engine_tests" "[partition]"
    # Faults, PFC, spraying and an incast cross the partitions' rings.
    # On 2 and 3 threads, and on 2 with 5 partitions taking turns in groups;
    # the Release suite compares their results with one.
    for s in incast fat_tree_2tier link_failure pfc_storm spraying; do
      echo "tsan: scenarios/$s.json on 2 and 3 threads, and 2 threads with 5 partitions"
      sh "$root/test/cli/check_threads.sh" "$build-tsan/sim/cli/rdmasim" "$root/scenarios/$s.json" "only 2 3 2t5"
    done
    ;;
  fuzz)
    RDMASIM_FUZZ_BUILD="$build-asan" exec "$root/tools/fuzz.sh" ci
    ;;
  *)
    echo "usage: tools/sanitize.sh asan|tsan|fuzz" >&2
    exit 2
    ;;
esac
