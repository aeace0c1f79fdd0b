#!/usr/bin/env python3
"""An independent, slow reference of docs/METHOD.md §1, for cross-checking taskchain.

Usage: scripts/reference.py TRACE [TRACE ...]   (prints JSON lines, one per long task)
       scripts/reference.py --compare TASKCHAIN_BINARY TRACE [TRACE ...]

Written separately from the Rust code (whole-document json.load, dicts, no shared logic) so
that the two can disagree. Scope is `renderers` (every CrRendererMain thread), threshold
50 ms, lookback 0, min confidence 0.5, largest-stack method. `--compare` runs the binary with
the same settings and reports every task whose numbers or chain differ.
"""
import gzip
import json
import subprocess
import sys

TASK_NAMES = {"RunTask", "ThreadControllerImpl::RunTask", "ThreadControllerImpl::DoWork",
              "TaskQueueManager::ProcessTaskFromWorkQueue", "MessageLoop::RunTask"}
VM = {"(program)", "(idle)", "(garbage collector)"}


def load(path):
    raw = open(path, "rb").read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    text = raw.decode("utf-8", "replace").strip()
    try:
        doc = json.loads(text)
    except json.JSONDecodeError:
        # Cut-off array: drop the partial tail, close the array.
        cut = text.rfind("}")
        while cut > 0:
            try:
                doc = json.loads(text[:cut + 1].rstrip(",") + "]")
                break
            except json.JSONDecodeError:
                cut = text.rfind("}", 0, cut)
    return doc["traceEvents"] if isinstance(doc, dict) else doc


def us(x):
    return float(x) if x is not None else None


def main_threads(events):
    return {(e["pid"], e["tid"]) for e in events
            if e.get("ph") == "M" and e.get("name") == "thread_name"
            and (e.get("args") or {}).get("name") == "CrRendererMain"}


def top_level(events, threads, trace_end):
    per = {}
    marks = {}
    for i, e in enumerate(events):
        k = (e.get("pid"), e.get("tid"))
        if k not in threads or "ts" not in e:
            continue
        ph = e.get("ph")
        if ph == "X" and e.get("name") in TASK_NAMES and e.get("dur") is not None:
            per.setdefault(k, []).append((us(e["ts"]), us(e["dur"]), i))
        elif ph in ("B", "E"):
            marks.setdefault(k, []).append((us(e["ts"]), i, ph, e.get("name") in TASK_NAMES))
    for k, ms in marks.items():
        stack = []
        for ts, i, ph, is_task in sorted(ms):
            if ph == "B":
                stack.append((ts, i, is_task))
            elif stack:
                bts, bi, bt = stack.pop()
                if bt:
                    per.setdefault(k, []).append((bts, ts - bts, bi))
        for bts, bi, bt in stack:
            if bt:
                per.setdefault(k, []).append((bts, max(trace_end, bts) - bts, bi))
    out = {}
    for k, ts in per.items():
        ts.sort(key=lambda t: (t[0], -t[1], t[2]))
        top = []
        for t in ts:
            if top and t[0] < top[-1][0] + top[-1][1]:
                if t[0] + t[1] <= top[-1][0] + top[-1][1] + 1000:
                    continue  # nested
                top[-1] = (top[-1][0], t[0] - top[-1][0], top[-1][2])  # overlap: trim
            top.append(t)
        out[k] = top
    return out


def profiles(events):
    opened = {}
    for i, e in enumerate(events):
        if e.get("name") == "Profile" and e.get("ph") == "P":
            key = (e["pid"], str(e.get("id")))
            if key in opened:
                continue
            data = ((e.get("args") or {}).get("data") or {})
            st = data.get("startTime")
            ts = us(e["ts"])
            t0 = us(st) if st is not None and abs(us(st) - ts) <= 1e6 else ts
            opened[key] = {"thread": (e["pid"], e["tid"]), "t0": t0, "source": data.get("source"),
                           "nodes": {}, "samples": [], "deltas": [], "chunks": []}
    for i, e in enumerate(events):
        if e.get("name") == "ProfileChunk":
            key = (e["pid"], str(e.get("id")))
            if key in opened:
                opened[key]["chunks"].append((us(e.get("ts", 0)), i, e))
    out = []
    for p in opened.values():
        for _, _, e in sorted(p["chunks"], key=lambda c: (c[0], c[1])):
            args = e.get("args")
            data = (args.get("data") if isinstance(args, dict) else None) or {}
            cp = data.get("cpuProfile") or {}
            for n in cp.get("nodes") or []:
                p["nodes"].setdefault(n["id"], n)
            s, d = cp.get("samples") or [], data.get("timeDeltas") or []
            m = min(len(s), len(d))
            p["samples"] += s[:m]
            p["deltas"] += d[:m]
        out.append(p)
    for i, e in enumerate(events):
        if e.get("name") == "CpuProfile":
            cp = ((e.get("args") or {}).get("data") or {}).get("cpuProfile")
            if not cp:
                continue
            s, d = cp.get("samples") or [], cp.get("timeDeltas") or []
            m = min(len(s), len(d))
            out.append({"thread": (e["pid"], e["tid"]), "t0": us(cp.get("startTime")), "source": None,
                        "nodes": {n["id"]: n for n in reversed(cp.get("nodes") or [])},
                        "samples": s[:m], "deltas": d[:m]})
    for p in out:
        parent = {}
        for n in p["nodes"].values():
            for c in n.get("children") or []:
                parent.setdefault(c, n["id"])
        for n in p["nodes"].values():
            n["_parent"] = n.get("parent", parent.get(n["id"]))
        t = p["t0"]
        timed = []
        for s, d in zip(p["samples"], p["deltas"]):
            t += d
            if s in p["nodes"]:
                timed.append((t, s))
        timed.sort(key=lambda x: x[0])
        p["timed"] = timed
        # A path of frames per node: equal paths are one stack.
        def path(nid, seen=()):
            n = p["nodes"][nid]
            cf = n.get("callFrame") or {}
            me = (cf.get("functionName", ""), cf.get("url", ""), str(cf.get("scriptId", "")),
                  cf.get("lineNumber", -1), cf.get("columnNumber", -1))
            par = n["_parent"]
            if par is None or par not in p["nodes"] or par in seen:
                return (me,)
            return path(par, seen + (nid,)) + (me,)
        p["path"] = {nid: path(nid) for nid in p["nodes"]}
        # The last sample stands for the mean interval over all samples, known or not.
        times = []
        t = p["t0"]
        for d in p["deltas"]:
            t += d
            times.append(t)
        p["mean"] = (max(times) - min(times)) // (len(times) - 1) if len(times) > 1 else 0
    return out


