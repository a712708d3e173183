"""Load an rdmasim trace.h5 into pandas, and draw the standard figures.

    import rdmasim_trace as rt
    tr = rt.load("out/quickstart/trace.h5")
    tr.flows                    # one row per flow, names joined in, times in ps and us
    rt.goodput_table(tr)        # per-flow goodput in Gb/s
    ax = rt.fct_cdf(tr)         # returns the Axes; `ax.figure` shows it in a notebook
    rt.queue_depth(tr)          # switch queues over time (needs output.queue_interval)
    rt.pfc_timeline(tr)         # paused intervals per (switch, port, priority)
    rt.link_throughput(tr)      # Gb/s over time (needs output.link_interval)
    rt.cc_rates(tr)             # each sending QP's DCQCN rate over time (output.cc_interval)
    rt.vl_buffer_occupancy(tr)  # InfiniBand: switch VL receive buffers over time
    runs = {"RoCE": rt.load("out/roce/trace.h5"), "IB": rt.load("out/ib/trace.h5")}
    rt.transport_table(runs)    # the same fabric on two transports, side by side
    rt.fct_cdf_compare(runs)    # their FCT CDFs on one axes

The format is described in docs/trace.md. Every table is a compound HDF5
dataset; the loader reads each one into a DataFrame, decodes its strings to
`str`, and then hands it to the table's "enricher", a small function that adds
convenience columns (node names, microseconds, ...). Adding a table is one
such function, registered with `@table("/group/name")`. A registered table that
is absent from the file is `None` on the Trace, so traces from older versions
load; a compound dataset that no enricher knows (from a newer version) is
still loaded, undecorated, into `Trace.tables` under its HDF5 path.

Plotting uses matplotlib's object API only: pass `ax=` to draw into your own
axes; without it, a new standalone `matplotlib.figure.Figure` is made (no
pyplot, no global state).
"""

from __future__ import annotations

import json
import math
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import h5py
import numpy as np
import pandas as pd

__all__ = [
    "Trace",
    "TableMissing",
    "load",
    "table",
    "fct_cdf",
    "slowdown_by_size",
    "link_utilisation",
    "queue_depth",
    "pfc_timeline",
    "link_throughput",
    "cc_rates",
    "busbw_by_size",
    "collective_timeline",
    "vl_buffer_occupancy",
    "fct_cdf_compare",
    "transport",
    "transport_table",
    "sweep_table",
    "goodput_table",
    "slowdown_table",
    "drops_table",
    "retransmissions_table",
    "pfc_pauses",
    "link_intervals",
    "PS_PER_US",
    "FORMAT_VERSION",
]

PS_PER_NS = 1_000
PS_PER_US = 1_000_000
PS_PER_MS = 1_000_000_000
PS_PER_S = 1_000_000_000_000

# The trace format_version this module was written for (docs/trace.md). A
# newer file still loads, with a warning: some column may mean something else.
FORMAT_VERSION = 1

# IEEE 802.1Qbb: a pause quantum is 512 bit times at the link's rate.
PFC_QUANTUM_BITS = 512


class TableMissing(LookupError):
    """A figure or table needs an HDF5 table that this trace does not have."""


# --------------------------------------------------------------------------
# The Trace and the table registry


@dataclass
class Trace:
    """Everything in one trace.h5.

    attrs        root attributes (format_version, rdmasim_version, git_revision,
                 scenario_name, scenario_hash, status, seed, sim_time_ps),
                 strings as str, integers as int
    scenario     the resolved scenario, parsed from /meta/scenario ({} if absent)
    tables       every table read, by HDF5 path without the leading "/"
                 ("nodes", "flows", "links", ...); registered tables are also
                 attributes: `tr.flows` is `tr.tables.get("flows")`
    table_attrs  the attributes of each table's dataset, by the same keys
                 (e.g. table_attrs["deadlock"]["detected_at_ps"]); {} if none
    """

    path: Path
    attrs: dict[str, Any]
    scenario: dict[str, Any]
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    table_attrs: dict[str, dict[str, Any]] = field(default_factory=dict)

    # Explicit properties for the tables that exist today, for readers and
    # for tab completion; later tables are reachable through __getattr__.
    @property
    def nodes(self) -> pd.DataFrame | None:
        return self.tables.get("nodes")

    @property
    def flows(self) -> pd.DataFrame | None:
        return self.tables.get("flows")

    @property
    def links(self) -> pd.DataFrame | None:
        return self.tables.get("links")

    @property
    def pfc(self) -> pd.DataFrame | None:
        return self.tables.get("pfc")

    @property
    def drops(self) -> pd.DataFrame | None:
        return self.tables.get("drops")

    @property
    def queues(self) -> pd.DataFrame | None:
        return self.tables.get("queues")

    @property
    def queue_totals(self) -> pd.DataFrame | None:
        return self.tables.get("queue_totals")

    @property
    def link_samples(self) -> pd.DataFrame | None:
        return self.tables.get("link_samples")

    @property
    def flow_paths(self) -> pd.DataFrame | None:
        return self.tables.get("flow_paths")

    @property
    def cc_samples(self) -> pd.DataFrame | None:
        return self.tables.get("cc_samples")

    @property
    def deadlock(self) -> pd.DataFrame | None:
        return self.tables.get("deadlock")

    @property
    def vl_buffers(self) -> pd.DataFrame | None:
        return self.tables.get("vl_buffers")

    @property
    def sim_time_ps(self) -> int:
        return int(self.attrs.get("sim_time_ps", 0))

    def has(self, name: str) -> bool:
        """Whether the table (HDF5 path, with or without leading "/") was in the file."""
        return name.strip("/") in self.tables

    def require(self, name: str) -> pd.DataFrame:
        """The table, or TableMissing naming it and the file."""
        key = name.strip("/")
        if key not in self.tables:
            raise TableMissing(f"{self.path}: no /{key} table")
        return self.tables[key]

    def __getattr__(self, name: str) -> Any:
        # Only reached for names that are not normal attributes. Registered
        # tables are None when absent; unknown names are an AttributeError.
        tables = self.__dict__.get("tables", {})
        for key, reg in _TABLES.items():
            if reg.attr == name:
                return tables.get(key)
        raise AttributeError(name)

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | {r.attr for r in _TABLES.values()})

    def __repr__(self) -> str:
        parts = [f"{k}[{len(v)}]" for k, v in self.tables.items()]
        a = self.attrs
        return (
            f"<Trace {a.get('scenario_name', '?')!r} {a.get('status', '?')} "
            f"sim_time={self.sim_time_ps / PS_PER_US:g}us: {', '.join(parts)}>"
        )


Enricher = Callable[[pd.DataFrame, Trace], pd.DataFrame]


@dataclass(frozen=True)
class _Registered:
    attr: str
    enrich: Enricher


# HDF5 path without leading "/" -> enricher. Order matters: enrichers run in
# registration order, so a table may use the ones registered before it
# (everything uses /nodes for names).
_TABLES: dict[str, _Registered] = {}


def table(path: str, attr: str | None = None) -> Callable[[Enricher], Enricher]:
    """Register the enricher of the compound dataset at `path`.

    The function gets the raw table (strings already decoded to str) and the
    Trace loaded so far, and returns the table to keep. `attr` is the Trace
    attribute it is reachable as (default: the path with "/" -> "_").
    """
    key = path.strip("/")

    def register(fn: Enricher) -> Enricher:
        _TABLES[key] = _Registered(attr or key.replace("/", "_"), fn)
        return fn

    return register


# --------------------------------------------------------------------------
# Reading


def _decode(value: Any) -> Any:
    if isinstance(value, bytes):
        return value.decode("utf-8")
    if isinstance(value, np.ndarray) and value.dtype.kind == "S":
        return value.astype(str)
    return value


def _read_table(ds: h5py.Dataset) -> pd.DataFrame:
    """A 1-D compound dataset as a DataFrame, one column per field, strings as str."""
    arr = ds[()]
    cols: dict[str, Any] = {}
    for name in arr.dtype.names:
        col = arr[name]
        if col.dtype.kind == "O":  # variable-length strings come back as bytes
            col = np.array([_decode(v) for v in col], dtype=object)
        elif col.dtype.kind == "S":
            col = col.astype(str).astype(object)
        cols[name] = col
    return pd.DataFrame(cols, columns=list(arr.dtype.names))


