#!/usr/bin/python3
"""Test that plots/trace_tour.ipynb runs headless and its figures are images.

    /usr/bin/python3 plots/test_notebook.py build/sim/cli/rdmasim

Runs the rdmasim commands the notebook's text gives (its indented
`build/sim/cli/rdmasim run ...` lines) in a temporary folder laid out like
the repository (out/, plots/), executes the notebook there with nbclient on
Debian's python3 kernel (python3-nbclient, python3-ipykernel: tools/setup.sh),
and checks that no cell raised, that every cell whose value is a figure
(its last line ends in `.figure` or is `fig`) shows a PNG image, and that no
output is a figure's bare text (`<Figure size 600x400 with 1 Axes>`).
Exit code 0 when every check passes.
"""

from __future__ import annotations

import base64
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
NOTEBOOK = HERE / "trace_tour.ipynb"

try:
    import nbclient
    import nbformat
except ImportError as e:
    print(f"plots notebook: {e}: install python3-nbclient python3-ipykernel (tools/setup.sh)", file=sys.stderr)
    sys.exit(1)


def run_commands(nb, binary: str, tmp: Path) -> int:
    """The notebook's own commands for making its traces, run from tmp."""
    count = 0
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        for line in cell.source.splitlines():
            m = re.match(r"^    build/sim/cli/rdmasim (run .*)$", line)
            if not m:
                continue
            args = m.group(1).split()
            args = [str(ROOT / a) if a.startswith("scenarios/") else a for a in args]
            r = subprocess.run([binary] + args + ["--quiet"], cwd=tmp, capture_output=True, text=True)
            if r.returncode != 0:
                raise SystemExit(f"plots notebook: {line.strip()}: exit {r.returncode}: {r.stderr.strip()}")
            count += 1
    return count


def png_size(data: str) -> tuple[int, int]:
    raw = base64.b64decode(data)
    if raw[:8] != b"\x89PNG\r\n\x1a\n" or raw[12:16] != b"IHDR":
        raise AssertionError("not a PNG")
    return struct.unpack(">II", raw[16:24])


def main() -> int:
    if len(sys.argv) != 2:
        print(f"usage: {sys.argv[0]} RDMASIM_BINARY", file=sys.stderr)
        return 2
    nb = nbformat.read(NOTEBOOK, as_version=4)
    with tempfile.TemporaryDirectory(prefix="rdmasim_notebook_") as d:
        tmp = Path(d)
        runs = run_commands(nb, sys.argv[1], tmp)
        assert runs == 2, f"expected the notebook to give 2 rdmasim commands, found {runs}"
        (tmp / "plots").mkdir()
        shutil.copy(HERE / "rdmasim_trace.py", tmp / "plots")
        # As headless as CI: no display, and the kernel's debugger quiet about frozen modules.
        env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "MPLBACKEND")}
        env["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"
        os.environ.clear()
        os.environ.update(env)
        client = nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                                         resources={"metadata": {"path": str(tmp / "plots")}})
        client.execute()

    figures = 0
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        for out in cell.outputs:
            assert out.output_type != "error", f"{cell.id}: {out.get('ename')}: {out.get('evalue')}"
            data = out.get("data", {})
            text = data.get("text/plain", "")
            # A mime bundle always carries text/plain; a figure's must come with its image.
            assert not text.startswith("<Figure size") or "image/png" in data, \
                f"{cell.id}: a figure shown as text only: {text}"
        last = cell.source.strip().splitlines()[-1].strip() if cell.source.strip() else ""
        if last.endswith(".figure") or last == "fig":
            images = [o for o in cell.outputs if "image/png" in o.get("data", {})]
            assert len(images) == 1, f"{cell.id}: {last}: expected one image/png output, got {cell.outputs}"
            width, height = png_size(images[0]["data"]["image/png"])
            assert width >= 200 and height >= 100, f"{cell.id}: a {width}x{height} image"
            figures += 1
    assert figures == 6, f"expected the notebook's 6 figures, found {figures}"
    print(f"plots notebook: {figures} figures, each a PNG image")
    return 0


if __name__ == "__main__":
    sys.exit(main())
