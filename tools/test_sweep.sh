#!/usr/bin/env bash
# ctest: tools/sweep.py runs a 2 x 2 grid and gathers 4 rows into summary.csv.
set -euo pipefail
bin="$1"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
python3 "$root/tools/sweep.py" "$root/scenarios/incast.json" --binary "$bin" --jobs 2 --out "$out" \
  --grid fabric.link.rate=100Gbps,400Gbps --grid 'traffic[0].size="256KiB","512KiB"' 2>/dev/null
rows=$(($(wc -l < "$out/summary.csv") - 1))
[ "$rows" -eq 4 ] || { echo "expected 4 rows, got $rows"; cat "$out/summary.csv"; exit 1; }
grep -q '^400Gbps,512KiB,' "$out/summary.csv" || { echo "missing the 400Gbps/512KiB row"; cat "$out/summary.csv"; exit 1; }
[ "$(grep -c ',complete,' "$out/summary.csv")" -eq 4 ] || { echo "not every run completed"; exit 1; }
echo "sweep ok"
