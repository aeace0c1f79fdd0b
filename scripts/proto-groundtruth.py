#!/usr/bin/env python3
"""Ground truth for the recordings of scripts/record-proto-traces.js, made without
taskchain: each trace is read by Google's protobuf runtime (scripts/proto-to-json.py, a
protobuf trace) or json.load (a JSON trace), and its long tasks and chains are those of
scripts/reference.py, the separate Python implementation of docs/METHOD.md §1. A task is
`intended` when its chain is one the page's code means (INTENDED, from the pages in
record-proto-traces.js); every other long task (profiler start-up, the hidden WebUI
renderer, GC) is listed with what the trace shows, as ../shared/traces/chromium/ does.

Usage: proto-groundtruth.py RECORDED_DIR OUT_DIR [--trim] [--gzip]
  Writes OUT_DIR/NAME.pftrace and OUT_DIR/NAME.json (both formats of each scenario) with
  NAME.<format>.groundtruth.json beside them, in ../shared/scripts/check-ground-truth's
  format (schema longtask-groundtruth/1: trace_file, long_tasks[] with expected_leaf,
  expected_chain and observed pid/tid/ts, renderer_main_threads).
  --trim keeps the threads of the page's renderer processes (process name "Renderer") and
  the browser's main thread (TracingStartedInBrowser), as whole packet sequences, so that
  interned data and incremental timestamps stay intact; packets are copied byte for byte.
  --gzip writes NAME.pftrace.gz and NAME.json.gz.
"""
import gzip
import importlib.util
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def load_module(name, file):
    spec = importlib.util.spec_from_file_location(name, os.path.join(HERE, file))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


reference = load_module("reference", "reference.py")
proto_to_json = load_module("proto_to_json", "proto-to-json.py")

# The chains each page means (outermost first, as reference.py names them).
INTENDED = {
    "click_chain": [["onOrderClick", "parseOrders", "computeTotals", "busyLoop"]],
    "iframes": [["onRecalcClick", "recalcWidget", "measureWidget"],
                ["onWidgetClick", "refreshWidget", "widgetLoop"],
                ["onCrossMessage", "crossCompute", "crossLoop"]],
    "native_layout": [["onMeasureClick", "resizeColumns"]],
    "split_70_30": [["onReportClick", "buildReport", "aggregateSales"],
                    ["onDashboardClick", "refreshDashboard", "computeTrends"]],
    "worker_and_main": [["drawChart", "layoutChart", "computeBars"]],
    "startup_load": [["(anonymous)", "bootstrap", "buildSearchIndex", "tokenizeCorpus"],
                     ["onDomReady", "hydrateList", "renderListItems"]],
    "session": [["onSyncTimer", "syncInventory", "reconcileStock"],
                ["onPortMessage", "applyPatch", "mergeDocument"],
                ["drawScene", "rasterizeTiles"],
                ["onCacheReady", "refreshCache", "rebuildCache"],
                ["onQueryInput", "suggestCompletions", "rankSuggestions"],
                ["onFilterClick", "applyFilters", "sortRows"],
                ["onRowsScroll", "updateVisibleRows"],
                ["onCatalogTimer", "decodeCatalog"]],
}


def varint(b, i):
    v = shift = 0
    while True:
        x = b[i]
        i += 1
        v |= (x & 0x7F) << shift
        shift += 7
        if x < 0x80:
            return v, i


def trim_proto(raw):
    """The packets of the kept sequences (and those on no thread), byte for byte."""
    from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb
    spans = []
    seq_thread, process_name = {}, {}
    i = 0
    while i < len(raw):
        start = i
        _, i = varint(raw, i)
        n, i = varint(raw, i)
        p = pb.TracePacket.FromString(raw[i:i + n])
        i += n
        s = p.trusted_packet_sequence_id
        if p.HasField("track_descriptor"):
            d = p.track_descriptor
            if d.HasField("thread"):
                seq_thread[s] = (d.thread.pid, d.thread.thread_name)
            if d.HasField("process"):
                # Chrome names a renderer "Renderer" in one descriptor and by its command
                # line in another.
                process_name.setdefault(d.process.pid, set()).add(d.process.process_name)
        spans.append((s, start, i))

    def keep(s):
        if s not in seq_thread:
            return True
        pid, thread = seq_thread[s]
        names = process_name.get(pid, set())
        renderer = any(n == "Renderer" or "--type=renderer" in n for n in names)
        return (renderer and "WebUI Top Renderer" not in names) or (
            "Browser" in names and thread == "CrBrowserMain")

    return b"".join(raw[a:b] for s, a, b in spans if keep(s))


