#!/usr/bin/env python3
"""Compare taskchain's `--interactions` JSON with the DevTools trace engine's interactions.

    scripts/compare-interactions.py TASKCHAIN.json... (--oracle FILE_OR_DIR | --trace TRACE)...
        [--tolerance-ms 1] [--only-traces-in-output] [--verbose]

TASKCHAIN.json: what `taskchain --interactions FILE.json` writes ({"interactions": [...]}, the
contract of issue 41); several files are pooled. The engine's side comes from oracle files written
by scripts/devtools-interactions.mjs (--oracle, a file or a folder of them, e.g.
tests/data/interactions-oracle) or from running that script now on a trace (--trace; needs
scripts/devtools-engine/install).

Traces are matched by file name without folder, ".gz" and ".json"; interactions within a trace by
interaction_id. Checks, each counted as passed or failed:
  found         every interaction the engine finds is in taskchain's output (same pid too);
  extra         taskchain reports no interaction the engine does not find;
  type, event_types   the same category (pointer/keyboard/other) and the same set of event types;
  start_ts_us   within 1 µs;
  duration_ms, input_delay_ms, processing_ms, presentation_delay_ms   within +-tolerance (1 ms);
  is_inp        the same INP interaction per trace (the engine's per-navigation choice, INPBreakdown).
Prints one line per failure (all lines with --verbose) and last "N passed, M failed"; exits 1 on
any failure or unusable input, else 0. Python standard library only.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TIMES = ('duration_ms', 'input_delay_ms', 'processing_ms', 'presentation_delay_ms')


def trace_key(name):
    b = os.path.basename(str(name))
    if b.endswith('.gz'):
        b = b[:-3]
    if b.endswith('.json'):
        b = b[:-5]
    return b


def load(path):
    try:
        with open(path, encoding='utf-8') as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise SystemExit(f'{path}: cannot read JSON: {e}')


def engine_files(args):
    files = []
    for o in args.oracle:
        if os.path.isdir(o):
            files += [os.path.join(o, n) for n in sorted(os.listdir(o)) if n.endswith('.json')]
        else:
            files.append(o)
    out = []
    for f in files:
        d = load(f)
        if isinstance(d, dict) and d.get('tool') == 'devtools_interactions':
            out.append((f, d))
    if args.trace:
        tmp = tempfile.mkdtemp(prefix='compare-interactions-')
        cmd = ['node', os.path.join(HERE, 'devtools-interactions.mjs'), *args.trace, '--out-dir', tmp]
        r = subprocess.run(cmd)
        if r.returncode not in (0, 1):
            raise SystemExit(f'{" ".join(cmd)}: exit {r.returncode}')
        out += [(os.path.join(tmp, n), load(os.path.join(tmp, n))) for n in sorted(os.listdir(tmp))]
    return out


class Score:
    def __init__(self, verbose):
        self.passed = self.failed = 0
        self.verbose = verbose

    def check(self, ok, where, what):
        if ok:
            self.passed += 1
        else:
            self.failed += 1
        if not ok or self.verbose:
            print(f'{"ok  " if ok else "FAIL"} {where}: {what}')
        return ok


def num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('outputs', nargs='+', help="taskchain --interactions JSON file(s)")
    ap.add_argument('--oracle', action='append', default=[], help='engine output file or folder (repeatable)')
    ap.add_argument('--trace', action='append', default=[], help='run the engine on this trace now (repeatable)')
    ap.add_argument('--tolerance-ms', type=float, default=1.0)
    ap.add_argument('--only-traces-in-output', action='store_true',
                    help='skip engine traces that no taskchain output mentions')
    ap.add_argument('--verbose', action='store_true')
    args = ap.parse_args()
    if not args.oracle and not args.trace:
        ap.error('give --oracle or --trace')

    pool, traces = {}, set()
    for p in args.outputs:
        d = load(p)
        items = d.get('interactions') if isinstance(d, dict) else None
        if not isinstance(items, list):
            raise SystemExit(f'{p}: not an interactions file (no "interactions" list)')
        for it in items:
            try:
                key = (trace_key(it['file']), int(it['interaction_id']))
            except (KeyError, TypeError, ValueError):
                raise SystemExit(f'{p}: an interaction without a usable file / interaction_id: {str(it)[:120]}')
            traces.add(key[0])
            if key in pool:
                print(f'FAIL {key[0]} #{key[1]}: reported more than once')
            pool.setdefault(key, it)

    score = Score(args.verbose)
    seen = set()
    for path, eng in engine_files(args):
        key = trace_key(eng['trace'])
        if args.only_traces_in_output and key not in traces:
            continue
        if eng.get('engine_failed'):
            print(f'note: the engine failed on {key} ({eng.get("error")}); not compared', file=sys.stderr)
            continue
        seen.add(key)
        for ref in eng.get('by_interaction_id', []):
            iid = int(ref['interaction_id'])
            where = f'{key} #{iid}'
            got = pool.get((key, iid))
            if not score.check(got is not None and got.get('pid') == ref['pid'], where,
                               'found' if got else 'not in the taskchain output'):
                continue
            score.check(got.get('type') == ref['type'], where, f'type {got.get("type")!r} vs {ref["type"]!r}')
            g_types = got.get('event_types')
            score.check(isinstance(g_types, list) and sorted(g_types) == sorted(ref['event_types']), where,
                        f'event_types {g_types} vs {ref["event_types"]}')
            g = got.get('start_ts_us')
            score.check(num(g) and abs(g - ref['start_ts_us']) <= 1, where,
                        f'start_ts_us {g!r} vs {ref["start_ts_us"]}')
            for f in TIMES:
                g = got.get(f)
                score.check(num(g) and abs(g - ref[f]) <= args.tolerance_ms, where,
                            f'{f} {g!r} vs DevTools {ref[f]} (+-{args.tolerance_ms} ms)')
            want = bool(ref.get('is_inp_insight', ref['is_inp']))
            g = got.get('is_inp')
            score.check(isinstance(g, bool) and g == want, where, f'is_inp {g!r}, DevTools {want}')
        known = {int(r['interaction_id']) for r in eng.get('by_interaction_id', [])}
        for (k, iid) in sorted(pool):
            if k == key and iid not in known:
                score.check(False, f'{key} #{iid}', 'extra: the engine finds no such interaction')
    for k in sorted(traces - seen):
        print(f'note: {k}: no engine output to compare with', file=sys.stderr)
    print(f'{score.passed} passed, {score.failed} failed')
    return 1 if score.failed or not score.passed else 0


if __name__ == '__main__':
    sys.exit(main())