def _compound_datasets(f: h5py.File) -> list[str]:
    found: list[str] = []

    def visit(name: str, obj: Any) -> None:
        if isinstance(obj, h5py.Dataset) and obj.dtype.names is not None and obj.ndim == 1:
            found.append(name)

    f.visititems(visit)
    return found


def _read_attrs(obj: Any) -> dict[str, Any]:
    """HDF5 attributes as Python values: strings as str, scalar integers as int."""
    out: dict[str, Any] = {}
    for k, v in obj.attrs.items():
        v = _decode(v)
        if isinstance(v, np.integer):
            v = int(v)
        out[k] = v
    return out


def load(path: str | Path) -> Trace:
    """Read a trace.h5 into a Trace. Absent groups and tables are tolerated."""
    path = Path(path)
    with h5py.File(path, "r") as f:
        attrs = _read_attrs(f)
        scenario: dict[str, Any] = {}
        if "meta/scenario" in f:
            scenario = json.loads(f["meta/scenario"].asstr()[()])
        trace = Trace(path=path, attrs=attrs, scenario=scenario)
        names = _compound_datasets(f)
        raw = {name: _read_table(f[name]) for name in names}
        trace.table_attrs = {name: _read_attrs(f[name]) for name in names}
    version = attrs.get("format_version")
    if isinstance(version, int) and version > FORMAT_VERSION:
        warnings.warn(
            f"{path}: trace format_version {version} is newer than this module's "
            f"{FORMAT_VERSION}; some columns may have changed meaning",
            stacklevel=2,
        )
    for key, reg in _TABLES.items():
        if key in raw:
            trace.tables[key] = reg.enrich(raw.pop(key), trace)
    trace.tables.update(raw)  # tables from a newer writer: as read
    return trace


# --------------------------------------------------------------------------
# Enrichers, one per table


def _us(ps: pd.Series, valid: pd.Series | None = None) -> pd.Series:
    """Picoseconds to float microseconds; NaN where not `valid`."""
    us = ps.astype("float64") / PS_PER_US
    return us.where(valid, np.nan) if valid is not None else us


def _node_names(trace: Trace) -> dict[int, str]:
    nodes = trace.nodes
    if nodes is None:
        return {}
    return dict(zip(nodes["id"].astype(int), nodes["name"]))


def _name_of(ids: pd.Series, names: dict[int, str]) -> pd.Series:
    """Node names for node ids ("#<id>" if /nodes is absent or lacks the id)."""
    ids = ids.astype("int64")
    out = ids.map(names)
    missing = out.isna()
    if missing.any():
        out[missing] = "#" + ids[missing].astype(str)
    return out.astype(object)


def _parse_time_ps(text: Any) -> int | None:
    """A scenario time ("20us", "1.5ms", "600ns", "83560ps") in ps; None if not one."""
    if not isinstance(text, str):
        return None
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*(ps|ns|us|µs|ms|s)\s*", text)
    if m is None:
        return None
    scale = {"ps": 1, "ns": PS_PER_NS, "us": PS_PER_US, "µs": PS_PER_US, "ms": PS_PER_MS,
             "s": PS_PER_S}[m.group(2)]
    from decimal import Decimal

    return int(Decimal(m.group(1)) * scale)


def _sample_interval(trace: Trace, key: str, times: pd.Series) -> int | None:
    """The sampling interval in ps: the table's interval_ps attribute, else the
    scenario's output.<key> (older traces), else inferred from the sample
    times (their tick grid), else None."""
    table = {"link_interval": "link_samples", "queue_interval": "queues"}.get(key)
    attr = trace.table_attrs.get(table, {}).get("interval_ps")
    if attr is not None and int(attr) > 0:
        return int(attr)
    ps = _parse_time_ps(trace.scenario.get("output", {}).get(key))
    if ps is not None and ps > 0:
        return ps
    ticks = np.unique(times.to_numpy(dtype="int64"))
    if len(ticks) < 2:
        return None
    step = int(np.gcd.reduce(np.diff(ticks)))
    return step if step > 0 else None


def _port_peers(trace: Trace) -> pd.DataFrame:
    """/links by (from_node, from_port): the link row out of each port, its far
    end and rate. Empty without /links."""
    links = trace.links
    cols = ["row", "to_node", "to_name", "rate_bps"]
    if links is None or len(links) == 0:
        return pd.DataFrame(columns=cols, index=pd.MultiIndex.from_arrays([[], []]))
    peers = pd.DataFrame({
        "row": np.arange(len(links)),
        "to_node": links["to_node"].to_numpy(),
        "to_name": links["to_name"].to_numpy(),
        "rate_bps": links["rate_bps"].to_numpy(),
    }, index=pd.MultiIndex.from_arrays([links["from_node"].astype("int64"),
                                        links["from_port"].astype("int64")]))
    return peers[~peers.index.duplicated()]


def _add_queue_columns(df: pd.DataFrame, trace: Trace) -> None:
    """For a table with node and port (and perhaps priority) columns, add
    node_name, peer_name (the node at the other end of that port's link, from
    /links; "" if unknown), port_label ("sw0:3") and, with a priority,
    queue_label ("sw0:3/p3", as rdmasim's own messages write queues)."""
    df["node_name"] = _name_of(df["node"], _node_names(trace))
    peers = _port_peers(trace)
    key = pd.MultiIndex.from_arrays([df["node"].astype("int64"), df["port"].astype("int64")])
    peer = peers["to_name"].reindex(key).to_numpy() if len(peers) else np.full(len(df), np.nan)
    df["peer_name"] = pd.Series(peer, index=df.index, dtype=object).fillna("")
    df["port_label"] = df["node_name"] + ":" + df["port"].astype(str)
    if "priority" in df.columns:
        df["queue_label"] = df["port_label"] + "/p" + df["priority"].astype(str)


def _add_link_columns(df: pd.DataFrame, trace: Trace) -> None:
    """For a table with a `row` column (a /links row), add the link's
    from_node, to_node, from_name, to_name, label and rate_bps."""
    links = trace.links
    rows = df["row"].astype("int64")
    if links is not None:
        ok = (rows >= 0) & (rows < len(links))
        idx = rows.where(ok, 0).to_numpy()
        for col in ("from_node", "to_node", "from_name", "to_name", "label", "rate_bps"):
            values = pd.Series(links[col].to_numpy()[idx] if len(links) else [None] * len(df),
                               index=df.index)
            df[col] = values.where(ok, None)
        for col in ("from_node", "to_node", "rate_bps"):
            if ok.all():
                df[col] = df[col].astype("int64")
    else:
        for col in ("from_node", "to_node", "rate_bps"):
            df[col] = -1
        df["from_name"] = "?"
        df["to_name"] = "?"
        df["label"] = "row " + rows.astype(str)