def resolve(task, thread, profs):
    ts, dur = task[0], task[1]
    end = ts + dur
    mine = [p for p in profs if p["thread"] == thread]
    base = {"window_samples": 0, "target_samples": 0, "stack_ms": 0.0, "confidence": 0.0, "chain": []}
    if not mine:
        return dict(base, status="no_profile")
    best = None
    for p in mine:
        idx = [i for i, (t, _) in enumerate(p["timed"]) if ts <= t < end]
        if not idx:
            continue
        if best is None or (p["source"] == "Internal", len(idx)) > (best[0]["source"] == "Internal", len(best[1])):
            best = (p, idx)
    if best is None:
        return dict(base, status="no_samples")
    p, idx = best
    groups = {}
    for i in idx:
        t, nid = p["timed"][i]
        nxt = p["timed"][i + 1][0] if i + 1 < len(p["timed"]) else t + p["mean"]
        w = max(0.0, min(nxt, end) - t)
        g = groups.setdefault(p["path"][nid], [0, i, 0.0])
        g[0] += 1
        g[2] += w
    stack, (count, _, time) = max(groups.items(), key=lambda kv: (kv[1][0], -kv[1][1]))
    conf = min(1.0, max(0.0, time / dur)) if dur > 0 else 0.0
    frames = [f for f in stack if f[0] != "(root)"]
    status = "low_confidence" if round(conf, 3) < 0.5 else ("non_js" if stack[-1][0] in VM else "ok")
    return {"window_samples": len(idx), "target_samples": count, "stack_ms": round(time / 1000, 3),
            "confidence": round(conf, 3), "status": status,
            "chain": [f[0] or "(anonymous)" for f in frames],
            # The frames with their positions, 1-based as reports show them (None: unknown).
            "frames": [{"function": f[0] or "(anonymous)", "url": f[1],
                        "line": f[3] + 1 if f[3] >= 0 else None,
                        "column": f[4] + 1 if f[4] >= 0 else None} for f in frames]}


def reference(path):
    events = [e for e in load(path) if isinstance(e, dict)]
    stamps = [us(e["ts"]) + max(0.0, us(e.get("dur") or 0)) for e in events
              if e.get("ph") != "M" and isinstance(e.get("ts"), (int, float))]
    trace_end = max(stamps) if stamps else 0
    threads = main_threads(events)
    profs = profiles(events)
    if not threads:
        threads = {p["thread"] for p in profs}
    rows = []
    for k, tasks in sorted(top_level(events, threads, trace_end).items()):
        for t in tasks:
            if t[1] > 50000:
                r = resolve(t, k, profs)
                r.update(pid=k[0], tid=k[1], task_ts_us=t[0], task_dur_ms=round(t[1] / 1000, 3))
                rows.append(r)
    return rows


def compare(binary, paths):
    bad = total = 0
    for path in paths:
        ref = reference(path)
        p = subprocess.run([binary, "--format", "json", "--scope", "renderers", "-q", path],
                           capture_output=True)
        got = json.loads(p.stdout)["tasks"]
        key = lambda r: (int(r["pid"]), int(r["tid"]), round(float(r["task_ts_us"]), 3))
        mine = {key(r): r for r in got}
        for r in ref:
            total += 1
            g = mine.pop(key(r), None)
            if g is None:
                bad += 1
                print(f"{path}: task {key(r)} missing from taskchain")
                continue
            diffs = [f for f in ("window_samples", "target_samples", "status", "task_dur_ms")
                     if g[f] != r[f]]
            if abs(g["stack_ms"] - r["stack_ms"]) > 0.002:
                diffs.append("stack_ms")
            if abs(g["confidence"] - r["confidence"]) > 0.0015:
                diffs.append("confidence")
            if [f["function"] for f in g["chain"]] != r["chain"]:
                diffs.append("chain")
            if diffs:
                bad += 1
                print(f"{path}: task {key(r)}: " + ", ".join(
                    f"{f}: taskchain {g.get(f)!r:.80} vs reference {r.get(f)!r:.80}" for f in diffs))
        for k in mine:
            bad += 1
            print(f"{path}: task {k} reported by taskchain only")
    print(f"{total} reference tasks, {bad} differences")
    return 1 if bad else 0


if __name__ == "__main__":
    if not sys.argv[1:] or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        sys.exit(0 if sys.argv[1:] else 2)
    if sys.argv[1:2] == ["--compare"]:
        sys.exit(compare(sys.argv[2], sys.argv[3:]))
    for path in sys.argv[1:]:
        for r in reference(path):
            print(json.dumps(r))
