#!/usr/bin/env bash
# ctest "bench run.py": bench/run.py runs one small scenario against itself
# with a competing process (--compete 1), writes its JSON document, reports
# equal results for the two "binaries", records the competitor and the
# machine's memory latency (the probe, bench/memory_latency.cpp), and leaves
# no competing process behind.
#
#   bench/test_run.sh RDMASIM MEMORY_LATENCY_PROBE
set -euo pipefail
bin="$1"
probe="$2"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
/usr/bin/python3 "$root/bench/run.py" --binary "$bin" --baseline "$bin" --repeat 1 \
  --scenario "$root/scenarios/quickstart.json" --compete 1 --json "$out/bench.json" \
  --memory-latency "$probe" \
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
# The probe's figures: one latency per default working-set size. Their values
# are the machine's; only their form is checked.
lat = doc["host"]["memory_latency"]
assert lat["pages"] == "2MiB advised", lat
assert list(lat["ns_per_load"]) == ["1MiB", "4MiB", "8MiB", "16MiB", "64MiB", "256MiB"], lat
assert all(isinstance(v, float) and v > 0 for v in lat["ns_per_load"].values()), lat
PY
# --memory-latency none: not measured, recorded as null.
/usr/bin/python3 "$root/bench/run.py" --binary "$bin" --repeat 1 --memory-latency none \
  --scenario "$root/scenarios/quickstart.json" > "$out/none.json" 2> /dev/null
/usr/bin/python3 -c 'import json, sys; assert json.load(open(sys.argv[1]))["host"]["memory_latency"] is None' "$out/none.json"
# A probe that is not there is an error (exit 1), before anything runs.
if /usr/bin/python3 "$root/bench/run.py" --binary "$bin" --memory-latency "$out/no-such-probe" \
    --scenario "$root/scenarios/quickstart.json" > /dev/null 2> "$out/err.txt"; then
  echo "a missing --memory-latency probe was accepted"; exit 1
fi
grep -q "memory-latency probe not found" "$out/err.txt" || { cat "$out/err.txt"; exit 1; }
# The probe refuses a bad size with exit code 2 and one line.
if "$probe" 0 > /dev/null 2> "$out/probe_err.txt"; then echo "probe accepted size 0"; exit 1; fi
[ "$("$probe" 0 2>&1 >/dev/null | wc -l)" = 1 ] || { echo "probe error is not one line"; exit 1; }
set +e; "$probe" 0 > /dev/null 2>&1; rc=$?; set -e
[ "$rc" = 2 ] || { echo "probe exit code $rc, expected 2"; exit 1; }
# The competitor (a busy loop run by this Python) is gone.
if pgrep -f "python3 -c while True:" > /dev/null; then
  echo "a competing process outlived the benchmark"; exit 1
fi
# Bad options are refused by the parser (exit 2), before anything runs.
if /usr/bin/python3 "$root/bench/run.py" --binary "$bin" --compete -1 > /dev/null 2>&1; then
  echo "--compete -1 was accepted"; exit 1
fi
echo ok
