#!/usr/bin/env bash
# ctest: tools/sweep.py runs a 2 x 2 grid and gathers 4 rows into summary.csv
# (with slowdown and window columns); a run with a window; a DCQCN grid
# (congestion-control columns against the summaries); then a grid x seeds
# run without traces, each in its own folder.
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
# Window columns: the whole run by default (no queue means), and with a
# window its goodput, fairness (the incast's equal flows share fairly) and
# the bottleneck's mean queue.
python3 - "$out/summary.csv" <<'PY' || { cat "$out/summary.csv"; exit 1; }
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    assert float(r["window_goodput_gbps"]) > 0 and float(r["window_start_us"]) == 0, r
    assert r["window_queue_mean_bytes"] == "" and r["window_queue_peak_bytes"] == "", r
    assert r["cnps_sent"] == r["cnps_received"] == r["rate_cuts"] == r["window_cnps_sent"] == "0", r
PY
out3="$out/window"
python3 "$root/tools/sweep.py" "$root/scenarios/incast.json" --binary "$bin" --jobs 2 --out "$out3" \
  --grid fabric.link.rate=100Gbps --set 'output.window={"start": "20us", "end": "100us"}' --no-trace 2>/dev/null
python3 - "$out3/summary.csv" <<'PY' || { cat "$out3/summary.csv"; exit 1; }
import csv, sys
(r,) = list(csv.DictReader(open(sys.argv[1])))
assert float(r["window_start_us"]) == 20 and float(r["window_end_us"]) == 100, r
assert 0 < float(r["window_goodput_gbps"]) <= 100, r
assert 0.5 < float(r["window_jain"]) <= 1, r
assert float(r["window_queue_mean_bytes"]) > 0, r
PY
# DCQCN: the congestion-control columns equal the summaries' totals and
# sums over their flows; the window's CNPs and cuts are some of the run's.
out4="$out/dcqcn"
python3 "$root/tools/sweep.py" "$root/scenarios/dcqcn_rates.json" --binary "$bin" --jobs 2 \
  --out "$out4" --grid fabric.switch.ecn.kmin=20KB,40KB --no-trace 2>/dev/null
python3 - "$out4" <<'PY' || { cat "$out4/summary.csv"; exit 1; }
import csv, json, pathlib, sys
out = pathlib.Path(sys.argv[1])
rows = list(csv.DictReader(open(out / "summary.csv")))
assert len(rows) == 2, rows
for r in rows:
    s = json.loads((out / r["run"] / "summary.json").read_text())
    flows = s["per_flow"]
    sent, received, cuts = (int(r[c]) for c in ("cnps_sent", "cnps_received", "rate_cuts"))
    assert sent == s["cc"]["cnps_sent"] == sum(f["cnps_sent"] for f in flows) > 0, r
    assert received == s["cc"]["cnps_received"] == sum(f["cnps_received"] for f in flows), r
    assert cuts == s["cc"]["rate_cuts"] == sum(f["rate_cuts"] for f in flows) > 0, r
    assert 0 < int(r["window_cnps_sent"]) < sent and 0 <= int(r["window_rate_cuts"]) < cuts, r
    assert int(r["window_cnps_sent"]) == s["window"]["cnps_sent"], r
    assert float(r["window_start_us"]) == 200 and float(r["window_end_us"]) == 1000, r
    mean, peak = float(r["window_queue_mean_bytes"]), int(r["window_queue_peak_bytes"])
    assert 0 < mean <= peak, r
PY
[ -f "$out/0000_rate=100Gbps_size=256KiB_seed=default/trace.h5" ] || { echo "no trace by default"; exit 1; }
out2="$out/seeds"
python3 "$root/tools/sweep.py" "$root/scenarios/incast.json" --binary "$bin" --jobs 2 --out "$out2" \
  --grid fabric.link.rate=100Gbps,400Gbps --seeds 1,2 --no-trace 2>/dev/null
