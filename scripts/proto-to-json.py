#!/usr/bin/env python3
"""Writes a Perfetto protobuf trace (Chrome's) as a JSON trace, with Google's protobuf
runtime and the message classes Perfetto ships in its Python package (`pip install
perfetto protobuf`): a second reading of the format, independent of taskchain's
hand-written one (src/scan/proto), to check it against and to time the JSON path on the
same recording's content (scripts/bench.sh).

Usage: proto-to-json.py TRACE.pftrace OUT.json

What it writes, as Perfetto's JSON exporter and Chrome's JSON traces do: every track event
with a name, `TYPE_SLICE_BEGIN`/`END` pairs on one track as one `X` event (`dur`),
instants as `I`, legacy events with their own phase, `id` as hex text; `ts` in µs on
CLOCK_MONOTONIC (sequence clocks resolved through their ClockSnapshot); `args` from the
debug annotations (`legacy_json_value` parsed); `thread_name` / `process_name` metadata
from the track descriptors. Slices still open at the end are written as `B` events.
"""
import gzip
import json
import sys

from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

MONOTONIC, BOOTTIME = 3, 6


def read_trace(path):
    raw = open(path, "rb").read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    t = pb.Trace()
    t.ParseFromString(raw)
    return t


def annotation_value(a, seq):
    kind = a.WhichOneof("value")
    if kind == "legacy_json_value":
        try:
            return json.loads(a.legacy_json_value)
        except ValueError:
            return None
    if kind == "string_value_iid":
        return seq["strings"].get(a.string_value_iid, "")
    if kind == "pointer_value":
        return hex(a.pointer_value)
    if kind == "nested_value":
        return nested(a.nested_value)
    if kind is not None:
        return getattr(a, kind)
    if len(a.dict_entries):
        return {annotation_name(e, seq): annotation_value(e, seq) for e in a.dict_entries}
    if len(a.array_values):
        return [annotation_value(e, seq) for e in a.array_values]
    return None


def nested(v):
    if v.nested_type == 1:
        return {k: nested(x) for k, x in zip(v.dict_keys, v.dict_values)}
    if v.nested_type == 2:
        return [nested(x) for x in v.array_values]
    for f in ("int_value", "double_value", "bool_value", "string_value"):
        if v.HasField(f):
            return getattr(v, f)
    return None


def annotation_name(a, seq):
    if a.HasField("name_iid"):
        return seq["annotation_names"].get(a.name_iid)
    return a.name if a.HasField("name") else None