def _with_intervals(df: pd.DataFrame, trace: Trace) -> pd.DataFrame:
    """/link_samples rows (or the same columns) with link names and per-interval
    throughput: each row is the end of an interval of its link direction.

    Sparse sampling: every direction has a row at the tick at 0 (zeros if it
    has sent nothing yet); after that a direction appears at a tick only if
    its counters changed since its previous row, so between two rows of a direction at t1 < t2 the
    counters did not change at any tick before t2: all of the difference
    happened after the tick before t2. The interval of a row is therefore
    (max(t1, last tick before t2), t2], not (t1, t2]; the time from t1 to that
    tick carried nothing. A direction's first row is measured from zero
    counters at time 0. Ticks are the multiples of output.link_interval from 0.

    The tick at time 0 runs after the frames that start at time 0, so a
    direction's row at 0 may count a frame over no time: its bytes are moved
    to the direction's next row, whose interval then starts at 0 even when
    that row comes after ticks with no change (its rate is the mean over
    (0, t2]: the samples cannot tell how much of it came after the last
    tick), unless it has none (rate NaN).

    Counters count a frame whole when its serialisation starts, so an
    interval can show up to one frame more than rate x length; with
    back-to-back frames of b bytes taking T each, at most
    ceil(length / T) * b bytes.
    """
    df = df.sort_values(["row", "time"], kind="stable").reset_index(drop=True)
    _add_link_columns(df, trace)
    df["time_us"] = _us(df["time"])
    interval = _sample_interval(trace, "link_interval", df["time"])
    t = df["time"].astype("int64")
    first = df["row"].ne(df["row"].shift())
    last = df["row"].ne(df["row"].shift(-1))
    prev_t = t.shift().where(~first, 0).fillna(0).astype("int64")
    if interval is not None:
        tick_before = ((t - 1) // interval * interval).clip(lower=0)  # last tick strictly before t
        start = np.maximum(prev_t, tick_before)
    else:
        start = prev_t
    # A first row over no time (the tick at 0) hands its counts to the next row.
    fold = first & (t == start) & ~last
    # That row's interval then starts at 0, where the counts happened; when
    # the folded row is the baseline of zeros, nothing moves and the next
    # row keeps its own interval.
    carried = fold & (df["frames"].astype("int64").ne(0) | df["wire_bytes"].astype("int64").ne(0)
                      | df["payload_bytes"].astype("int64").ne(0))
    start = start.where(~carried.shift(fill_value=False), 0)
    df["interval_start"] = start.astype("int64")
    df["interval_start_us"] = _us(df["interval_start"])
    for col in ("frames", "wire_bytes", "payload_bytes"):
        v = df[col].astype("int64")
        base = v.where(~fold, 0).shift().where(~first, 0).fillna(0).astype("int64")
        df[f"d_{col}"] = (v - base).where(~fold, 0).astype("int64")
    span = (t - df["interval_start"]).astype("float64")
    for what in ("wire", "payload"):
        d = df[f"d_{what}_bytes"].astype("float64")
        # bits per ps are Tb/s: * 1e3 for Gb/s. No bytes is 0 Gb/s even over no time.
        gbps = (d * 8.0 / span.where(span > 0) * 1e3).where(d != 0, 0.0)
        df[f"{what}_gbps"] = gbps
    rate = df["rate_bps"].astype("float64")
    df["utilisation"] = (df["wire_gbps"] * 1e9 / rate.where(rate > 0)).astype("float64")
    return df


# Tables that name a switch queue or port get node_name, peer_name (the
# neighbour on that port), port_label "sw0:3" and queue_label "sw0:3/p3".


@table("nodes")
def _nodes(df: pd.DataFrame, trace: Trace) -> pd.DataFrame:
    df["is_host"] = df["kind"] == "host"
    return df


@table("flows")
def _flows(df: pd.DataFrame, trace: Trace) -> pd.DataFrame:
    names = _node_names(trace)
    df["done"] = df["done"].astype(bool)
    df["src_name"] = _name_of(df["src"], names)
    df["dst_name"] = _name_of(df["dst"], names)
    # A flow's name is optional; `label` is always something to print.
    generated = df["src_name"] + "->" + df["dst_name"] + " #" + df["id"].astype(str)
    df["label"] = df["name"].where(df["name"] != "", generated)
    df["start_us"] = _us(df["start"])
    df["first_tx_us"] = _us(df["first_tx"], df["first_tx"] >= 0)
    for col in ("finish", "fct"):
        df[f"{col}_us"] = _us(df[col], df["done"])
    if "error" in df.columns:
        df["failed"] = df["error"] != ""
    if "ideal_fct" in df.columns:
        # The ideal FCT (alone on the idle fabric) is there for every flow;
        # the slowdown only for a completed one.
        df["ideal_fct_us"] = _us(df["ideal_fct"], df["ideal_fct"] > 0)
        df["slowdown"] = df["slowdown"].where(df["done"] & (df["ideal_fct"] > 0), np.nan)
    return df


@table("links")
def _links(df: pd.DataFrame, trace: Trace) -> pd.DataFrame:
    names = _node_names(trace)
    df["from_name"] = _name_of(df["from_node"], names)
    df["to_name"] = _name_of(df["to_node"], names)
    df["failed"] = df["failed"].astype(bool)
    df["label"] = df["from_name"] + "->" + df["to_name"]
    # Parallel links between the same two nodes: tell them apart by port.
    dup = df["label"].duplicated(keep=False)
    df.loc[dup, "label"] = df["label"] + " (port " + df["from_port"].astype(str) + ")"
    df["rate_gbps"] = df["rate_bps"].astype("float64") / 1e9
    df["busy_us"] = _us(df["busy_ps"])
    sim = trace.sim_time_ps
    df["utilisation"] = df["busy_ps"].astype("float64") / sim if sim > 0 else np.nan
    return df


@table("pfc")
def _pfc(df: pd.DataFrame, trace: Trace) -> pd.DataFrame:
    _add_queue_columns(df, trace)
    df["time_us"] = _us(df["time"])
    for col in ("pause", "sent"):
        df[col] = df[col].astype(bool)
    return df


@table("drops")
def _drops(df: pd.DataFrame, trace: Trace) -> pd.DataFrame:
    _add_queue_columns(df, trace)
    df["time_us"] = _us(df["time"])
    return df


@table("queues")
def _queues(df: pd.DataFrame, trace: Trace) -> pd.DataFrame:
    _add_queue_columns(df, trace)
    df["time_us"] = _us(df["time"])
    return df


@table("vl_buffers")
def _vl_buffers(df: pd.DataFrame, trace: Trace) -> pd.DataFrame:
    _add_queue_columns(df, trace)
    df["vl_label"] = df["port_label"] + "/vl" + df["vl"].astype(str)
    df["time_us"] = _us(df["time"])
    return df


@table("queue_totals")
def _queue_totals(df: pd.DataFrame, trace: Trace) -> pd.DataFrame:
    _add_queue_columns(df, trace)
    drop_cols = [c for c in df.columns if c.startswith("drop_")]
    df["drops"] = df[drop_cols].sum(axis=1).astype("uint64") if drop_cols else 0
    return df


@table("link_samples")
def _link_samples(df: pd.DataFrame, trace: Trace) -> pd.DataFrame:
    return _with_intervals(df, trace)


@table("flow_paths")
def _flow_paths(df: pd.DataFrame, trace: Trace) -> pd.DataFrame:
    df = df.sort_values(["flow", "hop"], kind="stable").reset_index(drop=True)
    _add_link_columns(df, trace)
    # One string per flow, "h0 -> sw0 -> h1": the sender, then the far end of
    # every hop. Rows that do not chain up (never expected) show as "...".
    paths: dict[int, str] = {}
    for flow, g in df.groupby("flow", sort=True):
        parts = [g["from_name"].iloc[0]]
        prev_to = None
        for frm, to, fname, tname in zip(g["from_node"], g["to_node"], g["from_name"], g["to_name"]):
            if prev_to is not None and frm != prev_to:
                parts += ["...", fname]
            parts.append(tname)
            prev_to = to
        paths[int(flow)] = " -> ".join(parts)
    df["path"] = df["flow"].map(paths).astype(object)
    flows = trace.flows
    if flows is not None:  # flows are enriched before paths: give them the string too
        flows["path"] = flows["id"].map(paths).fillna("").astype(object)
        flows["hops"] = flows["id"].map(df.groupby("flow").size()).fillna(0).astype(int)
    return df


@table("cc_samples")
def _cc_samples(df: pd.DataFrame, trace: Trace) -> pd.DataFrame:
    df["node_name"] = _name_of(df["node"], _node_names(trace))
    df["sender"] = df["sender"].astype(bool)
    df["time_us"] = _us(df["time"])
    # -1 means the algorithm has no such value: NaN in the Gb/s copies.
    for col in ("rate", "target"):
        bps = df[f"{col}_bps"].astype("float64")
        df[f"{col}_gbps"] = (bps / 1e9).where(bps >= 0, np.nan)
    flows = trace.flows
    if flows is not None and len(flows):
        labels = dict(zip(flows["id"].astype(int), flows["label"]))
        df["flow_label"] = df["flow"].astype(int).map(labels).fillna("").astype(object)
    else:
        df["flow_label"] = "#" + df["flow"].astype(str)
    return df


@table("deadlock")
def _deadlock(df: pd.DataFrame, trace: Trace) -> pd.DataFrame:
    _add_queue_columns(df, trace)
    df.insert(0, "step", np.arange(len(df)))
    # Each queue waits on the next one of the cycle, the last on the first.
    df["waits_on"] = np.roll(df["queue_label"].to_numpy(), -1) if len(df) else []
    at = trace.table_attrs.get("deadlock", {}).get("detected_at_ps")
    df["detected_at_ps"] = at if at is not None else -1
    df["detected_at_us"] = at / PS_PER_US if at is not None else np.nan
    return df


@table("collective_steps")
def _collective_steps(df: pd.DataFrame, trace: Trace) -> pd.DataFrame:
    df["node_name"] = _name_of(df["node"], _node_names(trace))
    df["start_us"] = _us(df["start"], df["start"] >= 0)
    df["end_us"] = _us(df["end"], df["end"] >= 0)
    return df


@table("collective_sweep")
def _collective_sweep(df: pd.DataFrame, trace: Trace) -> pd.DataFrame:
    df["done"] = df["done"].astype(bool)
    return df


# --------------------------------------------------------------------------
# Derived tables


def sweep_table(source: Any) -> pd.DataFrame:
    """The rows of every collective sweep (docs/collectives.md#sweeps): item,
    size_bytes, count, time_us, algbw_gbps, busbw_gbps, done, from a Trace
    (/collective_sweep), a summary.json path, or its parsed dict
    (collectives[].sweep; there `item` is the collective's traffic item and
    `name` its name). TableMissing if there is no sweep."""
    if isinstance(source, Trace):
        t = source.require("collective_sweep").copy()
        t["name"] = t["item"].map(lambda i: f"traffic[{i}]")
        return t
    if isinstance(source, (str, Path)):
        with open(source) as f:
            source = json.load(f)
    rows = []
    for c in source.get("collectives", []):
        for r in c.get("sweep", []):
            rows.append({"item": c["item"], "name": c["name"], "size_bytes": r["size_bytes"],
                         "count": r["count"], "done": r["done"],
                         "time_us": r.get("time_us", 0.0), "algbw_gbps": r.get("algbw_gbps", 0.0),
                         "busbw_gbps": r.get("busbw_gbps", 0.0)})
    if not rows:
        raise TableMissing("no collective with a sweep in this summary")
    return pd.DataFrame(rows)


def goodput_table(trace: Trace) -> pd.DataFrame:
    """Per-flow goodput: payload bytes * 8 / FCT, in Gb/s, indexed by flow id.

    Every flow has a row; goodput_gbps is NaN for a flow that did not
    complete. This is the same figure as summary.json's per_flow goodput_gbps.
    """
    flows = trace.require("flows")
    cols = ["id", "label", "src_name", "dst_name", "op", "bytes", "done", "fct_us"]
    out = flows[cols].copy()
    fct = flows["fct"].astype("float64")
    ok = flows["done"] & (flows["fct"] > 0)
    # bits per picosecond are Tb/s: * 1e3 for Gb/s.
    out["goodput_gbps"] = (flows["bytes"].astype("float64") * 8.0 / fct * 1e3).where(ok, np.nan)
    return out.set_index("id")


_BYTE_UNITS = {"": 1, "B": 1, "KB": 10**3, "kB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
               "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}
DEFAULT_SIZE_BUCKETS = [10**4, 10**5, 10**6]


def _parse_bytes(value: Any) -> int:
    """A size as the resolved scenario writes it ("10KB", 4096) in bytes."""
    if isinstance(value, (int, float)):
        return int(value)
    m = re.fullmatch(r"([0-9.eE+-]+)([A-Za-z]*)", str(value))
    if m is None or m.group(2) not in _BYTE_UNITS:
        raise ValueError(f"not a size: {value!r}")
    return int(round(float(m.group(1)) * _BYTE_UNITS[m.group(2)]))


def _nearest_rank(sorted_values: np.ndarray, p: float) -> float:
    """summary.json's percentile: the ceil(p/100 * n)-th smallest value."""
    n = len(sorted_values)
    if n == 0:
        return np.nan
    rank = min(max(int(math.ceil(p / 100.0 * n)), 1), n)
    return float(sorted_values[rank - 1])


def _bucket_label(lo: int, hi: int | None) -> str:
    def show(b: int) -> str:
        # The shortest exact name, as summary.json's labels: "10KB", "4KiB", "1500B".
        best = f"{b}B"
        for unit, k in (("KB", 10**3), ("MB", 10**6), ("GB", 10**9),
                        ("KiB", 2**10), ("MiB", 2**20), ("GiB", 2**30)):
            if b > 0 and b % k == 0 and len(f"{b // k}{unit}") < len(best):
                best = f"{b // k}{unit}"
        return best

    if hi is None:
        return f">={show(lo)}" if lo > 0 else "all"
    return f"<{show(hi)}" if lo == 0 else f"{show(lo)}-{show(hi)}"


def slowdown_table(trace: Trace, edges: list[int] | None = None) -> pd.DataFrame:
    """Slowdown (FCT / ideal FCT) of completed flows per size bucket: count,
    p50, p95, p99 (nearest rank, as summary.json's slowdown_by_size), mean
    and max, one row per bucket in size order, indexed by its label.

    `edges` are the buckets' rising edges in bytes; by default the run's
    output.size_buckets (10 KB, 100 KB, 1 MB when the scenario predates it).
    """
    flows = trace.require("flows")
    if "slowdown" not in flows.columns:
        raise TableMissing("this trace's /flows has no ideal_fct (written by an older rdmasim)")
    if edges is None:
        given = trace.scenario.get("output", {}).get("size_buckets")
        edges = [_parse_bytes(e) for e in given] if given is not None else DEFAULT_SIZE_BUCKETS
    done = flows[flows["slowdown"].notna()]
    bounds = [0] + list(edges)
    rows = []
    for i, lo in enumerate(bounds):
        hi = bounds[i + 1] if i + 1 < len(bounds) else None
        sel = done[(done["bytes"] >= lo) & ((done["bytes"] < hi) if hi is not None else True)]
        x = np.sort(sel["slowdown"].to_numpy())
        rows.append({
            "bucket": _bucket_label(lo, hi),
            "min_bytes": lo,
            "max_bytes": hi if hi is not None else -1,
            "count": len(x),
            "p50": _nearest_rank(x, 50),
            "p95": _nearest_rank(x, 95),
            "p99": _nearest_rank(x, 99),
            "mean": float(x.mean()) if len(x) else np.nan,
            "max": float(x[-1]) if len(x) else np.nan,
        })
    return pd.DataFrame(rows).set_index("bucket")


def drops_table(trace: Trace) -> pd.DataFrame:
    """Switch drops grouped by (node, port, priority, reason): packets, bytes
    and the first and last drop time in us, most drops first.

    Empty (with these columns) when nothing was dropped. Counts only what
    /drops records: frames lost on a down link or to bit errors are in
    summary.json and /links instead.
    """
    drops = trace.require("drops")
    keys = ["node", "port", "priority", "reason"]
    cols = keys + ["node_name", "peer_name", "queue_label", "packets", "bytes", "first_us",
                   "last_us"]
    if len(drops) == 0:
        return pd.DataFrame({c: pd.Series(dtype=object if c in ("reason", "node_name",
                                          "peer_name", "queue_label") else "int64")
                             for c in cols})
    out = drops.groupby(keys, sort=True).agg(
        node_name=("node_name", "first"),
        peer_name=("peer_name", "first"),
        queue_label=("queue_label", "first"),
        packets=("time", "size"),
        bytes=("bytes", "sum"),
        first_us=("time_us", "min"),
        last_us=("time_us", "max"),
    ).reset_index()
    out = out.sort_values(["packets", "node", "port", "priority", "reason"],
                          ascending=[False, True, True, True, True], kind="stable")
    return out[cols].reset_index(drop=True)


def retransmissions_table(trace: Trace, *, all_flows: bool = False) -> pd.DataFrame:
    """Per flow: packets retransmitted and the error status, indexed by flow id.

    Only flows that retransmitted or failed, most retransmissions first,
    unless `all_flows`. Needs the /flows `retransmissions` column (traces
    before it raise TableMissing).
    """
    flows = trace.require("flows")
    if "retransmissions" not in flows.columns:
        raise TableMissing(f"{trace.path}: /flows has no retransmissions column")
    cols = ["id", "label", "src_name", "dst_name", "op", "bytes", "done", "retransmissions"]
    out = flows[cols].copy()
    out["error"] = flows["error"] if "error" in flows.columns else ""
    if not all_flows:
        out = out[(out["retransmissions"] > 0) | (out["error"] != "")]
        out = out.sort_values(["retransmissions", "id"], ascending=[False, True], kind="stable")
    return out.set_index("id")


def link_intervals(trace: Trace, *, close: bool = True) -> pd.DataFrame:
    """/link_samples with per-interval throughput, closed at the end of the run.

    The sampler records every direction that changed at the end of the run
    (sim_time_ps), so on current traces nothing is left to close. For traces
    written before it did, with `close`, each direction whose /links counters
    (the end-of-run totals) exceed its last sample gets one more row at
    sim_time_ps, marked `closing`, whose interval starts at the later of its last row and the
    last tick; so the d_* columns of a direction sum to its /links totals.
    Columns as the enriched /link_samples (see its enricher), plus `closing`.
    """
    samples = trace.require("link_samples")
    out = samples.copy()
    out["closing"] = False
    links = trace.links
    end = trace.sim_time_ps
    if not close or links is None or len(links) == 0 or end <= 0:
        return out
    last = samples.groupby("row")[["time", "frames", "wire_bytes", "payload_bytes"]].last()
    totals = pd.DataFrame({
        "row": np.arange(len(links)),
        "frames": links["frames"].to_numpy(),
        "wire_bytes": links["wire_bytes"].to_numpy(),
        "payload_bytes": links["payload_bytes"].to_numpy(),
    })
    seen = last.reindex(totals["row"])
    changed = (totals["wire_bytes"].to_numpy() != seen["wire_bytes"].fillna(0).to_numpy()) | (
        totals["frames"].to_numpy() != seen["frames"].fillna(0).to_numpy())
    extra = totals[changed].copy()
    if len(extra) == 0:
        return out
    extra.insert(0, "time", end)
    raw_cols = ["time", "row", "frames", "wire_bytes", "payload_bytes"]
    merged = pd.concat([samples[raw_cols], extra[raw_cols]], ignore_index=True)
    for col, dtype in samples[raw_cols].dtypes.items():
        merged[col] = merged[col].astype(dtype)
    # A sample at sim_time_ps itself is superseded by the end-of-run totals.
    merged = merged.drop_duplicates(["row", "time"], keep="last")
    out = _with_intervals(merged, trace)
    closing = pd.MultiIndex.from_arrays([extra["row"], extra["time"]])
    out["closing"] = pd.MultiIndex.from_arrays([out["row"], out["time"]]).isin(closing)
    return out


def pfc_pauses(trace: Trace) -> pd.DataFrame:
    """The paused intervals implied by /pfc, one row per interval (needs /pfc
    and /links, for the link rates; TableMissing otherwise).

    Events are taken per (node, port, priority, sent), in time order:

    - a pause frame (quanta q > 0) at time t pauses until t + q x 512 bit
      times at the rate of the link out of that port (/links rate_bps of the
      row with from_node == node, from_port == port; both directions of a
      cable have the same rate), rounded up to a ps as the simulator does;
      a pause frame while paused restarts that timer (refresh);
    - a resume (quanta 0) ends the interval at t;
    - an interval still open at the end of the run ends at sim_time_ps.

    `ended_by` says which: "resume", "expiry" or "end_of_run". Times are the
    recorded ones: for a sent frame (sent True: the switch asked its
    neighbour on `port` to stop sending), when the switch queued it; the
    neighbour actually stops later, by the frame's wait and serialisation,
    the link's delay_ps and its response delay. For a received frame (sent
    False: the switch's own egress `port` is paused), when it arrived; the
    pause acts after the switch's pfc.response_delay (0 by default).
    """
    pfc = trace.require("pfc")
    trace.require("links")
    peers = _port_peers(trace)
    end = trace.sim_time_ps
    rows: list[dict[str, Any]] = []
    keys = ["node", "port", "priority", "sent"]
    for key, g in pfc.groupby(keys, sort=True):
        node, port, prio, sent = (int(k) for k in key)
        rate = peers["rate_bps"].get((node, port)) if len(peers) else None
        rate = int(rate) if rate is not None and not pd.isna(rate) and rate > 0 else None
        first = g.iloc[0]
        base = {"node": node, "port": port, "priority": prio, "sent": bool(sent),
                "node_name": first["node_name"], "peer_name": first["peer_name"],
                "queue_label": first["queue_label"]}
        start = until = None
        frames = 0
        quanta = 0

        def close(at: int, why: str) -> None:
            nonlocal start, until
            if end > 0 and at > end:
                at, why = end, "end_of_run"
            rows.append({**base, "start": start, "end": max(at, start), "ended_by": why,
                         "frames": frames, "quanta": quanta})
            start = until = None

        for t, q in zip(g["time"].astype("int64"), g["quanta"].astype("int64")):
            t, q = int(t), int(q)
            if start is not None and until is not None and until <= t:
                close(until, "expiry")  # ran out before this frame
            if q > 0:
                length = -(-q * PFC_QUANTUM_BITS * PS_PER_S // rate) if rate else None
                if start is None:
                    start, frames = t, 0
                frames += 1
                quanta = q
                until = t + length if length is not None else None  # None: until resume
            elif start is not None:
                close(t, "resume")
        if start is not None:
            if until is not None and (end <= 0 or until <= end):
                close(until, "expiry")
            else:
                close(end if end > 0 else (until if until is not None else start), "end_of_run")
    cols = list(keys) + ["node_name", "peer_name", "queue_label", "start", "end", "ended_by",
                         "frames", "quanta"]
    out = pd.DataFrame(rows, columns=cols)
    for col in ("node", "port", "priority", "start", "end", "frames", "quanta"):
        out[col] = out[col].astype("int64")
    out["sent"] = out["sent"].astype(bool)
    out["start_us"] = _us(out["start"])
    out["end_us"] = _us(out["end"])
    out["duration_us"] = out["end_us"] - out["start_us"]
    return out


# --------------------------------------------------------------------------
# Figures


def _axes(ax: Any, figsize: tuple[float, float]) -> Any:
    if ax is not None:
        return ax
    from matplotlib.figure import Figure

    return Figure(figsize=figsize, layout="constrained").add_subplot()


def _no_data(ax: Any, text: str) -> None:
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, color="0.4")


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def fct_cdf(trace: Trace, ax: Any = None, *, log: bool = True, by: str | None = None) -> Any:
    """Empirical CDF of the flow completion times of completed flows, in us.

    `by` names a flows column to draw one curve per value of (e.g. "op").
    Returns the Axes.
    """
    ax = _axes(ax, (6.0, 4.0))
    flows = trace.require("flows")
    done = flows[flows["done"]]
    groups = [(None, done)] if by is None else list(done.groupby(by, sort=True))
    for key, g in groups:
        x = np.sort(g["fct_us"].to_numpy())
        if len(x) == 0:
            continue
        y = np.arange(1, len(x) + 1) / len(x)
        label = None if key is None else f"{by}={key} ({len(x)})"
        ax.step(np.concatenate([[x[0]], x]), np.concatenate([[0.0], y]), where="post", label=label)
    if len(done) == 0:
        _no_data(ax, "no completed flows")
    elif log and done["fct_us"].min() > 0:
        ax.set_xscale("log")
    ax.set_xlabel("flow completion time (us)")
    ax.set_ylabel("fraction of flows")
    ax.set_ylim(0, 1.02)
    ax.grid(True, alpha=0.3)
    ax.set_title(
        f"FCT CDF: {trace.attrs.get('scenario_name', '')} "
        f"({len(done)} of {len(flows)} flows complete)"
    )
    if by is not None and len(done):
        ax.legend()
    return ax


def slowdown_by_size(trace: Trace, ax: Any = None, *, edges: list[int] | None = None) -> Any:
    """Slowdown (FCT / ideal FCT) by flow size bucket: p50, p95 and p99 of the
    completed flows of each bucket (slowdown_table), as grouped bars on a
    log scale, with each bucket's flow count. Returns the Axes."""
    ax = _axes(ax, (6.4, 4.2))
    t = slowdown_table(trace, edges)
    x = np.arange(len(t))
    width = 0.26
    for i, (col, shade) in enumerate((("p50", "0.65"), ("p95", "tab:orange"), ("p99", "tab:red"))):
        ax.bar(x + (i - 1) * width, t[col].fillna(0).to_numpy(), width, label=col, color=shade)
    ax.set_xticks(x, [f"{b}\n({n} flows)" for b, n in zip(t.index, t["count"])])
    ax.axhline(1.0, color="0.3", linewidth=0.8, linestyle="--")
    if t["count"].sum() == 0:
        _no_data(ax, "no completed flows")
    elif t["p99"].max() > 10:
        ax.set_yscale("log")
    ax.set_xlabel("flow size")
    ax.set_ylabel("slowdown (FCT / ideal FCT)")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend()
    ax.set_title(f"Slowdown by size: {trace.attrs.get('scenario_name', '')}")
    return ax


def link_utilisation(trace: Trace, ax: Any = None, *, top: int = 16) -> Any:
    """Bar chart of the `top` busiest link directions: busy time / simulated time.

    Returns the Axes.
    """
    links = trace.require("links")
    busiest = links.sort_values(["utilisation", "from_node", "to_node"], ascending=[False, True, True])
    busiest = busiest.head(top).iloc[::-1]  # busiest at the top of a barh chart
    ax = _axes(ax, (6.0, 0.8 + 0.3 * max(len(busiest), 1)))
    if len(busiest) == 0 or trace.sim_time_ps <= 0:
        _no_data(ax, "no links" if len(busiest) == 0 else "zero simulated time")
    else:
        pct = busiest["utilisation"].to_numpy() * 100
        ax.barh(range(len(busiest)), pct, color="tab:blue")
        ax.set_yticks(range(len(busiest)), busiest["label"].tolist())
        for i, v in enumerate(pct):
            ax.text(v, i, f" {v:.1f}%", va="center", fontsize="small")
        ax.set_xlim(0, max(115.0, float(pct.max()) * 1.15))  # room for the value labels
    ax.set_xlabel("busy time / simulated time (%)")
    shown = f"busiest {len(busiest)} of {len(links)}" if len(links) > top else f"{len(links)}"
    ax.set_title(f"link utilisation ({shown} link directions)")
    ax.grid(True, axis="x", alpha=0.3)
    return ax


def _end_ps(trace: Trace, *times: pd.Series) -> int:
    """The end of the time axis: sim_time_ps, or the latest time seen."""
    latest = max((int(t.max()) for t in times if len(t)), default=0)
    return max(trace.sim_time_ps, latest)


def queue_depth(trace: Trace, ax: Any = None, *, top: int = 8) -> Any:
    """Switch egress queue depth (KB) over time for the `top` busiest queues.

    Busiest: the largest sum of sampled bytes (the time integral of the
    backlog, as samples are evenly spaced), then the highest peak. Drawn as
    steps: a sample holds until the next. /queues is sparse (a queue appears
    while it holds bytes, plus one 0 row when it empties), so a queue is 0
    wherever it has no row: before its first row and after a 0 row until its
    next one. Needs output.queue_interval. Returns the Axes.
    """
    return _busiest_steps(_axes(ax, (7.0, 4.0)), trace, trace.require("queues"),
                          ["node", "port", "priority"], "queue_label", "to", top, "queue",
                          "no queue held bytes at a sample", "queued (KB)",
                          "switch egress queue depth")


def _busiest_steps(ax: Any, trace: Trace, df: pd.DataFrame, keys: list[str], label_col: str,
                   peer_word: str, top: int, noun: str, none_held: str, ylabel: str,
                   title: str) -> Any:
    """Draw the `top` busiest series of a sparse sampled table (/queues,
    /vl_buffers: a series appears while it holds bytes, plus one 0 row when
    it empties, and is 0 wherever it has no row) as steps in KB: busiest by
    the sum of its samples (the time integral, samples being evenly
    spaced), then its peak. The title says how many of how many `noun`s are
    shown. Returns the Axes."""
    no_rows = f"no {noun} samples"
    end_us = _end_ps(trace, df["time"]) / PS_PER_US
    n = len(df.groupby(keys)) if len(df) else 0
    if len(df) == 0 or df["bytes"].max() <= 0:
        _no_data(ax, none_held if len(df) else no_rows)
        if end_us > 0:
            ax.set_xlim(0, end_us)
    else:
        rank = df.groupby(keys).agg(total=("bytes", "sum"), peak=("bytes", "max"),
                                    label=(label_col, "first"), peer=("peer_name", "first"))
        rank = rank.sort_values(["total", "peak"], ascending=False, kind="stable").head(top)
        for key, r in rank.iterrows():
            match = np.ones(len(df), dtype=bool)
            for k, v in zip(keys, key):
                match &= (df[k] == v).to_numpy()
            q = df[match].sort_values("time", kind="stable")
            x = np.concatenate([[0.0], q["time_us"].to_numpy(), [end_us]])
            y = np.concatenate([[0.0], q["bytes"].to_numpy() / 1e3, [q["bytes"].iloc[-1] / 1e3]])
            label = f"{r['label']} ({peer_word} {r['peer']})" if r["peer"] else r["label"]
            ax.step(x, y, where="post", label=label, linewidth=1.2)
        ax.set_xlim(0, end_us)
        ax.set_ylim(bottom=0)
        ax.legend(fontsize="small", loc="best")
    ax.set_xlabel("time (us)")
    ax.set_ylabel(ylabel)
    shown = f"busiest {top} of {n} {noun}s" if n > top else _plural(n, noun)
    ax.set_title(f"{title} ({shown})")
    ax.grid(True, alpha=0.3)
    return ax


def pfc_timeline(trace: Trace, ax: Any = None, *, top: int = 24) -> Any:
    """Paused intervals as horizontal bars, one lane per (switch, port,
    priority, direction): orange for pauses the switch sent (its neighbour
    on that port was asked to stop), red for pauses it received (its own
    egress was stopped). Intervals come from pfc_pauses (pause frames, their
    quanta at the port's link rate, and resumes); at most `top` lanes, the
    longest paused first. Returns the Axes.
    """
    pauses = pfc_pauses(trace)
    keys = ["node", "port", "priority", "sent"]
    lanes = (pauses.groupby(keys, sort=True)
             .agg(total=("duration_us", "sum"), label=("queue_label", "first"),
                  peer=("peer_name", "first"))
             .reset_index() if len(pauses) else pd.DataFrame())
    n_lanes = len(lanes)
    ax = _axes(ax, (7.0, 1.2 + 0.32 * max(min(n_lanes, top), 1)))
    end_us = trace.sim_time_ps / PS_PER_US
    if n_lanes == 0:
        _no_data(ax, "no PFC pauses")
        ax.set_yticks([])
        if end_us > 0:
            ax.set_xlim(0, end_us)
    else:
        lanes = lanes.sort_values(["total", "node", "port", "priority", "sent"],
                                  ascending=[False, True, True, True, True], kind="stable")
        lanes = lanes.head(top).sort_values(keys, kind="stable").reset_index(drop=True)
        colors = {True: "tab:orange", False: "tab:red"}
        ticks = []
        for i, lane in lanes.iterrows():
            p = pauses[(pauses["node"] == lane["node"]) & (pauses["port"] == lane["port"])
                       & (pauses["priority"] == lane["priority"])
                       & (pauses["sent"] == lane["sent"])]
            spans = list(zip(p["start_us"], p["duration_us"]))
            ax.broken_barh(spans, (i - 0.35, 0.7), facecolors=colors[bool(lane["sent"])],
                           edgecolor="none")
            way = "sent to" if lane["sent"] else "from"
            ticks.append(f"{lane['label']} {way} {lane['peer']}" if lane["peer"]
                         else f"{lane['label']} {'sent' if lane['sent'] else 'received'}")
        ax.set_yticks(range(len(lanes)), ticks, fontsize="small")
        ax.set_ylim(len(lanes) - 0.5, -0.5)
        ax.set_xlim(0, max(end_us, float(pauses["end_us"].max())))
        from matplotlib.patches import Patch

        present = sorted(set(lanes["sent"].astype(bool)), reverse=True)
        ax.legend(handles=[Patch(color=colors[s], label="sent pause" if s else "received pause")
                           for s in present], fontsize="small", loc="upper right")
    ax.set_xlabel("time (us)")
    shown = (f"longest {top} of {n_lanes} lanes" if n_lanes > top
             else _plural(n_lanes, "lane"))
    ax.set_title(f"PFC paused intervals ({shown}: switch:port/priority)")
    ax.grid(True, axis="x", alpha=0.3)
    return ax


def link_throughput(trace: Trace, ax: Any = None, *, top: int = 8,
                    payload: bool = False) -> Any:
    """Throughput (Gb/s) over time of the `top` busiest link directions, from
    /link_samples via link_intervals: wire bytes (all frames, with preamble
    and gap), or RDMA payload with `payload`. Each interval is drawn flat
    over its span, and 0 where a direction has no row (sparse: no change).
    Busiest: the most wire bytes. Needs output.link_interval. Returns the Axes.
    """
    iv = link_intervals(trace)
    ax = _axes(ax, (7.0, 4.0))
    col = "payload_gbps" if payload else "wire_gbps"
    dcol = "d_payload_bytes" if payload else "d_wire_bytes"
    end_us = _end_ps(trace, iv["time"]) / PS_PER_US
    busy = iv.groupby("row")[dcol].sum() if len(iv) else pd.Series(dtype="int64")
    busy = busy[busy > 0]
    n_busy = len(busy)
    if n_busy == 0:
        _no_data(ax, "no link carried bytes" if len(iv) else "no link samples")
        if end_us > 0:
            ax.set_xlim(0, end_us)
    else:
        order = busy.reset_index().sort_values([dcol, "row"], ascending=[False, True],
                                               kind="stable").head(top)
        for row in order["row"]:
            d = iv[(iv["row"] == row) & (iv["time"] > iv["interval_start"])]
            xs: list[float] = [0.0]
            ys: list[float] = [0.0]
            for a, b, g in zip(d["interval_start_us"], d["time_us"], d[col].fillna(0.0)):
                if a > xs[-1]:
                    xs += [xs[-1], a]
                    ys += [0.0, 0.0]
                xs += [a, b]
                ys += [g, g]
            xs += [xs[-1], end_us]
            ys += [0.0, 0.0]
            ax.plot(xs, ys, linewidth=1.2, label=d["label"].iloc[0] if len(d) else f"row {row}")
        rates = iv.loc[iv["row"].isin(order["row"]), "rate_bps"]
        rates = pd.to_numeric(rates, errors="coerce").dropna().unique()
        for r in rates:
            if r > 0:
                ax.axhline(r / 1e9, color="0.5", linestyle=":", linewidth=1)
        ax.set_xlim(0, end_us)
        ax.set_ylim(bottom=0)
        ax.legend(fontsize="small", loc="best")
    ax.set_xlabel("time (us)")
    ax.set_ylabel(("payload" if payload else "wire") + " throughput (Gb/s)")
    shown = (f"busiest {top} of {n_busy} busy link directions" if n_busy > top
             else _plural(n_busy, "busy link direction"))
    ax.set_title(f"link throughput ({shown})")
    ax.grid(True, alpha=0.3)
    return ax


def cc_rates(trace: Trace, ax: Any = None, *, top: int = 8, target: bool = True) -> Any:
    """Each sending QP's congestion-control rate (Gb/s) over time, from
    /cc_samples: DCQCN's current rate RC as solid steps and, with `target`,
    its target rate RT dashed in the same colour.

    A row holds the QP's state from its time until the next row (sparse: on
    change, decimated to output.cc_interval), so each QP is drawn as steps
    from its first row to the end of the run. Before its first row a QP is
    at its starting rate, not drawn. The `top` QPs with the most changes are
    drawn (a flow's parts are "label/part k"). Needs output.cc_interval.
    Returns the Axes.
    """
    cc = trace.require("cc_samples")
    ax = _axes(ax, (7.0, 4.2))
    senders = cc[cc["sender"] & cc["rate_gbps"].notna()] if len(cc) else cc
    end_us = _end_ps(trace, cc["time"]) / PS_PER_US
    keys = ["flow", "part", "node", "qpn"]
    n_qps = len(senders.groupby(keys)) if len(senders) else 0
    if n_qps == 0:
        _no_data(ax, "no congestion-control changes" if len(cc) == 0 else "no sending QP changed")
        if end_us > 0:
            ax.set_xlim(0, end_us)
    else:
        rank = (senders.groupby(keys).agg(changes=("changes", "sum"), label=("flow_label", "first"))
                .reset_index()
                .sort_values(["changes", "flow", "part"], ascending=[False, True, True],
                             kind="stable").head(top)
                .sort_values(["flow", "part"], kind="stable"))
        parts = senders.groupby("flow")["part"].nunique()
        for _, r in rank.iterrows():
            q = senders[(senders["flow"] == r["flow"]) & (senders["part"] == r["part"])
                        & (senders["node"] == r["node"]) & (senders["qpn"] == r["qpn"])]
            q = q.sort_values("time", kind="stable")
            x = np.concatenate([q["time_us"].to_numpy(), [end_us]])
            label = r["label"] if parts.get(r["flow"], 1) <= 1 else f"{r['label']}/part {r['part']}"
            y = q["rate_gbps"].to_numpy()
            (line,) = ax.step(x, np.concatenate([y, [y[-1]]]), where="post", linewidth=1.2,
                              label=label)
            if target and q["target_gbps"].notna().all():
                t = q["target_gbps"].to_numpy()
                ax.step(x, np.concatenate([t, [t[-1]]]), where="post", linewidth=0.8,
                        linestyle="--", color=line.get_color())
        ax.set_xlim(0, end_us)
        ax.set_ylim(bottom=0)
        ax.legend(fontsize="small", loc="best")
    ax.set_xlabel("time (us)")
    ax.set_ylabel("rate (Gb/s)" + (": RC solid, RT dashed" if target else ""))
    shown = (f"{top} of {n_qps} sending QPs" if n_qps > top else _plural(n_qps, "sending QP"))
    ax.set_title(f"congestion-control rate ({shown})")
    ax.grid(True, alpha=0.3)
    return ax


def _size_label(b: float) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= scale:
            return f"{b / scale:.3g}{unit}"
    return f"{b:g}B"


def busbw_by_size(source: Any, ax: Any = None) -> Any:
    """busbw (GB/s, nccl-tests' definition) against size on a log2 axis, one
    line per swept collective, as nccl-tests' table gives them: from a
    trace's /collective_sweep or a summary.json (path or dict; sweep_table).
    Sizes whose timed iterations did not finish are left out. Returns the Axes."""
    ax = _axes(ax, (6.4, 4.2))
    t = sweep_table(source)
    done = t[t["done"]]
    for name, g in done.groupby("name", sort=False):
        g = g.sort_values("size_bytes", kind="stable")
        ax.plot(g["size_bytes"], g["busbw_gbps"], marker="o", label=str(name))
    if len(done) == 0:
        _no_data(ax, "no finished sweep size")
    else:
        ax.set_xscale("log", base=2)
        ticks = sorted(done["size_bytes"].unique())
        ax.set_xticks(ticks, [_size_label(b) for b in ticks], rotation=45, ha="right")
        ax.minorticks_off()
        ax.set_ylim(bottom=0)
        ax.legend(fontsize="small")
    ax.set_xlabel("size (bytes, as nccl-tests reports it)")
    ax.set_ylabel("busbw (GB/s)")
    ax.grid(True, alpha=0.3)
    ax.set_title("collective busbw by size")
    return ax


def collective_timeline(trace: Trace, ax: Any = None, *, item: int | None = None,
                        iteration: int | None = None) -> Any:
    """One iteration of one collective from /collective_steps: a row per
    rank (rank 0 at the top), a bar per algorithm step from the rank's first
    post of the step to the arrival of the last element it receives in it.
    `item` defaults to the first collective, `iteration` to its last (a
    sweep's: the last timed one of the largest size). Steps not reached are
    left out. Returns the Axes."""
    steps = trace.require("collective_steps")
    ax = _axes(ax, (7.0, 4.2))
    if len(steps) == 0:
        _no_data(ax, "no collective steps")
        return ax
    item = int(steps["item"].min()) if item is None else item
    s = steps[steps["item"] == item]
    iteration = int(s["iteration"].max()) if iteration is None else iteration
    s = s[(s["iteration"] == iteration) & (s["start"] >= 0) & (s["end"] >= 0)]
    if len(s) == 0:
        _no_data(ax, f"iteration {iteration} of traffic[{item}] has no finished step")
        return ax
    t0 = s["start_us"].min()
    n_steps = int(steps["step"].max()) + 1
    cmap = matplotlib_colormap(n_steps)
    for _, r in s.iterrows():
        ax.barh(int(r["rank"]), r["end_us"] - r["start_us"], left=r["start_us"] - t0, height=0.8,
                color=cmap(int(r["step"])), edgecolor="white", linewidth=0.3)
    ranks = sorted(s["rank"].unique())
    ax.set_yticks(ranks, [f"{int(k)} {s[s['rank'] == k]['node_name'].iloc[0]}" for k in ranks],
                  fontsize="small")
    ax.invert_yaxis()
    ax.set_xlabel(f"time from the iteration's first post (us; it starts at {t0:g} us)")
    ax.set_ylabel("rank")
    ax.grid(True, axis="x", alpha=0.3)
    ax.set_title(f"traffic[{item}] iteration {iteration}: {_plural(n_steps, 'step')} per rank "
                 f"(colour: step)")
    return ax


# --------------------------------------------------------------------------
# InfiniBand, and the same fabric on two transports


def transport(trace: Trace) -> str:
    """The run's fabric.transport: "roce_v2" or "infiniband" (from the
    resolved scenario; without /meta/scenario, "infiniband" if the trace has
    /vl_buffers, else "unknown")."""
    if not trace.scenario:
        return "infiniband" if trace.has("vl_buffers") else "unknown"
    return str(trace.scenario.get("fabric", {}).get("transport", "roce_v2"))


def _labelled(runs: Any) -> dict[str, Trace]:
    """`runs` as {label: Trace}: a mapping as given; a list labelled by
    transport, "#2", "#3", ... after repeats."""
    if hasattr(runs, "items"):
        return dict(runs.items())
    out: dict[str, Trace] = {}
    for tr in runs:
        base = transport(tr)
        label, n = base, 1
        while label in out:
            n += 1
            label = f"{base}#{n}"
        out[label] = tr
    return out


def transport_table(runs: Any) -> pd.DataFrame:
    """Runs of the same fabric side by side (e.g. RoCE v2 and InfiniBand):
    one row per run, indexed by its label (`runs` maps labels to Traces; a
    list of Traces is labelled by transport, "#2" ... after repeats).

    Columns: transport; flows, completed; last_completion_us (the latest
    finish), fct_mean_us and fct_p99_us (nearest rank) of the completed
    flows; data_frames and control_frames (link-level control frames: PFC
    frames on RoCE, flow-control packets on InfiniBand), summed over
    /links, and control_per_data; peak_queue_kb (the largest egress
    backlog of any switch queue, /queue_totals) and xmit_wait_us (the
    switch queues' PortVLXmitWait summed: time a head packet waited for
    credits; 0 on RoCE). A figure whose table the trace lacks is NaN.
    """
    runs = _labelled(runs)
    rows = []
    for label, tr in runs.items():
        flows = tr.require("flows")
        done = flows[flows["done"]]
        fct = np.sort(done["fct_us"].to_numpy(dtype="float64"))
        links = tr.links
        data = int(links["data_frames"].sum()) if links is not None else np.nan
        control = int(links["control_frames"].sum()) if links is not None else np.nan
        qt = tr.queue_totals
        wait = (int(qt["xmit_wait_ps"].sum()) if qt is not None and "xmit_wait_ps" in qt
                else np.nan)
        rows.append({
            "label": label,
            "transport": transport(tr),
            "flows": len(flows),
            "completed": len(done),
            "last_completion_us": float(done["finish_us"].max()) if len(done) else np.nan,
            "fct_mean_us": float(fct.mean()) if len(fct) else np.nan,
            "fct_p99_us": _nearest_rank(fct, 99) if len(fct) else np.nan,
            "data_frames": data,
            "control_frames": control,
            "control_per_data": control / data if data else np.nan,
            "peak_queue_kb": (float(qt["peak_bytes"].max()) / 1e3 if qt is not None and len(qt)
                              else 0.0 if qt is not None else np.nan),
            "xmit_wait_us": wait / PS_PER_US,
        })
    return pd.DataFrame(rows).set_index("label")


def fct_cdf_compare(runs: Any, ax: Any = None, *, log: bool = True) -> Any:
    """FCT CDFs of several runs on one Axes, one curve per run (`runs` maps
    labels to Traces; a list of Traces is labelled as transport_table does),
    each labelled with its completed flows and mean FCT. Returns the Axes."""
    runs = _labelled(runs)
    ax = _axes(ax, (6.4, 4.2))
    smallest = math.inf
    for label, tr in runs.items():
        flows = tr.require("flows")
        x = np.sort(flows[flows["done"]]["fct_us"].to_numpy(dtype="float64"))
        if len(x) == 0:
            ax.plot([], [], label=f"{label}: no completed flows")
            continue
        smallest = min(smallest, float(x[0]))
        y = np.arange(1, len(x) + 1) / len(x)
        ax.step(np.concatenate([[x[0]], x]), np.concatenate([[0.0], y]), where="post",
                label=f"{label}: {len(x)} of {len(flows)} flows, mean {x.mean():.1f} us")
    if log and 0 < smallest < math.inf:
        ax.set_xscale("log")
    ax.set_xlabel("flow completion time (us)")
    ax.set_ylabel("fraction of flows")
    ax.set_ylim(0, 1.02)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small", loc="best")
    ax.set_title("FCT CDF: " + ", ".join(str(k) for k in runs))
    return ax


def vl_buffer_occupancy(trace: Trace, ax: Any = None, *, top: int = 8) -> Any:
    """InfiniBand: switch receive buffers per port and VL (KB, in 64-byte
    blocks) over time, for the `top` busiest; /vl_buffers is sampled with
    /queues (output.queue_interval) and sparse in the same way, so drawn as
    queue_depth draws queues. A VL's buffer full (its vl_buffer) means its
    sender waits for credits. Returns the Axes."""
    return _busiest_steps(_axes(ax, (7.0, 4.0)), trace, trace.require("vl_buffers"),
                          ["node", "port", "vl"], "vl_label", "from", top, "VL buffer",
                          "no VL buffer held a block at a sample", "VL buffer in use (KB)",
                          "switch VL receive buffers")


def matplotlib_colormap(n: int) -> Callable[[int], Any]:
    """n distinct colours, by step (tab20 or viridis for more)."""
    from matplotlib import colormaps

    if n <= 20:
        cm = colormaps["tab20" if n > 10 else "tab10"]
        return lambda i: cm(i % cm.N)
    cm = colormaps["viridis"]
    return lambda i: cm(i / max(1, n - 1))
