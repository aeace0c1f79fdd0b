#!/usr/bin/env python3
"""Ground truth for a recording of scripts/record-interactions (issue 41), in the format of
../shared/traces/interactions/*.groundtruth.json (schema interaction-groundtruth/1), so that
that folder's check.py scores taskchain's `--interactions` output against it.

    scripts/interactions-groundtruth.py TRACE.json.gz RUN.json ORACLE.json OUT.groundtruth.json

TRACE: the recording; RUN: the recorder's run.json (steps, the page's Event Timing entries);
ORACLE: scripts/devtools-interactions.mjs's output for TRACE (the DevTools engine's
interactions, phases and INP). The page's intent per step (INTENT below: which code runs in
which phase) is checked against the trace's own samples, read by scripts/reference.py's
profile reader (written apart from taskchain's Rust code):
  "chain": the page runs expected_chain in this phase and the trace agrees: the phase's top JS
           stack (script frames only) is expected_chain, with >= 10 samples, >= 0.5 of the
           phase's JS samples, and it is the largest same-stack group of all samples;
  "null":  the phase has no JS sample at all;
  "skip":  too little evidence either way.
An intent the trace does not bear out is printed and exits 1 (a bad recording, not a bad tool).
Each phase also records what the main thread ran in it (`observed.events_ms`: trace events
clipped to the window, by name, not self time) and the forced layouts in it (Layout /
UpdateLayoutTree inside script, with the top frame of the event's own stack trace).
"""
import importlib.util
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location('reference', os.path.join(HERE, 'reference.py'))
reference = importlib.util.module_from_spec(spec)
spec.loader.exec_module(reference)

PHASES = ('input_delay', 'processing', 'presentation_delay')
META = {'(program)', '(idle)', '(garbage collector)', '(root)'}
SCRIPT_EVENTS = {'EventDispatch', 'FunctionCall', 'TimerFire', 'FireAnimationFrame', 'EvaluateScript',
                 'v8.compile', 'v8.callFunction', 'RunMicrotasks', 'v8.evaluateModule'}
NAMED = SCRIPT_EVENTS | {'UpdateLayoutTree', 'Layout', 'PrePaint', 'Paint', 'Layerize', 'Commit',
                         'HitTest', 'ParseHTML', 'MinorGC', 'MajorGC', 'V8.GC_SCAVENGER', 'BlinkGC.AtomicPhase'}

# What each step of the recorder does, by phase (None: no JavaScript meant to run there).
INTENT = {
    'search': {'scenario': 'keyboard', 'slow': True,
               'note': 'keydown in input#search -> onSearchKeydown -> rankSuggestions spins ~110 ms; keyup runs onSearchKeyup ~2 ms',
               'phases': {'input_delay': None, 'processing': ['onSearchKeydown', 'rankSuggestions'],
                          'presentation_delay': None}},
    'add': {'scenario': 'slow-click', 'slow': True,
            'note': 'click #add -> onAddToCart -> recalcTotals -> applyDiscounts spins ~160 ms',
            'phases': {'input_delay': None, 'processing': ['onAddToCart', 'recalcTotals', 'applyDiscounts'],
                       'presentation_delay': None}},
    'status': {'scenario': 'timer-delays-click', 'slow': True,
               'note': 'a timer pollStock -> mergeInventory (~220 ms) armed 30 ms before the click on #status; onStatusClick ~3 ms',
               'phases': {'input_delay': ['pollStock', 'mergeInventory'], 'processing': None,
                          'presentation_delay': None}},
    'chart': {'scenario': 'raf-forced-layout', 'slow': True,
              'note': 'click #chart-button -> onChartClick schedules requestAnimationFrame(drawChart); drawChart -> sizeBars ~130 ms with a forced layout every 2048 iterations',
              'phases': {'input_delay': None, 'processing': None,
                         'presentation_delay': ['drawChart', 'sizeBars']}},
    'pay': {'scenario': 'third-party-listener', 'slow': True,
            'note': "click #pay -> first party onPayClick -> checkCart ~35 ms, then the vendor's vendorCollect -> encodeBeacon ~120 ms (cdn.tagvendor.test)",
            'phases': {'input_delay': None, 'processing': ['vendorCollect', 'encodeBeacon'],
                       'presentation_delay': None}},
    'quick': {'scenario': 'quick-click', 'slow': False,
              'note': 'click #quick -> onQuickClick toggles a class (~1 ms): not slow',
              'phases': {'input_delay': None, 'processing': None, 'presentation_delay': None}},
    'restyle': {'scenario': 'style-and-layout-no-js', 'slow': True,
                'note': 'click #restyle -> onDenseClick toggles a class on #grid: 16,000 cells restyled and laid out before the paint, no JS',
                'phases': {'input_delay': None, 'processing': None, 'presentation_delay': None}},
}


