#!/usr/bin/env bash
# Instruction counts (callgrind) of reduced W1 (8 MB flows) and W2 (4 MB):
# repeatable on a busy machine, where wall-clock ratios are not.
#
#   bench/instructions.sh CANDIDATE [BASELINE]
#
# Prints one line per scenario and binary, and the candidate/baseline ratio.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
command -v valgrind >/dev/null || { echo "valgrind is not installed" >&2; exit 1; }
CANDIDATE=$1
BASELINE=${2:-}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rdmasim-instr.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
count() {  # binary scenario size
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$1" run "$root/bench/scenarios/$2.json" \
    --out "$tmp/out" --quiet --set "traffic[0].size=\"$3\"" 2>&1 >/dev/null |
    sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
for s in "w1_permutation_k8 8MB" "w2_incast_k8 4MB"; do
  set -- $s
  name=$1 size=$2
  c=$(count "$CANDIDATE" "$name" "$size")
  if [ -n "${BASELINE:-}" ]; then
    b=$(count "$BASELINE" "$name" "$size")
    awk -v n="$name" -v c="$c" -v b="$b" 'BEGIN { printf "%s: candidate %.0f, baseline %.0f instructions, ratio %.4f\n", n, c, b, c / b }'
  else
    echo "$name: $c instructions"
  fi
done
