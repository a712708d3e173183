#!/usr/bin/env python3
"""Run a scenario over a grid of --set overrides, in parallel, and gather
every run's summary into one CSV.

    tools/sweep.py scenarios/incast.json \\
        --grid fabric.link.rate=100Gbps,400Gbps \\
        --grid 'traffic[0].size="1MiB","8MiB"' \\
        --seeds 1,2,3 --jobs 2 --out results/incast-sweep

Each combination runs as `rdmasim run FILE --set ... --seed S --out
OUT/<run-name> --quiet`. The CSV (OUT/summary.csv) has one row per run: the
swept values (one column per --grid path, named by the path), `seed` and
`run` (the run's folder), then these columns, from the run's summary.json (docs/trace.md):

  status, sim_time_ps, events, packet_hops, drops, pfc_frames_sent,
  ecn_marked, retransmissions     the run's totals
  flows, flows_completed          flow counts
  fct_mean_us, fct_p99_us, fct_max_us, aggregate_goodput_gbps
                                  over completed flows
  slowdown_p50, slowdown_p95, slowdown_p99
                                  FCT / ideal FCT over completed flows
  cnps_sent, cnps_received, rate_cuts
                                  congestion control, whole run (`cc`)
  window_start_us, window_end_us  the measurement window as applied
                                  (output.window, docs/scenario.md; without
                                  one, the whole run)
  window_goodput_gbps, window_jain
                                  payload delivered in the window over its
                                  length; Jain's index of the flows' window
                                  goodputs (empty when undefined)
  window_queue_mean_bytes, window_queue_peak_bytes
                                  the largest time-average and the largest
                                  peak of any switch egress queue in the
                                  window (empty unless output.window is set)
  window_pfc_frames, window_cnps_sent, window_rate_cuts
                                  PFC frames switches sent, CNPs and cuts,
                                  within the window
  wall_seconds                    the run's wall time
  slowdown_p99_<bucket>           the p99 slowdown of each size bucket the
                                  summaries list (empty if none completed)

A run that fails to start (bad input) stops the sweep with its error; a run
that ends with a non-zero status is recorded with that status.
Standard library only; works with any python3.
"""

import argparse
import concurrent.futures
import csv
import itertools
import json
import os
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def parse_grid(spec):
    """'a.b=1,2,3' -> ('a.b', ['1','2','3']). Values may be JSON with commas
    inside quotes or brackets; split on top-level commas only."""
    if "=" not in spec:
        raise SystemExit(f"sweep: --grid {spec!r}: expected PATH=V1,V2,...")
    path, values = spec.split("=", 1)
    out, depth, cur, quoted = [], 0, "", False
    for ch in values:
        if ch == '"':
            quoted = not quoted
        elif not quoted and ch in "[{":
            depth += 1
        elif not quoted and ch in "]}":
            depth -= 1
        if ch == "," and depth == 0 and not quoted:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    out.append(cur)
    return path, out


def plain(value):
    """A swept value as the CSV shows it: a JSON string without its quotes."""
    try:
        v = json.loads(value)
        return v if isinstance(v, str) else value
    except ValueError:
        return value


def run_name(index, assignment, seed):
    """A readable folder name; the index keeps it unique after the cleaning."""
    text = "_".join(f"{p.split('.')[-1]}={v}" for p, v in assignment) + f"_seed={seed}"
    return f"{index:04d}_" + re.sub(r"[^A-Za-z0-9_.=-]+", "", text)[:120]


