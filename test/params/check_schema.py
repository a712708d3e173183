#!/usr/bin/env python3
"""The JSON Schema of scenarios, with a real validator (python3-jsonschema).

    check_schema.py RDMASIM SOURCE_DIR

1. `rdmasim schema` is a valid draft 2020-12 schema and equals docs/schema.json.
2. Every *.json scenario in scenarios/ and bench/scenarios/ validates, and so
   does its resolved form (`rdmasim resolve`: every default filled in).
3. The schema rejects what the loader rejects and can see without the
   topology: an unknown key, a wrong type, a time without a unit, a value out
   of range, a key that applies only with another (each case below must fail
   validation, and `rdmasim validate` must exit 2 on it).
"""

import copy
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import jsonschema


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True)


def main(argv):
    rdmasim, src = argv[1], Path(argv[2])
    failures = []
    out = run([rdmasim, "schema"])
    if out.returncode != 0:
        print(f"FAIL rdmasim schema: exit {out.returncode}: {out.stderr}", file=sys.stderr)
        return 1
    schema = json.loads(out.stdout)
    jsonschema.Draft202012Validator.check_schema(schema)
    if (src / "docs" / "schema.json").read_text() != out.stdout:
        failures.append("docs/schema.json differs from `rdmasim schema` (run tools/update_docs.py)")
    validator = jsonschema.Draft202012Validator(schema)

    files = sorted((src / "scenarios").glob("*.json")) + sorted((src / "bench" / "scenarios").glob("*.json"))
    for f in files:
        doc = json.loads(f.read_text())
        for e in validator.iter_errors(doc):
            failures.append(f"{f.relative_to(src)}: {e.json_path}: {e.message[:200]}")
        res = run([rdmasim, "resolve", str(f)])
        if res.returncode != 0:
            failures.append(f"rdmasim resolve {f.relative_to(src)}: exit {res.returncode}: {res.stderr.strip()}")
            continue
        for e in validator.iter_errors(json.loads(res.stdout)):
            failures.append(f"resolved {f.relative_to(src)}: {e.json_path}: {e.message[:200]}")

    base = json.loads((src / "scenarios" / "quickstart.json").read_text())
    bad = {
        "unknown top key": lambda d: d.update(sed=1),
        "unknown nic key": lambda d: d["fabric"].update(nic={"ack_intervall": 2}),
        "time without unit": lambda d: d["fabric"]["link"].update(delay=500),
        "rate typo": lambda d: d["fabric"]["link"].update(rate="400Gpbs"),
        "mtu out of range": lambda d: d["fabric"].update(mtu=8192),
        "priority out of range": lambda d: d["fabric"].update(nic={"data_priority": 9}),
        "choice not valid": lambda d: d["traffic"][0].update(op="atomic"),
        "unknown kind": lambda d: d["topology"].update(kind="dragonfly"),
        "key of another kind": lambda d: d["topology"].update(leaves=2),
        "shift without pattern shift": lambda d: d["traffic"].append(
            {"kind": "permutation", "shift": 1, "size": 1}),
        "fat_tree leaves with k": lambda d: d.update(topology={"kind": "fat_tree", "k": 4, "leaves": 2}),
        "fat_tree without hosts_per_leaf": lambda d: d.update(
            topology={"kind": "fat_tree", "leaves": 2, "spines": 1}),
        "three-tier key on two tiers": lambda d: d.update(
            topology={"kind": "fat_tree", "leaves": 2, "spines": 1, "hosts_per_leaf": 2, "pods": 2}),
        "missing topology": lambda d: d.pop("topology"),
        "negative size": lambda d: d["traffic"][0].update(size=-4096),
        "preset misspelt": lambda d: d["fabric"].update(switch={"preset": "tomahawk9"}),
        "host set with an unknown key": lambda d: d["traffic"].append(
            {"kind": "all_to_all", "hosts": {"leafs": [0, 1]}, "size": 1}),
        "host set mixing two forms": lambda d: d["traffic"].append(
            {"kind": "all_to_all", "hosts": {"leaf": 0, "union": []}, "size": 1}),
        "headroom word misspelt": lambda d: d["fabric"].update(switch={"pfc": {"headroom": "automatic"}}),
    }
    with tempfile.TemporaryDirectory(prefix="rdmasim-schema.") as tmp:
        for name, mutate in bad.items():
            doc = copy.deepcopy(base)
            mutate(doc)
            if validator.is_valid(doc):
                failures.append(f"schema accepts bad input: {name}: {json.dumps(doc)[:200]}")
            path = Path(tmp) / "bad.json"
            path.write_text(json.dumps(doc))
            res = run([rdmasim, "validate", str(path)])
            if res.returncode != 2:
                failures.append(f"rdmasim validate accepts bad input ({res.returncode}): {name}")
    for f in failures:
        print(f"FAIL schema: {f}", file=sys.stderr)
    if not failures:
        print(f"schema: {len(files)} scenarios and their resolved forms validate; {len(bad)} bad inputs rejected")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