[ "$(($(wc -l < "$out2/summary.csv") - 1))" -eq 4 ] || { echo "expected 4 seeded rows"; exit 1; }
[ "$(find "$out2" -name summary.json | wc -l)" -eq 4 ] || { echo "runs share a folder"; exit 1; }
[ "$(find "$out2" -name trace.h5 | wc -l)" -eq 0 ] || { echo "--no-trace wrote traces"; exit 1; }
[ "$(cut -d, -f2 "$out2/summary.csv" | sort -u | grep -c '^[12]$')" -eq 2 ] || { echo "seeds not applied"; cat "$out2/summary.csv"; exit 1; }
# An invalid point (kmin 400KB > the scenario's kmax 200KB, bad input, exit 2)
# does not stop the sweep: every point has its row, the bad one its status,
# exit code and error line; the sweep exits 1.
out5="$out/invalid"
sweep5=(python3 "$root/tools/sweep.py" "$root/scenarios/dcqcn_rates.json" --binary "$bin" --jobs 2
  --out "$out5" --grid fabric.switch.ecn.kmin=20KB,400KB,40KB --set 'stop.time="100us"' --no-trace)
rc=0; "${sweep5[@]}" 2>/dev/null || rc=$?
[ "$rc" -eq 1 ] || { echo "a sweep with a failed point exited $rc, expected 1"; exit 1; }
python3 - "$out5/summary.csv" <<'PY' || { cat "$out5/summary.csv"; exit 1; }
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert [r["fabric.switch.ecn.kmin"] for r in rows] == ["20KB", "400KB", "40KB"], rows
good, bad = [rows[0], rows[2]], rows[1]
for r in good:
    assert r["status"] == "time_limit" and r["exit_code"] == "0" and r["error"] == "", r
    assert int(r["events"]) > 0, r
assert bad["status"] == "bad_input" and bad["exit_code"] == "2", bad
assert bad["error"].startswith("rdmasim: error: fabric.switch.ecn.kmax:") and "kmin" in bad["error"], bad
assert bad["events"] == "" and bad["run"] == "0001_kmin=400KB_seed=default", bad
PY
# Resume: as if the sweep had been killed before its last point finished
# (its row dropped from the CSV); a rerun runs that point only and keeps the
# others' rows and runs untouched (the bad point is finished: it failed).
grep -v '0002_kmin=40KB' "$out5/summary.csv" > "$out5/summary.csv.cut"
mv "$out5/summary.csv.cut" "$out5/summary.csv"
first="$out5/0000_kmin=20KB_seed=default/summary.json"
stamp=$(stat -c %Y.%i "$first")
rm -rf "$out5/0002_kmin=40KB_seed=default"
rc=0; "${sweep5[@]}" 2>"$out/resume.err" || rc=$?
[ "$rc" -eq 1 ] || { echo "the resumed sweep exited $rc, expected 1"; exit 1; }
grep -q '2 of 3 points already in' "$out/resume.err" || { cat "$out/resume.err"; exit 1; }
[ "$(stat -c %Y.%i "$first")" = "$stamp" ] || { echo "resume ran a finished point again"; exit 1; }
[ -f "$out5/0002_kmin=40KB_seed=default/summary.json" ] || { echo "resume did not run the missing point"; exit 1; }
[ "$(($(wc -l < "$out5/summary.csv") - 1))" -eq 3 ] || { echo "expected 3 rows after resume"; cat "$out5/summary.csv"; exit 1; }
grep -q '^40KB,1,0002_kmin=40KB_seed=default,time_limit,' "$out5/summary.csv" || { cat "$out5/summary.csv"; exit 1; }
# A rerun with other settings into the same folder is refused.
rc=0; python3 "$root/tools/sweep.py" "$root/scenarios/dcqcn_rates.json" --binary "$bin" --out "$out5" \
  --grid fabric.switch.ecn.kmin=20KB --no-trace 2>"$out/other.err" || rc=$?