def row_of(summary):
    flows = summary.get("flows", {})
    fct = flows.get("fct_ps", {})
    slow = flows.get("slowdown", {})
    cc = summary.get("cc", {})
    window = summary.get("window", {})
    row = {
        "status": summary.get("status"),
        "sim_time_ps": summary.get("sim_time_ps"),
        "events": summary.get("events"),
        "packet_hops": summary.get("packet_hops"),
        "drops": summary.get("drops", {}).get("total"),
        "pfc_frames_sent": summary.get("pfc_frames_sent"),
        "ecn_marked": summary.get("ecn_marked"),
        "retransmissions": summary.get("retransmissions"),
        "flows": flows.get("count"),
        "flows_completed": flows.get("completed"),
        "fct_mean_us": fct["mean"] / 1e6 if "mean" in fct else None,
        "fct_p99_us": fct["p99"] / 1e6 if "p99" in fct else None,
        "fct_max_us": fct["max"] / 1e6 if "max" in fct else None,
        "aggregate_goodput_gbps": flows.get("aggregate_goodput_gbps"),
        "slowdown_p50": slow.get("p50"),
        "slowdown_p95": slow.get("p95"),
        "slowdown_p99": slow.get("p99"),
        "cnps_sent": cc.get("cnps_sent"),
        "cnps_received": cc.get("cnps_received"),
        "rate_cuts": cc.get("rate_cuts"),
        "window_start_us": window["start_ps"] / 1e6 if "start_ps" in window else None,
        "window_end_us": window["end_ps"] / 1e6 if "end_ps" in window else None,
        "window_goodput_gbps": window.get("goodput_gbps"),
        "window_jain": window.get("jain_fairness"),
        "window_queue_mean_bytes": window.get("queues", {}).get("max_mean_bytes"),
        "window_queue_peak_bytes": window.get("queues", {}).get("max_peak_bytes"),
        "window_pfc_frames": window.get("pfc_frames_sent"),
        "window_cnps_sent": window.get("cnps_sent"),
        "window_rate_cuts": window.get("rate_cuts"),
        "wall_seconds": summary.get("run", {}).get("wall_seconds"),
    }
    return row


def bucket_columns(summary):
    """Per size bucket of summary.json: its p99 slowdown, keyed by column name."""
    return {f"slowdown_p99_{b['bucket']}": b.get("p99") for b in summary.get("slowdown_by_size", [])}


def main():
    ap = argparse.ArgumentParser(description="Sweep a scenario over --set values; gather summaries into a CSV.")
    ap.add_argument("scenario")
    ap.add_argument("--grid", action="append", default=[], help="PATH=V1,V2,... (repeatable; the grid is their product)")
    ap.add_argument("--set", action="append", default=[], help="a fixed override for every run")
    ap.add_argument("--seeds", default="", help="comma-separated seeds (default: the scenario's)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--out", required=True, help="folder for the runs and summary.csv")
    ap.add_argument("--no-trace", action="store_true",
                    help="write only summary.json per run (sets output.trace=false, which also stops "
                         "recording PFC and drop events)")
    ap.add_argument("--binary", default=str(ROOT / "build" / "sim" / "cli" / "rdmasim"))
    args = ap.parse_args()

    if not pathlib.Path(args.binary).exists():
        raise SystemExit(f"sweep: {args.binary} not found (build first: tools/setup.sh)")
    grid = [parse_grid(g) for g in args.grid]
    seeds = [s for s in args.seeds.split(",") if s] or [None]
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    combos = []
    for values in itertools.product(*[vals for _, vals in grid]) if grid else [()]:
        assignment = list(zip([p for p, _ in grid], values))
        for seed in seeds:
            combos.append((len(combos), assignment, seed))

    def run(combo):
        index, assignment, seed = combo
        name = run_name(index, assignment, seed if seed is not None else "default")
        cmd = [args.binary, "run", args.scenario, "--quiet", "--out", str(out / name)]
        if args.no_trace:
            cmd += ["--set", "output.trace=false"]
        for s in args.set:
            cmd += ["--set", s]
        for p, v in assignment:
            cmd += ["--set", f"{p}={v}"]
        if seed is not None:
            cmd += ["--seed", seed]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode in (1, 2):
            raise SystemExit(f"sweep: {name}: {proc.stderr.strip()}")
        summary = json.loads((out / name / "summary.json").read_text())
        row = {p: plain(v) for p, v in assignment}
        row["seed"] = summary.get("scenario", {}).get("seed")
        row["run"] = name
        row.update(row_of(summary))
        row.update(bucket_columns(summary))
        return row

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        rows = list(pool.map(run, combos))

    fields = [p for p, _ in grid] + ["seed", "run"] + list(row_of({}).keys())
    for r in rows:  # bucket columns, in the order the summaries list them
        fields += [k for k in r if k.startswith("slowdown_p99_") and k not in fields]
    with open(out / "summary.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, restval="")
        w.writeheader()
        for r in rows:
            w.writerow(r)
    print(f"sweep: {len(rows)} runs -> {out / 'summary.csv'}", file=sys.stderr)


if __name__ == "__main__":
    main()