def trim_json(events):
    names = {e["pid"]: (e.get("args") or {}).get("name") for e in events
             if e.get("ph") == "M" and e.get("name") == "process_name"}
    browser_main = {(e["pid"], e["tid"]) for e in events
                    if e.get("ph") == "M" and e.get("name") == "thread_name"
                    and (e.get("args") or {}).get("name") == "CrBrowserMain"}
    return [e for e in events if names.get(e.get("pid")) == "Renderer"
            or (e.get("pid"), e.get("tid")) in browser_main]


def ground_truth(scenario, trace_file, json_path):
    events = reference.load(json_path)
    threads = sorted(reference.main_threads(events))
    rows = reference.reference(json_path)
    wanted = INTENDED.get(scenario, [])
    tasks = []
    for k, r in enumerate(sorted(rows, key=lambda r: r["task_ts_us"])):
        chain = r["chain"]
        intended = chain in wanted
        tasks.append({
            "index": k,
            "id": f"{scenario}-{k}",
            "intended": intended,
            "expected_leaf": chain[-1] if chain else "",
            "expected_chain": chain,
            "note": "the page's chain" if intended else
                    "not produced on purpose by the page: what the trace shows",
            "observed": {"pid": r["pid"], "tid": r["tid"], "ts": r["task_ts_us"],
                         "dur_ms": r["task_dur_ms"], "status": r["status"],
                         "window_samples": r["window_samples"],
                         "target_samples": r["target_samples"]},
        })
    found = {tuple(t["expected_chain"]) for t in tasks if t["intended"]}
    missing = [c for c in wanted if tuple(c) not in found]
    return {
        "schema": "longtask-groundtruth/1",
        "trace_file": trace_file,
        "scenario": scenario,
        "made_by": "scripts/proto-groundtruth.py (Google protobuf + scripts/reference.py)",
        "rules": "long task: top-level RunTask over 50 ms on a CrRendererMain thread; "
                 "chain and leaf as scripts/reference.py resolves them",
        "renderer_main_threads": [{"pid": p, "tid": t} for p, t in threads],
        "long_tasks": tasks,
        "intended_chains_not_found": missing,
    }


def main(src, dst, trim, gz):
    os.makedirs(dst, exist_ok=True)
    names = sorted({f.rsplit(".", 1)[0] for f in os.listdir(src) if f.endswith(".pftrace")})
    for name in names:
        with tempfile.TemporaryDirectory() as tmp:
            raw = open(os.path.join(src, name + ".pftrace"), "rb").read()
            if trim:
                raw = trim_proto(raw)
            as_json = os.path.join(tmp, "proto.json")
            plain = os.path.join(tmp, "plain.pftrace")
            open(plain, "wb").write(raw)
            proto_to_json.main(plain, as_json)
            events = reference.load(os.path.join(src, name + ".json"))
            if trim:
                events = trim_json(events)
            twin = os.path.join(tmp, "twin.json")
            json.dump({"traceEvents": events}, open(twin, "w"), separators=(",", ":"))
            for ext, data_path, payload in [("pftrace", as_json, raw),
                                             ("json", twin, open(twin, "rb").read())]:
                trace_file = f"{name}.{ext}" + (".gz" if gz else "")
                out = os.path.join(dst, trace_file)
                if gz:
                    with gzip.GzipFile(out, "wb", mtime=0) as g:
                        g.write(payload)
                else:
                    open(out, "wb").write(payload)
                gt = ground_truth(name, trace_file, data_path)
                with open(os.path.join(dst, f"{name}.{ext}.groundtruth.json"), "w") as f:
                    json.dump(gt, f, indent=1)
                n = len(gt["long_tasks"])
                k = sum(t["intended"] for t in gt["long_tasks"])
                miss = gt["intended_chains_not_found"]
                print(f"{trace_file}: {os.path.getsize(out)} bytes, {n} long tasks, "
                      f"{k} intended" + (f", NOT FOUND: {miss}" if miss else ""))


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 2:
        print(__doc__)
        sys.exit(2)
    main(args[0], args[1], "--trim" in sys.argv, "--gzip" in sys.argv)
