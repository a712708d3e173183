#!/usr/bin/env bash
# Fuzzing rdmasim's scenario loader, --set parser and models (docs/reliability.md,
# "Fuzzing"). The targets are built in the AddressSanitizer tree
# (tools/sanitize.sh asan, or by this script when missing):
#
#   tools/fuzz.sh ci                 the bounded runs of CI: fixed -seed and -runs,
#                                    fresh corpus, deterministic; then every input
#                                    in test/fuzz/corpus/crashes/ not listed in its
#                                    KNOWN file, once
#   tools/fuzz.sh load|run [ARGS]    fuzz one target until stopped (or ARGS say,
#                                    e.g. -max_total_time=14400 -jobs=2 -workers=2);
#                                    the corpus grows in build-asan/fuzz/TARGET/, and
#                                    crashing inputs land in build-asan/fuzz/crashes/
#
# load: rdmasim_fuzz_load, the loader and --set (validate, topo); run:
# rdmasim_fuzz_run, the same, then the first 5 simulated us of the scenario.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${RDMASIM_FUZZ_BUILD:-${RDMASIM_BUILD_DIR:-$root/build}-asan}"
build="${build%/}"
case $build in /*) ;; *) build="$PWD/$build" ;; esac
fuzz_dir="$root/test/fuzz"
crashes="$fuzz_dir/corpus/crashes"

export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1:detect_stack_use_after_return=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

mode=${1:-}
shift || true
case $mode in
  ci | load | run) ;;
  *)
    echo "usage: tools/fuzz.sh ci | load [LIBFUZZER ARGS] | run [LIBFUZZER ARGS]" >&2
    exit 2
    ;;
esac

if [ ! -x "$build/test/fuzz/rdmasim_fuzz_load" ] || [ ! -x "$build/test/fuzz/rdmasim_fuzz_run" ]; then
  RDMASIM_BUILD_DIR="${build%-asan}" "$root/tools/sanitize.sh" asan -R '^$' >/dev/null
fi

# The seeds: every scenario, every bad scenario, the --set examples.
seeds="$(mktemp -d "${TMPDIR:-/tmp}/rdmasim-fuzz-seeds.XXXXXX")"
trap 'rm -rf "$seeds"' EXIT
cp "$root"/scenarios/*.json "$root"/test/bad/*.json "$fuzz_dir"/corpus/seeds/* "$seeds/"

# Shared limits: an input that takes 20 s or 2 GB is a finding.
common=(-dict="$fuzz_dir/scenario.dict" -timeout=20 -rss_limit_mb=2048 -malloc_limit_mb=2048
  -max_len=8192 -print_final_stats=1)

# Exceptions of known open bugs (KNOWN's "exception:" lines) are not
# findings in CI (test/fuzz/fuzz_known.h); the long runs report them.
if [ "$mode" = ci ] && [ -f "$crashes/KNOWN" ]; then
  RDMASIM_FUZZ_TOLERATE="$(sed -n 's/^exception: *//p' "$crashes/KNOWN")"
  export RDMASIM_FUZZ_TOLERATE
fi

# Runs from the scenarios' folder: relative CDF paths there resolve.
cd "$root/scenarios"
if [ "$mode" = ci ]; then
  # Fixed seed and run counts: the same inputs on every run of a build, about a
  # minute on 2 cores under ASan. Set RDMASIM_FUZZ_RUNS_LOAD/RUN to change.
  for target in load run; do
    case $target in
      load) runs=${RDMASIM_FUZZ_RUNS_LOAD:-20000} ;;
      run) runs=${RDMASIM_FUZZ_RUNS_RUN:-3000} ;;
    esac
    work="$seeds/work-$target"
    mkdir -p "$work" "$seeds/artifacts"
    echo "fuzz: rdmasim_fuzz_$target -seed=1 -runs=$runs"
    start=$SECONDS
    "$build/test/fuzz/rdmasim_fuzz_$target" "${common[@]}" -seed=1 -runs="$runs" \
      -artifact_prefix="$seeds/artifacts/" "$work" "$seeds" 2>"$seeds/log-$target" || {
      tail -n 60 "$seeds/log-$target" >&2
      echo "fuzz: rdmasim_fuzz_$target found a crash; the input:" >&2
      ls "$seeds/artifacts" >&2
      mkdir -p "$build/fuzz/crashes"
      cp "$seeds"/artifacts/* "$build/fuzz/crashes/" 2>/dev/null || true
      echo "fuzz: copied to $build/fuzz/crashes/ (add it to $crashes/ once understood)" >&2
      exit 1
    }
    grep -E "^stat::(number_of_executed_units|average_exec_per_sec|new_units_added|peak_rss_mb)" \
      "$seeds/log-$target" | tr '\n' ' '
    echo "($((SECONDS - start)) s)"
  done
  # Crash inputs found earlier are regression cases: each must now pass,
  # unless KNOWN lists it (still open; the owner removes the line with the fix).
  known="$crashes/KNOWN"
  for f in "$crashes"/*; do
    [ -f "$f" ] || continue
    name=$(basename "$f")
    case $name in KNOWN | README*) continue ;; esac
    if [ -f "$known" ] && grep -q "^$name " "$known"; then
      echo "fuzz: $name: known, still open (test/fuzz/corpus/crashes/KNOWN)"
      continue
    fi
    for target in load run; do
      "$build/test/fuzz/rdmasim_fuzz_$target" -timeout=20 -rss_limit_mb=2048 "$f" \
        >"$seeds/log-regress" 2>&1 || {
        tail -n 40 "$seeds/log-regress" >&2
        echo "fuzz: regression input $name fails rdmasim_fuzz_$target" >&2
        exit 1
      }
    done
    echo "fuzz: $name passes"
  done
  exit 0
fi

corpus="$build/fuzz/$mode"
mkdir -p "$corpus" "$build/fuzz/crashes"
"$build/test/fuzz/rdmasim_fuzz_$mode" "${common[@]}" \
  -artifact_prefix="$build/fuzz/crashes/" "$@" "$corpus" "$seeds"
