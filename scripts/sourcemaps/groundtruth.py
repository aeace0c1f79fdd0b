#!/usr/bin/env python3
"""Writes samples/<case>/expected/groundtruth.json for the source-map samples, in the schema
of ../shared/traces/sourcemaps/check.py, without taskchain: the long tasks and their top
stacks from scripts/reference.py (the independent reference of the method), and each bundle
frame's original from the case's expected/functions.json (scripts/sourcemaps/truth.cjs:
Mozilla's source-map library and acorn). Then, for each case:

    python3 ../shared/traces/sourcemaps/check.py samples/<case>/expected/groundtruth.json OUT

Usage: scripts/sourcemaps/groundtruth.py CASE...
"""
import importlib.util
import json
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(os.path.dirname(here))
spec = importlib.util.spec_from_file_location("reference", os.path.join(here, "..", "reference.py"))
reference = importlib.util.module_from_spec(spec)
spec.loader.exec_module(reference)


def main(cases):
    for case in cases:
        d = os.path.join(root, "samples", case)
        trace = os.path.join(d, "trace.json.gz")
        functions = json.load(open(os.path.join(d, "expected", "functions.json")))["functions"]
        by_pos = {(f["generated"]["line"], f["generated"]["column"]): f["original"] for f in functions}
        tasks = []
        for i, r in enumerate(reference.reference(trace)):
            frames = r.get("frames", [])
            if not any((f["line"], f["column"]) in by_pos for f in frames if f["url"]):
                continue
            exp = []
            for f in frames:
                # Frames outside the bundle (none here but VM states) have no original.
                o = by_pos.get((f["line"], f["column"])) if f["url"] else None
                o = o or {"function": None, "source": None, "line": None, "column": None}
                exp.append(dict(f, url=f["url"] or None, original_function=o["function"],
                                original_source=o["source"], original_line=o["line"],
                                original_column=o["column"],
                                original_column_range=[o["column"], o["column"]]))
            tasks.append({"index": len(tasks), "id": f"task-{i}",
                          "observed": {"pid": r["pid"], "tid": r["tid"], "ts": r["task_ts_us"]},
                          "expected_frames_symbolicated": exp})
        out = {"schema": "longtask-groundtruth/1", "trace_file": f"samples/{case}/trace.json.gz",
               "made_by": "scripts/sourcemaps/groundtruth.py", "long_tasks": tasks}
        path = os.path.join(d, "expected", "groundtruth.json")
        with open(path, "w") as fh:
            json.dump(out, fh, indent=1)
            fh.write("\n")
        print(path, len(tasks), "tasks")


if __name__ == "__main__":
    main(sys.argv[1:])
