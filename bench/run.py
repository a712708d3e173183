#!/usr/bin/env python3
"""Run the fixed rdmasim benchmark scenarios and report speed and memory as JSON.

    bench/run.py [--binary PATH] [--baseline PATH] [--repeat N]
                 [--scenario NAME ...] [--json OUT] [--threads N]
                 [--compete N [--compete-cpu CPU]] [--memory-latency PROBE|none]

Every scenario is run N times with the candidate binary and, with --baseline,
N times with the baseline binary, interleaved (A B A B ...) so that machine
noise hits both alike. One JSON document goes to stdout (and to --json OUT);
progress and warnings go to stderr. Python 3 standard library only.

See bench/README.md.
"""

import argparse
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
SCENARIO_DIR = BENCH_DIR / "scenarios"
DEFAULT_BINARY = REPO_ROOT / "build" / "sim" / "cli" / "rdmasim"
# The machine's dependent-load latency probe (bench/memory_latency.cpp).
DEFAULT_PROBE = REPO_ROOT / "build" / "bench" / "rdmasim_memory_latency"

# Counts the simulator reports; equal for every run of one binary.
COUNTS = ("events", "packet_hops", "data_packet_hops", "sim_time_ps")
# Per-second figures whose candidate/baseline ratio is reported (> 1: faster).
RATES = ("events_per_second", "packet_hops_per_second", "data_packet_hops_per_second")
# Costs whose candidate/baseline ratio is reported (< 1: cheaper).
COSTS = ("wall_seconds", "sim_wall_seconds", "cpu_seconds", "peak_rss_bytes")


class BenchError(Exception):
    """A problem that ends the benchmark with a message and exit code 1."""


# A competing process: an ordinary busy loop, as another user's job on a shared
# machine would be (not niced, not a real-time task).
BUSY_LOOP = "while True:\n    pass\n"


class Competitors:
    """Starts `count` busy processes before a run and stops them after it.

    Each is pinned to `cpu` (default: the last CPU this process may use, the
    "second core" of a 2-core machine) so that the simulator's own threads
    share that core with it; None leaves them unpinned."""

    def __init__(self, count, cpu):
        self.count = count
        self.cpu = cpu
        self.procs = []

    def __enter__(self):
        try:
            for _ in range(self.count):
                proc = subprocess.Popen([sys.executable, "-c", BUSY_LOOP],
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL)
                self.procs.append(proc)
                if self.cpu is not None:
                    os.sched_setaffinity(proc.pid, {self.cpu})
        except BaseException:
            self.__exit__()  # none left running if one could not be started or pinned
            raise
        return self

    def __exit__(self, *exc):
        for proc in self.procs:
            proc.kill()
        for proc in self.procs:
            proc.wait()
        self.procs = []
        return False


def list_scenarios():
    return sorted(SCENARIO_DIR.glob("*.json"))


def select_scenarios(names):
    available = list_scenarios()
    if not available:
        raise BenchError(f"no scenarios in {SCENARIO_DIR}")
    if not names:
        return available
    chosen = []
    for name in names:
        path = Path(name)
        if path.suffix == ".json" and path.is_file():
            chosen.append(path.resolve())
            continue
        exact = [p for p in available if p.stem == name]
        prefix = [p for p in available if p.stem.startswith(name)]
        match = exact or prefix
        if len(match) != 1:
            known = ", ".join(p.stem for p in available)
            what = "is ambiguous" if match else "matches no scenario"
            raise BenchError(f"--scenario {name!r} {what} (known: {known})")
        if match[0] not in chosen:
            chosen.append(match[0])
    return chosen


def check_binary(path, role):
    p = Path(path).expanduser()
    if not p.is_absolute():
        p = Path.cwd() / p
    if not p.is_file():
        hint = ""
        if role == "candidate" and p == DEFAULT_BINARY:
            hint = (f"\n  build it first: cmake -S {REPO_ROOT} -B {REPO_ROOT / 'build'} "
                    f"-DCMAKE_BUILD_TYPE=Release && cmake --build {REPO_ROOT / 'build'} "
                    "--target rdmasim\n  or point --binary at another build")
        raise BenchError(f"{role} binary not found: {p}{hint}")
    if not os.access(p, os.X_OK):
        raise BenchError(f"{role} binary is not executable: {p}")
    return p


