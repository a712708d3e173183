#!/usr/bin/python3
"""Test of plots/rdmasim_trace.py and plots/figures.py against a real run.

    /usr/bin/python3 plots/test_rdmasim_trace.py build/sim/cli/rdmasim

Runs the binary on two small scenarios in a temporary folder and checks
facts that do not depend on the network model:

- a star of 4 hosts with 3 flows: row counts, decoded names,
  fct == finish - first_tx, agreement with summary.json, flow paths;
- a lossless incast (4 senders x 4 MiB into one 100G port, Trident II
  buffer, queues sampled every 5us, links every 20us): PFC pause frames
  carry the configured quanta, derived paused intervals lie within the run,
  per-interval link throughput stays within the link's rate (+1%) and sums to
  the /links totals, queue samples are sane;
- a link that sends at 0 and again after idle ticks (two 4 KiB WRITEs,
  links every 1 us): the baseline rows at 0, and the row that the frame
  counted at 0 is folded into has its interval from 0 (exact rates);

the ideal FCT and slowdown of /flows against summary.json's per_flow and
slowdown_by_size (on both runs);

- a DCQCN incast (4 x 1 MiB, ECN at 20 KB, samples every 5 us, a window
  from 20 us): /cc_samples rows of the sending QPs only, in time order, at
  least 5 us apart but for each QP's first and last, RC <= RT <= line rate,
  a QP for every flow that cut; CNP counts and window bytes of /flows
  against summary.json, the window's queue mean and peak, its CNPs and
  cuts, cc_by_item; the rate figure draws RC and RT per sending QP;

- the same 5:1 incast on RoCE v2 and on InfiniBand (queues sampled): the
  transport table's frames, completions and PortXmitWait against each
  summary.json, /vl_buffers within the credited VL buffer, the comparison
  and VL buffer figures;

then tolerance of absent, empty and unknown tables, and that figures.py
writes non-empty PNGs; and an nccl-tests sweep (4 hosts, 3 sizes): its rows
in /collective_sweep and summary.json agree and follow nccl-tests' busbw,
and the busbw and per-rank timeline figures draw them. Exit code 0 when every check passes.
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

# Lossless (PFC on priority 3, the default) incast: 4 x 4 MiB into h0's port.
INCAST = {
    "name": "plots_incast",
    "seed": 3,
    "fabric": {"link": {"rate": "100Gbps", "delay": "1us"}, "switch": {"preset": "trident2"}},
    "topology": {"kind": "star", "hosts": 5},
    "traffic": [{"kind": "incast", "senders": ["h1", "h2", "h3", "h4"], "dst": "h0",
                 "size": "4MiB"}],
    "output": {"queue_interval": "5us", "link_interval": "20us"},
}

# DCQCN: a 4:1 incast marked at 20 KB, rates sampled every 5 us.
DCQCN = {
    "name": "plots_dcqcn",
    "seed": 2,
    "fabric": {"link": {"rate": "100Gbps", "delay": "1us"},
               "switch": {"ecn": {"enabled": True, "kmin": "20KB", "kmax": "20KB", "pmax": 1}},
               "cc": {"algorithm": "dcqcn", "dcqcn": {"rpg_time_reset": "20us"}}},
    "topology": {"kind": "star", "hosts": 5},
    "traffic": [{"kind": "incast", "senders": ["h1", "h2", "h3", "h4"], "dst": "h0",
                 "size": "1MiB"}],
    "output": {"cc_interval": "5us", "window": {"start": "20us"}},
}

# The same fabric on two transports: a 5:1 incast of 1 MiB each on two
# leaves under one spine (so that on IB a switch port, the spine's to the
# receiver's leaf, waits for credits), queues (and on IB the VL buffers)
# sampled every 5 us; run as written (RoCE v2) and on InfiniBand.
TRANSPORTS = {
    "name": "plots_transports",
    "seed": 4,
    "fabric": {"mtu": 4096, "link": {"rate": "100Gbps", "delay": "1us"}},
    "topology": {"kind": "fat_tree", "leaves": 2, "spines": 1, "hosts_per_leaf": 3},
    "traffic": [{"kind": "incast", "senders": "all", "dst": 0, "size": "1MiB"}],
    "output": {"queue_interval": "5us"},
}

# A link direction that sends at 0 and again after idle ticks: two one-packet
# WRITEs (4 KiB, one 4194-byte frame each) from h0, at 0 and 4.5 us, links
# sampled every 1 us.
IDLE_GAP = {
    "name": "plots_idle_gap",
    "seed": 1,
    "fabric": {"link": {"rate": "100Gbps", "delay": "1us"}},
    "topology": {"kind": "star", "hosts": 2},
    "traffic": [
        {"kind": "flow", "src": "h0", "dst": "h1", "size": "4KiB", "op": "write"},
        {"kind": "flow", "src": "h0", "dst": "h1", "size": "4KiB", "op": "write",
         "start": "4.5us"},
    ],
    "output": {"link_interval": "1us"},
}

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
BASE_FIGURES = ("fct_cdf.png", "slowdown_by_size.png", "link_utilisation.png")
NEW_FIGURES = ("queue_depth.png", "pfc_timeline.png", "link_throughput.png")
CC_FIGURES = ("cc_rates.png",)
COLLECTIVE_FIGURES = ("collective_busbw.png", "collective_timeline.png")

# An nccl-tests sweep (docs/collectives.md#sweeps): a ring AllReduce over the
# 4 hosts of a star, 3 sizes, 1 warmup and 2 timed iterations each.
SWEEP = {
    "name": "plots_sweep",
    "fabric": {"link": {"rate": "100Gbps", "delay": "1us"}},
    "topology": {"kind": "star", "hosts": 4},
    "traffic": [{"kind": "collective", "name": "ar", "op": "all_reduce",
                 "sweep": {"min_bytes": "16KiB", "max_bytes": "256KiB", "step_factor": 4,
                           "iters": 2, "warmup_iters": 1}}],
}


def run_sim(binary: str, tmp: Path, scenario_json: dict = SCENARIO, name: str = "run") -> Path:
    scenario = tmp / f"{name}.json"
    scenario.write_text(json.dumps(scenario_json, indent=2))
    out = tmp / name
    r = subprocess.run([binary, "run", str(scenario), "--out", str(out), "--quiet"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"rdmasim exited {r.returncode}: {r.stderr}"
    assert (out / "trace.h5").is_file() and (out / "summary.json").is_file()
    assert not (out / "trace.h5.tmp").exists()
    return out


def check_trace(tr: rt.Trace, summary: dict) -> None:
    # Root attributes, decoded.
    a = tr.attrs
    assert a["format_version"] == rt.FORMAT_VERSION and isinstance(a["format_version"], int)
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
    assert set(nodes["tier"]) <= {"host", "leaf", "spine", "core", "nvswitch", "nic_switch",
                                  "switch"}
    assert list(hosts["tier"]) == ["host"] * 4
    assert all(isinstance(g, str) for g in nodes["group"])

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
    assert list(flows["error"]) == [""] * 3 and not flows["failed"].any()
    # Flow paths: joined into one string per flow, on /flows too.
    assert list(flows["path"]) == ["h0 -> sw0 -> h1", "h2 -> sw0 -> h3", "h1 -> sw0 -> h0"]
    assert list(flows["hops"]) == [2, 2, 2]
    paths = tr.flow_paths
    assert list(paths["hop"]) == [0, 1] * 3 and list(paths["flow"]) == [0, 0, 1, 1, 2, 2]
    assert (paths["from_name"].iloc[0], paths["to_name"].iloc[0]) == ("h0", "sw0")

    # Per flow, the trace says what summary.json says.
    gp = rt.goodput_table(tr)
    assert list(gp.index) == [0, 1, 2]
    rtx = rt.retransmissions_table(tr)
    assert len(rtx) == len(flows[(flows["retransmissions"] > 0) | (flows["error"] != "")])
    assert list(rt.retransmissions_table(tr, all_flows=True).index) == [0, 1, 2]
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
        assert f["retransmissions"] == pf["retransmissions"]
    assert summary["flows"]["completed"] == 3

    # /links: one row per direction of the 4 host links.
    links = tr.links
    assert len(links) == 8
    assert all(isinstance(n, str) for n in links["from_name"])
    pairs = set(zip(links["from_name"], links["to_name"]))
    assert pairs == {(h, "sw0") for h in ("h0", "h1", "h2", "h3")} | {
        ("sw0", h) for h in ("h0", "h1", "h2", "h3")}
    assert (links["rate_bps"] == 100_000_000_000).all()
    assert list(links["link"]) == [k // 2 for k in range(8)] and not links["failed"].any()
    # Rows 2k and 2k+1 are the two directions of one cable.
    for k in range(4):
        fwd, back = links.iloc[2 * k], links.iloc[2 * k + 1]
        assert (fwd["from_node"], fwd["to_node"]) == (back["to_node"], back["from_node"])
        assert (fwd["from_port"], fwd["to_port"]) == (back["to_port"], back["from_port"])
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


def check_incast(tr: rt.Trace, summary: dict) -> None:
    """The PFC, queue and link-sample tables of a lossless incast."""
    a = tr.attrs
    end = a["sim_time_ps"]
    assert a["status"] == summary["status"] and end == summary["sim_time_ps"] > 0
    switch = int(tr.nodes.loc[~tr.nodes["is_host"], "id"].iloc[0])
    flows = tr.flows
    assert list(flows["path"]) == [f"h{i} -> sw0 -> h0" for i in (1, 2, 3, 4)]

    # /pfc: only switches record; sent pauses carry the configured quanta
    # (65535, the default), resumes 0.
    pfc = tr.pfc
    assert len(pfc) > 0, "a lossless 4:1 incast should pause its senders"
    assert (pfc["node"] == switch).all() and (pfc["node_name"] == "sw0").all()
    assert pfc["time"].is_monotonic_increasing and (pfc["time"] <= end).all()
    sent_pauses = pfc[pfc["sent"] & pfc["pause"]]
    assert len(sent_pauses) > 0 and (sent_pauses["quanta"] == 65535).all()
    assert (pfc.loc[~pfc["pause"], "quanta"] == 0).all()
    assert int(pfc["sent"].sum()) == summary["pfc_frames_sent"]  # every frame, one priority
    assert set(pfc["queue_label"]) <= {f"sw0:{p}/p3" for p in range(5)}

    # Paused intervals (the figure's helper): within the run, ordered, disjoint.
    pauses = rt.pfc_pauses(tr)
    assert len(pauses) > 0
    assert ((pauses["start"] >= 0) & (pauses["start"] <= pauses["end"])
            & (pauses["end"] <= end)).all(), pauses
    assert set(pauses["ended_by"]) <= {"resume", "expiry", "end_of_run"}
    quanta_ps = 65535 * 512 * 10**12 // 100_000_000_000
    for _, lane in pauses.groupby(["node", "port", "priority", "sent"]):
        assert (lane["start"].iloc[1:].to_numpy() >= lane["end"].iloc[:-1].to_numpy()).all()
        expired = lane[lane["ended_by"] == "expiry"]
        assert (expired["end"] - expired["start"] >= quanta_ps).all()
    assert pauses["frames"].sum() == len(sent_pauses) + int((pfc["pause"] & ~pfc["sent"]).sum())

    # /queues: sparse samples on the 5us grid, never negative, never above
    # the queue's peak in /queue_totals.
    queues = tr.queues
    assert len(queues) > 0
    assert (queues["bytes"] >= 0).all()
    assert (queues["time"] % 5_000_000 == 0).all() and (queues["time"] <= end).all()
    totals = tr.queue_totals.set_index(["node", "port", "priority"])
    peaks = queues.groupby(["node", "port", "priority"])["bytes"].max()
    assert (peaks <= totals.loc[peaks.index, "peak_bytes"]).all()
    assert int(totals["enqueued"].sum()) > 0 and int(totals["drops"].sum()) == 0

    # /link_samples: per-interval throughput within the link rate (+1%: frames
    # are counted whole when their serialisation starts), and the intervals of
    # each direction add up to its /links totals.
    links = tr.links
    iv = rt.link_intervals(tr)
    samples = tr.link_samples
    # Samples fall on the 20 us grid, plus one final sample at the end of the run.
    on_grid = (samples["time"] % 20_000_000 == 0) | (samples["time"] == end)
    assert len(samples) > 0 and on_grid.all()
    assert set(samples["row"]) == set(range(len(links)))
    assert ((iv["time"] - iv["interval_start"]) <= 20_000_000).all()
    assert (iv["interval_start"] >= 0).all() and (iv["time"] <= end).all()
    assert iv["wire_gbps"].notna().all() and iv["payload_gbps"].notna().all()
    rate_gbps = iv["rate_bps"].astype(float) / 1e9
    assert (iv["wire_gbps"] <= rate_gbps * 1.01).all(), iv["utilisation"].max()
    assert (iv["payload_gbps"] <= iv["wire_gbps"]).all()
    assert ((iv[["d_frames", "d_wire_bytes", "d_payload_bytes"]]) >= 0).all().all()
    if a["status"] == "complete":
        sums = iv.groupby("row")[["d_frames", "d_wire_bytes", "d_payload_bytes"]].sum()
        sums = sums.reindex(range(len(links)), fill_value=0)
        for col in ("frames", "wire_bytes", "payload_bytes"):
            assert (sums[f"d_{col}"].to_numpy() == links[col].to_numpy()).all(), col
    # The data link into h0 was the bottleneck: it carried every payload byte.
    into_h0 = links[(links["from_node"] == switch) & (links["to_name"] == "h0")]
    assert int(into_h0["payload_bytes"].iloc[0]) == 4 * (4 << 20)

    assert len(rt.drops_table(tr)) == len(tr.drops.groupby(["node", "port", "priority", "reason"]))


def check_idle_gap(tr: rt.Trace) -> None:
    """/link_samples has a baseline row at 0 for every direction; h0's frame
    counted at 0 is folded into its next row (5 us), whose interval starts at
    0, not at the tick before it (4 us, which would show both frames in 1 us:
    67.1 Gb/s that never happened). The frames into h1 (at 1.34 and 5.84 us)
    each get their own tick's interval."""
    samples = tr.link_samples
    assert set(samples.loc[samples["time"] == 0, "row"]) == set(range(len(tr.links)))
    iv = rt.link_intervals(tr).set_index(["label", "time"])
    frame = 4194
    zero = iv.loc[("h0->sw0", 0)]
    assert zero["wire_bytes"] == frame and zero["d_wire_bytes"] == 0, zero
    r = iv.loc[("h0->sw0", 5_000_000)]
    assert r["interval_start"] == 0 and r["d_wire_bytes"] == 2 * frame, r
    assert math.isclose(r["wire_gbps"], 2 * frame * 8 / 5e3, rel_tol=1e-12), r["wire_gbps"]
    assert math.isclose(r["wire_gbps"], 13.4208, rel_tol=1e-12), r["wire_gbps"]
    for t, start in ((2_000_000, 1_000_000), (6_000_000, 5_000_000)):
        r = iv.loc[("sw0->h1", t)]
        assert r["interval_start"] == start and r["d_wire_bytes"] == frame, r
        assert math.isclose(r["wire_gbps"], 33.552, rel_tol=1e-12), r["wire_gbps"]


