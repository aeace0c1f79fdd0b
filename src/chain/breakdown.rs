//! What the main thread did in a window besides (and with) JavaScript: the window's time by
//! DevTools' categories, and the layouts JavaScript forced (docs/METHOD.md §2.10).
//!
//! Each work event of the thread (`WorkCategory`, the trace's `X` events the scan keeps)
//! counts its **self time** clipped to the window: its span in the window less the spans of
//! the events nested in it. Time inside a top-level task that no work event covers is
//! `other` (the task's own bookkeeping, native work without an event); time outside every
//! top-level task is `idle`. The seven parts sum to the window's length.
//!
//! A `Layout`, `UpdateLayoutTree` or `RecalculateStyles` event nested in an event that runs
//! JavaScript is a **forced layout** (DevTools' "Forced reflow" insight): its time clipped to
//! the window, and the function that forced it, the top frame of the event's own stack trace
//! (`args.beginData.stackTrace`, written with `disabled-by-default-devtools.timeline.stack`;
//! 1-based line and column).

use std::collections::BTreeMap;

use crate::profile::ProfileSet;
use crate::scan::args::{ArgsParser, field, int, text};
use crate::scan::records::{EntryKind, EntryPoint, WorkCategory};
use crate::time::{TimeDelta, Timestamp};

/// A window's time by category (all in ns as [`TimeDelta`]s; they sum to the window).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Breakdown {
    /// JavaScript and the events that run it (self time).
    pub scripting: TimeDelta,
    /// Style, layout, pre-paint, layerize, hit tests.
    pub style_layout: TimeDelta,
    /// Paint, commit, compositing, image decodes.
    pub paint_composite: TimeDelta,
    /// Garbage collection.
    pub gc: TimeDelta,
    /// HTML / style-sheet parsing, script compiling, code caches.
    pub parse_compile: TimeDelta,
    /// Inside a top-level task but in no work event.
    pub other: TimeDelta,
    /// Outside every top-level task of the thread.
    pub idle: TimeDelta,
    /// Style and layout forced from JavaScript (part of `style_layout`).
    pub forced_layout: TimeDelta,
    /// Forced layout events met in the window.
    pub forced_layouts: u32,
    /// The function that forced the most of that time (`name url:line:col`, 1-based), from
    /// the events' stack traces; empty when no forced layout has one.
    pub forced_by: String,
}

impl Breakdown {
    /// The sum of the seven parts.
    pub fn total(&self) -> TimeDelta {
        self.scripting
            + self.style_layout
            + self.paint_composite
            + self.gc
            + self.parse_compile
            + self.other
            + self.idle
    }

    fn add(&mut self, work: WorkCategory, t: TimeDelta) {
        let slot = match work {
            WorkCategory::Scripting => &mut self.scripting,
            WorkCategory::StyleLayout => &mut self.style_layout,
            WorkCategory::PaintComposite => &mut self.paint_composite,
            WorkCategory::Gc => &mut self.gc,
            WorkCategory::ParseCompile => &mut self.parse_compile,
        };
        *slot = *slot + t;
    }
}

/// The length of `[s, e)` ∩ `[a, b)`.
fn overlap(s: Timestamp, e: Timestamp, a: Timestamp, b: Timestamp) -> TimeDelta {
    let (lo, hi) = (s.max(a), e.min(b));
    if hi > lo {
        hi.since(lo)
    } else {
        TimeDelta::ZERO
    }
}

