#!/usr/bin/env node
// The judge for taskchain's interactions (issue 41): runs the DevTools trace engine itself
// (@paulirish/trace_engine, the Performance panel's model) over Chrome traces and prints what it
// finds, in the shape of taskchain's `--interactions` JSON contract plus the engine's own view.
//
//   scripts/devtools-interactions.mjs TRACE.json[.gz] [--out FILE | --out-dir DIR]
//   (several traces: one JSON file per trace in --out-dir, named after the trace)
//
// The engine is installed by scripts/devtools-engine/install (npm, pinned in its package.json,
// node_modules never committed). Per trace the output holds:
//   interactions      one row per interactionId, the contract's keys: file, pid, tid,
//                     interaction_id, type (pointer|keyboard|other), event_types, start_ts_us,
//                     duration_ms, input_delay_ms, processing_ms, presentation_delay_ms, is_inp
//                     (+ is_inp_trace, representative_type, navigation); the row is the engine's
//                     longest event of that id after its nesting rule (UserInteractions handler's
//                     interactionEventsWithNoNesting, the events INPBreakdown ranks);
//   by_interaction_id the same rows (the key /work/shared/traces/interactions/check.py reads);
//   kept_events       every event kept after nesting (several per id: keyup beside keydown);
//   all_interaction_events  every paired EventTiming event with an interactionId, kept or not;
//   inp               INP per navigation from the INPBreakdown insight of each insight set
//                     (interactions sorted by duration, index min(9, floor(n / 50)));
//   long_tasks        the engine's LONG_TASK warnings (RunTask over 50 ms, worker threads left out);
//   long_animation_frames  the AnimationFrames handler's frames (AnimationFrame b/e paired per
//                     thread in time order) over 50 ms, with their animation_frame_timing_info;
//   forced_reflow     the ForcedReflow insight's bottom-up functions per insight set.
// Times: ts in µs on the trace clock, *_ms in milliseconds. Exit 1 when any trace failed (its
// output then says engine_failed with the error), 2 on bad usage.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const engineDir = path.join(here, 'devtools-engine', 'node_modules', '@paulirish', 'trace_engine');
const MAX_TRACE_BYTES = 2 ** 31;
// A long animation frame: over 50 ms (the LoAF API's threshold, as for long tasks).
const LONG_FRAME_US = 50_000;

function usage(msg) {
  if (msg) console.error(`devtools-interactions: ${msg}`);
  console.error('usage: scripts/devtools-interactions.mjs TRACE.json[.gz]... [--out FILE | --out-dir DIR]');
  process.exit(2);
}

function readTrace(file) {
  const size = fs.statSync(file).size;
  if (size > MAX_TRACE_BYTES) throw new Error(`${file}: ${size} bytes, over the ${MAX_TRACE_BYTES} this script reads`);
  let buf = fs.readFileSync(file);
  if (buf.length >= 2 && buf[0] === 0x1f && buf[1] === 0x8b) buf = zlib.gunzipSync(buf, { maxOutputLength: MAX_TRACE_BYTES });
  const json = JSON.parse(buf.toString('utf8'));
  const events = Array.isArray(json) ? json : json.traceEvents;
  if (!Array.isArray(events)) throw new Error(`${file}: no traceEvents array`);
  return events;
}

const ms = (us) => Math.round(us) / 1000;

// The engine's interaction event, as plain JSON.
function eventRow(e) {
  return {
    interactionId: e.interactionId, type: e.type, pid: e.pid, tid: e.tid,
    ts: e.ts, dur: e.dur, end: e.ts + e.dur,
    processingStart: e.processingStart, processingEnd: e.processingEnd,
    inputDelay: e.inputDelay, mainThreadHandling: e.mainThreadHandling, presentationDelay: e.presentationDelay,
    dur_ms: ms(e.dur), inputDelay_ms: ms(e.inputDelay), mainThreadHandling_ms: ms(e.mainThreadHandling),
    presentationDelay_ms: ms(e.presentationDelay),
  };
}