def check_slowdown(tr: rt.Trace, summary: dict) -> None:
    """/flows' ideal FCT and slowdown agree with summary.json, and so do the
    per-bucket percentiles of slowdown_table with slowdown_by_size."""
    flows = tr.flows.set_index("id")
    for f in summary["per_flow"]:
        row = flows.loc[f["id"]]
        assert int(row["ideal_fct"]) == f["ideal_fct_ps"] > 0
        assert math.isclose(row["slowdown"], f["slowdown"], rel_tol=1e-12)
        assert math.isclose(row["slowdown"], row["fct"] / row["ideal_fct"], rel_tol=1e-12)
        assert row["slowdown"] >= 1.0  # alone is the fastest a flow can be
    t = rt.slowdown_table(tr)
    assert list(t.index) == [b["bucket"] for b in summary["slowdown_by_size"]]
    assert list(t.index) == ["<10KB", "10KB-100KB", "100KB-1MB", ">=1MB"]
    for b in summary["slowdown_by_size"]:
        row = t.loc[b["bucket"]]
        assert row["count"] == b["count"], b
        if b["count"]:
            for p in ("p50", "p95", "p99"):
                assert math.isclose(row[p], b[p], rel_tol=1e-12), (b, p)
    assert t["count"].sum() == summary["flows"]["slowdown"]["count"]


