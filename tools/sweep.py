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

  exit_code, error                rdmasim's exit code, and its error line
                                  (stderr's last line) when it wrote no
                                  summary.json

No point's failure stops the sweep. A run that ends with a status of its
own (stalled 3, qp_error 4, deadlock 5, wall_time_limit 6, invariant_violated
8, interrupted 130 or 143: partial outputs, docs/reliability.md) is recorded from its summary
like any other; a run that writes no summary is recorded with the exit code's
meaning as its status (bad_input 2, internal_error 1, killed_by_SIGxxx when
a signal ended it, no_summary otherwise), its exit code and its error line,
and the other columns empty. The sweep exits 1 when some point wrote no
summary, 0 otherwise; 2, before running anything, when the scenario file
does not exist, when two --grid/--set paths overlap (the same path twice, or
`fabric.link` with `fabric.link.rate`: the later override would replace
the earlier's values, and the CSV would name values no run used; --seeds
counts as the path `seed`, which it overrides last), or when a --grid path
is named as one of the CSV's own columns (`--grid seed=...`: use --seeds).

The CSV is written as points finish: after each one the whole file is
rewritten under a temporary name and renamed, so OUT/summary.csv is a valid
CSV of the points finished so far at any moment (rows in grid order).

Resume: rerunning with the same --out skips the points already in
OUT/summary.csv. A point is identified by its run folder name (the `run`
column: its index in the grid, its values and its seed), so a rerun must
give the same scenario, --grid, --seeds, --set and --no-trace;
OUT/sweep.json records them and a rerun with others is refused (use another
--out, or --restart to discard the CSV). Points killed by a signal or
interrupted (status interrupted) are run again; --retry-failed also runs
again every point that wrote no summary.

Interrupting the sweep (SIGINT, e.g. ^C, or SIGTERM) starts no more points
and passes one SIGTERM on to the runs going on (each runs in a session of
its own, so a ^C reaches the sweep only), which stop and write partial
outputs (status interrupted, exit 143); their rows are recorded, the CSV
keeps every finished point, and the sweep exits 130 (143 for SIGTERM).
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
import signal
import subprocess
import sys
import threading

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


def path_parts(path):
    """'traffic[0].size' -> ['traffic', '0', 'size'] (an index as rdmasim reads it: [00] is [0])."""
    return [str(int(p)) if p.isdigit() else p for p in re.split(r"[.\[\]]+", path.strip()) if p]


def overlapping_paths(paths):
    """The indices (i, j), i < j, of the first two overrides of which one is,
    or lies inside, the other (`fabric.link` and `fabric.link.rate`), or None."""
    parts = [path_parts(p) for p in paths]
    for i in range(len(paths)):
        for j in range(i + 1, len(paths)):
            n = min(len(parts[i]), len(parts[j]))
            if parts[i][:n] == parts[j][:n]:
                return i, j
    return None


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


def failure_status(code):
    """The meaning of an exit code of a run that wrote no summary.json."""
    if code == 1:
        return "internal_error"
    if code == 2:
        return "bad_input"
    if code < 0:
        try:
            return "killed_by_" + signal.Signals(-code).name
        except ValueError:
            return f"killed_by_signal_{-code}"
    return "no_summary"


def wrote_no_summary(row):
    """A row recorded from the exit code alone (bad input, internal error, signal)."""
    status = row.get("status") or ""
    return status in ("internal_error", "bad_input", "no_summary") or status.startswith("killed_by_")


def error_line(stderr):
    """rdmasim's error is one line on stderr; keep the last non-empty one."""
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    return lines[-1][:500] if lines else ""


def write_csv(path, fields, rows):
    """The whole CSV under a temporary name, then renamed: valid at any moment."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, restval="", extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow(r)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


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
    ap.add_argument("--retry-failed", action="store_true",
                    help="on resume, run again the points that wrote no summary (bad input, internal error)")
    ap.add_argument("--restart", action="store_true",
                    help="discard OUT/summary.csv and run every point")
    args = ap.parse_args()

    if not pathlib.Path(args.binary).exists():
        raise SystemExit(f"sweep: {args.binary} not found (build first: tools/setup.sh)")
    if not pathlib.Path(args.scenario).is_file():
        print(f"sweep: {args.scenario}: no such scenario file", file=sys.stderr)
        sys.exit(2)
    grid = [parse_grid(g) for g in args.grid]
    seeds = [s for s in args.seeds.split(",") if s] or [None]
    # --seeds sets the path `seed` (rdmasim's --seed, applied after every --set).
    paths = [p for p, _ in grid] + [s.split("=", 1)[0] for s in args.set]
    if seeds != [None]:
        paths.append("seed")
    overlap = overlapping_paths(paths)
    if overlap:
        i, j = overlap
        a, b = paths[i], paths[j]
        if seeds != [None] and j == len(paths) - 1:
            what = f"--seeds and --grid/--set {a!r} overlap: --seeds would replace its values"
        else:
            what = f"--grid/--set {a!r} twice" if a == b else f"{a!r} and {b!r} overlap"
            what += ": a later override would replace the earlier one's values"
        print(f"sweep: {what} (expected each path once, none inside another)", file=sys.stderr)
        sys.exit(2)
    # A --grid path is a CSV column named by the path: none may be one of the
    # sweep's own columns (the CSV would have two of that name).
    own = set(["seed", "run"] + list(row_of({}).keys()) + ["exit_code", "error"])
    for p, _ in grid:
        if p in own or p.startswith("slowdown_p99_"):
            hint = " (sweep seeds with --seeds)" if p == "seed" else ""
            print(f"sweep: --grid {p!r}: its CSV column would have the name of the sweep's own "
                  f"{p!r} column{hint}", file=sys.stderr)
            sys.exit(2)
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    csv_path = out / "summary.csv"

    combos = []
    for values in itertools.product(*[vals for _, vals in grid]) if grid else [()]:
        assignment = list(zip([p for p, _ in grid], values))
        for seed in seeds:
            name = run_name(len(combos), assignment, seed if seed is not None else "default")
            combos.append((len(combos), name, assignment, seed))

    # What identifies this sweep's points; a resumed run must match it.
    settings = {"scenario": str(pathlib.Path(args.scenario).resolve()), "grid": args.grid,
                "seeds": args.seeds, "set": args.set, "no_trace": args.no_trace}
    settings_path = out / "sweep.json"
    done = {}  # run name -> its row, from an earlier run into this folder
    if csv_path.exists() and not args.restart:
        if settings_path.exists():
            before = json.loads(settings_path.read_text())
            if before != settings:
                changed = ", ".join(k for k in settings if before.get(k) != settings[k])
                raise SystemExit(f"sweep: {out}: holds a sweep with other settings ({changed}); "
                                 "use another --out, or --restart to discard its summary.csv")
        with open(csv_path, newline="") as f:
            reader = csv.DictReader(f)
            names = {name for _, name, _, _ in combos}
            for r in reader:
                if r.get("run") not in names:
                    continue
                status = r.get("status", "")
                if status.startswith("killed_by_") or status == "interrupted":
                    continue
                if args.retry_failed and wrote_no_summary(r):
                    continue
                done[r["run"]] = r
    tmp = settings_path.with_name(settings_path.name + ".tmp")
    tmp.write_text(json.dumps(settings, indent=1) + "\n")
    os.replace(tmp, settings_path)

    lock = threading.Lock()
    running = set()  # the rdmasim processes going on
    stopping = False  # set once the sweep is interrupted

    def run(combo):
        index, name, assignment, seed = combo
        cmd = [args.binary, "run", args.scenario, "--quiet", "--out", str(out / name)]
        if args.no_trace:
            cmd += ["--set", "output.trace=false"]
        for s in args.set:
            cmd += ["--set", s]
        for p, v in assignment:
            cmd += ["--set", f"{p}={v}"]
        if seed is not None:
            cmd += ["--seed", seed]
        with lock:
            if stopping:
                return None  # the sweep is being interrupted: start no more
            # In a session of its own: a ^C at the terminal reaches the sweep
            # only, which passes one SIGTERM on (a second signal would make
            # rdmasim exit at once, without its partial outputs).
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    text=True, errors="replace", start_new_session=True)
            running.add(proc)
        try:
            _, stderr = proc.communicate()
        finally:
            with lock:
                running.discard(proc)
        row = {p: plain(v) for p, v in assignment}
        row["seed"] = seed if seed is not None else ""
        row["run"] = name
        summary_path = out / name / "summary.json"
        # rdmasim removes an earlier run's outputs before it starts; with exit 2 it
        # starts nothing, so a summary.json left there is not this run's.
        # Codes of runs that write a summary (6, 130, 143: partial; 8: an
        # invariant violated, a bug, docs/reliability.md).
        if proc.returncode in (0, 3, 4, 5, 6, 8, 130, 143) and summary_path.exists():
            summary = json.loads(summary_path.read_text())
            row["seed"] = summary.get("scenario", {}).get("seed")
            row.update(row_of(summary))
            row.update(bucket_columns(summary))
            row["exit_code"] = proc.returncode
        else:
            row["status"] = failure_status(proc.returncode)
            row["exit_code"] = proc.returncode
            row["error"] = error_line(stderr)
        return row

    fields = [p for p, _ in grid] + ["seed", "run"] + list(row_of({}).keys())
    tail = ["exit_code", "error"]
    rows = {}  # index -> row
    for index, name, _, _ in combos:
        if name in done:
            rows[index] = done[name]
    def record(index, row):
        with lock:
            rows[index] = row
            buckets = [k for i in sorted(rows) for k in rows[i] if k.startswith("slowdown_p99_")]
            cols = fields + list(dict.fromkeys(buckets)) + tail
            write_csv(csv_path, cols, [rows[i] for i in sorted(rows)])

    todo = [c for c in combos if c[1] not in done]
    if done:
        print(f"sweep: {len(done)} of {len(combos)} points already in {csv_path}, skipped", file=sys.stderr)
    if not todo:
        record(*next(iter(rows.items())))  # the same rows, rewritten with today's columns
    class Terminated(Exception):
        pass

    def on_term(signum, frame):
        raise Terminated()

    signal.signal(signal.SIGTERM, on_term)
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs))
    futures = {}
    try:
        futures = {pool.submit(run, c): c[0] for c in todo}
        for fut in concurrent.futures.as_completed(futures):
            row = fut.result()
            record(futures[fut], row)
            if wrote_no_summary(row):
                print(f"sweep: {row['run']}: {row['status']}: {row['error']}", file=sys.stderr)
    except (KeyboardInterrupt, Terminated) as e:
        # Start no more (set first, so that no run starts after the signals
        # below are sent); the runs going on get one SIGTERM (they run in
        # sessions of their own, so nothing else reached them), stop at their
        # next safe point and write partial outputs. The CSV holds every
        # finished point.
        with lock:
            stopping = True
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        with lock:
            for proc in running:
                try:
                    proc.send_signal(signal.SIGTERM)
                except OSError:
                    pass
        pool.shutdown(wait=True, cancel_futures=True)
        for fut, index in futures.items():
            if fut.done() and not fut.cancelled() and fut.exception() is None and fut.result():
                if index not in rows:
                    record(index, fut.result())
        print(f"sweep: interrupted; {len(rows)} of {len(combos)} points in {csv_path} "
              "(rerun the same command to resume)", file=sys.stderr)
        sys.exit(143 if isinstance(e, Terminated) else 130)
    pool.shutdown()

    failed = sum(1 for r in rows.values() if wrote_no_summary(r))
    print(f"sweep: {len(rows)} runs -> {csv_path}" + (f", {failed} without a summary" if failed else ""),
          file=sys.stderr)
    if failed:
        sys.exit(1)


if __name__ == "__main__":
    main()