/// The breakdown of `[start, end)` on one thread. `entries`: the thread's work events
/// sorted by `ts`, longer first on ties ([`crate::reader`]'s entry index); `longest`: the
/// longest of them (bounds the search for events that began before `start`); `tasks`: the
/// thread's top-level task spans sorted by start, or `None` when the window lies inside
/// one task (a long task's own window: no idle time). `file`: the whole trace, for the
/// stack traces of forced layouts kept in it. `profiles`: the trace's profiles, whose
/// samples name the function behind a forced layout whose event has no stack trace
/// (`None`: such layouts stay unnamed).
pub(crate) fn of_window(
    entries: &[EntryPoint],
    longest: TimeDelta,
    tasks: Option<&[(Timestamp, TimeDelta)]>,
    start: Timestamp,
    end: Timestamp,
    file: Option<&[u8]>,
    profiles: Option<&ProfileSet>,
) -> Breakdown {
    let mut out = Breakdown::default();
    if end <= start {
        return out;
    }
    let window = end.since(start);
    let busy = match tasks {
        None => window,
        Some(spans) => {
            // Top-level tasks do not overlap: their ends are in order too.
            let from = spans.partition_point(|&(ts, d)| ts + d <= start);
            spans[from..]
                .iter()
                .take_while(|&&(ts, _)| ts < end)
                .map(|&(ts, d)| overlap(ts, ts + d, start, end))
                .sum()
        }
    };
    // Events that may overlap the window: none begins more than `longest` before it.
    let first = entries.partition_point(|e| e.ts + longest < start);
    // Open events: (index, end, self time so far).
    let mut open: Vec<(usize, Timestamp, TimeDelta)> = Vec::new();
    let mut forced: BTreeMap<String, TimeDelta> = BTreeMap::new();
    // Forced layouts without a stack trace: (start, end, the start of the script event
    // that forced it, time in the window), for the sampled stack.
    let mut stackless: Vec<Stackless> = Vec::new();
    let mut parser = ArgsParser::default();
    let close = |out: &mut Breakdown, (i, _, own): (usize, Timestamp, TimeDelta)| {
        out.add(entries[i].work, own.max(TimeDelta::ZERO));
    };
    for (i, e) in entries.iter().enumerate().skip(first) {
        if e.ts >= end {
            break;
        }
        let e_end = e.ts + e.dur;
        while let Some(&top) = open.last() {
            if e.ts < top.1 {
                break;
            }
            open.pop();
            close(&mut out, top);
        }
        let own = overlap(e.ts, e_end, start, end);
        if let Some(parent) = open.last_mut() {
            let inner = overlap(e.ts, e_end.min(parent.1), start, end);
            parent.2 = parent.2 - inner;
        }
        let script = (0..open.len())
            .rev()
            .map(|k| open[k])
            .find(|&(p, _, _)| entries[p].kind.runs_js());
        if let (EntryKind::StyleLayout, Some((script, _, _))) = (e.kind, script)
            && own > TimeDelta::ZERO
        {
            out.forced_layout = out.forced_layout + own;
            out.forced_layouts += 1;
            let who = forcing_function(e, file, &mut parser);
            if who.is_empty() && profiles.is_some() {
                stackless.push(Stackless {
                    start: e.ts,
                    end: e_end,
                    script: entries[script].ts,
                    own,
                });
            } else {
                let slot = forced.entry(who).or_default();
                *slot = *slot + own;
            }
        }
        open.push((i, e_end, own));
    }
    while let Some(top) = open.pop() {
        close(&mut out, top);
    }
    if let (Some(profiles), Some(first)) = (profiles, entries.first()) {
        for (who, own) in sampled_forcers(profiles, first.thread, &stackless, file) {
            let slot = forced.entry(who).or_default();
            *slot = *slot + own;
        }
    }
    let counted =
        out.scripting + out.style_layout + out.paint_composite + out.gc + out.parse_compile;
    out.other = (busy - counted).max(TimeDelta::ZERO);
    out.idle = (window - busy).max(TimeDelta::ZERO);
    // The function with the most forced time (ties: the first by text); unknown stacks
    // (empty text) only when nothing else is known.
    out.forced_by = forced
        .iter()
        .filter(|(who, _)| !who.is_empty())
        .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
        .map(|(who, _)| who.clone())
        .unwrap_or_default();
    out
}

/// A forced layout whose event has no stack trace.
struct Stackless {
    start: Timestamp,
    end: Timestamp,
    /// The start of the innermost script event around it (a sample before the layout
    /// counts only from there: before it, another script ran).
    script: Timestamp,
    /// Its time in the window.
    own: TimeDelta,
}

