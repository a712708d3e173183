#!/usr/bin/env python3
"""Pinned results: every scenario in scenarios/ and bench/scenarios/ must give
the results recorded in test/pinned/fingerprints.json.

    check_fingerprints.py RDMASIM SOURCE_DIR            check (exit 1 on any difference)
    check_fingerprints.py RDMASIM SOURCE_DIR --update   rewrite the file from this binary
    check_fingerprints.py RDMASIM SOURCE_DIR --memory   also check the memory estimate

With --memory (the Release tree's ctest; not under the sanitizers, whose
memory is their own), each run's peak resident memory must be within x2 of
`rdmasim validate --estimate` for the same scenario and stop time
(test/cli/check_estimate.py, which also runs the scenarios to their ends).

What is pinned per scenario: the event fingerprint of summary.json, events,
packet-hops, data packet-hops, simulated time, the run's status, and every
flow's FCT (a digest of the list, its sum and count), plus the resolved
scenario's hash. Long scenarios run to a reduced stop time, recorded in the
file next to their results ("stop"), so CI stays short.

A change that moves a pinned value must say which and why in its commit
message; --update rewrites the file and prints what moved.
"""

import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

# Exit codes a run may end with and still have written its summary
# (docs/cli.md): complete or time limit, stalled, QP error, deadlock.
RUN_CODES = (0, 3, 4, 5)


def scenarios(src):
    paths = sorted((src / "scenarios").glob("*.json")) + sorted((src / "bench" / "scenarios").glob("*.json"))
    return {str(p.relative_to(src).with_suffix("")): p for p in paths}


def measure(rdmasim, path, stop, tmp):
    out = Path(tmp) / path.stem
    # --check: every example and bench scenario runs with the invariants
    # checked (docs/reliability.md); a violation exits 7 and fails the test.
    cmd = [rdmasim, "run", str(path), "--out", str(out), "--quiet", "--check"]
    if stop:
        cmd += ["--set", f'stop.time="{stop}"']
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    stderr = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.stderr.close()
    code = os.waitstatus_to_exitcode(status)
    if code not in RUN_CODES:
        raise RuntimeError(f"{' '.join(cmd)}: exit code {code}: {stderr.strip()}")
    measure.peak_rss = usage.ru_maxrss * 1024
    s = json.loads((out / "summary.json").read_text())
    fcts = [f.get("fct_ps") if f.get("done") else None for f in s["per_flow"]]
    digest = hashlib.sha256(json.dumps(fcts).encode()).hexdigest()[:16]
    return {
        "status": s["status"],
        "fingerprint": s["fingerprint"],
        "events": s["events"],
        "packet_hops": s["packet_hops"],
        "data_packet_hops": s["data_packet_hops"],
        "sim_time_ps": s["sim_time_ps"],
        "flows": len(fcts),
        "flows_done": sum(1 for f in fcts if f is not None),
        "fct_sum_ps": sum(f for f in fcts if f is not None),
        "fct_digest": digest,
        "scenario_hash": s["scenario"]["hash"],
    }


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    rdmasim, src = argv[1], Path(argv[2])
    update = "--update" in argv[3:]
    memory = "--memory" in argv[3:]
    if memory:
        sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "cli"))
        import check_estimate
    pinned_path = src / "test" / "pinned" / "fingerprints.json"
    pinned = json.loads(pinned_path.read_text()) if pinned_path.exists() else {}
    found = scenarios(src)
    failures = []
    result = {}
    with tempfile.TemporaryDirectory(prefix="rdmasim-pinned.") as tmp:
        for name, path in found.items():
            old = pinned.get(name)
            stop = old.get("stop") if old else None
            got = measure(rdmasim, path, stop, tmp)
            entry = ({"stop": stop} if stop else {}) | got
            result[name] = entry
            if memory:
                est = check_estimate.estimate(rdmasim, path, stop)
                f = check_estimate.compare(name, est, measure.peak_rss, 2.0)
                if f:
                    failures.append(f)
            if old is None:
                failures.append(f"{name}: not pinned (run with --update to pin it)")
                continue
            for key, value in got.items():
                if old.get(key) != value:
                    failures.append(f"{name}: {key} is {value!r}, pinned {old.get(key)!r}")
    for name in pinned:
        if name not in found:
            failures.append(f"{name}: pinned, but no such scenario (run with --update)")
    if update:
        pinned_path.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
        for f in failures:
            print(f"moved: {f}")
        print(f"wrote {pinned_path} ({len(result)} scenarios)")
        return 0
    for f in failures:
        print(f"FAIL pinned {f}", file=sys.stderr)
    if not failures:
        print(f"pinned: {len(result)} scenarios match")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