def check_cc(tr: rt.Trace, summary: dict) -> None:
    """/cc_samples of a DCQCN incast, the flows' CNP counts and the window."""
    a = tr.attrs
    end = a["sim_time_ps"]
    interval = 5_000_000
    cc = tr.cc_samples
    assert cc is not None and len(cc) > 0
    assert tr.table_attrs["cc_samples"]["interval_ps"] == interval
    assert cc["time"].is_monotonic_increasing and (cc["time"] <= end).all()
    flows = tr.flows.set_index("id")
    # WRITEs: only the requesters' QPs (the senders) ever change.
    assert cc["sender"].all()
    assert (cc["node"].to_numpy() == flows.loc[cc["flow"], "src"].to_numpy()).all()
    assert set(cc["node_name"]) <= {"h1", "h2", "h3", "h4"}
    assert (cc["rate_gbps"] > 0).all() and (cc["rate_gbps"] <= cc["target_gbps"] + 1e-9).all()
    assert (cc["target_gbps"] <= 100.0).all()
    assert ((cc["alpha"] > 0) & (cc["alpha"] <= 1)).all() and (cc["window"] == -1).all()
    assert (cc["changes"] >= 1).all()
    for _, q in cc.groupby(["flow", "part", "node", "qpn"]):
        gaps = np.diff(q["time"].to_numpy())
        assert (gaps >= 0).all()
        inner = gaps[1:-1]  # the first row and the next, the last and the one before: exempt
        assert (inner >= interval).all(), inner.min()
        grid = q["time"].to_numpy()[1:-1]
        assert (grid % interval == 0).all()  # rows between are on the interval grid
    per_flow = {f["id"]: f for f in summary["per_flow"]}
    cut = {i for i, f in per_flow.items() if f["rate_cuts"] > 0}
    assert cut == set(cc["flow"]) == {0, 1, 2, 3}, (cut, set(cc["flow"]))
    # Counts in /flows and summary.json agree, and add up to the totals.
    for col in ("cnps_received", "cnps_sent", "ecn_marked", "ecn_echo_acks", "rate_cuts",
                "window_bytes"):
        assert [int(flows.loc[i, col]) for i in per_flow] == [per_flow[i][col] for i in per_flow], col
    totals = summary["cc"]
    assert totals["cnps_sent"] == sum(f["cnps_sent"] for f in per_flow.values()) > 0
    assert totals["cnps_received"] == totals["cnps_sent"]
    assert totals["rate_cuts"] == sum(f["rate_cuts"] for f in per_flow.values())
    # The window: from 20 us to the end of the run.
    assert a["window_start_ps"] == 20_000_000 and a["window_end_ps"] == end
    w = summary["window"]
    assert w["given"] and w["start_ps"] == 20_000_000 and w["end_ps"] == end
    assert w["payload_bytes"] == int(flows["window_bytes"].sum())
    assert 0 < w["payload_bytes"] < int(flows["bytes"].sum())
    qt = tr.queue_totals
    assert (qt["window_mean_bytes"] >= 0).all()
    assert math.isclose(w["queues"]["max_mean_bytes"], qt["window_mean_bytes"].max())
    assert (qt["window_peak_bytes"] <= qt["peak_bytes"]).all()
    assert (qt["window_peak_bytes"] >= qt["window_mean_bytes"]).all()
    assert w["queues"]["max_peak_bytes"] == int(qt["window_peak_bytes"].max()) > 0
    assert 0 < w["cnps_sent"] < totals["cnps_sent"] and w["rate_cuts"] <= totals["rate_cuts"]
    (item,) = summary["cc_by_item"]
    assert item["cnps_sent"] == totals["cnps_sent"] and item["rate_cuts"] == totals["rate_cuts"]
    links = tr.links
    assert (links["window_wire_bytes"] <= links["wire_bytes"]).all()
    assert (links["window_busy_ps"] <= links["busy_ps"]).all()
    # The figure: RC and RT for each of the four sending QPs.
    ax = rt.cc_rates(tr)
    assert len(ax.lines) == 8, len(ax.lines)
    assert len(rt.cc_rates(tr, target=False, top=2).lines) == 2