async function analyze(Trace, file) {
  const events = readTrace(file);
  const consoleErrors = {};
  const origError = console.error, origWarn = console.warn;
  const note = (...a) => { const k = String(a[0]).slice(0, 200); consoleErrors[k] = (consoleErrors[k] || 0) + 1; };
  console.error = note; console.warn = note;
  let parsed;
  try {
    const config = { ...Trace.Types.Configuration.defaults(), enableAnimationsFrameHandler: true };
    const model = Trace.TraceModel.Model.createWithAllHandlers(config);
    await model.parse(events);
    parsed = model.parsedTrace();
  } finally {
    console.error = origError; console.warn = origWarn;
  }
  if (!parsed) throw new Error('the engine returned no parsed trace');
  const { data, insights } = parsed;
  const UI = data.UserInteractions;
  const category = Trace.Handlers.ModelHandlers.UserInteractions.categoryOfInteraction;
  const kept = UI.interactionEventsWithNoNesting;
  const keptSet = new Set(kept);

  // Insight sets (per navigation): which INP each chose, and which set each interaction is in.
  const sets = [];
  for (const [id, set] of insights ?? new Map()) {
    const inp = set.model?.INPBreakdown;
    const reflow = set.model?.ForcedReflow;
    sets.push({
      id, url: String(set.url ?? ''), bounds: { min: set.bounds.min, max: set.bounds.max },
      inp_breakdown_state: inp?.state ?? null,
      inp_breakdown_error: set.modelErrors?.INPBreakdown ? String(set.modelErrors.INPBreakdown) : null,
      inp_interaction_id: inp?.highPercentileInteractionEvent?.interactionId ?? null,
      inp_ts: inp?.highPercentileInteractionEvent?.ts ?? null,
      inp_dur_ms: inp?.highPercentileInteractionEvent ? ms(inp.highPercentileInteractionEvent.dur) : null,
      longest_interaction_id: inp?.longestInteractionEvent?.interactionId ?? null,
      longest_dur_ms: inp?.longestInteractionEvent ? ms(inp.longestInteractionEvent.dur) : null,
      _inpEvent: inp?.highPercentileInteractionEvent ?? null,
      forced_reflow: (reflow?.aggregatedBottomUpData ?? []).map((d) => ({
        function: d.bottomUpData?.functionName ?? null, url: d.bottomUpData?.url ?? null,
        line: d.bottomUpData?.lineNumber ?? null, column: d.bottomUpData?.columnNumber ?? null,
        total_ms: ms(d.totalTime), events: d.relatedEvents.length,
      })),
    });
  }
  const inBounds = (e, b) => e.ts >= b.min && e.ts + e.dur <= b.max;
  const setOf = (e) => sets.find((s) => inBounds(e, s.bounds)) ?? null;

  // Trace-wide INP, the same rule over every kept event (for traces whose interactions fall in no set).
  const longestById = new Map();
  for (const e of kept) {
    const cur = longestById.get(e.interactionId);
    if (!cur || e.dur > cur.dur) longestById.set(e.interactionId, e);
  }
  const ranked = [...longestById.values()].sort((a, b) => b.dur - a.dur);
  const inpIndex = Math.min(9, Math.floor(ranked.length / 50));
  const inpTrace = ranked[inpIndex] ?? null;

  const typesById = new Map();
  for (const e of UI.interactionEvents) {
    const t = typesById.get(e.interactionId) ?? [];
    if (!t.includes(e.type)) t.push(e.type);
    typesById.set(e.interactionId, t);
  }
  const keptCount = new Map();
  for (const e of kept) keptCount.set(e.interactionId, (keptCount.get(e.interactionId) ?? 0) + 1);

  const base = path.basename(file);
  const rows = [...longestById.values()].sort((a, b) => a.ts - b.ts).map((e) => {
    const set = setOf(e);
    const isInpInsight = set ? set._inpEvent === e : e === inpTrace;
    return {
      file: base, pid: e.pid, tid: e.tid, interaction_id: e.interactionId,
      type: category(e).toLowerCase(), event_types: typesById.get(e.interactionId) ?? [e.type],
      start_ts_us: e.ts, duration_ms: ms(e.dur), input_delay_ms: ms(e.inputDelay),
      processing_ms: ms(e.mainThreadHandling), presentation_delay_ms: ms(e.presentationDelay),
      is_inp: isInpInsight,
      // the same row in the oracle's spelling (check.py, compare-interactions.py)
      representative_type: e.type, ts: e.ts, dur: e.dur,
      processingStart: e.processingStart, processingEnd: e.processingEnd,
      kept_events: keptCount.get(e.interactionId) ?? 0,
      is_inp_trace: e === inpTrace, is_inp_insight: isInpInsight,
      navigation: set ? set.id : null,
    };
  });

  const longTasks = (data.Warnings.perWarning.get('LONG_TASK') ?? []).map((t) => ({
    pid: t.pid, tid: t.tid, ts: t.ts, dur: t.dur, dur_ms: ms(t.dur),
  })).sort((a, b) => a.ts - b.ts);
  const frames = (await animationFrames(Trace, events)).map((f) => {
    const info = f.args?.data?.beginEvent?.args?.animation_frame_timing_info ?? {};
    return {
      pid: f.pid, tid: f.tid, ts: f.ts, dur: f.dur, dur_ms: ms(f.dur),
      duration_ms: info.duration_ms ?? null, blocking_duration_ms: info.blocking_duration_ms ?? null,
      num_scripts: info.num_scripts ?? null,
    };
  }).sort((a, b) => a.ts - b.ts);
  const longFrames = frames.filter((f) => f.dur > LONG_FRAME_US);

  return {
    tool: 'devtools_interactions',
    engine: `@paulirish/trace_engine@${enginePackage().version}`,
    engine_mode: 'all-handlers',
    trace: base,
    engine_console_errors: consoleErrors,
    counts: {
      interaction_events: UI.interactionEvents.length, kept_after_nesting: kept.length,
      interaction_ids: longestById.size, long_tasks: longTasks.length, animation_frames: frames.length,
      long_animation_frames: longFrames.length,
    },
    inp: {
      rule: 'interactions (longest kept event per interactionId) sorted by dur, longest first; INP = index min(9, floor(n/50)), per insight set (navigation)',
      n_interactions: ranked.length, index: inpIndex,
      interaction_id: inpTrace?.interactionId ?? null, dur_ms: inpTrace ? ms(inpTrace.dur) : null,
      insight_sets: sets.map(({ _inpEvent, forced_reflow, ...s }) => s),
    },
    interactions: rows,
    by_interaction_id: rows,
    kept_events: kept.map((e) => ({ ...eventRow(e), category: category(e) })),
    all_interaction_events: UI.interactionEvents.map((e) => ({ ...eventRow(e), category: category(e), kept: keptSet.has(e) })),
    long_tasks: longTasks,
    long_animation_frames: longFrames,
    forced_reflow: sets.map((s) => ({ insight_set: s.id, functions: s.forced_reflow })),
  };
}

