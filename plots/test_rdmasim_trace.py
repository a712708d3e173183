#!/usr/bin/python3
"""Test of plots/rdmasim_trace.py and plots/figures.py against a real run.

    /usr/bin/python3 plots/test_rdmasim_trace.py build/sim/cli/rdmasim

Runs the binary on a small scenario (a star of 4 hosts, 3 flows) in a
temporary folder, loads trace.h5 and checks facts that do not depend on the
network model: row counts, decoded names, fct == finish - start, agreement
with summary.json, tolerance of absent and unknown tables, and that
figures.py writes non-empty PNGs. Exit code 0 when every check passes.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import h5py
import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import rdmasim_trace as rt  # noqa: E402

SCENARIO = {
    "name": "plots_test",
    "seed": 5,
    "fabric": {"link": {"rate": "100Gbps", "delay": "1us"}},
    "topology": {"kind": "star", "hosts": 4},
    "traffic": [
        {"kind": "flow", "name": "lone", "src": "h0", "dst": "h1", "size": "1MiB", "op": "write"},
        {"kind": "flow", "name": "side", "src": "h2", "dst": "h3", "size": "256KiB",
         "op": "send", "start": "5us"},
        {"kind": "flow", "src": "h1", "dst": "h0", "size": "64KiB", "start": "10us"},
    ],
}

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def run_sim(binary: str, tmp: Path) -> Path:
    scenario = tmp / "plots_test.json"
    scenario.write_text(json.dumps(SCENARIO, indent=2))
    out = tmp / "run"
    r = subprocess.run([binary, "run", str(scenario), "--out", str(out), "--quiet"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"rdmasim exited {r.returncode}: {r.stderr}"
    assert (out / "trace.h5").is_file() and (out / "summary.json").is_file()
    assert not (out / "trace.h5.tmp").exists()
    return out


def check_trace(tr: rt.Trace, summary: dict) -> None:
    # Root attributes, decoded.
    a = tr.attrs
    assert a["scenario_name"] == "plots_test" and isinstance(a["scenario_name"], str)
    assert a["status"] == "complete" == summary["status"]
    assert a["seed"] == 5 and isinstance(a["seed"], int)
    assert a["sim_time_ps"] == summary["sim_time_ps"] > 0
    assert a["scenario_hash"] == summary["scenario"]["hash"]
    assert a["rdmasim_version"] == summary["version"]
    assert a["git_revision"] == summary["git_revision"]
    # The resolved scenario, parsed, with defaults filled in.
    assert tr.scenario["name"] == "plots_test"
    assert tr.scenario["topology"]["hosts"] == 4
    assert len(tr.scenario["traffic"]) == 3
    assert "mtu" in tr.scenario["fabric"]

    # /nodes: the switch and 4 hosts.
    nodes = tr.nodes
    assert len(nodes) == 5, nodes
    assert all(isinstance(n, str) for n in nodes["name"])
    assert set(nodes["name"]) == {"sw0", "h0", "h1", "h2", "h3"}
    assert set(nodes["kind"]) == {"switch", "host"}
    hosts = nodes[nodes["is_host"]].sort_values("host_index")
    assert list(hosts["name"]) == ["h0", "h1", "h2", "h3"]
    assert list(hosts["host_index"]) == [0, 1, 2, 3]
    assert list(nodes.loc[~nodes["is_host"], "host_index"]) == [-1]

    # /flows: names decoded and joined, times consistent.
    flows = tr.flows.set_index("id")
    assert len(flows) == 3
    assert list(flows["name"]) == ["lone", "side", ""]
    assert list(flows["op"]) == ["write", "send", "write"]
    assert list(flows["src_name"]) == ["h0", "h2", "h1"]
    assert list(flows["dst_name"]) == ["h1", "h3", "h0"]
    assert list(flows["label"]) == ["lone", "side", "h1->h0 #2"]
    assert list(flows["bytes"]) == [1 << 20, 256 << 10, 64 << 10]
    assert flows["done"].dtype == bool and flows["done"].all()
    assert (flows["fct"] == flows["finish"] - flows["first_tx"]).all()
    assert (flows["first_tx"] >= flows["start"]).all() and (flows["fct"] > 0).all()
    assert list(flows["start"]) == [0, 5_000_000, 10_000_000]
    assert np.allclose(flows["fct_us"], flows["fct"] / 1e6, rtol=0, atol=1e-9)
    assert flows["finish"].max() <= a["sim_time_ps"]

    # Per flow, the trace says what summary.json says.
    gp = rt.goodput_table(tr)
    assert list(gp.index) == [0, 1, 2]
    for pf in summary["per_flow"]:
        f = flows.loc[pf["id"]]
        assert f["src_name"] == pf["src"] and f["dst_name"] == pf["dst"]
        assert f["bytes"] == pf["bytes"] and f["op"] == pf["op"]
        assert f["name"] == pf.get("name", "")
        assert f["start"] == pf["start_ps"]
        assert f["first_tx"] == pf["first_tx_ps"]
        assert f["finish"] == pf["finish_ps"] and f["fct"] == pf["fct_ps"]
        mine, theirs = gp.loc[pf["id"], "goodput_gbps"], pf["goodput_gbps"]
        assert math.isclose(mine, theirs, rel_tol=1e-9), (pf["id"], mine, theirs)
    assert summary["flows"]["completed"] == 3

    # /links: one row per direction of the 4 host links.
    links = tr.links
    assert len(links) == 8
    assert all(isinstance(n, str) for n in links["from_name"])
    pairs = set(zip(links["from_name"], links["to_name"]))
    assert pairs == {(h, "sw0") for h in ("h0", "h1", "h2", "h3")} | {
        ("sw0", h) for h in ("h0", "h1", "h2", "h3")}
    assert (links["rate_bps"] == 100_000_000_000).all()
    assert ((links["utilisation"] >= 0) & (links["utilisation"] <= 1)).all()
    assert np.allclose(links["utilisation"], links["busy_ps"] / a["sim_time_ps"])
    # Every frame serialised onto a link is a packet hop.
    assert int(links["frames"].sum()) == summary["packet_hops"]
    assert int(links["data_frames"].sum()) == summary["data_packet_hops"]
    # A sender's link carries at least the payload of the flows it sends.
    for host in ("h0", "h1", "h2"):
        sent = flows.loc[flows["src_name"] == host, "bytes"].sum()
        up = links[(links["from_name"] == host)]
        assert len(up) == 1 and up["payload_bytes"].iloc[0] >= sent, (host, sent)


def check_tolerance(src: Path, tmp: Path) -> Path:
    """A trace without /links and /meta, with a table from the future, still loads."""
    pruned = tmp / "pruned.h5"
    with h5py.File(src, "r") as fin, h5py.File(pruned, "w") as fout:
        for k, v in fin.attrs.items():
            fout.attrs[k] = v
        fin.copy("nodes", fout)
        fin.copy("flows", fout)
        dt = np.dtype([("node", "<u4"), ("time", "<i8"), ("what", h5py.string_dtype())])
        fout.create_dataset("future/things", data=np.array([(1, 5, "x"), (0, 7, "yz")], dtype=dt))
    tr = rt.load(pruned)
    assert tr.links is None and not tr.has("links") and tr.has("flows")
    assert tr.scenario == {}
    assert len(tr.flows) == 3 and tr.flows["src_name"].iloc[0] == "h0"
    future = tr.tables["future/things"]
    assert list(future["what"]) == ["x", "yz"] and list(future["time"]) == [5, 7]
    try:
        rt.link_utilisation(tr)
    except rt.TableMissing:
        pass
    else:
        raise AssertionError("link_utilisation without /links should raise TableMissing")
    rt.fct_cdf(tr)  # still drawable
    # A registered attribute that is unknown raises AttributeError as usual.
    try:
        tr.no_such_table  # noqa: B018
    except AttributeError:
        pass
    else:
        raise AssertionError("unknown attribute should raise AttributeError")
    return pruned


def check_figures(trace: Path, pruned: Path, tmp: Path) -> None:
    env = dict(os.environ, MPLCONFIGDIR=str(tmp / "mplconfig"))
    figures = [sys.executable, str(HERE / "figures.py")]
    out = tmp / "figures"
    r = subprocess.run(figures + [str(trace), "--out", str(out)],
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    for name in ("fct_cdf.png", "link_utilisation.png"):
        data = (out / name).read_bytes()
        assert len(data) > 1000 and data.startswith(PNG_MAGIC), name
    # Without /links the utilisation figure is skipped, not an error.
    out2 = tmp / "figures_pruned"
    r = subprocess.run(figures + [str(pruned), "--out", str(out2)],
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    assert (out2 / "fct_cdf.png").stat().st_size > 1000
    assert not (out2 / "link_utilisation.png").exists() and "skipping" in r.stderr


def main() -> int:
    if len(sys.argv) != 2:
        print(f"usage: {sys.argv[0]} RDMASIM_BINARY", file=sys.stderr)
        return 2
    binary = sys.argv[1]
    with tempfile.TemporaryDirectory(prefix="rdmasim_plots_") as d:
        tmp = Path(d)
        out = run_sim(binary, tmp)
        summary = json.loads((out / "summary.json").read_text())
        check_trace(rt.load(out / "trace.h5"), summary)
        pruned = check_tolerance(out / "trace.h5", tmp)
        check_figures(out / "trace.h5", pruned, tmp)
    print("plots trace module: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