def check_empty_tables(src: Path, tmp: Path) -> None:
    """Present but empty /pfc, /drops, /queues, /link_samples, and a /deadlock
    with its attribute: figures say so instead of failing."""
    empty = tmp / "empty_tables.h5"
    with h5py.File(src, "r") as fin, h5py.File(empty, "w") as fout:
        for k, v in fin.attrs.items():
            fout.attrs[k] = v
        for name in ("meta", "nodes", "flows", "links"):
            fin.copy(name, fout)
        for name in ("pfc", "drops", "queues", "link_samples", "queue_totals", "flow_paths"):
            fout.create_dataset(name, shape=(0,), dtype=fin[name].dtype)
        dt = np.dtype([("node", "<u4"), ("port", "<u4"), ("priority", "u1")])
        ds = fout.create_dataset("deadlock", data=np.array([(0, 1, 3), (0, 2, 3)], dtype=dt))
        ds.attrs["detected_at_ps"] = np.int64(1_500_000)
    tr = rt.load(empty)
    for name in ("pfc", "drops", "queues", "link_samples", "queue_totals", "flow_paths"):
        assert tr.has(name) and len(tr.tables[name]) == 0, name
    assert (tr.flows["path"] == "").all() and (tr.flows["hops"] == 0).all()
    assert len(rt.pfc_pauses(tr)) == 0 and len(rt.drops_table(tr)) == 0
    assert list(rt.drops_table(tr).columns)[:4] == ["node", "port", "priority", "reason"]
    for draw in (rt.queue_depth, rt.pfc_timeline, rt.link_throughput):
        draw(tr)
    dl = tr.deadlock
    assert tr.table_attrs["deadlock"]["detected_at_ps"] == 1_500_000
    assert list(dl["queue_label"]) == ["sw0:1/p3", "sw0:2/p3"]
    assert list(dl["waits_on"]) == ["sw0:2/p3", "sw0:1/p3"]
    assert list(dl["peer_name"]) == ["h1", "h2"] and (dl["detected_at_us"] == 1.5).all()


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
    for needs_missing in (rt.link_utilisation, rt.queue_depth, rt.pfc_timeline,
                          rt.link_throughput, rt.drops_table, rt.pfc_pauses, rt.cc_rates):
        try:
            needs_missing(tr)
        except rt.TableMissing:
            pass
        else:
            raise AssertionError(f"{needs_missing.__name__} without its table: no TableMissing")
    assert tr.pfc is None and tr.queues is None and tr.deadlock is None and tr.cc_samples is None
    rt.fct_cdf(tr)  # still drawable
    # A registered attribute that is unknown raises AttributeError as usual.
    try:
        tr.no_such_table  # noqa: B018
    except AttributeError:
        pass
    else:
        raise AssertionError("unknown attribute should raise AttributeError")
    return pruned