def exit_code_of(status):
    if hasattr(os, "waitstatus_to_exitcode"):
        return os.waitstatus_to_exitcode(status)
    if os.WIFSIGNALED(status):
        return -os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


def run_once(binary, scenario, role, threads=1):
    """Runs one scenario once (on `threads` threads); returns the figures of that run."""
    with tempfile.TemporaryDirectory(prefix="rdmasim-bench-") as tmp:
        out_dir = Path(tmp) / "out"
        stderr_path = Path(tmp) / "stderr.txt"
        cmd = [str(binary), "run", str(scenario), "--out", str(out_dir), "--quiet"]
        if threads != 1:
            cmd += ["--threads", str(threads)]
        with open(stderr_path, "wb") as err:
            start = time.perf_counter()
            proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                                    stdout=subprocess.DEVNULL, stderr=err)
            # wait4 gives this child's own rusage: its peak RSS, not the
            # largest of all children so far as RUSAGE_CHILDREN would.
            _, status, usage = os.wait4(proc.pid, 0)
            wall = time.perf_counter() - start
        proc.returncode = exit_code_of(status)
        if proc.returncode != 0:
            tail = stderr_path.read_text(errors="replace").strip()[-2000:]
            raise BenchError(f"{role} run of {scenario.stem} failed with exit code "
                             f"{proc.returncode}: {' '.join(cmd)}"
                             + (f"\n{tail}" if tail else ""))
        summary_path = out_dir / "summary.json"
        try:
            with open(summary_path) as f:
                summary = json.load(f)
        except (OSError, ValueError) as e:
            raise BenchError(f"{role} run of {scenario.stem}: cannot read {summary_path}: {e}")
    if summary.get("status") != "complete":
        raise BenchError(f"{role} run of {scenario.stem} ended with status "
                         f"{summary.get('status')!r}, expected 'complete'")
    inner = summary.get("run", {})
    try:
        # The event loop alone: what per-second rates are measured against.
        # (Older binaries have no event_loop_seconds; fall back to their wall.)
        sim_wall = float(inner.get("event_loop_seconds", inner["wall_seconds"]))
        load_build = float(inner.get("load_seconds", 0.0)) + float(inner.get("build_seconds", 0.0))
        figures = {k: summary[k] for k in COUNTS}
    except (KeyError, TypeError, ValueError) as e:
        raise BenchError(f"{role} run of {scenario.stem}: summary.json lacks {e}")
    figures.update({
        "fingerprint": summary.get("fingerprint"),
        "version": summary.get("version"),
        "git_revision": summary.get("git_revision"),
        "wall_seconds": wall,
        "sim_wall_seconds": sim_wall,
        "build_seconds": load_build,
        # ru_maxrss is in KiB on Linux.
        "peak_rss_bytes": usage.ru_maxrss * 1024,
        "sim_peak_rss_bytes": inner.get("peak_rss_bytes"),
        "cpu_seconds": usage.ru_utime + usage.ru_stime,
        # Partitioned runs (--threads): phases and events per partition.
        "threads": inner.get("threads", 1),
        # What the network was split into (older binaries: the threads, or
        # one after a start again on one thread).
        "partitions": inner.get("partitions", 1 if inner.get("restarted_on_one_thread")
                                else inner.get("threads", 1)),
        "phases": inner.get("phases", 0),
        "partition_events": inner.get("partition_events", []),
    })
    return figures


