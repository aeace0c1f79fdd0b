#!/usr/bin/env python3
"""Writes small seed inputs (at most 64 KB each) for the fuzz targets into fuzz/corpus/<target>,
cut from the real traces of ../shared/traces and samples/:

- pipeline, split, gzip_stream: a control byte (see the targets), then a cut trace as
  Chrome writes it (one event per line): the metadata, tracing-start and frame events, the
  Profile event, the first ProfileChunks, and the longest tasks in the time they cover with
  the events nested in them (so that chains resolve); as {"traceEvents": [...]} and as a
  bare array, after control bytes 0 (50 ms threshold) and 1 (every task is long). Also the
  field samples (.cpuprofile, bundles), cut to 64 KB.
- field_readers: the field samples, their number arrays cut to fit 64 KB (still valid JSON).
- event_parses: single events of several kinds, as Chrome wrote them, and runs of
  consecutive events, one a line.
- number_arrays: `samples` and `timeDeltas` arrays of real chunks.
- node_reads: `cpuProfile.nodes` arrays of real chunks, as Chrome wrote them.
- proto_packets: the first whole packets (up to 64 KB) of the Perfetto protobuf samples.

Usage (from the repository root): python3 fuzz/seeds.py [SHARED_TRACES_DIR]
Then: scripts/fuzz.sh TARGET SECONDS
"""
import glob
import gzip
import json
import os
import sys

LIMIT = 64 * 1024
SHARED = sys.argv[1] if len(sys.argv) > 1 else "../shared/traces"
TASKS = {"RunTask", "ThreadControllerImpl::RunTask", "ThreadControllerImpl::DoWork",
         "TaskQueueManager::ProcessTaskFromWorkQueue", "MessageLoop::RunTask"}
KEEP = {"Profile", "CpuProfile", "TracingStartedInBrowser", "TracingStartedInPage",
        "FrameCommittedInBrowser", "CommitLoad", "navigationStart", "TracingStartedInBrowser"}
NESTED = {"EventDispatch", "FunctionCall", "TimerFire", "FireAnimationFrame", "EvaluateScript",
          "v8.evaluateModule", "ParseHTML", "XHRLoad", "RunMicrotasks", "MinorGC", "MajorGC",
          "Layout", "UpdateLayoutTree", "Paint"}


def load(path):
    raw = gzip.open(path).read() if path.endswith(".gz") else open(path, "rb").read()
    return json.loads(raw)


def compact(v):
    return json.dumps(v, separators=(",", ":"))


def as_trace(events, wrapped):
    body = ",\n".join(compact(e) for e in events)
    text = '{"traceEvents":[\n' + body + "]}\n" if wrapped else "[\n" + body + "]\n"
    return text.encode()


def chunk_span(chunks, start):
    """The (first, last) sample time, µs, of a profile's chunks."""
    t, lo = start, None
    for c in chunks:
        for d in (c.get("args", {}).get("data", {}) or {}).get("timeDeltas", []) or []:
            if isinstance(d, (int, float)):
                t += d
                lo = t if lo is None else lo
    return (lo if lo is not None else start), t


def cut_trace(events):
    """A small valid trace from `events` (see the module doc), or None."""
    meta = [e for e in events if e.get("ph") == "M"][:60]
    keep = [e for e in events if e.get("name") in KEEP and e.get("ph") != "M"][:10]
    chunks = [e for e in events if e.get("name") == "ProfileChunk"]
    profiles = [e for e in events if e.get("name") in ("Profile", "CpuProfile")]
    start = None
    for p in profiles:
        s = (p.get("args", {}).get("data", {}) or {}).get("startTime")
        if isinstance(s, (int, float)):
            start = s
            break
    for n_chunks in (6, 4, 3, 2, 1, 0):
        kept_chunks = [c for c in chunks if not profiles or c.get("id") == profiles[0].get("id")][:n_chunks]
        if start is not None and kept_chunks:
            lo, hi = chunk_span(kept_chunks, start)
        else:
            lo, hi = float("-inf"), float("inf")
        tasks = [e for e in events if e.get("name") in TASKS and e.get("ph") == "X"
                 and isinstance(e.get("ts"), (int, float)) and lo <= e["ts"] <= hi]
        tasks.sort(key=lambda e: -(e.get("dur") or 0))
        chosen = tasks[:4]
        nested = [e for e in events if e.get("name") in NESTED and any(
            e.get("tid") == t.get("tid") and t["ts"] <= (e.get("ts") or -1) <= t["ts"] + (t.get("dur") or 0)
            for t in chosen)][:30]
        body = sorted(keep + kept_chunks + chosen + nested, key=lambda e: e.get("ts") or 0)
        out = meta + [p for p in profiles[:1] if p not in body] + body
        if len(as_trace(out, True)) <= LIMIT - 1:
            return out
    return None


def write(target, name, data):
    d = f"fuzz/corpus/{target}"
    os.makedirs(d, exist_ok=True)
    assert len(data) <= LIMIT, (target, name, len(data))
    with open(f"{d}/{name}", "wb") as f:
        f.write(data)


def cut_field(doc):
    """`doc` (a .cpuprofile or a bundle) with its number arrays cut until it fits."""
    def arrays(v, n):
        if isinstance(v, dict):
            return {k: arrays(x, n) for k, x in v.items()}
        if isinstance(v, list):
            if v and all(isinstance(x, (int, float)) for x in v):
                return v[:n]
            return [arrays(x, n) for x in v[: max(n, 8)]]
        return v
    for n in (100000, 4000, 1000, 300, 100, 30, 10):
        data = compact(arrays(doc, n)).encode()
        if len(data) <= LIMIT - 1:
            return data
    return None


