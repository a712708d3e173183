#!/bin/sh
# check_threads.sh RDMASIM_BINARY SCENARIO [exact|flows]
#
# Runs SCENARIO on one thread and on two (sim/simulation.h contract 5) and
# compares what they wrote. exact: trace.h5 byte for byte, and summary.json
# but for its "run" figures and the fingerprint. flows: the status, the
# simulated time and every per-flow result; for runs that stop when their
# last flow completes while frames are still moving (go-back-N duplicates,
# say): the other partition finishes its window, so totals counted after the
# last completion can differ (docs/performance.md, "Threads").
set -u
[ "$#" -eq 2 ] || [ "$#" -eq 3 ] || {
  echo "usage: check_threads.sh RDMASIM_BINARY SCENARIO [exact|flows]" >&2
  exit 1
}
rdmasim=$1
scenario=$2
mode=${3:-exact}
python=/usr/bin/python3
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rdmasim-threads.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

for n in 1 2; do
  "$rdmasim" run "$scenario" --out "$tmp/t$n" --threads "$n" --quiet
  code=$?
  # 0: complete; 5: a deadlock detected and reported (an expected outcome).
  [ "$code" -eq 0 ] || [ "$code" -eq 5 ] || {
    echo "FAIL: $scenario on $n thread(s): exit code $code" >&2
    exit 1
  }
done
if [ "$mode" = exact ] && [ -f "$tmp/t1/trace.h5" ]; then
  cmp "$tmp/t1/trace.h5" "$tmp/t2/trace.h5" || {
    echo "FAIL: $scenario: trace.h5 differs between 1 and 2 threads" >&2
    exit 1
  }
fi
"$python" - "$tmp/t1/summary.json" "$tmp/t2/summary.json" "$mode" <<'EOF' || exit 1
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
mode = sys.argv[3]
keys = sorted(set(a) | set(b)) if mode == "exact" else ["status", "sim_time_ps", "flows", "per_flow"]
bad = [k for k in keys if k not in ("run", "fingerprint", "git_revision") and a.get(k) != b.get(k)]
for k in bad:
    print("FAIL: %s differs: %r vs %r" % (k, str(a.get(k))[:300], str(b.get(k))[:300]), file=sys.stderr)
sys.exit(1 if bad else 0)
EOF