[ "$rc" -ne 0 ] && grep -q 'other settings (grid, set)' "$out/other.err" || { echo "rc=$rc"; cat "$out/other.err"; exit 1; }
# Interrupted: a SIGINT to the sweep's whole process group, as a ^C at the
# terminal sends (job control makes the background sweep a group of its
# own, not started with SIGINT ignored), starts no more points; the run
# going on, in a session of its own, gets one SIGTERM from the sweep (a
# second signal would make it exit without outputs), stops and writes
# partial outputs; the finished point keeps its row, the interrupted one is
# recorded as such (exit 143), and the sweep exits 130. No timing: the
# signal only has to come while the second point (a 1 TiB flow, minutes)
# runs.
out6="$out/interrupted"
set -m
python3 "$root/tools/sweep.py" "$root/scenarios/quickstart.json" --binary "$bin" --jobs 1 \
  --out "$out6" --grid 'traffic[0].size="1MiB","1TiB","2MiB"' --no-trace 2>"$out/int.err" &
pid=$!
set +m
for _ in $(seq 600); do
  [ -d "$out6/0001_size=1TiB_seed=default" ] && break
  sleep 0.1
done
[ -d "$out6/0001_size=1TiB_seed=default" ] || { echo "the second point never started"; cat "$out/int.err"; exit 1; }
kill -INT -- "-$pid"
rc=0; wait "$pid" || rc=$?
[ "$rc" -eq 130 ] || { echo "an interrupted sweep exited $rc, expected 130"; cat "$out/int.err"; exit 1; }
python3 - "$out6/summary.csv" <<'PY' || { cat "$out6/summary.csv"; exit 1; }
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert [r["run"] for r in rows] == ["0000_size=1MiB_seed=default", "0001_size=1TiB_seed=default"], rows
assert rows[0]["status"] == "complete" and rows[0]["exit_code"] == "0", rows[0]
assert rows[1]["status"] == "interrupted" and rows[1]["exit_code"] == "143", rows[1]
assert int(rows[1]["events"]) > 0, rows[1]
PY
# Refused before anything runs (exit 2, no OUT made): overlapping paths,
# whose later override would replace the earlier's values while the CSV
# named them (--seeds sets the path seed, after every --set), a --grid
# column named as one of the CSV's own, and a scenario file that does not
# exist.
for args in "--grid traffic[0].size=\"1MiB\",\"2MiB\" --grid traffic[0].size=\"3MiB\"" \
            "--grid fabric.link.rate=100Gbps,400Gbps --set fabric.link={\"rate\":\"200Gbps\"}" \
            "--grid seed=3,4 --seeds 1,2" "--set seed=3 --seeds 1,2"; do
  rc=0
  eval python3 "$root/tools/sweep.py" "$root/scenarios/incast.json" --binary "$bin" \
    --out "$out/overlap" $args 2> "$out/overlap.err" || rc=$?
  [ "$rc" -eq 2 ] || { echo "overlapping paths ($args): exit $rc, expected 2"; exit 1; }
  grep -q 'overlap\|twice' "$out/overlap.err" || { cat "$out/overlap.err"; exit 1; }
  [ ! -e "$out/overlap" ] || { echo "an overlapping sweep made its OUT"; exit 1; }
done
for args in "--grid seed=3,4" "--grid status=a,b"; do
  rc=0
  eval python3 "$root/tools/sweep.py" "$root/scenarios/incast.json" --binary "$bin" \
    --out "$out/column" $args 2> "$out/column.err" || rc=$?
  [ "$rc" -eq 2 ] || { echo "a --grid column named as the CSV's own ($args): exit $rc, expected 2"; exit 1; }
  [ "$(wc -l < "$out/column.err")" -eq 1 ] && grep -q "own '.*' column" "$out/column.err" \
    || { cat "$out/column.err"; exit 1; }
  [ ! -e "$out/column" ] || { echo "a sweep with a colliding column made its OUT"; exit 1; }
done
rc=0
python3 "$root/tools/sweep.py" "$out/no_such.json" --binary "$bin" --out "$out/missing" \
  2> "$out/missing.err" || rc=$?
[ "$rc" -eq 2 ] && [ ! -e "$out/missing" ] || { echo "missing scenario: exit $rc"; exit 1; }
echo "sweep ok"
