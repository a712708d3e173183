#!/usr/bin/env python3
"""The memory estimate against the measured peak: for every scenario in
scenarios/ and bench/scenarios/, `rdmasim validate --estimate` must be
within a factor of the run's peak resident memory (the maximum resident set
that /usr/bin/time -v reports: os.wait4's ru_maxrss).

    check_estimate.py RDMASIM SOURCE_DIR [--full] [--factor 2] [NAME...]

Without --full the long scenarios run to the reduced stop times of
test/pinned/fingerprints.json (as the pinned fingerprint test does); with
--full every scenario runs to its end (minutes: the extensive test). NAME
keeps only scenarios whose name contains it. Prints one line per scenario;
exit 1 if any estimate is off by more than the factor. Standard library only.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path


# Runs to their ends that the estimate is known to miss by more than the
# factor, and why (docs/reliability.md#resource-bounds): reported, not failed.
KNOWN_FULL = {
    "bench/scenarios/b2_incast": "its trace records every PFC frame (about 44,000 in the first 70 ms "
                                 "of a 0.69 s run), which grow with the run's length and are not "
                                 "counted",
    "bench/scenarios/w4_websearch_dcqcn": "an over-estimate (x3.8): 30 % background load with DCQCN "
                                          "keeps queues short, while the packet pool is counted as "
                                          "if the active flows' bytes filled the buffers",
}


def estimate(rdmasim, path, stop):
    """The estimate's total in bytes, for the scenario as it would run."""
    cmd = [rdmasim, "validate", str(path), "--estimate", "--memory-limit", "none"]
    if stop:
        cmd += ["--set", f'stop.time="{stop}"']
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {proc.returncode}: {proc.stderr.strip()}")
    m = re.search(r"^\s+total\s+.*\((\d+) bytes\)$", proc.stdout, re.M)
    if not m:
        raise RuntimeError(f"{' '.join(cmd)}: no total in:\n{proc.stdout}")
    return int(m.group(1))


def peak_rss(cmd):
    """Run cmd; its exit code and peak resident bytes."""
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(p.pid, 0)
    p.stderr.close()
    return os.waitstatus_to_exitcode(status), usage.ru_maxrss * 1024


def compare(name, est, rss, factor):
    """A failure line, or None when est is within factor of rss."""
    ratio = est / rss
    print(f"{name:45s} estimate {est / 2**20:9.1f} MiB  measured {rss / 2**20:9.1f} MiB  x{ratio:.2f}")
    if ratio > factor or ratio < 1 / factor:
        return f"{name}: the memory estimate {est} B is x{ratio:.2f} the measured peak {rss} B (expected within x{factor})"
    return None


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(description="memory estimate against the measured peak")
    ap.add_argument("rdmasim")
    ap.add_argument("src", type=Path)
    ap.add_argument("names", nargs="*")
    ap.add_argument("--full", action="store_true")
    ap.add_argument("--factor", type=float, default=2.0)
    a = ap.parse_intermixed_args(argv[1:])
    rdmasim, src, full, factor, names = a.rdmasim, a.src, a.full, a.factor, a.names
    pinned = json.loads((src / "test" / "pinned" / "fingerprints.json").read_text())
    paths = sorted((src / "scenarios").glob("*.json")) + sorted((src / "bench" / "scenarios").glob("*.json"))
    failures = []
    with tempfile.TemporaryDirectory(prefix="rdmasim-estimate.") as tmp:
        for path in paths:
            name = str(path.relative_to(src).with_suffix(""))
            if names and not any(n in name for n in names):
                continue
            stop = None if full else pinned.get(name, {}).get("stop")
            est = estimate(rdmasim, path, stop)
            cmd = [rdmasim, "run", str(path), "--quiet", "--memory-limit", "none", "--out", f"{tmp}/{path.stem}"]
            if stop:
                cmd += ["--set", f'stop.time="{stop}"']
            code, rss = peak_rss(cmd)
            if code not in (0, 3, 4, 5):
                failures.append(f"{name}: run exited {code}")
                continue
            f = compare(name + (f" (stop {stop})" if stop else ""), est, rss, factor)
            if f and full and name in KNOWN_FULL:
                print(f"  known: {KNOWN_FULL[name]}")
            elif f:
                failures.append(f)
    for f in failures:
        print(f"FAIL {f}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