def check_collective(out: Path, tmp: Path) -> None:
    """The sweep's rows in the trace and in summary.json agree, busbw is
    nccl-tests' algbw x 2(n-1)/n, and both figures draw from them."""
    tr = rt.load(out / "trace.h5")
    summary = out / "summary.json"
    t = rt.sweep_table(tr)
    js = rt.sweep_table(summary)
    assert list(t["size_bytes"]) == [16384, 65536, 262144], list(t["size_bytes"])
    assert list(js["size_bytes"]) == list(t["size_bytes"])
    for col in ("count", "time_us", "algbw_gbps", "busbw_gbps"):
        assert list(t[col]) == list(js[col]), col  # the same doubles, both ways
    n = 4
    for _, r in t.iterrows():
        assert r["done"] and r["count"] == r["size_bytes"] // 4
        assert math.isclose(r["algbw_gbps"], r["size_bytes"] / (r["time_us"] * 1e3), rel_tol=1e-12)
        assert math.isclose(r["busbw_gbps"], r["algbw_gbps"] * 2 * (n - 1) / n, rel_tol=1e-12)
    steps = tr.require("collective_steps")
    per_iter = n * 2 * (n - 1)  # ranks x ring AllReduce steps
    assert len(steps) == 3 * 3 * per_iter, len(steps)
    assert (steps["end_us"] >= steps["start_us"]).all()
    ax = rt.collective_timeline(tr)
    assert len(ax.patches) == per_iter, len(ax.patches)
    assert "iteration 8" in ax.get_title(), ax.get_title()
    ax = rt.busbw_by_size(summary)
    assert ax.get_xscale() == "log" and len(ax.lines) == 1
    assert list(ax.lines[0].get_ydata()) == list(t["busbw_gbps"])
    env = dict(os.environ, MPLCONFIGDIR=str(tmp / "mplconfig"))
    figs = tmp / "figures_sweep"
    r = subprocess.run([sys.executable, str(HERE / "figures.py"), str(out / "trace.h5"), "--out",
                        str(figs)], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    for name in COLLECTIVE_FIGURES:
        data = (figs / name).read_bytes()
        assert len(data) > 1000 and data.startswith(PNG_MAGIC), name


def check_transports(binary: str, tmp: Path) -> None:
    roce = run_sim(binary, tmp, TRANSPORTS, "roce")
    ib_json = json.loads(json.dumps(TRANSPORTS))
    ib_json["fabric"]["transport"] = "infiniband"
    ib = run_sim(binary, tmp, ib_json, "ib")
    runs = {"RoCE": rt.load(roce / "trace.h5"), "IB": rt.load(ib / "trace.h5")}
    sums = {"RoCE": json.loads((roce / "summary.json").read_text()),
            "IB": json.loads((ib / "summary.json").read_text())}
    assert rt.transport(runs["RoCE"]) == "roce_v2" and rt.transport(runs["IB"]) == "infiniband"
    t = rt.transport_table(runs)
    assert list(t.index) == ["RoCE", "IB"], t.index
    assert list(rt.transport_table(list(runs.values())).index) == ["roce_v2", "infiniband"]
    # A list with repeats keeps every run (found in review: later ones replaced earlier).
    again = rt.transport_table([runs["IB"], runs["RoCE"], runs["IB"]])
    assert list(again.index) == ["infiniband", "roce_v2", "infiniband#2"], again.index
    # Without /meta, /links and /queue_totals: the transport from /vl_buffers,
    # and NaN, not 0, for what those tables would have given.
    pruned = tmp / "ib_pruned.h5"
    with h5py.File(ib / "trace.h5", "r") as fin, h5py.File(pruned, "w") as fout:
        for k, v in fin.attrs.items():
            fout.attrs[k] = v
        for name in ("nodes", "flows", "vl_buffers", "queues"):
            fin.copy(name, fout)
    bare = rt.load(pruned)
    assert rt.transport(bare) == "infiniband"
    row = rt.transport_table({"bare": bare}).loc["bare"]
    assert row["completed"] == 5
    for col in ("data_frames", "control_frames", "control_per_data", "peak_queue_kb",
                "xmit_wait_us"):
        assert math.isnan(row[col]), (col, row[col])
    for label, s in sums.items():
        row = t.loc[label]
        assert row["transport"] == s["transport"], (label, row["transport"])
        assert row["flows"] == s["flows"]["count"] and row["completed"] == s["flows"]["completed"]
        assert row["data_frames"] == s["data_packet_hops"], (label, row["data_frames"])
        assert math.isclose(row["last_completion_us"] * rt.PS_PER_US,
                            max(f["finish_ps"] for f in s["per_flow"]), rel_tol=1e-12)
        assert math.isclose(row["fct_mean_us"] * rt.PS_PER_US, s["flows"]["fct_ps"]["mean"],
                            rel_tol=1e-12)
        assert row["fct_p99_us"] * rt.PS_PER_US == s["flows"]["fct_ps"]["p99"]
    # Control frames: the PFC frames sent on RoCE, every flow-control packet
    # on every link on IB; no PFC on IB, no waiting for credits on RoCE.
    assert t.loc["RoCE", "control_frames"] == sums["RoCE"]["pfc_frames_sent"]
    ib_sum = sums["IB"]["infiniband"]
    assert t.loc["IB", "control_frames"] == ib_sum["flow_control_packet_hops"]
    assert math.isclose(t.loc["IB", "control_per_data"],
                        ib_sum["flow_control_packets_per_data_packet"], rel_tol=1e-12)
    assert sums["IB"]["pfc_frames_sent"] == 0 and t.loc["RoCE", "xmit_wait_us"] == 0
    # PortXmitWait of the switches' queues: summary.json's entries for switches.
    switch_names = set(runs["IB"].nodes[runs["IB"].nodes["kind"] == "switch"]["name"])
    wait_ps = sum(e["xmit_wait_ps"] for e in ib_sum["port_xmit_wait"] if e["node"] in switch_names)
    assert wait_ps > 0
    assert math.isclose(t.loc["IB", "xmit_wait_us"] * rt.PS_PER_US, wait_ps, rel_tol=1e-12), (
        t.loc["IB", "xmit_wait_us"], wait_ps)
    # /vl_buffers: IB only; whole blocks; never beyond a VL's credited buffer
    # (64 KiB: 1024 blocks), which the incast fills; on the data VL only.
    assert runs["RoCE"].vl_buffers is None
    vl = runs["IB"].vl_buffers
    assert len(vl) > 0 and (vl["bytes"] == vl["blocks"].astype("int64") * 64).all()
    assert vl["blocks"].max() <= 1024 and vl["blocks"].max() > 512
    assert set(vl["vl"]) == {ib_sum["flow_control_packets_by_vl"].index(
        max(ib_sum["flow_control_packets_by_vl"]))}
    assert (vl["vl_label"] == vl["node_name"] + ":" + vl["port"].astype(str) + "/vl"
            + vl["vl"].astype(str)).all(), vl["vl_label"].head()
    ax = rt.vl_buffer_occupancy(runs["IB"])
    assert len(ax.get_lines()) == len(vl.groupby(["node", "port", "vl"]))
    ax = rt.fct_cdf_compare(runs)
    labels = [line.get_label() for line in ax.get_lines()]
    assert labels[0].startswith("RoCE: 5 of 5 flows") and labels[1].startswith("IB: 5 of 5 flows")
    # figures.py draws the VL buffers for IB only.
    env = dict(os.environ, MPLCONFIGDIR=str(tmp / "mplconfig"))
    for name, run in (("roce", roce), ("ib", ib)):
        out = tmp / f"figures_{name}"
        r = subprocess.run([sys.executable, str(HERE / "figures.py"), str(run / "trace.h5"),
                            "--out", str(out)], capture_output=True, text=True, env=env,
                           timeout=300)
        assert r.returncode == 0, r.stderr
        if name == "ib":
            data = (out / "vl_buffers.png").read_bytes()
            assert len(data) > 1000 and data.startswith(PNG_MAGIC)
        else:
            assert not (out / "vl_buffers.png").exists() and "skipping vl_buffers.png" in r.stderr


def check_figures(trace: Path, incast: Path, dcqcn: Path, pruned: Path, tmp: Path) -> None:
    env = dict(os.environ, MPLCONFIGDIR=str(tmp / "mplconfig"))
    figures = [sys.executable, str(HERE / "figures.py")]
    out = tmp / "figures"
    r = subprocess.run(figures + [str(trace), "--out", str(out)],
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    # /pfc is recorded by default (here empty or not, it is drawn); queues
    # and link samples were not asked for, so their figures are skipped.
    for name in BASE_FIGURES + ("pfc_timeline.png",):
        data = (out / name).read_bytes()
        assert len(data) > 1000 and data.startswith(PNG_MAGIC), name
    for name in ("queue_depth.png", "link_throughput.png") + CC_FIGURES + COLLECTIVE_FIGURES + (
            "vl_buffers.png",):
        assert not (out / name).exists() and f"skipping {name}" in r.stderr, name
    # The incast has every table but the congestion-control samples.
    out_incast = tmp / "figures_incast"
    r = subprocess.run(figures + [str(incast), "--out", str(out_incast)],
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stderr.count("skipping") == 2 + len(COLLECTIVE_FIGURES), r.stderr  # cc, VL buffers
    assert "skipping cc_rates.png" in r.stderr, r.stderr
    for name in BASE_FIGURES + NEW_FIGURES:
        data = (out_incast / name).read_bytes()
        assert len(data) > 1000 and data.startswith(PNG_MAGIC), name
    # The DCQCN run has them: its rate figure.
    out_dcqcn = tmp / "figures_dcqcn"
    r = subprocess.run(figures + [str(dcqcn), "--out", str(out_dcqcn)],
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    for name in BASE_FIGURES + CC_FIGURES:
        data = (out_dcqcn / name).read_bytes()
        assert len(data) > 1000 and data.startswith(PNG_MAGIC), name
    # Without /links the utilisation figure is skipped, not an error.
    out2 = tmp / "figures_pruned"
    r = subprocess.run(figures + [str(pruned), "--out", str(out2)],
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    assert (out2 / "fct_cdf.png").stat().st_size > 1000
    assert not (out2 / "link_utilisation.png").exists() and "skipping" in r.stderr
    for name in NEW_FIGURES + CC_FIGURES:
        assert not (out2 / name).exists(), name


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
        check_slowdown(rt.load(out / "trace.h5"), summary)
        incast = run_sim(binary, tmp, INCAST, "incast")
        incast_summary = json.loads((incast / "summary.json").read_text())
        check_incast(rt.load(incast / "trace.h5"), incast_summary)
        check_slowdown(rt.load(incast / "trace.h5"), incast_summary)
        check_empty_tables(incast / "trace.h5", tmp)
        check_idle_gap(rt.load(run_sim(binary, tmp, IDLE_GAP, "idle_gap") / "trace.h5"))
        dcqcn = run_sim(binary, tmp, DCQCN, "dcqcn")
        check_cc(rt.load(dcqcn / "trace.h5"), json.loads((dcqcn / "summary.json").read_text()))
        pruned = check_tolerance(out / "trace.h5", tmp)
        check_figures(out / "trace.h5", incast / "trace.h5", dcqcn / "trace.h5", pruned, tmp)
        check_collective(run_sim(binary, tmp, SWEEP, "sweep"), tmp)
        check_transports(binary, tmp)
    print("plots trace module: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
