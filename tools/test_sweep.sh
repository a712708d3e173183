#!/usr/bin/env bash
# ctest: tools/sweep.py runs a 2 x 2 grid and gathers 4 rows into summary.csv
# (with slowdown columns);
# then a grid x seeds run without traces, each in its own folder.
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
# Slowdown columns: the incast's flows share one port, so each is slower
# than alone (p50 > 1), and p50 <= p95 <= p99; 256 and 512 KiB are in the
# 100KB-1MB bucket.
python3 - "$out/summary.csv" <<'PY' || { cat "$out/summary.csv"; exit 1; }
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
for r in rows:
    p50, p95, p99 = (float(r[f"slowdown_p{p}"]) for p in (50, 95, 99))
    assert 1.0 < p50 <= p95 <= p99, r
    assert float(r["slowdown_p99_100KB-1MB"]) == p99, r
    assert r["slowdown_p99_<10KB"] == "", r
PY
[ -f "$out/0000_rate=100Gbps_size=256KiB_seed=default/trace.h5" ] || { echo "no trace by default"; exit 1; }
out2="$out/seeds"
python3 "$root/tools/sweep.py" "$root/scenarios/incast.json" --binary "$bin" --jobs 2 --out "$out2" \
  --grid fabric.link.rate=100Gbps,400Gbps --seeds 1,2 --no-trace 2>/dev/null
[ "$(($(wc -l < "$out2/summary.csv") - 1))" -eq 4 ] || { echo "expected 4 seeded rows"; exit 1; }
[ "$(find "$out2" -name summary.json | wc -l)" -eq 4 ] || { echo "runs share a folder"; exit 1; }
[ "$(find "$out2" -name trace.h5 | wc -l)" -eq 0 ] || { echo "--no-trace wrote traces"; exit 1; }
[ "$(cut -d, -f2 "$out2/summary.csv" | sort -u | grep -c '^[12]$')" -eq 2 ] || { echo "seeds not applied"; cat "$out2/summary.csv"; exit 1; }
echo "sweep ok"
