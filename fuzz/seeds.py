#!/usr/bin/env python3
"""Writes small seed inputs for the `pipeline` fuzz target into fuzz/corpus/pipeline:
the metadata, task, Profile and first ProfileChunk events of real sample traces, as a bare
array and as {"traceEvents": ...}, each after one control byte (see the target).

Usage (from the repository root): python3 fuzz/seeds.py
Then: cd fuzz && cargo fuzz run pipeline -s none -- -max_len=65536 -max_total_time=600
Also writes single events of one sample into fuzz/corpus/event_parses (`event_parses`).
"""
import gzip
import json
import os

OUT = "fuzz/corpus/pipeline"
SOURCES = [
    "samples/cpu-profiler-m86/trace.json.gz",
    "samples/chrome-66-cpuprofile-worker/trace.json.gz",
    "samples/chrome-70-worker/trace.json.gz",
    "samples/chromium-click-chain/trace.json.gz",
]
KEEP = {"RunTask", "MessageLoop::RunTask", "ThreadControllerImpl::RunTask", "Profile",
        "CpuProfile", "TracingStartedInBrowser"}

os.makedirs(OUT, exist_ok=True)
for k, src in enumerate(SOURCES):
    doc = json.loads(gzip.open(src).read())
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    keep = [e for e in events if e.get("ph") == "M" or e.get("name") in KEEP]
    keep += [e for e in events if e.get("name") == "ProfileChunk"][:3]
    for i, form in enumerate([keep, {"traceEvents": keep}]):
        data = json.dumps(form, separators=(",", ":")).encode()
        with open(f"{OUT}/seed{k}{i}", "wb") as f:
            f.write(b"\x00" + data[:60000])
# Field data: the samples themselves (small), each after a control byte.
FIELD = ["samples/field-bundle/trace.json", "samples/field-cpuprofile/trace.cpuprofile",
         "samples/field-legacy-profile/trace.cpuprofile", "samples/field-chromium-bundle/trace.json",
         "samples/node-cpu-prof/trace.cpuprofile"]
for k, src in enumerate(FIELD):
    with open(src, "rb") as f, open(f"{OUT}/field{k}", "wb") as out:
        out.write(b"\x00" + f.read()[:60000])
# Single events as Chrome writes them, for the `event_parses` target.
EVENTS = "fuzz/corpus/event_parses"
os.makedirs(EVENTS, exist_ok=True)
doc = json.loads(gzip.open(SOURCES[3]).read())
events = doc["traceEvents"] if isinstance(doc, dict) else doc
seen = set()
for e in events:
    kind = (e.get("ph"), e.get("name"))
    if kind not in seen and len(seen) < 40:
        seen.add(kind)
        with open(f"{EVENTS}/event{len(seen)}", "wb") as f:
            f.write(json.dumps(e, separators=(",", ":")).encode()[:4000])
print(f"{len(SOURCES) * 2 + len(FIELD)} seeds in {OUT}, {len(seen)} in {EVENTS}")