def stack_info(p, groups, nid_group, total, js_total):
    if not groups:
        return None
    path, (count, first, t) = max(groups.items(), key=lambda kv: (kv[1][0], -kv[1][1]))
    frames = [f for f in path if f[0] != '(root)'] or [path[-1]]
    return {'samples': count, 'share_of_samples': round(count / total, 4) if total else None,
            'share_of_js_samples': round(count / js_total, 4) if js_total and frames[-1][0] not in META else None,
            'stack_ms': round(t / 1000, 3), 'leaf': frames[-1][0] or '(anonymous)',
            'chain': [f[0] or '(anonymous)' for f in frames if f[1]] or [frames[-1][0]],
            'frames': [{'function': f[0] or '(anonymous)', 'url': f[1], 'line': f[3], 'column': f[4]}
                       for f in frames]}


def observe(prof, events, thread, a, b):
    """Samples and trace events of one thread in [a, b) µs."""
    groups, js_groups, meta = {}, {}, {}
    idx = [i for i, (t, _) in enumerate(prof['timed']) if a <= t < b] if prof else []
    js = 0
    gap = 0.0
    last = a
    for i in idx:
        t, nid = prof['timed'][i]
        gap = max(gap, t - last)
        last = t
        nxt = prof['timed'][i + 1][0] if i + 1 < len(prof['timed']) else t + prof['mean']
        w = max(0.0, min(nxt, b) - t)
        path = prof['path'][nid]
        leaf = path[-1][0]
        g = groups.setdefault(path, [0, i, 0.0])
        g[0] += 1
        g[2] += w
        if leaf in META:
            meta[leaf] = meta.get(leaf, 0) + 1
        else:
            js += 1
            g = js_groups.setdefault(path, [0, i, 0.0])
            g[0] += 1
            g[2] += w
    gap = max(gap, b - last)
    events_ms, forced = {}, []
    for e in events:
        if (e.get('pid'), e.get('tid')) != thread or e.get('ph') != 'X' or e.get('name') not in NAMED:
            continue
        s, d = float(e['ts']), float(e.get('dur') or 0)
        lo, hi = max(s, a), min(s + d, b)
        if hi > lo:
            events_ms[e['name']] = events_ms.get(e['name'], 0.0) + (hi - lo)
        if e['name'] in ('Layout', 'UpdateLayoutTree') and hi > lo and e.get('_in_script'):
            st = ((e.get('args') or {}).get('beginData') or {}).get('stackTrace') or []
            top = st[0] if st else {}
            forced.append({'name': e['name'], 'ts': s, 'dur_ms': round(d / 1000, 3),
                           'function': top.get('functionName'), 'url': top.get('url'),
                           'line': top.get('lineNumber'), 'column': top.get('columnNumber')})
    by_fn = {}
    for f in forced:
        k = f['function'] or '(no stack)'
        x = by_fn.setdefault(k, {'function': f['function'], 'url': f['url'], 'events': 0, 'ms': 0.0})
        x['events'] += 1
        x['ms'] += f['dur_ms']
    total = len(idx)
    return {
        'window_us': [a, b], 'window_ms': round((b - a) / 1000, 3), 'samples': total, 'js_samples': js,
        'meta_samples': meta, 'distinct_stacks': len(groups), 'largest_gap_ms': round(gap / 1000, 3),
        'top_stack': stack_info(prof, groups, None, total, js),
        'top_js_stack': stack_info(prof, js_groups, None, total, js),
        'events_ms': {k: round(v / 1000, 3) for k, v in sorted(events_ms.items())},
        'forced_layouts': {'events': len(forced), 'ms': round(sum(f['dur_ms'] for f in forced), 3),
                           'by_function': [dict(v, ms=round(v['ms'], 3)) for v in by_fn.values()]},
    }