/// The function that forced each stackless layout, from the thread's samples: the
/// innermost frame of script code (a URL or a script id; not a native function) of the first sample inside the layout event that has one,
/// else of the last such sample before it inside the script event that forced it
/// (`name url:line:col`, made 1-based as event stacks are; the function's own position,
/// as profile call frames give it, not the line that read the layout). Layouts without
/// such a sample give empty text. One read of the samples per window.
fn sampled_forcers(
    profiles: &ProfileSet,
    thread: crate::vocab::ThreadKey,
    stackless: &[Stackless],
    file: Option<&[u8]>,
) -> Vec<(String, TimeDelta)> {
    let mut out: Vec<(String, TimeDelta)> =
        stackless.iter().map(|l| (String::new(), l.own)).collect();
    let (Some(lo), Some(hi)) = (
        stackless.iter().map(|l| l.script).min(),
        stackless.iter().map(|l| l.end).max(),
    ) else {
        return out;
    };
    for p in profiles.of_thread(thread) {
        let w = p.window(lo, hi, file);
        let t = &w.table;
        // The innermost JavaScript frame of sample `k`, as text.
        let js = |k: usize| -> Option<String> {
            let mut s = Some(t.stack[k]);
            while let Some(stack) = s {
                let f = p.stacks.frame(stack);
                let cf = p.frames.get(f);
                // Script code only (a URL, or a script id but V8's 0): a native
                // function (`elementsFromPoint`, script 0) is what the script called.
                let script = !cf.url.is_empty() || !matches!(&*cf.script_id, "" | "0");
                if p.frames.kind(f) == crate::profile::tables::FrameKind::Code && script {
                    return Some(function_text(
                        &cf.function_name,
                        &cf.url,
                        i64::from(cf.line_number.max(-1)) + 1,
                        i64::from(cf.column_number.max(-1)) + 1,
                    ));
                }
                s = p.stacks.parent(stack);
            }
            None
        };
        for (l, slot) in stackless.iter().zip(&mut out) {
            if !slot.0.is_empty() {
                continue;
            }
            let found = t
                .range(l.start, l.end)
                .find_map(js)
                .or_else(|| t.range(l.script, l.start).rev().find_map(js));
            if let Some(who) = found {
                slot.0 = who;
            }
        }
    }
    out
}

/// `name url:line:col` of the top frame of a style or layout event's stack trace
/// (`args.beginData.stackTrace[0]`, 1-based as Chrome writes it), empty when it has none.
fn forcing_function(e: &EntryPoint, file: Option<&[u8]>, parser: &mut ArgsParser) -> String {
    let Some(raw) = e.raw_args().and_then(|a| a.bytes(file)) else {
        return String::new();
    };
    parser
        .with(raw, |v| {
            let frames = field(field(v, "beginData")?, "stackTrace")?.as_array()?;
            let top = frames.first()?;
            let name = text(top, "functionName").unwrap_or_default();
            let url = text(top, "url").unwrap_or_default();
            let line = field(top, "lineNumber").and_then(int).unwrap_or(0);
            let col = field(top, "columnNumber").and_then(int).unwrap_or(0);
            Some(function_text(&name, &url, line, col))
        })
        .flatten()
        .unwrap_or_default()
}

/// `name url:line:col` (`(anonymous)` for an empty name), line and column 1-based.
fn function_text(name: &str, url: &str, line: i64, col: i64) -> String {
    let name = if name.is_empty() { "(anonymous)" } else { name };
    format!("{name} {url}:{line}:{col}")
}