// The AnimationFrames handler: its reset() turns it off again whatever the model's config said
// (0.0.65), so it is run here on its own, after the model's parse made the synthetic event
// manager it registers frames with.
async function animationFrames(Trace, events) {
  const h = Trace.Handlers.ModelHandlers.AnimationFrames;
  h.reset();
  h.handleUserConfig({ ...Trace.Types.Configuration.defaults(), enableAnimationsFrameHandler: true });
  for (const e of events) h.handleEvent(e);
  await h.finalize();
  return h.data().animationFrames;
}

let pkg;
function enginePackage() {
  pkg ??= JSON.parse(fs.readFileSync(path.join(engineDir, 'package.json'), 'utf8'));
  return pkg;
}

async function main() {
  const args = process.argv.slice(2);
  const traces = [];
  let out = null, outDir = null;
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--out') out = args[++i] ?? usage('--out needs a file');
    else if (args[i] === '--out-dir') outDir = args[++i] ?? usage('--out-dir needs a folder');
    else if (args[i].startsWith('-')) usage(`unknown option ${args[i]}`);
    else traces.push(args[i]);
  }
  if (!traces.length) usage('no trace given');
  if (out && traces.length > 1) usage('--out takes one trace; use --out-dir for several');
  if (!fs.existsSync(engineDir)) {
    console.error(`devtools-interactions: the engine is not installed; run scripts/devtools-engine/install`);
    process.exit(2);
  }
  const Trace = await import(pathToFileURL(path.join(engineDir, 'models', 'trace', 'trace.js')).href);
  // The engine expects a browser's DOMRect; its own analyze-trace.mjs carries the polyfill.
  (await import(pathToFileURL(path.join(engineDir, 'analyze-trace.mjs')).href)).polyfillDOMRect();
  let failed = 0;
  for (const file of traces) {
    let result;
    try {
      result = await analyze(Trace, file);
    } catch (err) {
      failed++;
      console.error(`devtools-interactions: ${file}: ${err && err.message ? err.message : err}`);
      result = { tool: 'devtools_interactions', engine: `@paulirish/trace_engine@${enginePackage().version}`,
        trace: path.basename(file), engine_failed: true, error: String(err && err.message ? err.message : err),
        interactions: [], by_interaction_id: [] };
    }
    const text = JSON.stringify(result, null, 1) + '\n';
    if (outDir) {
      fs.mkdirSync(outDir, { recursive: true });
      const name = path.basename(file).replace(/\.gz$/, '').replace(/\.json$/, '') + '.json';
      fs.writeFileSync(path.join(outDir, name), text);
    } else if (out) {
      fs.writeFileSync(out, text);
    } else {
      process.stdout.write(text);
    }
  }
  process.exit(failed ? 1 : 0);
}

main();