def mark_in_script(events):
    """Flags Layout / UpdateLayoutTree events nested in a script event of the same thread."""
    per = {}
    for e in events:
        if e.get('ph') == 'X' and e.get('dur') is not None and e.get('name') in NAMED:
            per.setdefault((e.get('pid'), e.get('tid')), []).append(e)
    for evs in per.values():
        evs.sort(key=lambda e: (float(e['ts']), -float(e['dur'])))
        open_script = []
        for e in evs:
            s = float(e['ts'])
            open_script = [x for x in open_script if x > s]
            if e['name'] in ('Layout', 'UpdateLayoutTree') and open_script:
                e['_in_script'] = True
            if e['name'] in SCRIPT_EVENTS:
                open_script.append(s + float(e['dur']))


def main():
    if len(sys.argv) != 5:
        raise SystemExit(__doc__)
    trace, run_path, oracle_path, out = sys.argv[1:]
    events = [e for e in reference.load(trace) if isinstance(e, dict)]
    mark_in_script(events)
    run = json.load(open(run_path))
    oracle = json.load(open(oracle_path))
    profs = reference.profiles(events)
    rows = sorted(oracle['by_interaction_id'], key=lambda r: r['ts'])
    steps = run['steps']
    problems = []
    if len(rows) != len(steps):
        raise SystemExit(f'{len(rows)} interactions in the trace, {len(steps)} steps recorded')
    all_events = {}
    for ev in oracle['all_interaction_events']:
        all_events.setdefault(ev['interactionId'], []).append(ev)
    interactions = []
    for step, r in zip(steps, rows):
        intent = INTENT[step['step']]
        iid = r['interaction_id']
        page = [e for e in run['page_event_timings_all'] if e['interactionId'] == iid]
        targets = {e['target'] for e in page if e['target']}
        # entries under 16 ms (the observer's durationThreshold) never reach the page
        if targets and step["target"] not in targets:
            problems.append(f'#{iid} ({step["step"]}): the page saw targets {targets}, not {step["target"]}')
        thread = (r['pid'], r['tid'])
        mine = [p for p in profs if p['thread'] == thread]
        prof = max(mine, key=lambda p: len(p['timed'])) if mine else None
        bounds = {'input_delay': (r['ts'], r['processingStart']),
                  'processing': (r['processingStart'], r['processingEnd']),
                  'presentation_delay': (r['processingEnd'], r['ts'] + r['dur'])}
        phases = {}
        for ph in PHASES:
            a, b = bounds[ph]
            obs = observe(prof, events, thread, a, b)
            want = intent['phases'][ph]
            top, top_js = obs['top_stack'], obs['top_js_stack']
            if obs['js_samples'] == 0:
                check, reason = 'null', f"no JS sample in the phase ({obs['samples']} samples: {obs['meta_samples']})"
                if want:
                    problems.append(f'#{iid} ({step["step"]}) {ph}: expected {want}, no JS sample')
            elif want and top_js and top_js['chain'] == want and top_js['samples'] >= 10 \
                    and top_js['share_of_js_samples'] >= 0.5 and top and top['chain'] == want:
                check = 'chain'
                reason = (f"page intent, verified: top JS stack {top_js['chain']} x{top_js['samples']} of "
                          f"{obs['samples']} samples ({obs['js_samples']} JS), largest group overall")
            else:
                check = 'skip'
                reason = (f"{obs['js_samples']} JS samples; top JS stack "
                          f"{top_js['chain'] if top_js else None} x{top_js['samples'] if top_js else 0}")
                if want:
                    problems.append(f'#{iid} ({step["step"]}) {ph}: expected {want}, {reason}')
            phases[ph] = {'check': check, 'expected_chain': want if check == 'chain' else None,
                          **({'expected_leaf': want[-1]} if check == 'chain' else {}),
                          'reason': reason, 'observed': obs}
        evs = sorted(all_events.get(iid, []), key=lambda e: (e['ts'], e['type']))
        interactions.append({
            'interaction_id': iid, 'type': r['type'], 'event_types': sorted({e['type'] for e in evs}),
            'pid': r['pid'], 'tid': r['tid'], 'scenario': intent['scenario'], 'step': step['step'],
            'target': step['target'], 'note': intent['note'], 'is_inp': r['is_inp_insight'],
            'slow': intent['slow'], 'devtools_long_interaction': r['dur'] > 200000,
            'trace': {
                'representative_event_type': r['representative_type'], 'start_ts_us': r['ts'],
                'end_ts_us': r['ts'] + r['dur'], 'processing_start_ts_us': r['processingStart'],
                'processing_end_ts_us': r['processingEnd'], 'duration_ms': r['duration_ms'],
                'input_delay_ms': r['input_delay_ms'], 'processing_ms': r['processing_ms'],
                'presentation_delay_ms': r['presentation_delay_ms'], 'kept_events_for_id': r['kept_events'],
                'events': [{'type': e['type'], 'ts': e['ts'], 'end_ts': e['end'], 'dur_ms': e['dur_ms'],
                            'processing_start_ts_us': e['processingStart'], 'processing_end_ts_us': e['processingEnd'],
                            'kept_by_devtools_nesting': e['kept']} for e in evs],
            },
            'page_event_timing': {'entries': page},
            'phases': phases,
            'expected_dominant_chain': {ph: phases[ph]['expected_chain'] for ph in PHASES},
        })
    inp = next((i for i in interactions if i['is_inp']), None)
    doc = {
        'schema': 'interaction-groundtruth/1',
        'trace': os.path.basename(trace),
        'scenario': 'interactions-shop',
        'page_url': run['page_url'],
        'browser': run['browser'],
        'input_method': 'mouse',
        'steps': steps,
        'rules': {
            'interactions': 'DevTools UserInteractionsHandler (scripts/devtools-interactions.mjs, the engine itself): EventTiming b/e paired by id, interactionId != 0, nesting per category and end time; an interaction is represented by its longest kept event',
            'phases': 'input_delay [ts, processingStart), processing [processingStart, processingEnd), presentation_delay [processingEnd, ts+dur)',
            'samples': 'V8 profile of the EventTiming thread (scripts/reference.py profiles()), half-open windows',
            'check': 'chain: the page runs expected_chain there and the trace agrees (top JS stack of script frames, >= 10 samples, >= 0.5 of JS samples, largest group of all samples); null: no JS sample in the phase; skip: too little evidence',
            'inp': 'interactions sorted by duration (longest kept event), INP = index min(9, floor(n/50)), per navigation (INPBreakdown)',
            'slow': 'slow = what the step meant (the quick click is not slow); devtools_long_interaction = duration > 200 ms',
            'frames': 'line/column in observed frames are 0-based, as in the trace',
        },
        'inp': {'interaction_id': inp['interaction_id'] if inp else None,
                'duration_ms': inp['trace']['duration_ms'] if inp else None, 'n_interactions': len(interactions)},
        'interactions': interactions,
        'page_event_timings_all': run['page_event_timings_all'],
        'requests': [q for q in run['requests'] if q['host'].endswith('.test')],
        'recording': {k: run[k] for k in ('browser_executable', 'browser_args', 'categories', 'recorded_at')},
        'verification': {'messages': problems},
    }
    with open(out, 'w') as f:
        json.dump(doc, f, indent=1)
        f.write('\n')
    for p in problems:
        print('intent not borne out:', p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