use simd_json::prelude::*;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::{Pid, ThreadKey, Tid};

    fn ev(kind: EntryKind, work: WorkCategory, ts: i64, dur: i64) -> EntryPoint {
        EntryPoint {
            thread: ThreadKey {
                pid: Pid(1),
                tid: Tid(1),
            },
            ts: Timestamp::from_micros(ts),
            dur: TimeDelta::from_micros(dur),
            kind,
            work,
            args: crate::scan::records::EntryArgs::None,
        }
    }

    fn ms(t: TimeDelta) -> f64 {
        t.as_millis_f64()
    }

    #[test]
    fn self_time_by_category_clipped_to_the_window_sums_to_it() {
        use EntryKind as K;
        use WorkCategory as W;
        // A task 0–100 ms: a click 10–70 (JS), inside it a forced layout 30–40 and a GC
        // 50–55; paint 80–90; a second task 120–130 with a compile. The window is 20–125.
        let mut entries = vec![
            ev(K::EventDispatch, W::Scripting, 10_000, 60_000),
            ev(K::FunctionCall, W::Scripting, 11_000, 58_000),
            ev(K::StyleLayout, W::StyleLayout, 30_000, 10_000),
            ev(K::Gc, W::Gc, 50_000, 5_000),
            ev(K::Paint, W::PaintComposite, 80_000, 10_000),
            ev(K::Work, W::ParseCompile, 120_000, 10_000),
        ];
        entries.sort_by_key(|e| (e.ts, std::cmp::Reverse(e.dur)));
        let tasks = [
            (Timestamp::from_micros(0), TimeDelta::from_micros(100_000)),
            (
                Timestamp::from_micros(120_000),
                TimeDelta::from_micros(10_000),
            ),
        ];
        let b = of_window(
            &entries,
            TimeDelta::from_micros(60_000),
            Some(&tasks),
            Timestamp::from_micros(20_000),
            Timestamp::from_micros(125_000),
            None,
            None,
        );
        // JS: 20–69 (clipped) less the layout (10) and GC (5) = 34; the dispatch's own
        // 69–70 is 1 more.
        assert_eq!(ms(b.scripting), 35.0);
        assert_eq!(ms(b.style_layout), 10.0);
        assert_eq!(ms(b.gc), 5.0);
        assert_eq!(ms(b.paint_composite), 10.0);
        assert_eq!(ms(b.parse_compile), 5.0);
        // Task time in no event: 70–80 and 90–100.
        assert_eq!(ms(b.other), 20.0);
        // 100–120 between the tasks.
        assert_eq!(ms(b.idle), 20.0);
        assert_eq!(b.total(), TimeDelta::from_micros(105_000));
        assert_eq!((ms(b.forced_layout), b.forced_layouts), (10.0, 1));
        // A layout outside script is not forced.
        let lone = [ev(K::StyleLayout, W::StyleLayout, 0, 10_000)];
        let b = of_window(
            &lone,
            TimeDelta::from_micros(10_000),
            None,
            Timestamp::from_micros(0),
            Timestamp::from_micros(10_000),
            None,
            None,
        );
        assert_eq!(
            (b.forced_layouts, ms(b.style_layout), ms(b.other)),
            (0, 10.0, 0.0)
        );
    }

    #[test]
    fn the_forcing_function_is_the_top_frame_of_the_layout_stack() {
        let raw = br#"{"beginData":{"frame":"F","stackTrace":[{"columnNumber":20,"functionName":"sizeBars","lineNumber":26,"scriptId":"10","url":"http://www.shop-inp.test/chart.js"},{"columnNumber":57,"functionName":"drawChart","lineNumber":32,"scriptId":"10","url":"http://www.shop-inp.test/chart.js"}]}}"#;
        let mut e = ev(EntryKind::StyleLayout, WorkCategory::StyleLayout, 0, 1);
        e.args = crate::scan::records::EntryArgs::Unread(crate::scan::records::RawArgs::Owned(
            raw.to_vec().into(),
        ));
        assert_eq!(
            forcing_function(&e, None, &mut ArgsParser::default()),
            "sizeBars http://www.shop-inp.test/chart.js:26:20"
        );
        e.args = crate::scan::records::EntryArgs::None;
        assert_eq!(forcing_function(&e, None, &mut ArgsParser::default()), "");
    }
}