def memory_latency(option):
    """The probe's JSON object (ns per dependent load by working-set size), or
    None when it is turned off or, by default, not built."""
    if option == "none":
        return None
    probe = DEFAULT_PROBE if option is None else Path(option).expanduser().resolve()
    if not probe.is_file():
        if option is None:
            print(f"bench/run.py: no memory-latency probe at {probe} (build the target "
                  "rdmasim_memory_latency); host.memory_latency is null", file=sys.stderr)
            return None
        raise BenchError(f"memory-latency probe not found: {probe}")
    try:
        proc = subprocess.run([str(probe)], stdin=subprocess.DEVNULL, capture_output=True,
                              text=True, check=False)
    except OSError as e:
        raise BenchError(f"cannot run the memory-latency probe {probe}: {e}")
    if proc.returncode != 0:
        raise BenchError(f"the memory-latency probe {probe} failed with exit code "
                         f"{proc.returncode}: {proc.stderr.strip()[-500:]}")
    try:
        return json.loads(proc.stdout)
    except ValueError as e:
        raise BenchError(f"the memory-latency probe {probe} printed no JSON object: {e}")


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def summarize(runs):
    """Medians over the repeats of one binary on one scenario."""
    first = runs[0]
    out = {k: first[k] for k in COUNTS}
    out["fingerprint"] = first["fingerprint"]
    for k in ("threads", "partitions", "phases", "partition_events"):
        out[k] = first[k]
    out["wall_seconds"] = median(r["wall_seconds"] for r in runs)
    out["sim_wall_seconds"] = median(r["sim_wall_seconds"] for r in runs)
    out["build_seconds"] = median(r["build_seconds"] for r in runs)
    out["cpu_seconds"] = median(r["cpu_seconds"] for r in runs)
    for rate, count in zip(RATES, ("events", "packet_hops", "data_packet_hops")):
        out[rate] = median(r[count] / r["sim_wall_seconds"] if r["sim_wall_seconds"] > 0
                           else None for r in runs)
    out["peak_rss_bytes"] = median(r["peak_rss_bytes"] for r in runs)
    out["sim_peak_rss_bytes"] = median(r["sim_peak_rss_bytes"] for r in runs)
    out["deterministic"] = all(
        r["fingerprint"] == first["fingerprint"] and all(r[k] == first[k] for k in COUNTS)
        for r in runs)
    for k in ("wall_seconds", "sim_wall_seconds", "build_seconds", "cpu_seconds"):
        out[k] = round(out[k], 4)
    for k in RATES:
        out[k] = round(out[k]) if out[k] is not None else None
    for k in ("peak_rss_bytes", "sim_peak_rss_bytes"):
        out[k] = round(out[k]) if out[k] is not None else None
    # Best run (noise only ever adds time): a second view next to the medians.
    best = min(runs, key=lambda r: r["sim_wall_seconds"])
    out["best"] = {"sim_wall_seconds": round(best["sim_wall_seconds"], 4)}
    for rate, count in zip(RATES, ("events", "packet_hops", "data_packet_hops")):
        out["best"][rate] = (round(best[count] / best["sim_wall_seconds"])
                             if best["sim_wall_seconds"] > 0 else None)
    out["runs"] = [{"wall_seconds": round(r["wall_seconds"], 4),
                    "sim_wall_seconds": round(r["sim_wall_seconds"], 4),
                    "peak_rss_bytes": r["peak_rss_bytes"]} for r in runs]
    return out


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return round(a / b, 4)


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="Run the fixed rdmasim benchmark scenarios; print JSON.")
    parser.add_argument("--binary", default=str(DEFAULT_BINARY),
                        help="candidate rdmasim binary (default: %(default)s)")
    parser.add_argument("--baseline", help="baseline rdmasim binary to compare against")
    parser.add_argument("--repeat", type=int, default=3,
                        help="runs per scenario and binary (default: 3)")
    parser.add_argument("--scenario", nargs="+", action="extend", metavar="NAME",
                        help="scenario name, unique prefix or .json path "
                             "(default: every file in bench/scenarios)")
    parser.add_argument("--json", metavar="OUT", help="also write the JSON document here")
    parser.add_argument("--threads", type=int, default=1,
                        help="threads the candidate runs on (rdmasim run --threads; default 1)")
    parser.add_argument("--compete", type=int, default=0, metavar="N",
                        help="run N competing busy processes during every run (default 0): "
                             "the shared-machine case")
    parser.add_argument("--compete-cpu", type=int, metavar="CPU",
                        help="the CPU the competing processes are pinned to (default: the "
                             "last CPU this process may use; -1: not pinned)")
    parser.add_argument("--memory-latency", metavar="PROBE",
                        help="the memory-latency probe to run once before the scenarios "
                             "(default: build/bench/rdmasim_memory_latency if built); "
                             "'none': do not measure")
    parser.add_argument("--baseline-threads", type=int, default=1,
                        help="threads the baseline runs on (default 1); with --baseline set "
                             "to the candidate binary this measures what threads give")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    if args.threads < 1 or args.baseline_threads < 1:
        parser.error("--threads and --baseline-threads must be at least 1")
    threads_of = {"candidate": args.threads, "baseline": args.baseline_threads}
    if args.compete < 0:
        parser.error("--compete must be at least 0")
    usable = sorted(os.sched_getaffinity(0))
    compete_cpu = usable[-1] if args.compete_cpu is None else args.compete_cpu
    if compete_cpu == -1:
        compete_cpu = None
    elif compete_cpu not in usable:
        parser.error(f"--compete-cpu {compete_cpu}: not a CPU this process may use {usable}")

    try:
        binaries = [("candidate", check_binary(args.binary, "candidate"))]
        if args.baseline:
            binaries.append(("baseline", check_binary(args.baseline, "baseline")))
        scenarios = select_scenarios(args.scenario)
        latency = memory_latency(args.memory_latency)

        doc = {
            "tool": "rdmasim bench/run.py",
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "host": {"machine": platform.machine(), "system": platform.system(),
                     "release": platform.release(), "cpus": os.cpu_count(),
                     "python": platform.python_version(),
                     # Scale-up figures (W5) depend on it: docs/performance.md.
                     "memory_latency": latency},
            "repeat": args.repeat,
            "interleaved": len(binaries) > 1,
            "binaries": {role: {"path": str(path), "threads": threads_of[role]}
                         for role, path in binaries},
            "competing_processes": {"count": args.compete,
                                    "cpu": compete_cpu if args.compete else None},
            "notes": ("wall_seconds and peak_rss_bytes: the whole process, measured "
                      "by this script (medians). sim_wall_seconds, sim_peak_rss_bytes and "
                      "the *_per_second figures: the simulation loop alone, as the binary "
                      "reports in summary.json run{} (medians). best: the fastest run. "
                      "cpu_seconds: user+system time of the process. ratios are "
                      "candidate/baseline: above 1 is faster for *_per_second, "
                      "below 1 is cheaper for wall and memory."),
            "scenarios": [],
        }

        for scenario in scenarios:
            with open(scenario) as f:
                name = json.load(f).get("name", scenario.stem)
            runs = {role: [] for role, _ in binaries}
            for i in range(args.repeat):
                for role, path in binaries:  # A B A B ...
                    with Competitors(args.compete, compete_cpu):
                        r = run_once(path, scenario, role, threads_of[role])
                    runs[role].append(r)
                    doc["binaries"][role].setdefault("version", r["version"])
                    doc["binaries"][role].setdefault("git_revision", r["git_revision"])
                    print(f"{name}: {role} {i + 1}/{args.repeat}: "
                          f"{r['wall_seconds']:.3f} s wall, "
                          f"{r['packet_hops'] / r['sim_wall_seconds'] / 1e6:.2f} M packet-hops/s, "
                          f"{r['peak_rss_bytes'] / 2**20:.1f} MiB",
                          file=sys.stderr, flush=True)

            entry = {"name": name, "file": os.path.relpath(scenario, REPO_ROOT)}
            for role, _ in binaries:
                entry[role] = summarize(runs[role])
            if args.baseline:
                cand, base = entry["candidate"], entry["baseline"]
                entry["ratios"] = {k: ratio(cand[k], base[k]) for k in RATES + COSTS}
                entry["ratios_best"] = {k: ratio(cand["best"][k], base["best"][k])
                                        for k in RATES + ("sim_wall_seconds",)}
                # The fingerprint depends on the partitions (one chain per
                # partition: threads, or partitions taking turns on one);
                # across partition counts the counts must agree.
                entry["same_results"] = all(
                    all(r[k] == base[k] for k in COUNTS)
                    and (r["partitions"] != base["partitions"]
                         or r["fingerprint"] == base["fingerprint"])
                    for r in runs["candidate"] + runs["baseline"])
                if not entry["same_results"]:
                    print(f"WARNING: {name}: candidate and baseline differ in events or "
                          f"fingerprint (candidate {cand['events']} events, "
                          f"{cand['fingerprint']}; baseline {base['events']} events, "
                          f"{base['fingerprint']})", file=sys.stderr)
            for role, _ in binaries:
                if not entry[role]["deterministic"]:
                    print(f"WARNING: {name}: {role} gave different results across repeats",
                          file=sys.stderr)
            doc["scenarios"].append(entry)

        if args.baseline:
            doc["same_results"] = all(s["same_results"] for s in doc["scenarios"])
    except BenchError as e:
        print(f"bench/run.py: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("bench/run.py: interrupted", file=sys.stderr)
        return 130

    text = json.dumps(doc, indent=2) + "\n"
    sys.stdout.write(text)
    if args.json:
        out = Path(args.json)
        if out.parent and not out.parent.exists():
            out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_name(out.name + ".tmp")
        tmp.write_text(text)
        shutil.move(str(tmp), str(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
