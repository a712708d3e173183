#!/usr/bin/python3
"""Write the standard figures of one rdmasim trace as PNG files.

    /usr/bin/python3 plots/figures.py out/quickstart/trace.h5 --out out/quickstart/figures

Writes every figure in FIGURES whose tables the trace has; a figure whose
table is absent (e.g. queue_depth.png without output.queue_interval) is
skipped with a note on stderr. A table that is present but empty still gives
its figure, saying so (e.g. "no PFC pauses"). Exit code 0 on success
(even if some figures were skipped), 2 if the trace cannot be read.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Callable

import matplotlib

matplotlib.use("Agg")  # files only; never a window

from matplotlib.figure import Figure  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import rdmasim_trace as rt  # noqa: E402

# File name -> (figure size in inches, function drawing into an Axes).
# A new standard figure is one more line here.
FIGURES: dict[str, tuple[tuple[float, float], Callable[[rt.Trace, Any], Any]]] = {
    "fct_cdf.png": ((6.4, 4.2), lambda tr, ax: rt.fct_cdf(tr, ax=ax)),
    "slowdown_by_size.png": ((6.4, 4.2), lambda tr, ax: rt.slowdown_by_size(tr, ax=ax)),
    "link_utilisation.png": ((6.4, 5.4), lambda tr, ax: rt.link_utilisation(tr, ax=ax)),
    # Only when the run sampled queues (output.queue_interval) ...
    "queue_depth.png": ((7.0, 4.2), lambda tr, ax: rt.queue_depth(tr, ax=ax)),
    # ... recorded PFC frames (output.pfc_events, on whenever a trace is written) ...
    "pfc_timeline.png": ((7.0, 4.2), lambda tr, ax: rt.pfc_timeline(tr, ax=ax)),
    # ... sampled link counters (output.link_interval) ...
    "link_throughput.png": ((7.0, 4.2), lambda tr, ax: rt.link_throughput(tr, ax=ax)),
    # ... or congestion-control state (output.cc_interval).
    "cc_rates.png": ((7.0, 4.2), lambda tr, ax: rt.cc_rates(tr, ax=ax)),
    # InfiniBand with sampled queues: the switches' VL receive buffers.
    "vl_buffers.png": ((7.0, 4.2), lambda tr, ax: rt.vl_buffer_occupancy(tr, ax=ax)),
    # Collectives: a sweep's busbw by size, and one iteration per rank.
    "collective_busbw.png": ((6.4, 4.2), lambda tr, ax: rt.busbw_by_size(tr, ax=ax)),
    "collective_timeline.png": ((7.0, 4.2), lambda tr, ax: rt.collective_timeline(tr, ax=ax)),
}


def write_figures(trace: rt.Trace, out: Path, dpi: int = 120) -> list[Path]:
    """Draw every standard figure the trace supports into `out`; the files written."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, (size, draw) in FIGURES.items():
        fig = Figure(figsize=size, layout="constrained")
        try:
            draw(trace, fig.add_subplot())
        except rt.TableMissing as e:
            print(f"figures: skipping {name}: {e}", file=sys.stderr)
            continue
        path = out / name
        # No "Software" entry: the same trace gives the same bytes on any machine.
        fig.savefig(path, dpi=dpi, metadata={"Software": None})
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trace", type=Path, help="a trace.h5 written by rdmasim run")
    ap.add_argument("--out", type=Path, default=None,
                    help="folder for the PNG files (default: the trace's folder)")
    ap.add_argument("--dpi", type=int, default=120)
    args = ap.parse_args(argv)
    try:
        trace = rt.load(args.trace)
    except (OSError, ValueError, KeyError) as e:
        print(f"figures: cannot read {args.trace}: {e}", file=sys.stderr)
        return 2
    out = args.out if args.out is not None else args.trace.parent
    for path in write_figures(trace, out, dpi=args.dpi):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
