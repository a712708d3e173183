"""Load an rdmasim trace.h5 into pandas, and draw the standard figures.

    import rdmasim_trace as rt
    tr = rt.load("out/quickstart/trace.h5")
    tr.flows                    # one row per flow, names joined in, times in ps and us
    rt.goodput_table(tr)        # per-flow goodput in Gb/s
    ax = rt.fct_cdf(tr)         # returns the Axes; `ax.figure` shows it in a notebook

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
    "link_utilisation",
    "goodput_table",
    "PS_PER_US",
]

PS_PER_NS = 1_000
PS_PER_US = 1_000_000
PS_PER_MS = 1_000_000_000
PS_PER_S = 1_000_000_000_000


class TableMissing(LookupError):
    """A figure or table needs an HDF5 table that this trace does not have."""


# --------------------------------------------------------------------------
# The Trace and the table registry


@dataclass
class Trace:
    """Everything in one trace.h5.

    attrs     root attributes (rdmasim_version, git_revision, scenario_name,
              scenario_hash, status, seed, sim_time_ps), strings as str
    scenario  the resolved scenario, parsed from /meta/scenario ({} if absent)
    tables    every table read, by HDF5 path without the leading "/"
              ("nodes", "flows", "links", ...); registered tables are also
              attributes: `tr.flows` is `tr.tables.get("flows")`
    """

    path: Path
    attrs: dict[str, Any]
    scenario: dict[str, Any]
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)

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


def load(path: str | Path) -> Trace:
    """Read a trace.h5 into a Trace. Absent groups and tables are tolerated."""
    path = Path(path)
    with h5py.File(path, "r") as f:
        attrs = {k: _decode(v) for k, v in f.attrs.items()}
        for k, v in attrs.items():
            if isinstance(v, np.integer):
                attrs[k] = int(v)
        scenario: dict[str, Any] = {}
        if "meta/scenario" in f:
            scenario = json.loads(f["meta/scenario"].asstr()[()])
        trace = Trace(path=path, attrs=attrs, scenario=scenario)
        raw = {name: _read_table(f[name]) for name in _compound_datasets(f)}
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
    return pd.Series([names.get(int(i), f"#{int(i)}") for i in ids], index=ids.index, dtype=object)


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


# --------------------------------------------------------------------------
# Derived tables


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


# --------------------------------------------------------------------------
# Figures


def _axes(ax: Any, figsize: tuple[float, float]) -> Any:
    if ax is not None:
        return ax
    from matplotlib.figure import Figure

    return Figure(figsize=figsize, layout="constrained").add_subplot()


def _no_data(ax: Any, text: str) -> None:
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, color="0.4")


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
