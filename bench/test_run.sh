#!/usr/bin/env bash
# ctest "bench run.py": bench/run.py runs one small scenario against itself
# with a competing process (--compete 1), writes its JSON document, reports
# equal results for the two "binaries", records the competitor, and leaves no
# competing process behind.
set -euo pipefail
bin="$1"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
/usr/bin/python3 "$root/bench/run.py" --binary "$bin" --baseline "$bin" --repeat 1 \
  --scenario "$root/scenarios/quickstart.json" --compete 1 --json "$out/bench.json" \
  > "$out/stdout.json" 2> "$out/stderr.txt" || { cat "$out/stderr.txt"; exit 1; }
cmp -s "$out/stdout.json" "$out/bench.json" || { echo "--json differs from stdout"; exit 1; }
/usr/bin/python3 - "$out/bench.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["interleaved"] is True, doc["interleaved"]
assert doc["same_results"] is True
assert doc["competing_processes"]["count"] == 1, doc["competing_processes"]
(s,) = doc["scenarios"]
for role in ("candidate", "baseline"):
    e = s[role]
    assert e["deterministic"] is True
    assert e["events"] > 0 and e["data_packet_hops"] > 0, e
    assert e["events_per_second"] > 0 and e["peak_rss_bytes"] > 0, e
assert set(s["ratios"]) >= {"events_per_second", "wall_seconds", "peak_rss_bytes"}, s["ratios"]
PY
# The competitor (a busy loop run by this Python) is gone.
if pgrep -f "python3 -c while True:" > /dev/null; then
  echo "a competing process outlived the benchmark"; exit 1
fi
# Bad options are refused by the parser (exit 2), before anything runs.
if /usr/bin/python3 "$root/bench/run.py" --binary "$bin" --compete -1 > /dev/null 2>&1; then
  echo "--compete -1 was accepted"; exit 1
fi
echo ok