def main(src, dst):
    trace = read_trace(src)
    seqs = {}
    tracks = {}
    global_clocks = {}
    events = []
    open_slices = {}
    names_written = set()

    def new_seq():
        return {"valid": False, "clock": None, "track": None, "clocks": {}, "names": {},
                "annotation_names": {}, "strings": {}, "thread": None}

    def to_monotonic(clock, ns):
        if clock == MONOTONIC:
            return ns
        if clock in global_clocks and MONOTONIC in global_clocks:
            return ns + global_clocks[MONOTONIC] - global_clocks[clock]
        return ns

    for p in trace.packet:
        sid = p.trusted_packet_sequence_id
        seq = seqs.setdefault(sid, new_seq())
        if p.previous_packet_dropped:
            seq["valid"] = False
        if p.sequence_flags & 1 or p.incremental_state_cleared:
            thread = seq["thread"]
            seq.clear()
            seq.update(new_seq())
            seq["thread"] = thread
            seq["valid"] = True
        if p.sequence_flags & 2 and not seq["valid"]:
            continue
        if p.HasField("trace_packet_defaults"):
            d = p.trace_packet_defaults
            if d.HasField("timestamp_clock_id"):
                seq["clock"] = d.timestamp_clock_id
            if d.track_event_defaults.HasField("track_uuid"):
                seq["track"] = d.track_event_defaults.track_uuid
        i = p.interned_data
        for e in i.event_names:
            seq["names"][e.iid] = e.name
        for e in i.debug_annotation_names:
            seq["annotation_names"][e.iid] = e.name
        for e in i.debug_annotation_string_values:
            seq["strings"][e.iid] = e.str.decode("utf-8", "replace")
        if p.HasField("clock_snapshot"):
            builtin = {c.clock_id: c.timestamp for c in p.clock_snapshot.clocks if c.clock_id < 64}
            ref = MONOTONIC if MONOTONIC in builtin else next(iter(builtin), None)
            for c in p.clock_snapshot.clocks:
                if 64 <= c.clock_id < 128 and ref is not None:
                    seq["clocks"][c.clock_id] = {
                        "unit": c.unit_multiplier_ns or 1, "inc": c.is_incremental,
                        "base": c.timestamp, "cur": c.timestamp, "ref": ref, "ref_ns": builtin[ref]}
            if len(builtin) > 1:
                global_clocks.clear()
                global_clocks.update(builtin)
        ts = None
        if p.HasField("timestamp"):
            clock = p.timestamp_clock_id if p.HasField("timestamp_clock_id") else (seq["clock"] or BOOTTIME)
            if 64 <= clock < 128:
                c = seq["clocks"].get(clock)
                if c is not None:
                    if c["inc"]:
                        c["cur"] += p.timestamp
                        v = c["cur"]
                    else:
                        v = p.timestamp
                    ns = c["ref_ns"] + (v - c["base"]) * c["unit"]
                    if c["unit"] % 1000 == 0:
                        # Whole µs (Chrome's TimeTicks), as Chrome's JSON export has them.
                        ns -= ns % 1000
                    ts = to_monotonic(c["ref"], ns)
            elif clock < 64:
                ts = to_monotonic(clock, p.timestamp)
        if p.HasField("track_descriptor"):
            d = p.track_descriptor
            info = {"parent": d.parent_uuid, "pid": None, "tid": None}
            if d.HasField("process"):
                info["pid"] = d.process.pid
                if d.process.process_name and ("p", d.process.pid) not in names_written:
                    names_written.add(("p", d.process.pid))
                    events.append({"ph": "M", "name": "process_name", "pid": d.process.pid,
                                   "tid": 0, "args": {"name": d.process.process_name}})
            if d.HasField("thread"):
                info["pid"], info["tid"] = d.thread.pid, d.thread.tid
                seq["thread"] = (d.thread.pid, d.thread.tid)
                key = ("t", d.thread.pid, d.thread.tid, d.thread.thread_name)
                if d.thread.thread_name and key not in names_written:
                    names_written.add(key)
                    events.append({"ph": "M", "name": "thread_name", "pid": d.thread.pid,
                                   "tid": d.thread.tid, "args": {"name": d.thread.thread_name}})
            tracks[d.uuid] = info
        if not p.HasField("track_event"):
            continue
        te = p.track_event
        le = te.legacy_event if te.HasField("legacy_event") else None
        if te.HasField("name_iid"):
            name = seq["names"].get(te.name_iid)
        elif te.HasField("name"):
            name = te.name
        elif le is not None and le.HasField("name_iid"):
            name = seq["names"].get(le.name_iid)
        else:
            name = None
        uuid = te.track_uuid if te.HasField("track_uuid") else (seq["track"] or 0)
        pid = tid = None
        at = uuid
        for _ in range(8):
            t = tracks.get(at)
            if t is None:
                break
            if t["tid"] is not None:
                pid, tid = t["pid"], t["tid"]
                break
            if t["pid"] is not None:
                pid = t["pid"]
                break
            at = t["parent"]
        if tid is None:
            st = seq["thread"]
            if pid is None:
                pid, tid = st if st else (0, 0)
            else:
                tid = st[1] if st and st[0] == pid else 0
        if uuid == 0 and le is not None:
            if le.HasField("pid_override"):
                pid = le.pid_override
            if le.HasField("tid_override"):
                tid = le.tid_override
        key = uuid if uuid else ("seq", sid)
        phase = chr(le.phase) if le is not None and le.HasField("phase") else None
        if te.type == 1 or (te.type == 0 and phase == "B"):
            args = {annotation_name(a, seq): annotation_value(a, seq) for a in te.debug_annotations}
            open_slices.setdefault(key, []).append((name, ts, pid, tid, args))
            continue
        if te.type == 2 or (te.type == 0 and phase == "E"):
            stack = open_slices.get(key)
            if not stack:
                continue
            bname, bts, bpid, btid, args = stack.pop()
            args.update({annotation_name(a, seq): annotation_value(a, seq) for a in te.debug_annotations})
            if bname is None:
                continue
            ev = {"ph": "X", "name": bname, "pid": bpid, "tid": btid}
            if bts is not None:
                ev["ts"] = bts / 1000
                if ts is not None:
                    ev["dur"] = (ts - bts) / 1000
            if args:
                ev["args"] = args
            events.append(ev)
            continue
        if name is None:
            continue
        if te.type == 3:
            ph = "I"
        elif te.type == 0 and phase:
            ph = phase
        else:
            continue
        ev = {"ph": ph, "name": name, "pid": pid, "tid": tid}
        if ts is not None:
            ev["ts"] = ts / 1000
        if ph == "X" and le is not None and le.HasField("duration_us"):
            ev["dur"] = le.duration_us
        if le is not None and le.WhichOneof("id"):
            ev["id"] = hex(getattr(le, le.WhichOneof("id")))
        args = {annotation_name(a, seq): annotation_value(a, seq) for a in te.debug_annotations}
        if args:
            ev["args"] = args
        events.append(ev)
    for stack in open_slices.values():
        for name, ts, pid, tid, args in stack:
            if name is None:
                continue
            ev = {"ph": "B", "name": name, "pid": pid, "tid": tid}
            if ts is not None:
                ev["ts"] = ts / 1000
            if args:
                ev["args"] = args
            events.append(ev)
    with open(dst, "w") as f:
        json.dump({"traceEvents": events}, f, separators=(",", ":"))


if __name__ == "__main__":
    main(*sys.argv[1:3])
