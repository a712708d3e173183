#!/bin/sh
# check_threads.sh RDMASIM_BINARY SCENARIO [COUNTS]
#
# Runs SCENARIO on one thread and on each of COUNTS threads (default "2 3";
# sim/simulation.h contract 5) and compares what they wrote: trace.h5 byte
# for byte, and summary.json but for its "run" figures and the fingerprint
# (a chain per partition). A count pN is one thread with the network in N
# partitions taking turns (--partitions N), and TtN is T threads with the
# network in N partitions, each thread's taking turns; the one-thread
# reference runs the network whole (--partitions 1). Every count runs with --force-threads: without
# it most of these scenarios are too sparse for threads and start again on
# one thread (docs/cli.md), which would compare one thread with one thread;
# that path is tested by the CLI's threads-deterministic check and the
# runner's tests (test/scenarios/sparse_restart_test.cpp).
#
# COUNTS "only N...": runs on those counts alone, without one thread, and
# compares the later counts with the first (the sanitizer trees: they look
# for memory errors and races on the partitioned path; the Release suite
# compares with one thread).
set -u
[ "$#" -eq 2 ] || [ "$#" -eq 3 ] || {
  echo "usage: check_threads.sh RDMASIM_BINARY SCENARIO [COUNTS]" >&2
  exit 1
}
rdmasim=$1
scenario=$2
asked=${3:-2 3}
first=1
case $asked in
  only\ *) asked=${asked#only } first="" ;;
esac
python=/usr/bin/python3
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rdmasim-threads.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

counts=""
for n in $first $asked; do
  case $n in
    p*) how="--threads 1 --partitions ${n#p}" ;;
    *t*) how="--threads ${n%t*} --partitions ${n#*t} --force-threads" ;;
    1) how="--threads 1 --partitions 1" ;;
    *) how="--threads $n --force-threads" ;;
  esac
  "$rdmasim" run "$scenario" --out "$tmp/t$n" $how --check --quiet 2>"$tmp/err"
  code=$?
  # More threads than hosts is refused: fewer counts to compare.
  if [ "$code" -eq 2 ] && grep -q "more than the scenario's" "$tmp/err"; then continue; fi
  # 0: complete; 5: a deadlock detected and reported (an expected outcome).
  [ "$code" -eq 0 ] || [ "$code" -eq 5 ] || {
    echo "FAIL: $scenario on $n thread(s): exit code $code" >&2
    cat "$tmp/err" >&2
    exit 1
  }
  [ "$n" = 1 ] || counts="$counts $n"
done
[ -n "$counts" ] || { echo "FAIL: $scenario: ran on no more than one thread" >&2; exit 1; }
# Compared with one thread; with "only", the later counts with the first.
ref=1
if [ -z "$first" ]; then
  set -- $counts
  ref=$1
  shift
  counts="$*"
fi
for n in $counts; do
  if [ -f "$tmp/t$ref/trace.h5" ]; then
    cmp "$tmp/t$ref/trace.h5" "$tmp/t$n/trace.h5" || {
      echo "FAIL: $scenario: trace.h5 differs between $ref and $n threads" >&2
      exit 1
    }
  fi
  "$python" - "$tmp/t$ref/summary.json" "$tmp/t$n/summary.json" <<'EOF' || exit 1
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
bad = [k for k in sorted(set(a) | set(b))
       if k not in ("run", "fingerprint", "git_revision") and a.get(k) != b.get(k)]
for k in bad:
    print("FAIL: %s differs: %r vs %r" % (k, str(a.get(k))[:300], str(b.get(k))[:300]),
          file=sys.stderr)
sys.exit(1 if bad else 0)
EOF
done