traces = sorted(glob.glob(f"{SHARED}/chromium/*.json*") + glob.glob(f"{SHARED}/public/*/*.json.gz")
                + glob.glob("samples/*/trace.json*"))
traces = [t for t in traces if "groundtruth" not in t]
counts = {}
seen_events = set()
arrays_written = 0
nodes_written = 0
for k, path in enumerate(traces):
    try:
        doc = load(path)
    except (ValueError, OSError):
        continue
    events = doc.get("traceEvents") if isinstance(doc, dict) else doc
    if not isinstance(events, list) or not events or not isinstance(events[0], dict):
        continue
    cut = cut_trace([e for e in events if isinstance(e, dict)])
    base = os.path.basename(os.path.dirname(path)) + "-" + os.path.basename(path).split(".")[0]
    if cut:
        for wrapped in (True, False):
            for control in (0, 1):
                data = bytes([control]) + as_trace(cut, wrapped)
                for target in ("pipeline", "split", "gzip_stream"):
                    write(target, f"{base}-{'obj' if wrapped else 'arr'}-{control}", data)
                    counts[target] = counts.get(target, 0) + 1
    # Runs of events as they follow one another (one a line), for the key guesses.
    runs = [e for e in events[:4000] if isinstance(e, dict)]
    for r in range(0, min(len(runs), 240), 24):
        data = "\n".join(compact(e) for e in runs[r:r + 24]).encode()
        if len(data) <= LIMIT:
            write("event_parses", f"{base}-run{r // 24}", data)
    for e in events:
        if not isinstance(e, dict):
            continue
        kind = (e.get("ph"), e.get("name"))
        if kind not in seen_events and len(seen_events) < 200:
            seen_events.add(kind)
            data = compact(e).encode()
            if len(data) <= 4096:
                write("event_parses", f"event{len(seen_events)}", data)
        if e.get("name") == "ProfileChunk" and nodes_written < 60:
            data = (e.get("args", {}).get("data", {}) or {})
            nodes = (data.get("cpuProfile") or {}).get("nodes")
            if isinstance(nodes, list) and nodes:
                write("node_reads", f"{base}-nodes{nodes_written}", compact(nodes[:40]).encode())
                nodes_written += 1
        if e.get("name") == "ProfileChunk" and arrays_written < 60:
            data = (e.get("args", {}).get("data", {}) or {})
            for key, v in (("samples", (data.get("cpuProfile") or {}).get("samples")),
                           ("timeDeltas", data.get("timeDeltas"))):
                if isinstance(v, list) and v:
                    write("number_arrays", f"{base}-{key}{arrays_written}", compact(v[:800]).encode())
                    arrays_written += 1
counts["event_parses"] = len(glob.glob("fuzz/corpus/event_parses/*"))
counts["number_arrays"] = arrays_written
counts["node_reads"] = nodes_written
# Field data: the samples' .cpuprofile files and bundles, cut to fit.
for path in sorted(glob.glob("samples/*/trace.cpuprofile") + glob.glob("samples/field-*/trace.json")):
    try:
        data = cut_field(json.load(open(path)))
    except ValueError:
        continue
    if data is None:
        continue
    base = os.path.basename(os.path.dirname(path))
    write("field_readers", base, data)
    for target in ("pipeline", "split", "gzip_stream"):
        write(target, f"{base}-0", b"\x00" + data)
    counts["field_readers"] = counts.get("field_readers", 0) + 1
# Perfetto protobuf traces: the first 64 KB of each sample's packets (whole packets only),
# after control bytes 0 and 1.
for path in sorted(glob.glob("samples/*/trace.pftrace*")):
    raw = gzip.open(path).read() if path.endswith(".gz") else open(path, "rb").read()
    end = i = 0
    while i < len(raw):
        j = i + 1
        n = shift = 0
        while j < len(raw):
            n |= (raw[j] & 0x7F) << shift
            shift += 7
            j += 1
            if raw[j - 1] < 0x80:
                break
        if j + n > LIMIT - 1 or j + n > len(raw):
            break
        i = end = j + n
    base = os.path.basename(os.path.dirname(path))
    for knobs in (0, 1):
        write("proto_packets", f"{base}-{knobs}", bytes([knobs]) + raw[:end])
    counts["proto_packets"] = counts.get("proto_packets", 0) + 2
# Source maps: the samples' maps that fit (with sourcesContent: the original sources are
# parsed too), and embedded ones, after 12 bytes of probes at lines 0 and 1.
maps = [open(p, "rb").read() for p in sorted(glob.glob("samples/*/**/*.map", recursive=True))]
for path in sorted(glob.glob("samples/sm-embedded/trace.json.gz")):
    for m in json.load(gzip.open(path)).get("metadata", {}).get("sourceMaps", []):
        if isinstance(m.get("sourceMap"), dict):
            maps.append(json.dumps(m["sourceMap"]).encode())
probes = bytes([0, 0x96, 0x00, 0, 0xb0, 0x05, 0, 0xe2, 0x02, 1, 0x10, 0x00])
for k, m in enumerate(m for m in maps if len(m) <= LIMIT - 12):
    write("source_maps", f"map-{k}", probes + m)
    counts["source_maps"] = counts.get("source_maps", 0) + 1
print(", ".join(f"{n} seeds in fuzz/corpus/{t}" for t, n in sorted(counts.items())))
