#!/usr/bin/env python3
"""Regenerate the parameter tables in docs/*.md from the parameter tables in the code.

    tools/update_docs.py RDMASIM            rewrite the blocks that changed
    tools/update_docs.py RDMASIM --check    exit 1 if any block is stale (a test runs this)

A block is the text between

    <!-- params KEY.PATH [group=G] [exclude=G] -->
    <!-- /params -->

and is replaced by `rdmasim describe --markdown KEY.PATH [--group G | --exclude G]`
(KEY.PATH "." is the top level).
It also checks docs/schema.json against `rdmasim schema`. Python 3 standard library only.
"""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BLOCK = re.compile(r"(<!-- params ([^ >]+)((?: [a-z]+=[^ >]+)*) -->\n)(.*?)(<!-- /params -->)", re.S)


def generate(rdmasim, path, opts):
    cmd = [rdmasim, "describe", "--markdown"] + ([] if path == "." else [path])
    for opt in opts.split():
        key, value = opt.split("=", 1)
        cmd += [f"--{key}", value]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)}: {out.stderr.strip()}")
    return out.stdout


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    rdmasim, check = argv[1], "--check" in argv[2:]
    stale = []
    for doc in sorted((ROOT / "docs").glob("*.md")):
        text = doc.read_text()

        def replace(m):
            body = generate(rdmasim, m.group(2), m.group(3))
            if body != m.group(4):
                stale.append(f"{doc.relative_to(ROOT)}: params {m.group(2)}{m.group(3)}")
            return m.group(1) + body + m.group(5)

        new = BLOCK.sub(replace, text)
        if new != text and not check:
            doc.write_text(new)
    schema = subprocess.run([rdmasim, "schema"], capture_output=True, text=True, check=True).stdout
    schema_path = ROOT / "docs" / "schema.json"
    if not schema_path.exists() or schema_path.read_text() != schema:
        stale.append("docs/schema.json")
        if not check:
            schema_path.write_text(schema)
    if check and stale:
        for s in stale:
            print(f"stale: {s}", file=sys.stderr)
        print("run: tools/update_docs.py build/sim/cli/rdmasim", file=sys.stderr)
        return 1
    for s in stale:
        print(f"updated {s}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
